// GMRES for the dense RSS system (libs/krylov), right-preconditioned by a
// block-diagonal preconditioner: the inverse of each rod's self-interaction block (the diagonal
// block of A over that rod's nodes), computed from the operator of some earlier step.
// Between refreshes the factors are stale; GMRES still meets its residual test exactly, it only
// needs more iterations as the geometry drifts, and the caller refreshes when it does (the
// error bound of reusing A lies in the residual check itself). All workspace is sized once;
// solve() allocates nothing except when the preconditioner is refreshed.
#pragma once

#include "two_thread_team.h"

#include <rodsim/krylov/gmres.h>
#include <rodsim/linalg.h>

#include <Eigen/Dense>
#include <Eigen/LU>

#include <vector>

namespace rodsim::rss {

// What GMRES needs of a square operator of size n: y = A x, and a diagonal block as a dense matrix
// (for the block-Jacobi preconditioner).
class LinearOperator {
 public:
  virtual ~LinearOperator() = default;
  virtual void apply(const double* x, double* y) const = 0;
  virtual void diagonalBlock(int first, int size, Eigen::MatrixXd& out) const = 0;
};

using krylov::GmresResult;

class Gmres {
 public:
  // The preconditioner's inverse blocks in single precision: a preconditioner need not be exact
  // (GMRES tests the residual of A itself), and half the bytes halve the time of its products,
  // which stream the blocks from memory.
  using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  // n unknowns; blocks: the first unknown of each diagonal block, plus n at the end.
  void resize(int n, int restart, std::vector<int> blocks);
  // Invert the diagonal blocks of A (O(Σ b³)).
  void refreshPreconditioner(const LinearOperator& A);
  bool hasPreconditioner() const { return has_preconditioner_; }
  // Splits the preconditioner's products with the team's helper (nullptr: none).
  void setTeam(TwoThreadTeam* team) { team_ = team; }
  // Solves A x = b to |b - A x| <= tol |b|, starting from x.
  GmresResult solve(const LinearOperator& A, const Vec& b, Vec& x, double tol, int max_iterations);

 private:
  void applyPreconditioner(const double* in, double* out);
  std::vector<int> blocks_;
  std::vector<RowMatrix> block_inverse_;  // of each diagonal block
  Eigen::MatrixXd block_;                 // scratch for a diagonal block
  bool has_preconditioner_ = false;
  TwoThreadTeam* team_ = nullptr;
  krylov::Gmres gmres_;
};

}  // namespace rodsim::rss
