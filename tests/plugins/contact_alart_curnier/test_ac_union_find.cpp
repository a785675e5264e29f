// UnionFind, the one union-find of alart-curnier (the components of A and the contact groups of
// both steps): the sets of random unions against a breadth-first search of the same graph.
#include "ac_union_find.h"

#include <doctest/doctest.h>

#include <queue>
#include <random>
#include <utility>
#include <vector>

using rodsim::ac::UnionFind;

TEST_CASE("UnionFind: the connected sets of a graph, each rooted at its smallest element") {
  std::mt19937 rng(7);
  UnionFind uf;
  for (const int n : {1, 2, 17, 200}) {
    for (const int edges : {0, n / 3, n, 2 * n}) {
      CAPTURE(n);
      CAPTURE(edges);
      std::uniform_int_distribution<int> pick(0, n - 1);
      std::vector<std::pair<int, int>> e;
      for (int k = 0; k < edges; ++k) e.emplace_back(pick(rng), pick(rng));
      uf.reset(n);  // reused: reset must forget the last graph
      for (const auto& [a, b] : e) uf.unite(a, b);
      // Reference: breadth-first search labels every vertex with the smallest vertex of its set
      // (vertices visited in increasing order start their set).
      std::vector<std::vector<int>> adj(n);
      for (const auto& [a, b] : e) {
        adj[a].push_back(b);
        adj[b].push_back(a);
      }
      std::vector<int> label(n, -1);
      for (int s = 0; s < n; ++s) {
        if (label[s] >= 0) continue;
        std::queue<int> todo;
        todo.push(s);
        label[s] = s;
        while (!todo.empty()) {
          const int x = todo.front();
          todo.pop();
          for (int y : adj[x])
            if (label[y] < 0) {
              label[y] = s;
              todo.push(y);
            }
        }
      }
      for (int x = 0; x < n; ++x) CHECK(uf.find(x) == label[x]);
    }
  }
}

TEST_CASE("UnionFind: uniting in either order or twice gives the same sets") {
  UnionFind a, b;
  a.reset(6);
  b.reset(6);
  a.unite(5, 3);
  a.unite(3, 1);
  a.unite(1, 5);  // already one set
  b.unite(1, 3);
  b.unite(5, 1);
  for (int x = 0; x < 6; ++x) CHECK(a.find(x) == b.find(x));
  CHECK(a.find(5) == 1);
  CHECK(a.find(0) == 0);
  CHECK(a.find(2) == 2);
  CHECK(a.find(4) == 4);
}
