#include "ac_solver.h"

#include <Eigen/LU>
#include <Eigen/UmfPackSupport>
#include <rodsim/sparse_direct/supernodal_cholesky.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace rodsim::ac {

namespace {
constexpr double kGmresTolerance = 1e-10;  // relative residual of an unreduced Newton direction
// GMRES iterations allowed with an LU of an earlier K, and with the LU of the current one.
constexpr int kStaleGmresIterations = 8, kFreshGmresIterations = 4;
// GMRES iterations allowed with the primal preconditioner (2-4 taken on rod piles).
constexpr int kPrimalGmresIterations = 30;
// Problems solved with K's LU after the primal preconditioner failed one (A not positive definite,
// or GMRES short of the tolerance: a safety net; on rod piles and mats with 3n < m it has not failed).
constexpr int kLuProblemsAfterFallback = 16;
}  // namespace

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

double coulombError(const Vec3& u, const Vec3& r, double mu, double rho) {
  const double scale = std::max(r.norm(), rho * u.norm());
  return scale > 0 ? naturalMap(rho * u, r, mu).norm() / scale : 0.0;
}

Residual naturalResidual(const Vec& q, const Vec& u, const Vec& r, const Vec& mu, const char* zero) {
  double s = 0;
  const Eigen::Index n = mu.size();
  for (Eigen::Index i = 0; i < n; ++i)
    if (!zero || !zero[i]) s += naturalMap(u.segment<3>(3 * i), r.segment<3>(3 * i), mu[i]).squaredNorm();
  Residual res;
  res.abs = std::sqrt(s);
  const double scale = std::max({q.norm(), u.norm(), r.norm()});
  res.rel = scale > 0 ? res.abs / scale : res.abs;
  return res;
}

// ------------------------------------------------------------------ solver

struct Solver::Lu {
  Eigen::UmfPackLU<SpMat> lu;   // J (reduced)
  Eigen::MatrixXd dense;        // J (reduced, at most Options::dense_rows rows)
  Eigen::PartialPivLU<Eigen::MatrixXd> dense_lu;
  // J of at most kSmallRows rows (groups of one or two contacts): the same LU with partial
  // pivoting, column-major in `small`, row transpositions in `swaps`; factorSmall and solveSmall
  // do Eigen's operations (unblocked_lu, then the two triangular solves of one panel) in Eigen's
  // order, so the direction is bit for bit dense_lu's, without its calls and dynamic sizes.
  static constexpr int kSmallRows = 8;  // Eigen's triangular panel width: one panel, no GEMV
  double small[kSmallRows * kSmallRows];
  int swaps[kSmallRows];
  int small_rows = 0;  // > 0: `small` holds J's LU (else dense_lu)
  bool factorSmall(int m);
  void solveSmall(const Vec& b, Vec& x) const;
  Eigen::UmfPackLU<SpMat> klu;  // K (unreduced)
};

// Eigen 3.4's partial_lu_impl::unblocked_lu (sizes <= 16 take it) on an m x m column-major
// matrix: pivot = first largest |a| in the column, rows swapped, the column below divided by the
// pivot (not when it is 0), the rank-one update. Returns false where dense_lu would have a zero or
// non-finite pivot on its diagonal.
bool Solver::Lu::factorSmall(int m) {
  double* a = small;
  small_rows = m;
  for (int k = 0; k < m; ++k) {
    double* col = a + k * m;
    int best = k;
    double biggest = std::abs(col[k]);
    for (int i = k + 1; i < m; ++i)
      if (std::abs(col[i]) > biggest) {
        biggest = std::abs(col[i]);
        best = i;
      }
    swaps[k] = best;
    if (biggest != 0) {
      if (best != k)
        for (int c = 0; c < m; ++c) std::swap(a[c * m + k], a[c * m + best]);
      const double pivot = col[k];
      for (int i = k + 1; i < m; ++i) col[i] /= pivot;
    }
    for (int c = k + 1; c < m; ++c) {
      double* dst = a + c * m;
      const double ukc = dst[k];
      for (int i = k + 1; i < m; ++i) dst[i] -= col[i] * ukc;
    }
  }
  for (int k = 0; k < m; ++k)
    if (!std::isfinite(a[k * m + k]) || a[k * m + k] == 0) return false;
  return true;
}

// PartialPivLU::solve: x = P b, then L (unit lower) and U solved in place column by column
// (triangular_solve_vector, one panel: entries exactly 0 are skipped).
void Solver::Lu::solveSmall(const Vec& b, Vec& x) const {
  const int m = small_rows;
  const double* a = small;
  x = b;
  for (int k = 0; k < m; ++k) std::swap(x[k], x[swaps[k]]);
  for (int i = 0; i < m; ++i)
    if (x[i] != 0)
      for (int j = i + 1; j < m; ++j) x[j] -= x[i] * a[i * m + j];
  for (int i = m - 1; i >= 0; --i)
    if (x[i] != 0) {
      x[i] /= a[i * m + i];
      for (int j = 0; j < i; ++j) x[j] -= x[i] * a[i * m + j];
    }
}

// The primal preconditioner of unreduced systems (assembleAndFactorizePrimal).
struct Solver::Primal {
  SpMat S;                 // lower triangle of A + G^T P G (rods' DOFs)
  std::vector<int> a_pos;  // S value index of each entry of A, in A's order (-1: upper triangle)
  // Per contact i: the columns G's block row i touches (cols[first[i]] ..), that row's values
  // (3 x k column-major from g[3 first[i]]) and the S value index of each pair (a, b) of its
  // columns (pos[pair_first[i] + a k + b], -1 above the diagonal).
  std::vector<int> first, cols, pair_first, pos;
  std::vector<double> g, pg;  // pg: P_i G_i, 3 x k (scratch)
  std::vector<Mat3> dinv;     // D_i^-1 per contact (assembleAndFactorizePrimal)
  sparse_direct::SupernodalCholesky chol;
  bool analyzed = false, factored = false;
  Vec ry, y, gy;  // work vectors of applyPrimal
};

