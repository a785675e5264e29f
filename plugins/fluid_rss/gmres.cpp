#include "gmres.h"

#include <cmath>
#include <cstddef>

namespace rodsim::rss {

namespace {

// y = A x for `rows` rows of a dense row-major block (n columns, single precision) of the
// preconditioner. A dot product per row, summed in double; `omp simd` lets the compiler
// reassociate the sum into vector lanes, and the AVX-512 or AVX2 + FMA clone is picked at run time
// where the machine has it.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
void matVec(const float* __restrict A, int rows, int n, const double* __restrict x, double* __restrict y) {
  for (int i = 0; i < rows; ++i) {
    const float* __restrict row = A + static_cast<std::ptrdiff_t>(i) * n;
    double sum = 0.0;
#pragma omp simd reduction(+ : sum)
    for (int j = 0; j < n; ++j) sum += static_cast<double>(row[j]) * x[j];
    y[i] = sum;
  }
}

}  // namespace

void Gmres::resize(int n, int restart, std::vector<int> blocks) {
  n_ = n;
  blocks_ = std::move(blocks);
  block_inverse_.resize(blocks_.size() - 1);
  has_preconditioner_ = false;
  m_ = restart;
  V_.resize(n, m_ + 1);
  H_.resize(m_ + 1, m_);
  cs_.resize(m_);
  sn_.resize(m_);
  g_.resize(m_ + 1);
  y_.resize(m_);
  r_.resize(n);
  w_.resize(n);
  z_.resize(n);
}

void Gmres::refreshPreconditioner(const LinearOperator& A) {
  // The explicit inverse, not the LU factors: applying it is one dense product per block, which
  // vectorizes, where two triangular solves do not (instruction counts: benchmarks/README.md,
  // "fluid_rss"). Inverting costs about twice a factorization, paid only at a refresh.
  for (std::size_t b = 0; b + 1 < blocks_.size(); ++b) {
    const int first = blocks_[b], size = blocks_[b + 1] - blocks_[b];
    A.diagonalBlock(first, size, block_);
    block_inverse_[b] = Eigen::PartialPivLU<Eigen::MatrixXd>(block_).inverse().cast<float>();
  }
  has_preconditioner_ = true;
}

void Gmres::applyPreconditioner(const Vec& in, Vec& out) {
  // Rows [begin, end) of every block: all of them, or one half per thread of the team.
  auto rows = [&](int part, int parts) {
    for (std::size_t b = 0; b + 1 < blocks_.size(); ++b) {
      const int first = blocks_[b], size = blocks_[b + 1] - blocks_[b];
      const int begin = part * size / parts, end = (part + 1) * size / parts;
      matVec(block_inverse_[b].data() + static_cast<std::ptrdiff_t>(begin) * size, end - begin, size,
             in.data() + first, out.data() + first + begin);
    }
  };
  if (team_)
    team_->run([&](int part) { rows(part, 2); });
  else
    rows(0, 1);
}

GmresResult Gmres::solve(const LinearOperator& A, const Vec& b, Vec& x, double tol, int max_iterations) {
  if (!has_preconditioner_) refreshPreconditioner(A);
  GmresResult result;
  const double bnorm = b.norm();
  if (bnorm == 0) {
    x.setZero();
    result.converged = true;
    return result;
  }
  while (true) {
    A.apply(x.data(), r_.data());
    r_ = b - r_;
    double beta = r_.norm();
    result.relative_residual = beta / bnorm;
    if (result.relative_residual <= tol) {
      result.converged = true;
      return result;
    }
    if (result.iterations >= max_iterations) return result;
    V_.col(0) = r_ / beta;
    g_.setZero();
    g_[0] = beta;
    int k = 0;
    for (; k < m_ && result.iterations < max_iterations; ++k) {
      ++result.iterations;
      applyPreconditioner(V_.col(k), z_);
      A.apply(z_.data(), w_.data());
      for (int i = 0; i <= k; ++i) {  // modified Gram-Schmidt
        H_(i, k) = V_.col(i).dot(w_);
        w_ -= H_(i, k) * V_.col(i);
      }
      H_(k + 1, k) = w_.norm();
      if (H_(k + 1, k) > 0) V_.col(k + 1) = w_ / H_(k + 1, k);
      for (int i = 0; i < k; ++i) {  // previous Givens rotations
        const double t = cs_[i] * H_(i, k) + sn_[i] * H_(i + 1, k);
        H_(i + 1, k) = -sn_[i] * H_(i, k) + cs_[i] * H_(i + 1, k);
        H_(i, k) = t;
      }
      const double rho = std::hypot(H_(k, k), H_(k + 1, k));
      cs_[k] = H_(k, k) / rho;
      sn_[k] = H_(k + 1, k) / rho;
      H_(k, k) = rho;
      H_(k + 1, k) = 0;
      g_[k + 1] = -sn_[k] * g_[k];
      g_[k] = cs_[k] * g_[k];
      if (std::abs(g_[k + 1]) <= tol * bnorm) {
        ++k;
        break;
      }
    }
    // y = H⁻¹ g (upper triangular k x k), x += P⁻¹ V y.
    for (int i = k - 1; i >= 0; --i) {
      double s = g_[i];
      for (int j = i + 1; j < k; ++j) s -= H_(i, j) * y_[j];
      y_[i] = s / H_(i, i);
    }
    w_.noalias() = V_.leftCols(k) * y_.head(k);
    applyPreconditioner(w_, z_);
    x += z_;
  }
}

}  // namespace rodsim::rss
