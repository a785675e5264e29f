#include "ac_solver.h"

#include <Eigen/UmfPackSupport>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace rodsim::ac {

// ------------------------------------------------------------------ one contact

Vec3 alartCurnier(const Vec3& u, const Vec3& r, double mu, double rho_n, double rho_t, Mat3* Fu,
                  Mat3* Fr) {
  Vec3 f;
  const bool jac = Fu && Fr;
  if (jac) {
    Fu->setZero();
    Fr->setZero();
  }
  // Normal part (4a): f_N = max(0, r_N - rho_N u_N) - r_N.
  const double zn = r[0] - rho_n * u[0];
  if (zn > 0) {
    f[0] = -rho_n * u[0];
    if (jac) (*Fu)(0, 0) = -rho_n;
  } else {
    f[0] = -r[0];
    if (jac) (*Fr)(0, 0) = -1;
  }
  // Tangential part (4b), ball B(0, mu r_N): f_T = g(delta, y) - r_T with delta = mu r_N,
  // y = r_T - rho_T u_T, g(delta, y) = P_B(0, delta)(y) (Appendix B).
  const double delta = mu * r[0];
  const Eigen::Vector2d rt = r.tail<2>(), y = rt - rho_t * u.tail<2>();
  const double ny = y.norm();
  if (delta <= 0) {  // g = 0
    f.tail<2>() = -rt;
    if (jac) (*Fr).bottomRightCorner<2, 2>() = -Eigen::Matrix2d::Identity();
  } else if (ny <= delta) {  // g = y: f_T = -rho_T u_T
    f.tail<2>() = -rho_t * u.tail<2>();
    if (jac) (*Fu).bottomRightCorner<2, 2>() = -rho_t * Eigen::Matrix2d::Identity();
  } else {  // g = delta y / |y|
    const Eigen::Vector2d yh = y / ny;
    f.tail<2>() = delta * yh - rt;
    if (jac) {
      // dg/dy = (delta/|y|)(I - yh yh^T), dg/ddelta = yh, ddelta/dr = mu e_N^T.
      const Eigen::Matrix2d G = (delta / ny) * (Eigen::Matrix2d::Identity() - yh * yh.transpose());
      (*Fu).bottomRightCorner<2, 2>() = -rho_t * G;
      (*Fr).block<2, 1>(1, 0) = mu * yh;
      (*Fr).bottomRightCorner<2, 2>() = G - Eigen::Matrix2d::Identity();
    }
  }
  return f;
}

Vec3 projectCone(const Vec3& z, double mu) {
  const double zn = z[0], zt = z.tail<2>().norm();
  if (zn >= 0 && zt <= mu * zn) return z;  // inside K (zn >= 0: with mu = 0 and zt = 0, 0 <= -0.0 holds)
  if (mu * zt <= -zn) return Vec3::Zero();  // inside the polar cone
  const double a = (zn + mu * zt) / (1 + mu * mu);
  Vec3 p;
  p[0] = a;
  if (zt > 0)
    p.tail<2>() = (mu * a / zt) * z.tail<2>();
  else
    p.tail<2>().setZero();
  return p;
}

Vec3 naturalMap(const Vec3& u, const Vec3& r, double mu) {
  Vec3 ud = u;
  ud[0] += mu * u.tail<2>().norm();
  return r - projectCone(r - ud, mu);
}

Residual naturalResidual(const Vec& q, const Vec& u, const Vec& r, const Vec& mu) {
  double s = 0;
  const Eigen::Index n = mu.size();
  for (Eigen::Index i = 0; i < n; ++i)
    s += naturalMap(u.segment<3>(3 * i), r.segment<3>(3 * i), mu[i]).squaredNorm();
  Residual res;
  res.abs = std::sqrt(s);
  const double scale = std::max({q.norm(), u.norm(), r.norm()});
  res.rel = scale > 0 ? res.abs / scale : res.abs;
  return res;
}

// ------------------------------------------------------------------ solver

struct Solver::Lu {
  Eigen::UmfPackLU<SpMat> lu;
};