Solver::Solver(Options options)
    : opt_(options), lu_(std::make_unique<Lu>()), primal_(std::make_unique<Primal>()) {}
Solver::~Solver() = default;

void Solver::setContacts(const Vec& q, const Vec& mu) {
  const int n = static_cast<int>(mu.size());
  if (q.size() != 3 * n)
    throw std::invalid_argument("Alart-Curnier problem: q must be of size 3n for n = mu.size() contacts");
  for (int i = 0; i < n; ++i)
    if (!(mu[i] >= 0)) throw std::invalid_argument("Alart-Curnier problem: friction coefficients must be >= 0");
  n_ = n;
  u_at_ = nullptr;
  q_ = q;
  mu_ = mu;
  for (Vec* v : {&u_, &F_, &d_, &Wd_, &rtrial_, &utrial_, &rk_, &qeff_, &rkeep_}) v->setZero(3 * n);
  Fu_.assign(n, Mat3::Zero());
  Fr_.assign(n, Mat3::Zero());
}

void Solver::computeRho() {
  // rho_i = 1 / (mean eigenvalue of W_ii) unless fixed: makes rho W_ii ~ I.
  rho_.resize(n_);
  double mean_diag = -1;  // computed where needed (a contact with trace(W_ii) <= 0)
  for (int i = 0; i < n_; ++i) {
    if (opt_.rho > 0) {
      rho_[i] = opt_.rho;
      continue;
    }
    const double tr = (wdiag_[3 * i] + wdiag_[3 * i + 1] + wdiag_[3 * i + 2]) / 3;
    if (tr > 0) {
      rho_[i] = 1.0 / tr;
      continue;
    }
    if (mean_diag < 0) mean_diag = n_ > 0 ? wdiag_.sum() / (3 * n_) : 1.0;
    rho_[i] = mean_diag > 0 ? 1.0 / mean_diag : 1.0;
  }
}

void Solver::setProblem(const SpMat& W, const Vec& q, const Vec& mu) {
  if (W.rows() != q.size() || W.cols() != q.size())
    throw std::invalid_argument("Alart-Curnier problem: W must be 3n x 3n and q of size 3n for n = mu.size() contacts");
  w_entries_.clear();
  for (int c = 0; c < W.outerSize(); ++c)
    for (SpMat::InnerIterator it(W, c); it; ++it) w_entries_.emplace_back(int(it.row()), c, it.value());
  setProblem(w_entries_, q, mu);
}

void Solver::setProblem(const std::vector<Eigen::Triplet<double>>& W, const Vec& q, const Vec& mu) {
  setContacts(q, mu);
  const int n = n_;
  // The entries at the same (row, col) in the same order as the last problem's (a group's W from
  // step to step: one contact's 3 x 3 block): the same pattern, each entry summed into the value
  // slot it went to then (the same sums in the same order as below).
  if (!unreduced_ && trip_n_ == n && trip_rc_.size() == 2 * W.size()) {
    bool same = true;
    for (std::size_t k = 0; k < W.size() && same; ++k)
      same = trip_rc_[2 * k] == W[k].row() && trip_rc_[2 * k + 1] == W[k].col();
    if (same) {
      double* wv = W_.valuePtr();
      std::fill(wv, wv + W_.nonZeros(), 0.0);
      for (std::size_t k = 0; k < W.size(); ++k) wv[trip_pos_[k]] += W[k].value();
      wdiag_ = W_.diagonal();
      computeRho();
      return;
    }
  }
  trip_n_ = -1;
  for (const auto& t : W)
    if (t.row() < 0 || t.row() >= 3 * n || t.col() < 0 || t.col() >= 3 * n)
      throw std::invalid_argument("Alart-Curnier problem: W must be 3n x 3n and q of size 3n for n = mu.size() contacts");
  unreduced_ = false;
  // W_ is W with its 3x3 blocks filled, diagonal blocks always present: the pattern of the Jacobian.
  // Block rows per block column (a bucket per column, then sorted and made unique in it).
  blk_first_.assign(n + 1, 0);
  for (const auto& t : W) ++blk_first_[t.col() / 3 + 1];
  for (int b = 0; b < n; ++b) blk_first_[b + 1] += blk_first_[b] + 1;  // + 1: the diagonal block
  blk_rows_.resize(blk_first_[n]);
  pat_outer_.assign(blk_first_.begin(), blk_first_.end() - 1);  // fill position per block column
  for (int b = 0; b < n; ++b) blk_rows_[pat_outer_[b]++] = b;
  for (const auto& t : W) blk_rows_[pat_outer_[t.col() / 3]++] = t.row() / 3;
  int kept = 0;
  for (int b = 0; b < n; ++b) {
    const int first = blk_first_[b], last = blk_first_[b + 1];
    std::sort(blk_rows_.begin() + first, blk_rows_.begin() + last);
    blk_first_[b] = kept;
    for (int p = first, prev = -1; p < last; prev = blk_rows_[p++])
      if (blk_rows_[p] != prev) blk_rows_[kept++] = blk_rows_[p];
  }
  blk_first_[n] = kept;
  // The compressed pattern: column 3b + k holds the 3 rows of each of block column b's block rows.
  pat_outer_.resize(3 * n + 1);
  pat_inner_.clear();
  pat_outer_[0] = 0;
  for (int c = 0; c < 3 * n; ++c) {
    for (int p = blk_first_[c / 3]; p < blk_first_[c / 3 + 1]; ++p)
      for (int a = 0; a < 3; ++a) pat_inner_.push_back(3 * blk_rows_[p] + a);
    pat_outer_[c + 1] = static_cast<int>(pat_inner_.size());
  }
  const bool same = J_.rows() == 3 * n && J_.isCompressed() && J_.nonZeros() == Eigen::Index(pat_inner_.size()) &&
                    std::equal(pat_outer_.begin(), pat_outer_.end(), J_.outerIndexPtr()) &&
                    std::equal(pat_inner_.begin(), pat_inner_.end(), J_.innerIndexPtr());
  if (!same) {
    W_.resize(3 * n, 3 * n);
    W_.resizeNonZeros(static_cast<Eigen::Index>(pat_inner_.size()));
    std::copy(pat_outer_.begin(), pat_outer_.end(), W_.outerIndexPtr());
    std::copy(pat_inner_.begin(), pat_inner_.end(), W_.innerIndexPtr());
  }
  // W's values, summed into the pattern in the order given (bit for bit setFromTriplets' sums).
  double* wv = W_.valuePtr();
  std::fill(wv, wv + W_.nonZeros(), 0.0);
  trip_rc_.resize(2 * W.size());
  trip_pos_.resize(W.size());
  for (std::size_t k = 0; k < W.size(); ++k) {
    const auto& t = W[k];
    const int c = t.col(), b = c / 3;
    const int* rows = blk_rows_.data();
    const int slot = static_cast<int>(std::lower_bound(rows + blk_first_[b], rows + blk_first_[b + 1], t.row() / 3) -
                                      (rows + blk_first_[b]));
    const int pos = pat_outer_[c] + 3 * slot + t.row() % 3;
    wv[pos] += t.value();
    trip_rc_[2 * k] = t.row();
    trip_rc_[2 * k + 1] = c;
    trip_pos_[k] = pos;
  }
  if (!same) {
    J_ = W_;
    need_analysis_ = true;
    diag_pos_.assign(3 * n, -1);
    for (int c = 0; c < 3 * n; ++c)
      for (int p = J_.outerIndexPtr()[c]; p < J_.outerIndexPtr()[c + 1]; ++p)
        if (J_.innerIndexPtr()[p] == c) diag_pos_[c] = p;
  }
  wdiag_ = W_.diagonal();
  computeRho();
  trip_n_ = n;
}

