// IpcContact::findOverlaps: where the rods start interpenetrated, for the kernel's check before the
// first step; and the refusal of `allow_initial_overlap = true` when they do (the barrier
// -(d - d_hat)^2 ln(d / d_hat) is undefined for d <= 0: ipc cannot push overlapping rods apart).
// Called once: clear rather than fast, with the sweep and prune broad phase of contact_imc.
#include "ipc_contact.h"

#include <rodsim/geometry/segment_segment_distance.h>

#include <algorithm>
#include <cstdio>

namespace rodsim::ipc {

void IpcContact::findOverlaps(const Vec& q, std::vector<Overlap>& out) const {
  if (!world_) return;
  // Each selected edge and node by its rod and its index on that rod (bind lays them out rod
  // after rod, in the order of resolveRods).
  const std::vector<Rod*> rods = resolveRods(*world_, rod_names_, "rods");
  std::vector<int> edge_index, node_index, node_rod;
  for (int ri = 0; ri < static_cast<int>(rods.size()); ++ri) {
    for (int e = 0; e < rods[ri]->numEdges(); ++e) edge_index.push_back(e);
    for (int i = 0; i < rods[ri]->numNodes(); ++i) {
      node_index.push_back(i);
      node_rod.push_back(ri);
    }
  }

  // Rod-rod and self: boxes grown by the edge's own radius overlap whenever the segments are closer
  // than r_a + r_b, so the sweep and prune misses no overlap.
  std::vector<Aabb> boxes(edges_.size());
  for (std::size_t e = 0; e < edges_.size(); ++e)
    boxes[e] = geometry::segmentBox(node(q, edges_[e].x0), node(q, edges_[e].x1), edges_[e].radius);
  std::vector<std::pair<int, int>> pairs;
  geometry::SweepAndPrune sap;
  sap.query(boxes, pairs);
  for (const auto& [a, b] : pairs) {
    const EdgeRef &A = edges_[a], &B = edges_[b];
    if (excludedSelfPair(A, B)) continue;  // the neighbours ipc never pairs
    const double gap =
        geometry::segmentDistance(node(q, A.x0), node(q, A.x1), node(q, B.x0), node(q, B.x1)) - (A.radius + B.radius);
    if (!(gap < 0)) continue;
    out.push_back({rods[A.rod]->name(), rods[B.rod]->name(), edge_index[a], edge_index[b], gap});
  }

  // Nodes inside an obstacle (ipc's obstacle barrier is node against surface).
  for (std::size_t i = 0; i < node_dofs_.size(); ++i)
    for (const Obstacle* o : obstacles_) {
      const double gap = o->signedDistance(node(q, node_dofs_[i])) - node_radius_[i];
      if (gap < 0) out.push_back({rods[node_rod[i]]->name(), o->name, node_index[i], -1, gap});
    }
}

void IpcContact::refuseInitialOverlap(const Vec& q) const {
  std::vector<Overlap> overlaps;
  findOverlaps(q, overlaps);
  // Rods placed exactly touching overlap by round-off: no overlap for the kernel's check either
  // (kOverlapRoundOff, of the pair's radii, as startPair measures it), and ipc starts such pairs with
  // the barrier's zero moved below contact (README, "Start-up: pairs inside d_hat").
  auto reach = [&](const Overlap& o) {
    const Rod& a = *world_->findRod(o.rod_a);
    return o.edge_b < 0 ? a.nodeRadius(o.edge_a) : a.radius(o.edge_a) + world_->findRod(o.rod_b)->radius(o.edge_b);
  };
  std::erase_if(overlaps, [&](const Overlap& o) { return !(o.gap < -kTouchRoundOff * reach(o)); });
  if (overlaps.empty()) return;
  const auto deepest =
      std::min_element(overlaps.begin(), overlaps.end(), [](const Overlap& x, const Overlap& y) { return x.gap < y.gap; });
  char depth[64];
  std::snprintf(depth, sizeof depth, "%.3g mm", -1e3 * deepest->gap);
  const std::string where = deepest->edge_b < 0 ? "rod '" + deepest->rod_a + "' node " + std::to_string(deepest->edge_a) +
                                                      " inside obstacle '" + deepest->rod_b + "'"
                                                : "rods '" + deepest->rod_a + "' edge " + std::to_string(deepest->edge_a) +
                                                      " and '" + deepest->rod_b + "' edge " + std::to_string(deepest->edge_b);
  throw ParamError("allow_initial_overlap",
                   "ipc cannot start from overlapping rods: its barrier is defined for positive gaps only, so it "
                   "cannot push them apart; the initial configuration has " +
                       std::to_string(overlaps.size()) + " overlap" + (overlaps.size() == 1 ? "" : "s") +
                       " (deepest: " + where + ", by " + depth +
                       "). Move the rods apart, or use a model that separates them (imc, alart-curnier)");
}

}  // namespace rodsim::ipc
