// The entries of A^-1 inside the band of a sparse symmetric banded A, without forming A^-1.
//
// The Delassus diagonal W_ii = G_i A^-1 G_i^T of a contact needs A^-1 only on the few DOFs of the
// contact's nodes, which lie within a rod's bandwidth of each other (DER interleaves x_i and
// theta^i, so a rod's A has bandwidth 11). A = L D L^T in band storage (no pivoting: A = M / dt^2
// + K is symmetric and nonsingular; a zero pivot is reported), then the selected inverse of
// Takahashi, Fagan and Chin (1973): from Z = L^-T D^-1 L^-1,
//   Z_ji = delta_ji / d_j - sum_{k = j+1}^{j+b} L_kj Z_ki   for j <= i <= j + b, j = n-1 down to 0,
// which only reads entries of Z inside the band. O(n b^2) flops, against one sparse solve per
// contact and direction (3 per contact) for the same numbers.
#pragma once

#include <Eigen/SparseCore>

#include <cstdlib>
#include <vector>

namespace rodsim::ac {

class BandInverse {
 public:
  // false when A's bandwidth exceeds max_band or a pivot of L D L^T is zero or not finite.
  bool compute(const Eigen::SparseMatrix<double>& A, int max_band);
  int bandwidth() const { return b_; }
  bool inBand(int i, int j) const { return std::abs(i - j) <= b_; }
  // (A^-1)_ij for |i - j| <= bandwidth().
  double operator()(int i, int j) const {
    return i >= j ? z_[static_cast<std::size_t>(j) * (b_ + 1) + (i - j)]
                  : z_[static_cast<std::size_t>(i) * (b_ + 1) + (j - i)];
  }

 private:
  int n_ = 0, b_ = 0;
  std::vector<double> l_, z_;  // column j, offset o = i - j in [0, b]: L_ij (L_jj holds d_j), Z_ij
};

}  // namespace rodsim::ac