void Solver::setProblem(const SpMat& A, const SpMat& G, const Vec& wdiag, const Vec& q, const Vec& mu) {
  const int m = static_cast<int>(A.rows());
  if (A.cols() != m || G.rows() != q.size() || G.cols() != m)
    throw std::invalid_argument("Alart-Curnier problem: unreduced factors need A m x m and G 3n x m");
  setContacts(q, mu);
  const int n3 = 3 * n_;
  unreduced_ = true;
  trip_n_ = -1;
  G_ = G;
  // A is symmetric (M/dt^2 + K on free DOFs; the implicit solver factorizes it by LDL^T too).
  const bool same_a = A_.rows() == m && A_.nonZeros() == A.nonZeros() &&
                      std::equal(A.outerIndexPtr(), A.outerIndexPtr() + m + 1, A_.outerIndexPtr()) &&
                      std::equal(A.innerIndexPtr(), A.innerIndexPtr() + A.nonZeros(), A_.innerIndexPtr());
  A_ = A;
  if (!same_a) a_ldlt_.analyzePattern(A_);
  a_ldlt_.factorize(A_);
  if (a_ldlt_.info() != Eigen::Success)
    throw std::runtime_error("Alart-Curnier problem: the linearized system A is singular");
  if (wdiag.size() != n3) throw std::invalid_argument("Alart-Curnier problem: diag(W) must be of size 3n");
  wdiag_ = wdiag;
  computeRho();
  m_ = m;
  ytmp_.setZero(m);
  const int kmax = std::max({kStaleGmresIterations, kFreshGmresIterations, kPrimalGmresIterations});
  gm_v_.setZero(n3, kmax + 1);
  gm_z_.setZero(n3, kmax);
  gm_h_.setZero(kmax + 1, kmax);
  gm_g_.setZero(kmax + 1);
  gm_c_.setZero(kmax);
  gm_s_.setZero(kmax);
  // With more contact rows than DOFs (3n >= m) W = G A^-1 G^T is singular: its null directions
  // are where the primal preconditioner, 1e-6 W_ii away from J, is furthest off (GMRES takes 5-30
  // iterations on the 76 x 22 spaghetti mat, 3n = 6840 against m = 6612, and fails some).
  using Pre = Options::Preconditioner;
  primal_failed_ = opt_.unreduced_preconditioner == Pre::Lu ||
                   (opt_.unreduced_preconditioner == Pre::Auto && n3 >= m) || lu_problems_left_ > 0;
  if (lu_problems_left_ > 0) --lu_problems_left_;
  k_built_ = false;
  if (!primal_failed_) buildPrimalPattern();
}