Solver::Solver(Options options) : opt_(options), lu_(std::make_unique<Lu>()) {}
Solver::~Solver() = default;

void Solver::setProblem(const SpMat& W, const Vec& q, const Vec& mu) {
  const int n = static_cast<int>(mu.size());
  if (q.size() != 3 * n || W.rows() != 3 * n || W.cols() != 3 * n)
    throw std::invalid_argument("Alart-Curnier problem: W must be 3n x 3n and q of size 3n for n = mu.size() contacts");
  for (int i = 0; i < n; ++i)
    if (!(mu[i] >= 0)) throw std::invalid_argument("Alart-Curnier problem: friction coefficients must be >= 0");
  n_ = n;
  q_ = q;
  mu_ = mu;
  // 3x3-block-filled copy of W, diagonal blocks always present: the pattern of the Jacobian.
  std::vector<Eigen::Triplet<double>> t;
  t.reserve(W.nonZeros() + 9 * n);
  std::vector<std::vector<int>> blocks(n);  // per block column: block rows
  for (int c = 0; c < W.outerSize(); ++c)
    for (SpMat::InnerIterator it(W, c); it; ++it) {
      t.emplace_back(int(it.row()), c, it.value());
      blocks[c / 3].push_back(int(it.row()) / 3);
    }
  for (int b = 0; b < n; ++b) {
    auto& v = blocks[b];
    v.push_back(b);
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    for (int bi : v)
      for (int a = 0; a < 3; ++a)
        for (int c = 0; c < 3; ++c) t.emplace_back(3 * bi + a, 3 * b + c, 0.0);
  }
  SpMat Wb(3 * n, 3 * n);
  Wb.setFromTriplets(t.begin(), t.end());
  Wb.makeCompressed();
  const bool same = J_.rows() == Wb.rows() && J_.nonZeros() == Wb.nonZeros() &&
                    std::equal(Wb.outerIndexPtr(), Wb.outerIndexPtr() + Wb.outerSize() + 1, J_.outerIndexPtr()) &&
                    std::equal(Wb.innerIndexPtr(), Wb.innerIndexPtr() + Wb.nonZeros(), J_.innerIndexPtr());
  W_ = std::move(Wb);
  if (!same) {
    J_ = W_;
    need_analysis_ = true;
    diag_pos_.assign(3 * n, -1);
    for (int c = 0; c < 3 * n; ++c)
      for (int p = J_.outerIndexPtr()[c]; p < J_.outerIndexPtr()[c + 1]; ++p)
        if (J_.innerIndexPtr()[p] == c) diag_pos_[c] = p;
  }
  // rho_i = 1 / (mean eigenvalue of W_ii) unless fixed: makes rho W_ii ~ I.
  rho_.resize(n);
  double mean_diag = 0;
  for (int i = 0; i < 3 * n; ++i) mean_diag += W_.coeff(i, i);
  mean_diag = n > 0 ? mean_diag / (3 * n) : 1.0;
  for (int i = 0; i < n; ++i) {
    if (opt_.rho > 0) {
      rho_[i] = opt_.rho;
      continue;
    }
    const double tr = (W_.coeff(3 * i, 3 * i) + W_.coeff(3 * i + 1, 3 * i + 1) + W_.coeff(3 * i + 2, 3 * i + 2)) / 3;
    rho_[i] = opt_.rho_scale * (tr > 0 ? 1.0 / tr : (mean_diag > 0 ? 1.0 / mean_diag : 1.0));
  }
  for (Vec* v : {&u_, &F_, &d_, &Wd_, &rtrial_, &utrial_, &rk_, &qeff_}) v->setZero(3 * n);
  Fu_.assign(n, Mat3::Zero());
  Fr_.assign(n, Mat3::Zero());
}

void Solver::computeU(const Vec& r, Vec& u) const {
  u.noalias() = W_ * r;
  u += qeff_;
  if (eta_ != 0) u += eta_ * r;
}

