#include <rodsim/geometry/broad_phase.h>

#include <algorithm>

namespace rodsim::geometry {

void SweepAndPrune::query(const std::vector<Aabb>& boxes, std::vector<std::pair<int, int>>& out) {
  out.clear();
  const int n = static_cast<int>(boxes.size());
  if (n < 2) return;
  // Sweep axis: largest variance of the box centres.
  Eigen::Vector3d mean = Eigen::Vector3d::Zero(), sq = Eigen::Vector3d::Zero();
  for (const Aabb& b : boxes) {
    const Eigen::Vector3d c = 0.5 * (b.lo + b.hi);
    mean += c;
    sq += c.cwiseProduct(c);
  }
  mean /= n;
  const Eigen::Vector3d var = sq / n - mean.cwiseProduct(mean);
  int axis = 0;
  var.maxCoeff(&axis);

  order_.resize(n);
  for (int i = 0; i < n; ++i) order_[i] = {boxes[i].lo[axis], i};
  std::sort(order_.begin(), order_.end());
  for (int s = 0; s < n; ++s) {
    const int i = order_[s].second;
    const double hi = boxes[i].hi[axis];
    for (int t = s + 1; t < n && order_[t].first <= hi; ++t) {
      const int j = order_[t].second;
      if (boxes[i].overlaps(boxes[j])) out.emplace_back(std::min(i, j), std::max(i, j));
    }
  }
  std::sort(out.begin(), out.end());
}

std::vector<std::pair<int, int>> bruteForcePairs(const std::vector<Aabb>& boxes) {
  std::vector<std::pair<int, int>> out;
  for (int i = 0; i < static_cast<int>(boxes.size()); ++i)
    for (int j = i + 1; j < static_cast<int>(boxes.size()); ++j)
      if (boxes[i].overlaps(boxes[j])) out.emplace_back(i, j);
  return out;
}

}  // namespace rodsim::geometry