// K = [A, -G^T; F_u G, F_r + eta F_u] (Bertails-Descoubes et al. 2011, Eq. 7): only when its LU is the
// preconditioner.
void Solver::buildK() {
  const SpMat& A = A_;
  const SpMat& G = G_;
  const int m = m_, n3 = 3 * n_;
  // K's pattern: A, -G^T in the d columns, F_u G (3 rows per contact wherever G's block row has
  // an entry) in the y columns, full 3x3 diagonal blocks. Zeros keep the pattern fixed.
  std::vector<Eigen::Triplet<double>> t;
  t.reserve(A.nonZeros() + 4 * G.nonZeros() + 9 * n_);
  for (int c = 0; c < m; ++c)
    for (SpMat::InnerIterator it(A, c); it; ++it) t.emplace_back(int(it.row()), c, it.value());
  for (int c = 0; c < m; ++c)
    for (SpMat::InnerIterator it(G, c); it; ++it) {
      const int row = int(it.row());
      t.emplace_back(c, m + row, -it.value());
      for (int a = 0; a < 3; ++a) t.emplace_back(m + 3 * (row / 3) + a, c, 0.0);
    }
  for (int i = 0; i < n_; ++i)
    for (int a = 0; a < 3; ++a)
      for (int c = 0; c < 3; ++c) t.emplace_back(m + 3 * i + a, m + 3 * i + c, 0.0);
  SpMat K(m + n3, m + n3);
  K.setFromTriplets(t.begin(), t.end());  // duplicates (the F_u G zeros) are summed: still zero
  K.makeCompressed();
  const bool same = m == m_ && K_.rows() == K.rows() && K_.nonZeros() == K.nonZeros() &&
                    std::equal(K.outerIndexPtr(), K.outerIndexPtr() + K.outerSize() + 1, K_.outerIndexPtr()) &&
                    std::equal(K.innerIndexPtr(), K.innerIndexPtr() + K.nonZeros(), K_.innerIndexPtr());
  if (!same) {
    need_k_analysis_ = true;
    k_factored_ = false;  // else the LU of an earlier K with this pattern preconditions (gmresDirection)
  }
  K_ = std::move(K);
  // Where F_u G goes: in y column c the rows >= m come last and in triples (m+3i, +1, +2).
  fug_.clear();
  for (int c = 0; c < m; ++c) {
    Vec3 g = Vec3::Zero();
    int p = K_.outerIndexPtr()[c];
    const int end = K_.outerIndexPtr()[c + 1];
    while (p < end && K_.innerIndexPtr()[p] < m) ++p;
    SpMat::InnerIterator it(G, c);
    for (; p < end; p += 3) {
      const int i = (K_.innerIndexPtr()[p] - m) / 3;
      g.setZero();
      for (; it && it.row() < 3 * i + 3; ++it) g[it.row() - 3 * i] = it.value();
      fug_.push_back({p, i, g});
    }
  }
  kdiag_pos_.assign(n3, -1);
  for (int c = 0; c < n3; ++c) {
    const int col = m + c, first = m + 3 * (c / 3);
    for (int p = K_.outerIndexPtr()[col]; p < K_.outerIndexPtr()[col + 1]; ++p)
      if (K_.innerIndexPtr()[p] == first) kdiag_pos_[c] = p;
  }
  krhs_.setZero(m + n3);
  ksol_.setZero(m + n3);
  k_built_ = true;
}

// S = A + G^T P G on the rods' DOFs: A's lower triangle and, per contact, every pair of the
// columns its block row of G touches (up to 12: two edges' nodes). Built once per problem; CHOLMOD's
// analysis is redone only when the pattern changed.
void Solver::buildPrimalPattern() {
  Primal& P = *primal_;
  const int m = m_;
  const Eigen::SparseMatrix<double, Eigen::RowMajor, int> Gr = G_;
  P.first.assign(n_ + 1, 0);
  P.pair_first.assign(n_ + 1, 0);
  P.cols.clear();
  P.g.clear();
  int kmax = 0;
  for (int i = 0; i < n_; ++i) {
    const int c0 = P.first[i];
    for (int a = 0; a < 3; ++a)
      for (decltype(Gr)::InnerIterator it(Gr, 3 * i + a); it; ++it) P.cols.push_back(int(it.col()));
    std::sort(P.cols.begin() + c0, P.cols.end());
    P.cols.erase(std::unique(P.cols.begin() + c0, P.cols.end()), P.cols.end());
    const int k = static_cast<int>(P.cols.size()) - c0;
    kmax = std::max(kmax, k);
    P.first[i + 1] = c0 + k;
    P.pair_first[i + 1] = P.pair_first[i] + k * k;
    P.g.resize(3 * static_cast<std::size_t>(P.first[i + 1]), 0.0);
    for (int a = 0; a < 3; ++a)
      for (decltype(Gr)::InnerIterator it(Gr, 3 * i + a); it; ++it) {
        const auto col = std::lower_bound(P.cols.begin() + c0, P.cols.end(), int(it.col()));
        P.g[3 * static_cast<std::size_t>(col - P.cols.begin()) + a] = it.value();
      }
  }
  std::vector<Eigen::Triplet<double>> t;
  t.reserve(A_.nonZeros() + P.pair_first[n_]);
  for (int c = 0; c < m; ++c)
    for (SpMat::InnerIterator it(A_, c); it; ++it)
      if (it.row() >= c) t.emplace_back(int(it.row()), c, 0.0);
  for (int i = 0; i < n_; ++i)
    for (int a = P.first[i]; a < P.first[i + 1]; ++a)
      for (int b = P.first[i]; b <= a; ++b) t.emplace_back(P.cols[a], P.cols[b], 0.0);
  SpMat S(m, m);
  S.setFromTriplets(t.begin(), t.end());
  S.makeCompressed();
  const bool same = P.S.rows() == m && P.S.nonZeros() == S.nonZeros() &&
                    std::equal(S.outerIndexPtr(), S.outerIndexPtr() + m + 1, P.S.outerIndexPtr()) &&
                    std::equal(S.innerIndexPtr(), S.innerIndexPtr() + S.nonZeros(), P.S.innerIndexPtr());
  if (!same) P.analyzed = false;
  P.S = std::move(S);
  P.factored = false;
  auto where = [&](int row, int col) {
    const int* begin = P.S.innerIndexPtr() + P.S.outerIndexPtr()[col];
    const int* end = P.S.innerIndexPtr() + P.S.outerIndexPtr()[col + 1];
    return static_cast<int>(std::lower_bound(begin, end, row) - P.S.innerIndexPtr());
  };
  P.a_pos.clear();
  for (int c = 0; c < m; ++c)
    for (SpMat::InnerIterator it(A_, c); it; ++it) P.a_pos.push_back(it.row() >= c ? where(int(it.row()), c) : -1);
  P.pos.assign(P.pair_first[n_], -1);
  for (int i = 0; i < n_; ++i) {
    const int k = P.first[i + 1] - P.first[i];
    for (int a = 0; a < k; ++a)
      for (int b = 0; b <= a; ++b)  // cols ascending: (a, b) with b <= a is in the lower triangle
        P.pos[P.pair_first[i] + a * k + b] = where(P.cols[P.first[i] + a], P.cols[P.first[i] + b]);
  }
  P.pg.assign(3 * static_cast<std::size_t>(kmax), 0.0);
  P.dinv.assign(n_, Mat3::Zero());
  P.ry.setZero(m);
  P.y.setZero(m);
  P.gy.setZero(3 * n_);
}

