// Broad phase over axis-aligned bounding boxes: sweep and prune along the axis of largest spread
// of the box centres, O(n log n + pairs) instead of the O(n^2) loop of the authors' code, for small
// sets; a uniform grid for large ones. Used by contact_imc, contact_ipc, spring-dashpot and the
// swept check (edge boxes grown by the contact reach).
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

// The axis (0, 1, 2) along which the centres of `boxes` (anything with Eigen::Vector3d-like `lo`
// and `hi`) spread most: the sweep axis of a sweep and prune. 0 for an empty set.
template <class Box> int axisOfLargestSpread(const std::vector<Box>& boxes) {
  if (boxes.empty()) return 0;
  Eigen::Vector3d mean = Eigen::Vector3d::Zero(), sq = Eigen::Vector3d::Zero();
  for (const Box& b : boxes) {
    const Eigen::Vector3d c = 0.5 * (b.lo + b.hi);
    mean += c;
    sq += c.cwiseProduct(c);
  }
  const double n = static_cast<double>(boxes.size());
  mean /= n;
  const Eigen::Vector3d var = sq / n - mean.cwiseProduct(mean);
  int axis = 0;
  var.maxCoeff(&axis);
  return axis;
}

class SweepAndPrune {
 public:
  // Every pair (a, b), a < b, of overlapping boxes (closed boxes: touching counts), sorted
  // lexicographically. Buffers are reused: no allocation once warm. querySweep below
  // kGridMinBoxes boxes, queryGrid from there; both give exactly the same pairs.
  void query(const std::vector<Aabb>& boxes, std::vector<std::pair<int, int>>& out);
  // The sweep along the axis of largest spread: compares every box with every box whose interval
  // overlaps on that axis. On a pile of crossing rods (rods along x and along y) each rod across
  // the sweep axis lies in one interval with all its edges: ~M boxes per box for M rods per layer,
  // O(n^1.5) work in all.
  void querySweep(const std::vector<Aabb>& boxes, std::vector<std::pair<int, int>>& out);
  // A uniform grid with cells at least as large as the largest box (each box in at most 2 x 2 x 2
  // cells), compared cell by cell; a pair is kept in the one cell holding the low corner of the
  // boxes' intersection. O(n + pairs) when the boxes are of similar size.
  void queryGrid(const std::vector<Aabb>& boxes, std::vector<std::pair<int, int>>& out);
  static constexpr int kGridMinBoxes = 256;

 private:
  std::vector<std::pair<double, int>> order_;
  std::vector<int> cell_start_, cell_items_;  // boxes per cell, compressed (CSR)
};

// Reference O(n^2) answer, same format (for tests).
std::vector<std::pair<int, int>> bruteForcePairs(const std::vector<Aabb>& boxes);

}  // namespace rodsim::geometry
