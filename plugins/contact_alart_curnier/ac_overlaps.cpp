// AlartCurnierContact::findOverlaps: where the rods start interpenetrated, for the kernel's check
// before the first step (with `allow_initial_overlap = true` the gap-rate constraint then pushes
// the rods apart: an overlapping contact must open at least at the rate -gap/dt). Called once:
// clear rather than fast, with a sort-and-sweep broad phase like the candidate search of beginStep.
#include "ac_contact.h"

#include <rodsim/geometry/broad_phase.h>
#include <rodsim/geometry/segment_segment_distance.h>

#include <algorithm>

namespace rodsim::ac {

using geometry::closestSegmentPoints;

bool excludedSelfPair(const Rod& rod, int ea, int eb) {
  if (eb - ea <= 1) return true;
  double along = 0;
  for (int k = ea + 1; k < eb; ++k) along += rod.restVoronoiLength(k);
  return along < 2 * (rod.radius(ea) + rod.radius(eb));
}

namespace {

// Edge pairs of `rods` closer than the sum of their radii (self-contact neighbours excluded).
void findEdgeOverlaps(const std::vector<Rod*>& rods, const Vec& q, std::vector<Overlap>& out) {
  // Rod-rod and self: boxes grown by the edge's own radius overlap whenever the segments are closer
  // than r_a + r_b; sorted by their lower end along the axis of largest spread, each box is
  // compared with the boxes that start before it ends.
  struct Box {
    Vec3 lo, hi;
    int rod, edge;
  };
  std::vector<Box> boxes;
  for (int ri = 0; ri < static_cast<int>(rods.size()); ++ri) {
    const Rod& rod = *rods[ri];
    for (int e = 0; e < rod.numEdges(); ++e) {
      const Vec3 xa = q.segment<3>(rod.globalPositionDof(e)), xb = q.segment<3>(rod.globalPositionDof(e + 1));
      boxes.push_back({xa.cwiseMin(xb).array() - rod.radius(e), xa.cwiseMax(xb).array() + rod.radius(e), ri, e});
    }
  }
  if (boxes.empty()) return;
  const int axis = geometry::axisOfLargestSpread(boxes);
  std::sort(boxes.begin(), boxes.end(), [axis](const Box& x, const Box& y) {
    return x.lo[axis] < y.lo[axis] ||
           (x.lo[axis] == y.lo[axis] && std::pair(x.rod, x.edge) < std::pair(y.rod, y.edge));
  });
  std::vector<std::array<int, 4>> pairs;  // rodA, edgeA, rodB, edgeB with (rodA, edgeA) < (rodB, edgeB)
  for (std::size_t i = 0; i < boxes.size(); ++i)
    for (std::size_t j = i + 1; j < boxes.size() && boxes[j].lo[axis] <= boxes[i].hi[axis]; ++j) {
      const Box &A = boxes[i], &B = boxes[j];
      if ((A.lo.array() > B.hi.array()).any() || (B.lo.array() > A.hi.array()).any()) continue;
      std::array<int, 4> p{A.rod, A.edge, B.rod, B.edge};
      if (std::pair(p[0], p[1]) > std::pair(p[2], p[3])) p = {p[2], p[3], p[0], p[1]};
      if (p[0] == p[2] && excludedSelfPair(*rods[p[0]], p[1], p[3])) continue;
      pairs.push_back(p);
    }
  std::sort(pairs.begin(), pairs.end());  // report in rod and edge order
  for (const auto& [ra, ea, rb, eb] : pairs) {
    const Rod &RA = *rods[ra], &RB = *rods[rb];
    const Vec3 a0 = q.segment<3>(RA.globalPositionDof(ea)), a1 = q.segment<3>(RA.globalPositionDof(ea + 1));
    const Vec3 b0 = q.segment<3>(RB.globalPositionDof(eb)), b1 = q.segment<3>(RB.globalPositionDof(eb + 1));
    double s, t;
    closestSegmentPoints(a0, a1, b0, b1, s, t);
    const double gap = ((a0 + s * (a1 - a0)) - (b0 + t * (b1 - b0))).norm() - RA.radius(ea) - RB.radius(eb);
    if (gap < 0) out.push_back({RA.name(), RB.name(), ea, eb, gap});
  }
}

}  // namespace

void AlartCurnierContact::findOverlaps(const Vec& q, std::vector<Overlap>& out) const {
  if (!world_) return;
  // Rod-rod pairs first, then nodes in obstacles (as imc and ipc report them); rod_rod = false:
  // obstacles only (rods pass through each other by design).
  if (rod_rod_) findEdgeOverlaps(rods_, q, out);
  // Nodes inside an obstacle (alart-curnier's obstacle contact is node against surface).
  for (const Rod* rod : rods_)
    for (int n = 0; n < rod->numNodes(); ++n)
      for (int oi : obstacles_) {
        const Obstacle& ob = world_->obstacle(oi);
        const double gap = ob.signedDistance(q.segment<3>(rod->globalPositionDof(n))) - rod->nodeRadius(n);
        if (gap < 0) out.push_back({rod->name(), ob.name, n, -1, gap});
      }
}

}  // namespace rodsim::ac