// The preconditioner of the unreduced directions, on the rods' DOFs. With D_i = F_r,i + eta~_i
// F_u,i - shift I, eta~_i = eta + kPrimalRegularization / rho_i, eliminating d from
//   [ A       -G^T ] [y]   [0]
//   [ F_u G    D   ] [d] = [b]
// gives d = D^-1 (b - F_u G y) with (A + G^T P G) y = G^T D^-1 b, P_i = D_i^-1 F_u,i: the exact
// inverse of J~ = F_u (W + eta~ I) + F_r - shift I, J's proximal neighbour. eta~ > 0 makes every
// D_i invertible, which eta alone (0 in the plain Newton) does not: a sticking contact's D_i is
// -eta~ rho I, and P_i its penalty I / eta~; a separated one's D_i = -I and P_i = 0. A sliding
// contact's F_r couples its slip direction to its normal impulse (mu yhat e_N^T in Appendix B of
// Bertails-Descoubes et al. 2011: the non-associated part of Coulomb's law), which makes P_i unsymmetric; without that
// coupling D_i is block diagonal, its tangential block (|g| / |y|)(1 - eta~ rho)(I - yhat yhat^T) - I
// commutes with F_u's -rho (|g| / |y|)(I - yhat yhat^T), and P_i is symmetric positive
// semidefinite. So the coupling is left out of D_i here, A + G^T P G is symmetric positive
// definite (for A so), and CHOLMOD's supernodal Cholesky factorizes it. GMRES on the exact J removes
// the coupling and the regularization: 2-4 iterations per direction on rod piles of 3000 and
// 10,000 contacts, about 15 on a test problem where 36 of 60 contacts slide. The gain is the
// factorization: a Cholesky of an m x m matrix with A's and the contacts' pattern, against
// UMFPACK's LU of the (m + 3n) x (m + 3n) K (its solves alone were half of a 10,000-contact step).
constexpr double kPrimalRegularization = 1e-6;

bool Solver::assembleAndFactorizePrimal(double shift) {
  Primal& P = *primal_;
  double* sv = P.S.valuePtr();
  std::fill(sv, sv + P.S.nonZeros(), 0.0);
  const double* av = A_.valuePtr();
  for (std::size_t p = 0; p < P.a_pos.size(); ++p)
    if (P.a_pos[p] >= 0) sv[P.a_pos[p]] += av[p];
  for (int i = 0; i < n_; ++i) {
    const double eta = eta_ + kPrimalRegularization / rho_[i];
    Mat3 D = Fr_[i] + eta * Fu_[i] - shift * Mat3::Identity();
    D.block<2, 1>(1, 0).setZero();  // the slip direction's mu e_N^T (non-associated): left to GMRES
    P.dinv[i] = D.inverse();
    const Mat3 Pi = P.dinv[i] * Fu_[i];
    const Mat3 Ppos = 0.5 * (Pi + Pi.transpose());  // symmetric already, up to round-off
    const int k = P.first[i + 1] - P.first[i];
    const double* g = P.g.data() + 3 * static_cast<std::size_t>(P.first[i]);
    double* pg = P.pg.data();
    for (int b = 0; b < k; ++b)
      for (int a = 0; a < 3; ++a) pg[3 * b + a] = Ppos(a, 0) * g[3 * b] + Ppos(a, 1) * g[3 * b + 1] + Ppos(a, 2) * g[3 * b + 2];
    const int* pos = P.pos.data() + P.pair_first[i];
    for (int a = 0; a < k; ++a)
      for (int b = 0; b <= a; ++b)
        sv[pos[a * k + b]] += g[3 * a] * pg[3 * b] + g[3 * a + 1] * pg[3 * b + 1] + g[3 * a + 2] * pg[3 * b + 2];
  }
  const sparse_direct::SerialOpenMp serial;
  if (!P.analyzed) {
    P.chol.analyzePattern(P.S);
    P.analyzed = true;
  }
  P.chol.factorize(P.S);
  P.factored = P.chol.info() == Eigen::Success;
  return P.factored;
}

void Solver::applyPrimal(const double* b, double* d) {
  Primal& P = *primal_;
  const int n3 = 3 * n_;
  Eigen::Map<const Vec> bv(b, n3);
  Eigen::Map<Vec> dv(d, n3);
  for (int i = 0; i < n_; ++i) dv.segment<3>(3 * i) = P.dinv[i] * bv.segment<3>(3 * i);
  P.ry.noalias() = G_.transpose() * dv;
  {
    const sparse_direct::SerialOpenMp serial;
    if (!P.chol.solveInto(P.ry.data(), P.y.data())) P.y.setConstant(std::numeric_limits<double>::quiet_NaN());
  }
  P.gy.noalias() = G_ * P.y;
  for (int i = 0; i < n_; ++i)
    dv.segment<3>(3 * i) = P.dinv[i] * (bv.segment<3>(3 * i) - Fu_[i] * P.gy.segment<3>(3 * i));
}

