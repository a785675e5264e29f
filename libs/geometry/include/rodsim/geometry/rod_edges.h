// The edge table and the broad phase of the contact models that detect contact between the edges
// (elements) of rods: contact_imc and contact_spring_dashpot build their candidate pairs with it.
//
// RodEdges holds every edge and node of a model's rods, rod after rod, with the rest arc length of
// each node (for the models' neighbour exclusion by arc length, arcGap). closePairs finds the pairs
// of edges closer than a reach: boxes of the edges grown by radius + pad, a sweep and prune
// (broad_phase.h), the model's exclusion, then the exact centre-line distance, in increasing pair
// order (a, b), a < b. NodeSnapshot keeps the node positions a list was built at, for a Verlet list's
// test "has a node moved more than lim since" (the list stays exact while none has: moving every
// node by at most lim moves every point of a segment by at most lim).
#pragma once

#include <rodsim/geometry/broad_phase.h>
#include <rodsim/geometry/segment_segment_distance.h>
#include <rodsim/geometry/verlet_pairs.h>
#include <rodsim/rod.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace rodsim::geometry {

struct RodEdge {
  int x0 = 0, x1 = 0;     // global x DOF of the two nodes
  int n0 = 0, n1 = 0;     // the two nodes' indexes in RodEdges::nodeDofs()
  int rod = 0;            // index into the rods given to bind
  int index = 0;          // edge index on its rod
  double radius = 0;      // m
  double s0 = 0, s1 = 0;  // rest arc length of the two nodes along the rod (m)
};

// Rest arc-length gap between two edges of one rod, between their nearer ends (0 for adjacent edges).
inline double arcGap(const RodEdge& A, const RodEdge& B) { return A.s0 < B.s0 ? B.s0 - A.s1 : A.s0 - B.s1; }

class RodEdges {
 public:
  // Every edge and node of `rods`. A non-positive edge radius is refused with
  // ParamError("rods", "rod 'NAME' has a non-positive radius on <edge_word> E; <why>").
  void bind(const std::vector<Rod*>& rods, const std::string& edge_word, const std::string& why);

  const std::vector<RodEdge>& edges() const { return edges_; }
  const std::vector<int>& nodeDofs() const { return node_dofs_; }  // x DOF of every node
  double maxRadius() const { return r_max_; }  // of the edges (0 without edges)
  double minRadius() const { return r_min_; }

  // Every pair (a, b), a < b, of edges whose boxes grown by radius + pad overlap (so every pair
  // closer than r_a + r_b + 2 pad is among them) and that excluded(A, B) does not exclude, in
  // increasing order, handed to keep(a, b, d) with d the centre-line distance (segmentDistance).
  // Allocation-free once warm.
  template <class Excluded, class Keep>
  void closePairs(const Vec& q, double pad, Excluded&& excluded, Keep&& keep) {
    findBoxPairs(q, pad);
    for (const auto& [a, b] : overlaps_) {
      const RodEdge &A = edges_[a], &B = edges_[b];
      if (excluded(A, B)) continue;
      keep(a, b, segmentDistance(q.segment<3>(A.x0), q.segment<3>(A.x1), q.segment<3>(B.x0), q.segment<3>(B.x1)));
    }
  }
  // closePairs' first half: the pairs of overlapping boxes (grown by radius + pad), sorted, into
  // boxPairs(), for a model that times the broad phase apart from its distance filter.
  void findBoxPairs(const Vec& q, double pad) {
    boxes_.resize(edges_.size());
    for (std::size_t e = 0; e < edges_.size(); ++e)
      boxes_[e] = segmentBox(q.segment<3>(edges_[e].x0), q.segment<3>(edges_[e].x1), edges_[e].radius + pad);
    sap_.query(boxes_, overlaps_);
  }
  const std::vector<std::pair<int, int>>& boxPairs() const { return overlaps_; }
  // Box pairs of the last closePairs, before the exclusion and the distance.
  int numBoxPairs() const { return static_cast<int>(overlaps_.size()); }
  // A sorted superset of the pairs closer than r_a + r_b + 2 pad that excluded(A, B) does not
  // exclude (a test independent of q), from a Verlet list with the given skin (verlet_pairs.h): the
  // pairs closePairs' caller keeps by the exact distance, at a fraction of the cost while the nodes
  // move little from call to call.
  template <class Excluded>
  const std::vector<std::pair<int, int>>& nearPairs(const Vec& q, double pad, double skin, Excluded&& excluded) {
    return near_.pairs(q, nullptr, pad, skin, [&](int a, int b) { return excluded(edges_[a], edges_[b]); });
  }
  int numNearPairs() const { return near_.size(); }

 private:
  std::vector<RodEdge> edges_;
  std::vector<int> node_dofs_;
  double r_max_ = 0, r_min_ = 0;
  std::vector<Aabb> boxes_;
  SweepAndPrune sap_;
  std::vector<std::pair<int, int>> overlaps_;
  VerletPairs near_;
};

// The positions of a set of nodes (x DOFs) when a list was built.
class NodeSnapshot {
 public:
  void take(const Vec& q, const std::vector<int>& node_dofs);
  void clear() { x_.resize(0); }
  // True until take: the list is to be built.
  bool empty() const { return x_.size() == 0; }
  // True when a node is farther than lim from its position at take (the same node_dofs).
  bool movedBeyond(const Vec& q, const std::vector<int>& node_dofs, double lim) const {
    const double lim2 = lim * lim;
    for (std::size_t i = 0; i < node_dofs.size(); ++i)
      if ((q.segment<3>(node_dofs[i]) - x_.segment<3>(3 * i)).squaredNorm() > lim2) return true;
    return false;
  }
  // The largest distance of a node from its position at take (infinite for NaN): every point of
  // every segment between these nodes moved at most that far.
  double largestMove(const Vec& q, const std::vector<int>& node_dofs) const {
    double worst2 = 0;
    for (std::size_t i = 0; i < node_dofs.size(); ++i) {
      const double d2 = (q.segment<3>(node_dofs[i]) - x_.segment<3>(3 * i)).squaredNorm();
      if (!(d2 <= worst2)) worst2 = d2 == d2 ? d2 : std::numeric_limits<double>::infinity();
    }
    return std::sqrt(worst2);
  }
  // Node i's position at take.
  Vec3 node(std::size_t i) const { return x_.segment<3>(3 * i); }

 private:
  Vec x_;  // 3 per node, node_dofs order
};

}  // namespace rodsim::geometry