double Solver::acNorm2(const Vec& u, const Vec& r) const {
  double s = 0;
  for (int i = 0; i < n_; ++i)
    s += alartCurnier(u.segment<3>(3 * i), r.segment<3>(3 * i), mu_[i], rho_[i], rho_[i]).squaredNorm();
  return s;
}

void Solver::acEval(const Vec& u, const Vec& r) {
  for (int i = 0; i < n_; ++i)
    F_.segment<3>(3 * i) = alartCurnier(u.segment<3>(3 * i), r.segment<3>(3 * i), mu_[i], rho_[i], rho_[i],
                                        &Fu_[i], &Fr_[i]);
}

bool Solver::assembleAndFactorize(double shift) {
  // J = F_u (W + eta I) + F_r, block row by block row, in W's block-filled pattern.
  const int* outer = W_.outerIndexPtr();
  const int* inner = W_.innerIndexPtr();
  const double* wv = W_.valuePtr();
  double* jv = J_.valuePtr();
  for (int c = 0; c < 3 * n_; ++c) {
    const int bc = c / 3, k = c % 3;
    for (int p = outer[c]; p < outer[c + 1]; p += 3) {
      const int bi = inner[p] / 3;
      Vec3 col = Fu_[bi] * Vec3(wv[p], wv[p + 1], wv[p + 2]);
      if (bi == bc) col += eta_ * Fu_[bi].col(k) + Fr_[bi].col(k);
      jv[p] = col[0];
      jv[p + 1] = col[1];
      jv[p + 2] = col[2];
    }
  }
  if (shift != 0)
    for (int c = 0; c < 3 * n_; ++c) jv[diag_pos_[c]] -= shift;  // J ~ -rho W: shift away from 0
  if (need_analysis_) {
    // No iterative refinement: a Newton direction does not need it, and UMFPACK's default (up to
    // 2 steps, each a product with J and a solve) was a fifth of the solve time on rod piles.
    lu_->lu.umfpackControl()(UMFPACK_IRSTEP) = 0;
    lu_->lu.analyzePattern(J_);
    need_analysis_ = false;
    ++analyses_;
  }
  lu_->lu.factorize(J_);
  return lu_->lu.info() == Eigen::Success;
}

bool Solver::converged(const Residual& r, double tol_rel, double tol_abs) const {
  return r.rel <= tol_rel || (tol_abs > 0 && r.abs <= tol_abs);
}

bool Solver::newton(Vec& r, double tol_rel, double tol_abs, int budget, Result& res, bool stall_exit) {
  computeU(r, u_);
  acEval(u_, r);
  double phi = 0.5 * F_.squaredNorm();
  double phi_ref = phi;
  int it_ref = 0;
  for (int k = 0;; ++k) {
    if (converged(naturalResidual(qeff_, u_, r, mu_), tol_rel, tol_abs)) return true;
    if (k >= budget || res.iterations >= opt_.max_iterations) return false;
    // Newton direction: J d = -F, with a diagonal shift if J is singular.
    bool ok = false;
    for (double shift : {0.0, 1e-10, 1e-6}) {
      if (!assembleAndFactorize(shift)) continue;
      rtrial_ = -F_;
      d_ = lu_->lu.solve(rtrial_);
      if (d_.allFinite()) {
        ok = true;
        break;
      }
    }
    ++res.iterations;
    if (!ok) {
      res.message = "singular generalized Jacobian";
      return false;
    }
    Wd_.noalias() = W_ * d_;
    if (eta_ != 0) Wd_ += eta_ * d_;
    // Goldstein-Price line search on phi(alpha) = 1/2 |f_AC(r + alpha d)|^2 (seed Algorithm 2).
    // Its slope at 0 is F^T J d = -|F|^2 = -2 phi.
    const double slope0 = -2 * phi;
    double alpha = 1, lo = 0, hi = std::numeric_limits<double>::infinity();
    double best_alpha = -1, best_phi = phi;
    bool accepted = false;
    for (int trial = 0; trial < opt_.max_trials; ++trial) {
      rtrial_ = r + alpha * d_;
      utrial_ = u_ + alpha * Wd_;
      const double pt = 0.5 * acNorm2(utrial_, rtrial_);
      if (pt < best_phi) {
        best_phi = pt;
        best_alpha = alpha;
      }
      if (!opt_.line_search) {
        accepted = std::isfinite(pt);
        break;
      }
      const double s = (pt - phi) / alpha;
      if (s >= opt_.m2 * slope0 && s <= opt_.m1 * slope0) {
        accepted = true;
        break;
      }
      if (s < opt_.m2 * slope0) {
        lo = alpha;
        if (lo >= opt_.alpha_max) {
          accepted = true;
          break;
        }
      } else {
        hi = alpha;
      }
      alpha = std::isfinite(hi) ? 0.5 * (lo + hi) : std::min(10 * alpha, opt_.alpha_max);
    }
    if (!accepted) {
      if (best_alpha <= 0) {
        res.message = "line search found no decrease of |f_AC|";
        if (stall_exit) return false;
        best_alpha = alpha;  // take the last trial anyway
      }
      alpha = best_alpha;
    }
    r += alpha * d_;
    computeU(r, u_);  // recomputed (no drift from the u + alpha W d updates)
    acEval(u_, r);
    phi = 0.5 * F_.squaredNorm();
    if (phi < 0.01 * phi_ref) {
      phi_ref = phi;
      it_ref = k;
    } else if (stall_exit && k - it_ref >= opt_.stall_iterations) {
      res.message = "Newton stalled";
      return false;
    }
  }
}

