// Union-find (disjoint sets) over 0..n-1: the one this plugin uses for every connected-set
// question, the mechanical subsystems of A (free DOFs joined by an entry of A) and the independent
// contact groups of Bertails-Descoubes et al. 2011, Sec. 4.5 (contacts joined by a component or a node they share).
#pragma once

#include <vector>

namespace rodsim::ac {

// Path halving in find; a union makes the smaller root the parent, so each set's root is its
// smallest element once every union is done, whatever their order. No allocation once warm
// (reset keeps the capacity).
class UnionFind {
 public:
  void reset(int n) {
    parent_.resize(n);
    for (int i = 0; i < n; ++i) parent_[i] = i;
  }
  int find(int x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void unite(int a, int b) {
    a = find(a);
    b = find(b);
    if (a < b)
      parent_[b] = a;
    else if (b < a)
      parent_[a] = b;
  }

 private:
  std::vector<int> parent_;
};

}  // namespace rodsim::ac
