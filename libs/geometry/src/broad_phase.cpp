#include <rodsim/geometry/broad_phase.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace rodsim::geometry {

void SweepAndPrune::query(const std::vector<Aabb>& boxes, std::vector<std::pair<int, int>>& out) {
  if (static_cast<int>(boxes.size()) >= kGridMinBoxes)
    queryGrid(boxes, out);
  else
    querySweep(boxes, out);
}

void SweepAndPrune::queryGrid(const std::vector<Aabb>& boxes, std::vector<std::pair<int, int>>& out) {
  out.clear();
  const int n = static_cast<int>(boxes.size());
  if (n < 2) return;
  Eigen::Vector3d lo = boxes[0].lo, hi = boxes[0].hi;
  double extent = 0;  // largest box edge
  for (const Aabb& b : boxes) {
    lo = lo.cwiseMin(b.lo);
    hi = hi.cwiseMax(b.hi);
    extent = std::max(extent, (b.hi - b.lo).maxCoeff());
  }
  if (!lo.allFinite() || !hi.allFinite() || !std::isfinite(extent)) {
    querySweep(boxes, out);
    return;
  }
  const Eigen::Vector3d span = hi - lo;
  // Cells no smaller than the largest box, and no more cells than 4 per box (a sparse pile in a
  // large domain would otherwise have mostly empty cells to visit).
  double cell = std::max(extent, 1e-12 * std::max(1.0, span.maxCoeff()));
  std::array<int, 3> dims{};
  for (;;) {
    double total = 1;
    for (int k = 0; k < 3; ++k) {
      dims[k] = std::max(1, static_cast<int>(std::min(span[k] / cell, 1e6)));
      total *= dims[k];
    }
    if (total <= 4.0 * n + 64) break;
    cell *= std::cbrt(total / (4.0 * n + 64)) * 1.01;
  }
  Eigen::Vector3d inv;  // cells per metre on each axis: dims[k] cells of span[k] / dims[k] >= cell
  for (int k = 0; k < 3; ++k) inv[k] = span[k] > 0 ? dims[k] / span[k] : 0.0;
  auto cellOf = [&](double x, int k) {
    return std::min(dims[k] - 1, std::max(0, static_cast<int>((x - lo[k]) * inv[k])));
  };
  auto index = [&](int cx, int cy, int cz) { return (cz * dims[1] + cy) * dims[0] + cx; };
  const int ncells = dims[0] * dims[1] * dims[2];
  cell_start_.assign(static_cast<std::size_t>(ncells) + 1, 0);
  // Two passes over the boxes (count, then fill): boxes in ascending order within every cell.
  for (int pass = 0; pass < 2; ++pass) {
    for (int i = 0; i < n; ++i) {
      const Aabb& b = boxes[i];
      const int x0 = cellOf(b.lo[0], 0), x1 = cellOf(b.hi[0], 0), y0 = cellOf(b.lo[1], 1), y1 = cellOf(b.hi[1], 1),
                z0 = cellOf(b.lo[2], 2), z1 = cellOf(b.hi[2], 2);
      for (int cz = z0; cz <= z1; ++cz)
        for (int cy = y0; cy <= y1; ++cy)
          for (int cx = x0; cx <= x1; ++cx) {
            const int c = index(cx, cy, cz);
            if (pass == 0)
              ++cell_start_[c + 1];
            else
              cell_items_[cell_start_[c]++] = i;
          }
    }
    if (pass == 0) {
      for (int c = 0; c < ncells; ++c) cell_start_[c + 1] += cell_start_[c];
      cell_items_.resize(static_cast<std::size_t>(cell_start_[ncells]));
    } else {
      // cell_start_[c] now holds the end of cell c: shift back to the starts.
      for (int c = ncells; c > 0; --c) cell_start_[c] = cell_start_[c - 1];
      cell_start_[0] = 0;
    }
  }
  for (int cz = 0; cz < dims[2]; ++cz)
    for (int cy = 0; cy < dims[1]; ++cy)
      for (int cx = 0; cx < dims[0]; ++cx) {
        const int c = index(cx, cy, cz);
        for (int s = cell_start_[c]; s < cell_start_[c + 1]; ++s) {
          const int i = cell_items_[s];
          for (int t = s + 1; t < cell_start_[c + 1]; ++t) {
            const int j = cell_items_[t];
            if (!boxes[i].overlaps(boxes[j])) continue;
            // Reported by the cell of the intersection's low corner only (it lies in both boxes,
            // so both were entered in that cell): each pair once.
            const Eigen::Vector3d corner = boxes[i].lo.cwiseMax(boxes[j].lo);
            if (cellOf(corner[0], 0) == cx && cellOf(corner[1], 1) == cy && cellOf(corner[2], 2) == cz)
              out.emplace_back(i, j);  // i < j: items ascend within a cell
          }
        }
      }
  std::sort(out.begin(), out.end());
}

void SweepAndPrune::querySweep(const std::vector<Aabb>& boxes, std::vector<std::pair<int, int>>& out) {
  out.clear();
  const int n = static_cast<int>(boxes.size());
  if (n < 2) return;
  const int axis = axisOfLargestSpread(boxes);

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
