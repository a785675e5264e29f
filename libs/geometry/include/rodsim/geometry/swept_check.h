// The continuous check of an accepted step (SweptContactCheck, SDK 1.2) for contact models that
// detect contact at discrete configurations: did two edges, or a node and an obstacle, pass
// through each other along the linear motion q0 + t (q1 - q0), t in [0, 1]?
//
// A crossing is a pair whose centre-line distance falls below kCrossingFraction = 1/2 of the sum
// of their radii during the step while it was above that at the start (a node: its distance to
// the obstacle's surface below half its radius). Half the contact distance is far deeper than any
// state these models accept (they keep gaps near zero), so a resting or sliding contact never
// triggers it, and it is reached before the centre lines meet, so a rod passing through another
// is seen even when the step ends with the centre lines apart again. Pairs already closer than
// that at the start (an allowed initial overlap) are not checked.
//
// Candidates: edges' boxes swept from q0 to q1 (the union of both boxes, grown by the radius), the
// pairs among them that overlap (a Verlet list, verlet_pairs.h, rebuilt when a node has moved more
// than the largest radius since its last build), the model's own neighbour exclusion, then the conservative-advancement
// edge-edge CCD (ccd.h) with the target R = fraction (r_a + r_b) and gap_fraction 0: a crossing is
// a result t < 1, where the distance came within 1e-6 of the starting margin of R (one iterate for
// a head-on approach), or where the advancement ran out of its 200 iterations still approaching
// (a conservative answer: a pair grazing R). Nodes against obstacles: node-plane exact,
// node-sphere and node-cylinder by the root of the quadratic (ccd.h). Allocation-free once warm.
#pragma once

#include <rodsim/capabilities.h>
#include <rodsim/geometry/broad_phase.h>
#include <rodsim/geometry/ccd.h>
#include <rodsim/geometry/verlet_pairs.h>
#include <rodsim/obstacle.h>
#include <rodsim/rod.h>

#include <vector>

namespace rodsim::geometry {

class SweptCrossingCheck {
 public:
  static constexpr double kCrossingFraction = 0.5;

  struct Edge {
    int x0 = 0, x1 = 0;   // global x DOF of the two nodes
    int rod = 0;          // index into the rods given to bind
    int index = 0;        // edge index on its rod
    double radius = 0;    // m
    int id = 0;           // position in edges(): rod after rod, edge after edge
  };

  // The model's rods (every edge and node of each) and obstacles.
  void bind(const std::vector<Rod*>& rods, const std::vector<const Obstacle*>& obstacles);

  // excluded(const Edge& a, const Edge& b), a before b: the model's exclusion (its self-contact
  // neighbours; true: never a pair). The same rule at every call (the Verlet list applies it when it
  // is built); bind again to change it.
  template <class Excluded> bool find(const Vec& q0, const Vec& q1, Excluded&& excluded, Crossing& out) {
    if (!edges_.empty()) {
      sweptBoxes(q0, q1);
      const auto& near = near_.pairs(q0, &q1, 0.0, skin_, [&](int a, int b) { return excluded(edges_[a], edges_[b]); });
      for (const auto& [a, b] : near)
        if (boxes_[a].overlaps(boxes_[b]) && edgePair(q0, q1, edges_[a], edges_[b], out)) return true;
    }
    return nodesAgainstObstacles(q0, q1, out);
  }

  const std::vector<Edge>& edges() const { return edges_; }

 private:
  void sweptBoxes(const Vec& q0, const Vec& q1);
  bool edgePair(const Vec& q0, const Vec& q1, const Edge& A, const Edge& B, Crossing& out) const;
  bool nodesAgainstObstacles(const Vec& q0, const Vec& q1, Crossing& out) const;

  std::vector<Rod*> rods_;
  std::vector<Edge> edges_;
  struct Node {
    int x = 0, rod = 0, index = 0;
    double radius = 0;
  };
  std::vector<Node> nodes_;
  std::vector<const Obstacle*> obstacles_;
  std::vector<Aabb> boxes_;  // swept boxes of the step being checked
  VerletPairs near_;
  double skin_ = 0;  // the Verlet list's skin: the largest edge radius
};

}  // namespace rodsim::geometry