Result Solver::solve(Vec& r) {
  const auto t0 = std::chrono::steady_clock::now();
  Result res;
  if (r.size() != 3 * n_) r.setZero(3 * n_);
  if (!r.allFinite()) r.setZero();
  eta_ = 0;
  qeff_ = q_;
  bool ok = n_ == 0 || newton(r, opt_.tolerance, opt_.abs_tolerance, opt_.max_iterations, res, opt_.proximal);
  if (!ok && opt_.proximal && res.iterations < opt_.max_iterations) {
    // Proximal-point loop: u = (W + eta I) r + q - eta r_k. eta starts at the mean diagonal of W
    // and shrinks tenfold after each inner solve that converged (grows fivefold otherwise).
    double scale = 0;
    for (int i = 0; i < 3 * n_; ++i) scale += std::abs(W_.coeff(i, i));
    scale = scale > 0 ? scale / (3 * n_) : 1.0;
    double eta = scale;
    rk_ = r;
    eta_ = 0;
    qeff_ = q_;
    computeU(rk_, u_);
    Residual outer = naturalResidual(q_, u_, rk_, mu_);
    // Restart from the best point: the stalled Newton may have wandered.
    while (res.iterations < opt_.max_iterations) {
      eta_ = eta;
      qeff_ = q_ - eta * rk_;
      r = rk_;
      const double inner_tol = std::max(0.1 * opt_.tolerance, 0.1 * outer.rel);
      const int budget = std::min(opt_.max_iterations - res.iterations, 50);
      const bool inner_ok = newton(r, inner_tol, 0, budget, res, true);
      ++res.prox_iterations;
      eta_ = 0;
      qeff_ = q_;
      computeU(r, u_);
      const Residual now = naturalResidual(q_, u_, r, mu_);
      if (inner_ok || now.rel < outer.rel) {
        rk_ = r;
        outer = now;
      }
      if (converged(outer, opt_.tolerance, opt_.abs_tolerance)) break;
      eta = inner_ok ? 0.1 * eta : 5 * eta;
      if (eta < 1e-14 * scale) eta = 0;  // the plain problem, from a nearby point
    }
    r = rk_;
  }
  eta_ = 0;
  qeff_ = q_;
  computeU(r, u_);
  res.residual = naturalResidual(q_, u_, r, mu_);
  res.ac_norm = std::sqrt(acNorm2(u_, r));
  res.converged = converged(res.residual, opt_.tolerance, opt_.abs_tolerance);
  if (res.converged)
    res.message = "converged";
  else if (res.message.empty())
    res.message = "iteration limit";
  res.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

}  // namespace rodsim::ac
