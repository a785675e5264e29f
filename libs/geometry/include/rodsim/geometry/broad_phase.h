// Broad phase over axis-aligned bounding boxes: sweep and prune along the axis of largest spread
// of the box centres. O(n log n + pairs) instead of the O(n^2) loop of the authors' code.
// Used by contact_imc and contact_ipc (edge boxes grown by the contact reach).
#pragma once

#include <Eigen/Core>

#include <utility>
#include <vector>

namespace rodsim::geometry {

struct Aabb {
  Eigen::Vector3d lo, hi;
  bool overlaps(const Aabb& o) const {
    return (lo.array() <= o.hi.array()).all() && (o.lo.array() <= hi.array()).all();
  }
};

// Box of a segment (p, q) grown by `pad` on every side.
inline Aabb segmentBox(const Eigen::Vector3d& p, const Eigen::Vector3d& q, double pad) {
  return {p.cwiseMin(q).array() - pad, p.cwiseMax(q).array() + pad};
}

class SweepAndPrune {
 public:
  // Every pair (a, b), a < b, of overlapping boxes (closed boxes: touching counts), sorted
  // lexicographically. Buffers are reused: no allocation once warm.
  void query(const std::vector<Aabb>& boxes, std::vector<std::pair<int, int>>& out);

 private:
  std::vector<std::pair<double, int>> order_;
};

// Reference O(n^2) answer, same format (for tests).
std::vector<std::pair<int, int>> bruteForcePairs(const std::vector<Aabb>& boxes);

}  // namespace rodsim::geometry