void Solver::applyW(const Vec& x, Vec& out) const {
  if (!unreduced_) {
    out.noalias() = W_ * x;
    return;
  }
  ytmp_.noalias() = G_.transpose() * x;
  ytmp_ = a_ldlt_.solve(ytmp_);
  out.noalias() = G_ * ytmp_;
}

void Solver::computeU(const Vec& r, Vec& u) const {
  applyW(r, u);
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
  if (denseJ() && 3 * n_ <= Lu::kSmallRows) {
    const int m = 3 * n_;
    std::fill(lu_->small, lu_->small + m * m, 0.0);
    for (int c = 0; c < m; ++c)
      for (int p = J_.outerIndexPtr()[c]; p < J_.outerIndexPtr()[c + 1]; ++p) lu_->small[c * m + J_.innerIndexPtr()[p]] = jv[p];
    return lu_->factorSmall(m);
  }
  lu_->small_rows = 0;
  if (denseJ()) {
    lu_->dense.setZero(3 * n_, 3 * n_);
    for (int c = 0; c < 3 * n_; ++c)
      for (int p = J_.outerIndexPtr()[c]; p < J_.outerIndexPtr()[c + 1]; ++p) lu_->dense(J_.innerIndexPtr()[p], c) = jv[p];
    lu_->dense_lu.compute(lu_->dense);
    // Singular as UMFPACK reports it: an exactly zero (or non-finite) pivot.
    const auto pivots = lu_->dense_lu.matrixLU().diagonal();
    return pivots.allFinite() && (pivots.array() != 0).all();
  }
  if (need_analysis_) {
    // No iterative refinement: a Newton direction does not need it, and UMFPACK's default (up to
    // 2 steps, each a product with J and a solve) was a fifth of the solve time on rod piles.
    lu_->lu.umfpackControl()(UMFPACK_IRSTEP) = 0;
    lu_->lu.analyzePattern(J_);
    need_analysis_ = false;
  }
  lu_->lu.factorize(J_);
  return lu_->lu.info() == Eigen::Success;
}

// Sticking and closed contacts have F_r = 0 rows: K's diagonal is zero there, UMFPACK then pivots
// off the diagonal and its fronts grow far beyond METIS's estimate (0.44 s instead of ~0.05 s per
// factorization at 2280 contacts). A proximal term of 1e-8 W_ii (eta_i = 1e-8 / rho_i) makes the
// diagonal nonzero, and K quasi-definite in the sticking limit, so diagonal pivots in METIS's order
// are taken. The LU is that of J + 1e-8 F_u diag(W_ii); GMRES on the exact J, preconditioned by it,
// removes the perturbation in a few iterations (gmresDirection).
constexpr double kPivotRegularization = 1e-8;

bool Solver::assembleAndFactorizeUnreduced(double shift) {
  double* kv = K_.valuePtr();
  for (const FuGTriple& f : fug_) {
    const Vec3 v = Fu_[f.contact] * f.g;
    kv[f.pos] = v[0];
    kv[f.pos + 1] = v[1];
    kv[f.pos + 2] = v[2];
  }
  for (int i = 0; i < n_; ++i)
    for (int c = 0; c < 3; ++c) {
      double* col = kv + kdiag_pos_[3 * i + c];
      for (int a = 0; a < 3; ++a) col[a] = Fr_[i](a, c) + (eta_ + kPivotRegularization / rho_[i]) * Fu_[i](a, c) - (a == c ? shift : 0.0);
    }
  if (need_k_analysis_) {
    lu_->klu.umfpackControl()(UMFPACK_IRSTEP) = 0;
    // K's pattern is symmetric (A; G^T against F_u G; full 3x3 diagonal blocks) and, for rod piles,
    // close to planar: the symmetric strategy with METIS's nested dissection on K + K^T. The
    // automatic choice (unsymmetric, COLAMD) built 1000 x 1100 frontal matrices on the 40-rod mat,
    // AMD fronts twice METIS's. Diagonal pivots only (tolerance 0): see kPivotRegularization.
    lu_->klu.umfpackControl()(UMFPACK_STRATEGY) = UMFPACK_STRATEGY_SYMMETRIC;
    lu_->klu.umfpackControl()(UMFPACK_ORDERING) = UMFPACK_ORDERING_METIS;
    lu_->klu.umfpackControl()(UMFPACK_SYM_PIVOT_TOLERANCE) = 0;
    lu_->klu.analyzePattern(K_);
    need_k_analysis_ = false;
  }
  lu_->klu.factorize(K_);
  k_factored_ = lu_->klu.info() == Eigen::Success;
  return k_factored_;
}

void Solver::applyJ(const Vec& x, Vec& out, double shift) const {
  applyW(x, jtmp_);
  out.resize(3 * n_);
  for (int i = 0; i < n_; ++i) {
    const Vec3 xi = x.segment<3>(3 * i);
    out.segment<3>(3 * i) = Fu_[i] * (jtmp_.segment<3>(3 * i) + eta_ * xi) + Fr_[i] * xi - shift * xi;
  }
}

