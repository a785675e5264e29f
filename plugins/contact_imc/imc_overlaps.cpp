// ImcContact::findOverlaps: where the rods start interpenetrated (the kernel refuses such a scene
// unless `allow_initial_overlap = true`; imc then pushes the rods apart with its quadratic branch).
// Called once before the first step: clear rather than fast, but with the broad phase, so that
// scenes of thousands of edges take milliseconds.
#include "imc_contact.h"

#include <rodsim/geometry/segment_segment_distance.h>

#include <algorithm>

namespace rodsim::imc {

using geometry::segmentBox;
using geometry::segmentDistance;

void ImcContact::findOverlaps(const Vec& q, std::vector<Overlap>& out) const {
  if (!world_) return;
  // Each selected edge and node by its rod and its index on that rod (bind lays them out rod
  // after rod, in the order of resolveRods).
  const std::vector<Rod*> rods = resolveRods(*world_, rod_names_, "rods");
  std::vector<int> edge_index, node_index;
  for (const Rod* rod : rods) {
    for (int e = 0; e < rod->numEdges(); ++e) edge_index.push_back(e);
    for (int i = 0; i < rod->numNodes(); ++i) node_index.push_back(i);
  }

  // Rod-rod and self: boxes grown by the edge's own radius overlap whenever the segments are closer
  // than r_a + r_b, so the sweep and prune misses no overlap.
  std::vector<Aabb> boxes(edges_.size());
  for (std::size_t e = 0; e < edges_.size(); ++e)
    boxes[e] = segmentBox(node(q, edges_[e].x0), node(q, edges_[e].x1), edges_[e].radius);
  std::vector<std::pair<int, int>> pairs;
  SweepAndPrune sap;
  sap.query(boxes, pairs);
  for (const auto& [a, b] : pairs) {
    const EdgeRef &A = edges_[a], &B = edges_[b];
    if (excludedSelfPair(A, B)) continue;  // the neighbours imc never pairs
    const double gap =
        segmentDistance(node(q, A.x0), node(q, A.x1), node(q, B.x0), node(q, B.x1)) - (A.radius + B.radius);
    if (!(gap < 0)) continue;
    out.push_back({rods[A.rod]->name(), rods[B.rod]->name(), edge_index[a], edge_index[b], gap});
  }

  // Nodes inside an obstacle (imc's obstacle contact is node against surface).
  for (std::size_t i = 0; i < node_dofs_.size(); ++i)
    for (const Obstacle* o : obstacles_) {
      const double gap = o->signedDistance(node(q, node_dofs_[i])) - node_radius_[i];
      if (!(gap < 0)) continue;
      // The rod of node i: the one whose node range holds it.
      std::size_t first = 0;
      const Rod* rod = nullptr;
      for (const Rod* r : rods) {
        if (i < first + r->numNodes()) {
          rod = r;
          break;
        }
        first += r->numNodes();
      }
      out.push_back({rod->name(), o->name, node_index[i], -1, gap});
    }
}

}  // namespace rodsim::imc
