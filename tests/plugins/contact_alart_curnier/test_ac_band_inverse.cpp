// BandInverse: the entries of A^-1 inside A's band, against a dense inverse.
#include "ac_band_inverse.h"

#include <doctest/doctest.h>

#include <Eigen/Dense>

#include <random>

using rodsim::ac::BandInverse;

namespace {

// A symmetric matrix of bandwidth b with a dominant diagonal of the given sign pattern.
Eigen::SparseMatrix<double> banded(int n, int b, bool indefinite, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  Eigen::MatrixXd D = Eigen::MatrixXd::Zero(n, n);
  for (int j = 0; j < n; ++j)
    for (int i = j + 1; i <= std::min(n - 1, j + b); ++i) D(i, j) = D(j, i) = uni(rng);
  for (int j = 0; j < n; ++j) D(j, j) = (indefinite && j % 3 == 1 ? -1.0 : 1.0) * (2.0 * b + 1.0 + uni(rng));
  return D.sparseView();
}

}  // namespace

TEST_CASE("BandInverse: A^-1 inside the band of a banded symmetric A equals the dense inverse") {
  for (const bool indefinite : {false, true}) {
    const int n = 61, b = 11;  // b: a DER rod's A (x_i and theta^i interleaved)
    const Eigen::SparseMatrix<double> A = banded(n, b, indefinite, 3);
    BandInverse band;
    REQUIRE(band.compute(A, 64));
    CHECK(band.bandwidth() == b);
    const Eigen::MatrixXd Z = Eigen::MatrixXd(A).inverse();
    double err = 0;
    for (int j = 0; j < n; ++j)
      for (int i = std::max(0, j - b); i <= std::min(n - 1, j + b); ++i) err = std::max(err, std::abs(band(i, j) - Z(i, j)));
    // Diagonally dominant: cond(A) ~ 10, the recurrence loses a few ulps per band step.
    CHECK(err <= 1e-13 * Z.cwiseAbs().maxCoeff());
    CHECK(band.inBand(0, b));
    CHECK(!band.inBand(0, b + 1));
  }
}

TEST_CASE("BandInverse: a band wider than allowed or a zero pivot is refused") {
  BandInverse band;
  CHECK(!band.compute(banded(30, 20, false, 5), 16));
  Eigen::MatrixXd D = Eigen::MatrixXd::Identity(4, 4);
  D(0, 0) = 0;  // first pivot zero: L D L^T without pivoting fails
  D(0, 1) = D(1, 0) = 1;
  CHECK(!band.compute(Eigen::SparseMatrix<double>(D.sparseView()), 8));
}