bool Solver::gmresDirection(double shift, int max_iterations, bool primal) {
  // Right-preconditioned GMRES on (J - shift I) d = -F, J applied matrix-free (applyW). The
  // preconditioner is either the primal one (applyPrimal: J's proximal neighbour, 2-4 iterations)
  // or the d block of K^-1 from the LU in klu: the Schur complement of K on d is J, so with the
  // current K (up to kPivotRegularization) it converges in 1-2 iterations, and with an LU from
  // earlier iterations in about as many as contacts changed state (a low-rank change). The basis
  // of preconditioned vectors is kept (gm_z_), so the direction needs no solve at the end.
  const int n3 = 3 * n_;
  const double beta = F_.norm();
  d_.setZero(n3);
  if (!(beta > 0)) return true;
  gm_v_.col(0) = -F_ / beta;
  gm_h_.setZero();
  gm_g_.setZero();
  gm_g_[0] = beta;
  int k = 0;
  bool done = false;
  while (k < max_iterations && !done) {
    if (primal) {
      applyPrimal(gm_v_.col(k).data(), gm_z_.col(k).data());
    } else {
      krhs_.head(m_).setZero();
      krhs_.tail(n3) = gm_v_.col(k);
      ksol_ = lu_->klu.solve(krhs_);
      gm_z_.col(k) = ksol_.tail(n3);
    }
    applyJ(gm_z_.col(k), gm_w_, shift);
    for (int j = 0; j <= k; ++j) {  // modified Gram-Schmidt
      gm_h_(j, k) = gm_v_.col(j).dot(gm_w_);
      gm_w_ -= gm_h_(j, k) * gm_v_.col(j);
    }
    gm_h_(k + 1, k) = gm_w_.norm();
    if (gm_h_(k + 1, k) > 0) gm_v_.col(k + 1) = gm_w_ / gm_h_(k + 1, k);
    for (int j = 0; j < k; ++j) {  // earlier Givens rotations
      const double a = gm_h_(j, k), b = gm_h_(j + 1, k);
      gm_h_(j, k) = gm_c_[j] * a + gm_s_[j] * b;
      gm_h_(j + 1, k) = -gm_s_[j] * a + gm_c_[j] * b;
    }
    const double a = gm_h_(k, k), b = gm_h_(k + 1, k), rr = std::hypot(a, b);
    if (!(rr > 0)) break;
    gm_c_[k] = a / rr;
    gm_s_[k] = b / rr;
    gm_h_(k, k) = rr;
    gm_h_(k + 1, k) = 0;
    gm_g_[k + 1] = -gm_s_[k] * gm_g_[k];
    gm_g_[k] = gm_c_[k] * gm_g_[k];
    ++k;
    done = std::abs(gm_g_[k]) <= kGmresTolerance * beta;
    // An LU of K that has not gained 100x in two iterations will not within the budget (many
    // contacts changed state since it was factorized): stop early and refactorize.
    if (!primal && k == 2 && std::abs(gm_g_[k]) > 1e-2 * beta) break;
  }
  if (k == 0) return false;
  const Eigen::VectorXd y =
      gm_h_.topLeftCorner(k, k).triangularView<Eigen::Upper>().solve(gm_g_.head(k));
  d_.noalias() = gm_z_.leftCols(k) * y;
  gmres_iterations_ += k;
  return done && d_.allFinite();
}

