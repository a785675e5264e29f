// CHOLMOD's supernodal Cholesky as rodsim's plugins use it: METIS order, solves that reuse their
// workspace, and OpenMP kept out of the factorization (SerialOpenMp). Shared by solver_newton (the
// Newton Jacobians of rod piles) and alart-curnier (the preconditioner of its unreduced systems).
#pragma once

#include <Eigen/CholmodSupport>
#include <Eigen/SparseCore>

#include <algorithm>
#include <cstddef>

// The OpenMP runtime that CHOLMOD and UMFPACK bring in (Debian's are built with it); weak, so that
// a plugin does not link a runtime of its own (that of a clang build would not be CHOLMOD's).
extern "C" {
int omp_get_max_active_levels() __attribute__((weak));
void omp_set_max_active_levels(int) __attribute__((weak));
}

namespace rodsim::sparse_direct {

// Runs the factorizations and solves in its scope with OpenMP's parallel regions inactive
// (max-active-levels 0: a team of one). Debian's CHOLMOD has `num_threads(4)` compiled into many
// small loops of its supernodal factorization: four threads whatever the machine, forked per
// supernode. On the 2-core development machine that made an ipc step at 3042 contacts 1.85x slower
// in wall time (424 against 231 ms), two threads no faster than one, and on one core the
// spinning workers took a fifth of an alart-curnier step at 10,000 contacts.
class SerialOpenMp {
 public:
  SerialOpenMp() {
    if (omp_get_max_active_levels && omp_set_max_active_levels) {
      saved_ = omp_get_max_active_levels();
      omp_set_max_active_levels(0);
    }
  }
  ~SerialOpenMp() {
    if (saved_ >= 0) omp_set_max_active_levels(saved_);
  }
  SerialOpenMp(const SerialOpenMp&) = delete;
  SerialOpenMp& operator=(const SerialOpenMp&) = delete;

 private:
  int saved_ = -1;
};

using SpMat = Eigen::SparseMatrix<double, Eigen::ColMajor, int>;

// Supernodal LLᵀ of the lower triangle in METIS order, whose solves reuse their workspace
// (cholmod_solve2): Eigen's solve() allocates the solution and CHOLMOD's workspace, n doubles
// each, at every call, and a Krylov method solves once per step. The same CHOLMOD_A solve, so the
// same numbers as Eigen's. Factorize and solve inside a SerialOpenMp scope.
class SupernodalCholesky : public Eigen::CholmodSupernodalLLT<SpMat, Eigen::Lower> {
 public:
  SupernodalCholesky() {
    // A matrix that is not positive definite is expected (the callers fall back): no CHOLMOD warning.
    cholmod().print = 0;
    // Nested dissection (METIS): on crossing-rod piles it does 1.5x less work than CHOLMOD's
    // default AMD at 3000 contacts and ~10 % less at 1000 (the crossings couple the rods like a 2D
    // mesh, where dissection's fill grows slowest).
    cholmod().nmethods = 1;
    cholmod().method[0].ordering = CHOLMOD_METIS;
  }
  ~SupernodalCholesky() {
    for (cholmod_dense** d : {&x_, &y_, &e_})
      if (*d) cholmod_free_dense(d, &cholmod());
  }
  SupernodalCholesky(const SupernodalCholesky&) = delete;
  SupernodalCholesky& operator=(const SupernodalCholesky&) = delete;

  // out = A⁻¹ in (n values each) with the last factorization; false when CHOLMOD fails.
  bool solveInto(const double* in, double* out) {
    const std::size_t n = m_cholmodFactor->n;
    cholmod_dense b{};
    b.nrow = b.nzmax = b.d = n;
    b.ncol = 1;
    b.x = const_cast<double*>(in);  // read only (CHOLMOD's API is not const-qualified)
    b.xtype = CHOLMOD_REAL;
    b.dtype = CHOLMOD_DOUBLE;
    if (!cholmod_solve2(CHOLMOD_A, m_cholmodFactor, &b, nullptr, &x_, nullptr, &y_, &e_, &cholmod())) return false;
    std::copy_n(static_cast<const double*>(x_->x), n, out);
    return true;
  }

 private:
  cholmod_dense *x_ = nullptr, *y_ = nullptr, *e_ = nullptr;  // solution and workspace, kept
};

}  // namespace rodsim::sparse_direct
