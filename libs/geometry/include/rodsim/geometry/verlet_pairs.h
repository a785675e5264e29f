// A Verlet list of edge pairs: the broad phase of a contact model or a swept check, reused from
// query to query (step to step) while no node has moved far enough for a pair to be missing.
//
// pairs(q, q_end, pad, skin, excluded) answers a sorted superset of the pairs (a, b), a < b, that
// the caller's own exclusion keeps and that are near at q (and at q_end when given), "near" being
//  - Kind::Boxes: the boxes overlap, each holding an edge's segment at q (and at q_end) grown by its
//    radius + pad (what SweepAndPrune answers for such boxes);
//  - Kind::Capsules: the centre lines are closer than r_a + r_b + 2 pad (what a sweep and prune
//    followed by an exact distance test answers).
// The list is built at q with pad + slack in place of pad, slack = skin plus the largest node
// displacement from q to q_end, and stays valid for a later query with pad p as long as every
// node of that query's q (and q_end) lies within pad + slack - p of where it was at the build: every
// point of a segment then moved no farther (a segment's points interpolate its nodes), so each
// near pair of the query was near at the build. The exclusion must not depend on q: it is applied
// at the build. A caller that keeps the pairs passing its exact test (a distance, a CCD) thus gets
// the same pairs in the same order as from a fresh sweep and prune: reuse changes the cost, never
// the result.
//
// The check is O(nodes) per query against O(n log n + pairs) for a sweep; at the explicit solvers'
// small steps (a few um per step against a skin of a radius) the list lasts hundreds of steps.
#pragma once

#include <rodsim/geometry/broad_phase.h>

#include <Eigen/Core>

#include <cmath>
#include <utility>
#include <vector>

namespace rodsim::geometry {

class VerletPairs {
 public:
  enum class Kind { Boxes, Capsules };
  struct Edge {
    int x0 = 0, x1 = 0;  // global x DOF of the two nodes
    double radius = 0;   // m
  };

  // The edges, from any edge table with the fields x0, x1 and radius; forgets the list.
  template <class E> void bind(const std::vector<E>& edges, Kind kind) {
    std::vector<Edge> own;
    own.reserve(edges.size());
    for (const E& e : edges) own.push_back({e.x0, e.x1, e.radius});
    bindEdges(std::move(own), kind);
  }
  void bindEdges(std::vector<Edge> edges, Kind kind);

  // The pairs (see above). q_end may be null. pad >= 0 and skin > 0 in m; excluded(a, b), a < b:
  // true for a pair never to be listed. Allocation-free once warm.
  template <class Excluded>
  const std::vector<std::pair<int, int>>& pairs(const Eigen::VectorXd& q, const Eigen::VectorXd* q_end, double pad,
                                                double skin, Excluded&& excluded) {
    if (valid(q, q_end, pad)) return pairs_;
    build(q, q_end, pad, skin);
    std::size_t kept = 0;
    for (const auto& [a, b] : pairs_)
      if (!excluded(a, b) && (kind_ == Kind::Boxes || near(q, a, b))) pairs_[kept++] = {a, b};
    pairs_.resize(kept);
    if (!std::isfinite(reach_)) reach_ = -1;  // a non-finite configuration gives no lasting list
    return pairs_;
  }
  const std::vector<std::pair<int, int>>& pairs(const Eigen::VectorXd& q, const Eigen::VectorXd* q_end, double pad,
                                                double skin) {
    return pairs(q, q_end, pad, skin, [](int, int) { return false; });
  }
  // The next query rebuilds.
  void forget() { reach_ = -1; }
  long long builds() const { return builds_; }
  int size() const { return static_cast<int>(pairs_.size()); }

 private:
  bool valid(const Eigen::VectorXd& q, const Eigen::VectorXd* q_end, double pad) const;
  // x_, reach_ and every box pair at q grown by reach_ into pairs_.
  void build(const Eigen::VectorXd& q, const Eigen::VectorXd* q_end, double pad, double skin);
  // Capsules: the centre lines at q closer than r_a + r_b + 2 reach_.
  bool near(const Eigen::VectorXd& q, int a, int b) const;
  // Largest distance of a node of q from its position at the build (infinite for NaN).
  double largestMove(const Eigen::VectorXd& q) const;

  Kind kind_ = Kind::Boxes;
  std::vector<Edge> edges_;
  std::vector<int> node_dofs_;  // every node of the edges, once, ascending
  Eigen::VectorXd x_;           // their positions at the build, 3 per node
  double reach_ = -1;           // the build's growth beyond the radius: pad + slack (< 0: no list)
  std::vector<Aabb> boxes_;
  SweepAndPrune sap_;
  std::vector<std::pair<int, int>> pairs_;
  long long builds_ = 0;
};

}  // namespace rodsim::geometry
