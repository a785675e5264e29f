#include "ac_band_inverse.h"

#include <algorithm>
#include <cmath>

namespace rodsim::ac {

bool BandInverse::compute(const Eigen::SparseMatrix<double>& A, int max_band) {
  const int n = static_cast<int>(A.rows());
  int b = 0;
  for (int c = 0; c < A.outerSize(); ++c)
    for (Eigen::SparseMatrix<double>::InnerIterator it(A, c); it; ++it) b = std::max(b, std::abs(int(it.row()) - c));
  if (b > max_band) return false;
  n_ = n;
  b_ = b;
  const std::size_t w = static_cast<std::size_t>(b) + 1;
  auto at = [w](std::vector<double>& v, int i, int j) -> double& { return v[static_cast<std::size_t>(j) * w + (i - j)]; };
  l_.assign(static_cast<std::size_t>(n) * w, 0.0);
  for (int c = 0; c < A.outerSize(); ++c)
    for (Eigen::SparseMatrix<double>::InnerIterator it(A, c); it; ++it)
      if (it.row() >= c) at(l_, int(it.row()), c) = it.value();
  // L D L^T in place: column j of l_ holds d_j, then L_{j+1,j} .. L_{j+b,j}.
  for (int j = 0; j < n; ++j) {
    double d = at(l_, j, j);
    for (int k = std::max(0, j - b); k < j; ++k) d -= at(l_, j, k) * at(l_, j, k) * at(l_, k, k);
    if (!(std::isfinite(d) && d != 0)) return false;
    at(l_, j, j) = d;
    for (int i = j + 1; i <= std::min(n - 1, j + b); ++i) {
      double s = at(l_, i, j);
      for (int k = std::max(0, i - b); k < j; ++k) s -= at(l_, i, k) * at(l_, j, k) * at(l_, k, k);
      at(l_, i, j) = s / d;
    }
  }
  z_.assign(static_cast<std::size_t>(n) * w, 0.0);
  for (int j = n - 1; j >= 0; --j) {
    const int last = std::min(n - 1, j + b);
    for (int i = last; i >= j; --i) {
      double s = i == j ? 1.0 / at(l_, j, j) : 0.0;
      for (int k = j + 1; k <= last; ++k) s -= at(l_, k, j) * (*this)(k, i);
      at(z_, i, j) = s;
    }
  }
  return true;
}

}  // namespace rodsim::ac
