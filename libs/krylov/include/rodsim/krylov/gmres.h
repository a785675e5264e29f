// Restarted GMRES (Saad and Schultz), right-preconditioned, for any square operator the caller
// can apply: the operator and the preconditioner are callables `(const double* in, double* out)`
// over n unknowns. Right preconditioning keeps the residual that GMRES minimizes and tests that of
// A itself (|b - A x| <= tol |b|), whatever the preconditioner. All workspace is sized by resize();
// solve() allocates nothing.
#pragma once

#include <rodsim/linalg.h>

#include <Eigen/Dense>

#include <cmath>

namespace rodsim::krylov {

struct GmresResult {
  int iterations = 0;            // Arnoldi steps (products with A and with the preconditioner)
  double relative_residual = 0;  // |b - A x| / |b| at the end
  bool converged = false;
};

class Gmres {
 public:
  // n unknowns, a Krylov basis of `restart` vectors between restarts.
  void resize(int n, int restart) {
    n_ = n;
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
  int size() const { return n_; }

  // Solves A x = b to |b - A x| <= tol |b|, starting from x, with at most max_iterations Arnoldi
  // steps. A(in, out): out = A in; P(in, out): out ≈ A⁻¹ in.
  template <class Operator, class Preconditioner>
  GmresResult solve(const Operator& A, Preconditioner&& P, const Vec& b, Vec& x, double tol, int max_iterations) {
    GmresResult result;
    const double bnorm = b.norm();
    if (bnorm == 0) {
      x.setZero();
      result.converged = true;
      return result;
    }
    while (true) {
      A(x.data(), r_.data());
      r_ = b - r_;
      const double beta = r_.norm();
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
        P(V_.col(k).data(), z_.data());
        A(z_.data(), w_.data());
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
      // y = H⁻¹ g (upper triangular k x k), x += P V y.
      for (int i = k - 1; i >= 0; --i) {
        double s = g_[i];
        for (int j = i + 1; j < k; ++j) s -= H_(i, j) * y_[j];
        y_[i] = s / H_(i, i);
      }
      w_.noalias() = V_.leftCols(k) * y_.head(k);
      P(w_.data(), z_.data());
      x += z_;
    }
  }

 private:
  int n_ = 0, m_ = 0;
  Eigen::MatrixXd V_;  // Krylov basis, n x (m + 1)
  Eigen::MatrixXd H_;  // Hessenberg, (m + 1) x m
  Vec cs_, sn_, g_, y_, r_, w_, z_;
};

}  // namespace rodsim::krylov