bool Solver::unreducedDirection(double shift) {
  if (!primal_failed_) {
    // The primal preconditioner, fresh at every iteration (refactorize) or the one there is.
    const bool fresh = opt_.refactorize;
    if (fresh) {
      if (assembleAndFactorizePrimal(shift)) {
        ++factorizations_;
      } else {  // A + G^T P G not positive definite (A is not): K's LU, here and for a while
        primal_failed_ = true;
        lu_problems_left_ = kLuProblemsAfterFallback;
      }
    }
    if (!primal_failed_) {
      if (!primal_->factored) return false;
      if (gmresDirection(shift, kPrimalGmresIterations, true)) return true;
      if (!fresh) return false;
      // A fresh factorization that GMRES cannot use (J nearly singular, or many contacts sliding
      // where their coupling matters): K's LU for this problem and the next kLuProblemsAfterFallback.
      primal_failed_ = true;
      lu_problems_left_ = kLuProblemsAfterFallback;
    }
  }
  if (!k_built_) buildK();
  // An LU of K from earlier iterations (same pattern) first: if the contacts' states barely
  // changed, a few preconditioned iterations replace a factorization (~45 ms at 2280 contacts).
  // After one failure in a solve, not again in that solve (the states are still moving).
  if (k_factored_ && try_stale_) {
    if (gmresDirection(shift, kStaleGmresIterations, false)) return true;
    try_stale_ = false;
  }
  if (!opt_.refactorize || !assembleAndFactorizeUnreduced(shift)) return false;
  ++factorizations_;
  // With the current K the preconditioned system is the identity up to the pivot regularization:
  // the direction is kept even short of kGmresTolerance (it is then still the LU's, refined).
  gmresDirection(shift, kFreshGmresIterations, false);
  return d_.allFinite();
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
    newton_residual_ = naturalResidual(qeff_, u_, r, mu_);
    if (converged(newton_residual_, tol_rel, tol_abs)) return true;
    if (k >= budget || res.iterations >= opt_.max_iterations) return false;
    if (opt_.stop && opt_.stop()) {
      res.stopped = true;
      res.message = "stopped on request after " + std::to_string(res.iterations) + " iterations";
      return false;
    }
    // Newton direction: J d = -F, with a diagonal shift if J is singular.
    bool ok = false;
    for (double shift : {0.0, 1e-10, 1e-6}) {
      if (unreduced_) {
        if (!unreducedDirection(shift)) continue;
      } else {
        if (!assembleAndFactorize(shift)) continue;
        rtrial_ = -F_;
        if (denseJ() && lu_->small_rows > 0)
          lu_->solveSmall(rtrial_, d_);
        else if (denseJ())
          d_ = lu_->dense_lu.solve(rtrial_);
        else
          d_ = lu_->lu.solve(rtrial_);
      }
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
    applyW(d_, Wd_);
    if (eta_ != 0) Wd_ += eta_ * d_;
    // Goldstein-Price line search on phi(alpha) = 1/2 |f_AC(r + alpha d)|^2 (Bertails-Descoubes et al.
    // 2011, Algorithm 2).
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
  std::chrono::steady_clock::time_point t0;
  if (opt_.timed) t0 = std::chrono::steady_clock::now();
  Result res = solveWithRho(r);
  // Retries from the best iterate with rho x 10, then x 0.1: the zeros of f_AC do not depend on rho
  // (Bertails-Descoubes et al. 2011, Eq. 4), but where the Newton stalls does: contacts with a large
  // W_ii get a small rho_i and weigh little in |f_AC|. Seen: a 31-spaghetti pile (|f_AC| = 1e-12
  // while the natural map stalled at 1.35e-10 > 1e-10 after 200 iterations) and FCLIB's
  // spheres-in-a-box (1.8e-6 after 200 iterations; converged with rho x 0.1).
  if (!res.converged && !res.stopped && opt_.rho == 0 && opt_.rho_retries && n_ > 0) {
    const Vec rho0 = rho_;
    for (double scale : {10.0, 0.1}) {
      rho_ = scale * rho0;
      Vec r_try = r;
      const Result again = solveWithRho(r_try);
      const int iterations = res.iterations + again.iterations, prox = res.prox_iterations + again.prox_iterations;
      if (again.converged || again.residual.rel < res.residual.rel) {
        r = r_try;
        res = again;
      }
      res.iterations = iterations;
      res.prox_iterations = prox;
      res.message += scale > 1 ? " (retried with rho x 10)" : " (retried with rho x 0.1)";
      if (again.stopped) res.stopped = true, res.message = again.message;
      if (res.converged || res.stopped) break;
    }
    if (!res.converged) rho_ = rho0;
    eta_ = 0;
    qeff_ = q_;
    computeU(r, u_);  // velocity() at the returned r
  }
  if (opt_.timed) res.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  u_at_ = &r;  // every way out leaves u_ = W r + q (eta = 0, qeff = q) at this r
  return res;
}

double Solver::worstContactError(const Vec& u, const Vec& r) const {
  double e = 0;
  for (int i = 0; i < n_; ++i) e = std::max(e, coulombError(u.segment<3>(3 * i), r.segment<3>(3 * i), mu_[i], rho_[i]));
  return e;
}

double Solver::polishContacts(Vec& r, Result& result, double tolerance) {
  if (n_ == 0 || r.size() != 3 * n_) return 0;
  // solve() leaves u_ = W r + q at its r (eta = 0, qeff = q): recomputed only for another r.
  const bool current = u_at_ == &r && eta_ == 0;
  eta_ = 0;
  qeff_ = q_;
  if (!current) computeU(r, u_);
  double error = worstContactError(u_, r);
  if (!(error > tolerance)) return error;
  const Options keep = opt_;
  // restored on every way out, an exception from solve() included
  struct Restore {
    Options& opt;
    const Options& saved;
    ~Restore() { opt = saved; }
  } restore{opt_, keep};
  opt_.tolerance = 1e-15;  // one plain Newton step per solve(): no proximal loop, no rho retries
  opt_.max_iterations = 1;
  opt_.proximal = false;
  opt_.rho_retries = false;
  opt_.timed = false;  // its steps are counted in `result`, not timed
  for (int k = 0; k < 4 && error > tolerance; ++k) {
    rkeep_ = r;
    const Result more = solve(r);
    result.iterations += more.iterations;
    const double now = worstContactError(u_, r);  // solve() leaves u_ = W r + q
    if (!(now < error) || !(more.residual.rel <= keep.tolerance)) {
      r = rkeep_;
      computeU(r, u_);
      break;
    }
    error = now;
    result.residual = more.residual;
    result.ac_norm = more.ac_norm;
  }
  return error;
}

Result Solver::solveWithRho(Vec& r) {
  try_stale_ = true;
  Result res;
  if (r.size() != 3 * n_) r.setZero(3 * n_);
  if (!r.allFinite()) r.setZero();
  eta_ = 0;
  qeff_ = q_;
  bool ok = n_ == 0 || newton(r, opt_.tolerance, opt_.abs_tolerance, opt_.max_iterations, res, opt_.proximal);
  // The plain Newton stops on the natural map of the plain problem (eta = 0, qeff = q) at
  // u_ = W r + q: that residual is the answer's (nothing to recompute).
  const bool plain_converged = ok && n_ > 0;
  if (!ok && !res.stopped && opt_.proximal && res.iterations < opt_.max_iterations) {
    // Proximal-point loop: u = (W + eta I) r + q - eta r_k. eta starts at the mean diagonal of W
    // and shrinks tenfold after each inner solve that converged (grows fivefold otherwise).
    double scale = 0;
    for (int i = 0; i < 3 * n_; ++i) scale += std::abs(wdiag_[i]);
    scale = scale > 0 ? scale / (3 * n_) : 1.0;
    double eta = scale;
    rk_ = r;
    eta_ = 0;
    qeff_ = q_;
    computeU(rk_, u_);
    Residual outer = naturalResidual(q_, u_, rk_, mu_);
    // Restart from the best point: the stalled Newton may have wandered.
    while (res.iterations < opt_.max_iterations && !res.stopped) {
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
  if (plain_converged) {
    res.residual = newton_residual_;
  } else {
    eta_ = 0;
    qeff_ = q_;
    computeU(r, u_);
    res.residual = naturalResidual(q_, u_, r, mu_);
  }
  if (plain_converged) {
    // newton() left F_ = f_AC(u_, r) at the returned r: the same sum as acNorm2, term by term.
    double s = 0;
    for (int i = 0; i < n_; ++i) s += F_.segment<3>(3 * i).squaredNorm();
    res.ac_norm = std::sqrt(s);
  } else {
    res.ac_norm = std::sqrt(acNorm2(u_, r));
  }
  res.converged = converged(res.residual, opt_.tolerance, opt_.abs_tolerance);
  if (res.converged)
    res.message = "converged";
  else if (res.message.empty())
    res.message = "iteration limit";
  return res;
}

}  // namespace rodsim::ac
