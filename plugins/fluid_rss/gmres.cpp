#include "gmres.h"

#include <cstddef>

namespace rodsim::rss {

namespace {

// y = A x for `rows` rows of a dense row-major block (n columns, single precision) of the
// preconditioner: dot products summed in double, four rows at a time so that each x entry is loaded
// once for four rows and four sums are in flight. `omp simd` lets the compiler reassociate each sum
// into vector lanes; the AVX-512 or AVX2 + FMA clone is picked at run time where the machine has it.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
void matVec(const float* __restrict A, int rows, int n, const double* __restrict x, double* __restrict y) {
  int i = 0;
  for (; i + 3 < rows; i += 4) {
    const float* __restrict r0 = A + static_cast<std::ptrdiff_t>(i) * n;
    const float* __restrict r1 = r0 + n;
    const float* __restrict r2 = r1 + n;
    const float* __restrict r3 = r2 + n;
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
    for (int j = 0; j < n; ++j) {
      const double xj = x[j];
      s0 += static_cast<double>(r0[j]) * xj;
      s1 += static_cast<double>(r1[j]) * xj;
      s2 += static_cast<double>(r2[j]) * xj;
      s3 += static_cast<double>(r3[j]) * xj;
    }
    y[i] = s0, y[i + 1] = s1, y[i + 2] = s2, y[i + 3] = s3;
  }
  for (; i < rows; ++i) {
    const float* __restrict row = A + static_cast<std::ptrdiff_t>(i) * n;
    double sum = 0.0;
#pragma omp simd reduction(+ : sum)
    for (int j = 0; j < n; ++j) sum += static_cast<double>(row[j]) * x[j];
    y[i] = sum;
  }
}

}  // namespace

void Gmres::resize(int n, int restart, std::vector<int> blocks) {
  blocks_ = std::move(blocks);
  block_inverse_.resize(blocks_.size() - 1);
  has_preconditioner_ = false;
  gmres_.resize(n, restart);
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

void Gmres::applyPreconditioner(const double* in, double* out) {
  // Rows [begin, end) of every block: all of them, or one half per thread of the team.
  auto rows = [&](int part, int parts) {
    for (std::size_t b = 0; b + 1 < blocks_.size(); ++b) {
      const int first = blocks_[b], size = blocks_[b + 1] - blocks_[b];
      const int begin = part * size / parts, end = (part + 1) * size / parts;
      matVec(block_inverse_[b].data() + static_cast<std::ptrdiff_t>(begin) * size, end - begin, size,
             in + first, out + first + begin);
    }
  };
  if (team_)
    team_->run([&](int part) { rows(part, 2); });
  else
    rows(0, 1);
}

GmresResult Gmres::solve(const LinearOperator& A, const Vec& b, Vec& x, double tol, int max_iterations) {
  if (!has_preconditioner_) refreshPreconditioner(A);
  return gmres_.solve([&](const double* in, double* out) { A.apply(in, out); },
                      [&](const double* in, double* out) { applyPreconditioner(in, out); }, b, x, tol,
                      max_iterations);
}

}  // namespace rodsim::rss
