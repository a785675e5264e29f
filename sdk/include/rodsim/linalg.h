// Vector types and the stiffness accumulator shared by every component.
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>  // cross(), unitOrthogonal(): used by SDK headers and most plugins
#include <Eigen/SparseCore>

#include <vector>

namespace rodsim {

using Vec = Eigen::VectorXd;
using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;
using VecRef = Eigen::Ref<Vec>;
using ConstVecRef = Eigen::Ref<const Vec>;

// Collects entries of a sparse matrix in global DOF indexing: the stiffness K = -dF/dq (N/m,
// N/rad, N m/rad, ...) of every component. Entries at the same (row, col) are summed.
// Components add the same entries in the same order while the sparsity pattern is unchanged;
// the kernel detects that and refills the values of the existing matrix without allocating.
// Capacity is kept between evaluations, so a warm accumulator allocates nothing.
class StiffnessSink {
 public:
  void clear() { entries_.clear(); }
  void reserve(std::size_t n) { entries_.reserve(n); }
  void add(int row, int col, double value) { entries_.emplace_back(row, col, value); }

  // Adds a dense block whose rows and columns are the global DOFs `dofs` (size == block size).
  template <class Derived, class Index>
  void addBlock(const Index& dofs, const Eigen::MatrixBase<Derived>& block) {
    for (int c = 0; c < block.cols(); ++c)
      for (int r = 0; r < block.rows(); ++r) add(int(dofs[r]), int(dofs[c]), block(r, c));
  }
  // Adds a dense block over the contiguous global DOFs [first, first + size).
  template <class Derived>
  void addContiguous(int first, const Eigen::MatrixBase<Derived>& block) {
    for (int c = 0; c < block.cols(); ++c)
      for (int r = 0; r < block.rows(); ++r) add(first + r, first + c, block(r, c));
  }

  const std::vector<Eigen::Triplet<double>>& entries() const { return entries_; }

 private:
  std::vector<Eigen::Triplet<double>> entries_;
};

}  // namespace rodsim
