// Alart-Curnier nonsmooth Newton solver for 3D Coulomb friction (Bertails-Descoubes, Cadoux,
// Daviet, Acary 2011), as free functions and one solver class, independent of rods.
//
// The local ("reduced", their Eq. 8) problem: find r in R^{3n} such that, with u = W r + q,
// every contact i satisfies Coulomb's law (u_i, r_i) in C(mu_i), written as the zero of
//   f_N(u, r) = P_R+(r_N - rho_N u_N) - r_N                          (Eq. 4a)
//   f_T(u, r) = P_B(0, mu r_N)(r_T - rho_T u_T) - r_T                (Eq. 4b, ball variant 4.3)
// Components are ordered (N, T1, T2) in each contact's orthonormal frame. Newton's method with a
// generalized Jacobian (Sec. 4.3, Appendix B), dF/dr = F_u W + F_r, and the Goldstein-Price
// line search on 1/2 |f_AC|^2 (Algorithms 1-2); when that Newton stalls, a proximal-point
// loop solves the regularized problems u = (W + eta I) r + q - eta r_k (W + eta I is better
// conditioned, and the fixed points of r_k -> r_{k+1} are the solutions), decreasing eta as it
// converges.
//
// Convergence is judged by the natural-map residual used by Siconos and FCLIB:
//   F_nat,i = r_i - P_K(r_i - (u_i + mu_i |u_T,i| e_N)),   K = {|x_T| <= mu x_N},
//   abs = sqrt(sum_i |F_nat,i|^2),  rel = abs / max(|q|, |r|, |u|).
#pragma once

#include <Eigen/Core>
#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>
#include <functional>

#include <memory>
#include <string>
#include <vector>

namespace rodsim::ac {

using Vec = Eigen::VectorXd;
using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;
using SpMat = Eigen::SparseMatrix<double, Eigen::ColMajor, int>;

// ------------------------------------------------------------------ one contact (free functions)

// The Alart-Curnier function of one contact and, if Fu and Fr are given, one element of its
// generalized Jacobian: df = Fu du + Fr dr. On the nondifferentiable set (r_N - rho_N u_N = 0,
// |y| = mu r_N, mu r_N = 0) one of the adjacent smooth pieces is chosen.
Vec3 alartCurnier(const Vec3& u, const Vec3& r, double mu, double rho_n, double rho_t,
                  Mat3* Fu = nullptr, Mat3* Fr = nullptr);

// Projection onto the friction cone K_mu = {x : |x_T| <= mu x_N}.
Vec3 projectCone(const Vec3& z, double mu);

// Natural-map (de Saxce) residual of one contact: r - P_K(r - (u + mu |u_T| e_N)).
Vec3 naturalMap(const Vec3& u, const Vec3& r, double mu);

// Coulomb's law of one contact in impulse units, relative to the contact's own scale:
//   |r - P_K(r - rho (u + mu |u_T| e_N))| / max(|r|, rho |u|),
// zero exactly on the law (Eqs. 1-2 through de Saxce's natural map, which holds for any scaling
// rho > 0 of the velocity; with rho = 1 / mean W_ii, rho u is the impulse that would stop the contact
// alone, so r and rho u are commensurate where the problem's relative residual compares m/s with N s).
double coulombError(const Vec3& u, const Vec3& r, double mu, double rho);

// Natural-map residual of a whole problem at (u, r): abs and rel as defined above.
struct Residual {
  double abs = 0, rel = 0;
};
// zero (optional, n flags): contacts whose natural map is known to be exactly 0 (r = 0 and u = q with
// q_N >= 0, q_T finite: r - u lies in the polar cone), left out of the sum (adding 0 changes nothing).
Residual naturalResidual(const Vec& q, const Vec& u, const Vec& r, const Vec& mu, const char* zero = nullptr);

// ------------------------------------------------------------------ the solver

struct Options {
  double tolerance = 1e-8;    // on the relative natural-map residual
  double abs_tolerance = 0;   // also converged when the absolute residual is below this (0: off)
  int max_iterations = 200;   // Newton iterations (= linear solves) in total, proximal ones included
  bool line_search = true;    // Goldstein-Price (Algorithm 2); false: full Newton steps
  double m1 = 0.1, m2 = 0.9;  // Goldstein-Price constants
  int max_trials = 30;        // merit evaluations per line search
  double alpha_max = 10.0;    // largest step fraction tried
  bool proximal = true;       // globalization when the plain Newton stalls
  int stall_iterations = 20;  // plain-Newton iterations without a 10x residual decrease = stall
  double rho = 0;             // > 0: rho_N = rho_T = rho for every contact; 0: 1 / (trace(W_ii)/3)
  bool rho_retries = true;    // automatic rho: a solve short of tolerance is retried from its best
                              // iterate with rho x 10, then x 0.1 (same solutions, other stalls)
  bool refactorize = true;    // unreduced systems: false = directions only from the factorization
                              // of an earlier iteration (GMRES), none when that does not converge
  // Unreduced systems: GMRES preconditioned by a Cholesky on the rods' DOFs (Auto: where W can be
  // nonsingular, 3n < m) or by K's LU; a failed Cholesky falls back to K's LU.
  enum class Preconditioner { Auto, Cholesky, Lu };
  Preconditioner unreduced_preconditioner = Preconditioner::Auto;
  // Result::time_s measured (two clock reads per solve()); off where the solves are too small for
  // it (the velocity-level step's one-contact groups, timed per step instead) and 0 then.
  bool timed = true;
  // Reduced systems of at most this many rows (3n) are factorized by a dense LU with partial
  // pivoting instead of UMFPACK, whose numeric factorization and solve allocate and take
  // microseconds even at 3 x 3 (0: never). The velocity-level step's groups of one or a few contacts.
  int dense_rows = 0;
  // Asked before every Newton iteration (each a factorization or a preconditioned GMRES solve):
  // true ends the solve, unconverged, with Result::stopped (a stop request to rodsim run: a mat
  // of 10,000 contacts takes seconds per iteration). Empty: never.
  std::function<bool()> stop;
};

struct Result {
  bool converged = false;
  int iterations = 0;           // Newton iterations = factorizations + solves of the 3n system
  int prox_iterations = 0;      // proximal outer iterations (0: the plain Newton converged)
  double ac_norm = 0;           // |f_AC(W r + q, r)| at the returned r (same units as r)
  Residual residual;            // natural map at the returned r
  double time_s = 0;            // wall time of solve()
  std::string message;          // how it ended
  bool stopped = false;         // ended by Options::stop (no rho retries, no proximal loop)
};

// Solves the local problem u = W r + q. setProblem() copies W into a 3x3-block-filled pattern
// (diagonal blocks always present) shared with the Newton Jacobian; the sparse LU's symbolic
// analysis is redone only when that pattern changes. The Newton loop reuses preallocated work
// vectors; the sparse LU (UMFPACK) allocates inside its numeric factorization.
class Solver {
 public:
  explicit Solver(Options options = {});
  ~Solver();
  Solver(const Solver&) = delete;
  Solver& operator=(const Solver&) = delete;

  const Options& options() const { return opt_; }
  Options& options() { return opt_; }

  // W: 3n x 3n (any sparse pattern), q: 3n, mu: n (>= 0). Throws std::invalid_argument on sizes.
  void setProblem(const SpMat& W, const Vec& q, const Vec& mu);
  // The same with W given by its entries (row, col, value; duplicates summed in their order, as
  // SparseMatrix::setFromTriplets sums them), W 3n x 3n: no intermediate matrix, and no allocation
  // when W's block pattern is the last problem's (the contact model sets up one problem per group
  // and solve, many of them small).
  void setProblem(const std::vector<Eigen::Triplet<double>>& W, const Vec& q, const Vec& mu);
  // The same problem given by the factors of W = G A^-1 G^T: A (m x m, symmetric: the free DOFs of
  // the rods the contacts touch) and G (3n x m). W is never formed: u = G A^-1 G^T r + q through an
  // LDL^T of A, and Newton directions solve the unreduced system of Eq. 7,
  //   [ A         -G^T          ] [y]   [ 0 ]
  //   [ F_u G  F_r + eta F_u    ] [d] = [-F ],
  // whose Schur complement on d is J = F_u (W + eta I) + F_r: the same direction, found by GMRES on
  // J preconditioned by a sparse factorization that fills in along the rods and the contact graph,
  // where J's fills in through W's dense block of every rod (Sec. 4.2 leaves the choice open:
  // "probably problem-dependent"). The factorization is a Cholesky on the rods' DOFs of J's
  // proximal neighbour, or the LU of K (Options::unreduced_preconditioner). wdiag = diag(W) (for rho
  // and the proximal scale; with diag(A)^-1 in place of A^-1 rho was off enough to double the
  // Newton iterations). Throws if A is singular.
  void setProblem(const SpMat& A, const SpMat& G, const Vec& wdiag, const Vec& q, const Vec& mu);
  // r: warm start in, solution (or the best iterate) out; size 3n.
  Result solve(Vec& r);
  // After a converged solve(r): Newton steps (quadratic there, at most 4) until every contact's
  // coulombError (with this problem's rho) is <= tolerance, each step kept only if it lowers the
  // worst contact's error and stays within options().tolerance; iterations and residuals are added
  // to `result`. Returns the worst contact's error at the returned r. The relative residual mixes
  // units (m/s and N s) and is dominated by the largest |q|, |u| or |r| of the problem: it can pass
  // with one small contact's impulse off by more than itself (the velocity-level step's resting
  // rope nodes next to open candidates), which this removes.
  double polishContacts(Vec& r, Result& result, double tolerance);

  int numContacts() const { return n_; }
  const Vec& velocity() const { return u_; }  // u = W r + q at the last r
  Vec velocityAt(const Vec& r) const {         // u = W r + q
    Vec u;
    applyW(r, u);
    return u + q_;
  }
  // Unreduced mode: factorizations (primal Cholesky or LU of K) and GMRES iterations (= solves
  // with them) so far.
  int factorizations() const { return factorizations_; }
  int gmresIterations() const { return gmres_iterations_; }

 private:
  struct Lu;
  struct Primal;
  Result solveWithRho(Vec& r);  // one solve with the current rho (solve() adds the rho retries)
  void setContacts(const Vec& q, const Vec& mu);
  void computeRho();  // from wdiag_
  void applyW(const Vec& x, Vec& out) const;
  // u = W r + q + eta (r - rk)  (qeff_ = q - eta rk)
  void computeU(const Vec& r, Vec& u) const;
  double acNorm2(const Vec& u, const Vec& r) const;  // |f_AC|^2 (no Jacobian)
  void acEval(const Vec& u, const Vec& r);          // F_, Fu_, Fr_
  bool assembleAndFactorize(double shift);
  bool denseJ() const { return !unreduced_ && 3 * n_ <= opt_.dense_rows; }
  bool assembleAndFactorizeUnreduced(double shift);
  void applyJ(const Vec& x, Vec& out, double shift) const;  // (F_u (W + eta I) + F_r - shift I) x
  // d_ by GMRES, preconditioned by the primal factorization or by the LU in klu.
  bool gmresDirection(double shift, int max_iterations, bool primal);
  bool unreducedDirection(double shift);
  void buildK();
  void buildPrimalPattern();
  bool assembleAndFactorizePrimal(double shift);
  void applyPrimal(const double* b, double* d);  // d = (J's proximal neighbour)^-1 b
  // Newton on the current (eta, rk) problem until tol (natural map of that problem) or
  // `budget` iterations. Returns true when converged.
  bool newton(Vec& r, double tol_rel, double tol_abs, int budget, Result& res, bool stall_exit);
  bool converged(const Residual& res, double tol_rel, double tol_abs) const;

  Options opt_;
  int n_ = 0;
  SpMat W_, J_;
  Vec q_, mu_, rho_;
  Vec u_, F_, d_, Wd_, rtrial_, utrial_, rk_, qeff_, rkeep_;
  double worstContactError(const Vec& u, const Vec& r) const;  // max_i coulombError at (u, r)
  // solve(r) leaves u_ = W r + q at its r: polishContacts(r) right after it (r untouched) does not
  // recompute it. nullptr: unknown (a new problem).
  const Vec* u_at_ = nullptr;
  std::vector<Mat3> Fu_, Fr_;
  std::vector<int> diag_pos_;  // J_ value index of the (c, c) diagonal entry of each column
  // setProblem: W's block pattern (block rows of block column b: blk_rows_[blk_first_[b] ..
  // blk_first_[b + 1]), sorted) and the compressed pattern it gives W_ and J_, kept between problems.
  std::vector<int> blk_first_, blk_rows_, pat_outer_, pat_inner_;
  std::vector<Eigen::Triplet<double>> w_entries_;  // setProblem(SpMat): W's entries
  // setProblem(triplets): the last problem's entries (row, col pairs), the W_ value index each was
  // summed into, and its n (-1: none; W_, J_ not from triplets since).
  std::vector<int> trip_rc_, trip_pos_;
  int trip_n_ = -1;
  double eta_ = 0;
  Residual newton_residual_;  // newton(): the natural map at its last check
  std::unique_ptr<Lu> lu_;
  std::unique_ptr<Primal> primal_;
  bool primal_failed_ = false;  // this problem: K's LU preconditions (primal off, or it failed)
  int lu_problems_left_ = 0;    // problems still to precondition by K's LU after a primal failure
  bool k_built_ = false;        // K_ holds this problem's pattern
  bool need_analysis_ = true;
  // Unreduced mode (setProblem(A, G, ...)): K's pattern is fixed; F_u G and the diagonal blocks
  // F_r + eta F_u are rewritten in place. Each F_u G triple (rows m+3i..m+3i+2 of a y column j)
  // is Fu_i times G's 3 entries (3i..3i+2, j).
  struct FuGTriple {
    int pos, contact;
    Vec3 g;
  };
  bool unreduced_ = false, need_k_analysis_ = true;
  int m_ = 0;
  SpMat A_, G_, K_;
  Eigen::SimplicialLDLT<SpMat> a_ldlt_;
  Vec wdiag_;          // diagonal of W
  mutable Vec ytmp_;   // m: G^T x and A^-1 G^T x
  std::vector<FuGTriple> fug_;
  std::vector<int> kdiag_pos_;  // K value index of row m+3i of column m+3i+c (3 consecutive rows)
  bool k_factored_ = false;  // klu holds an LU of a K with this pattern (maybe of earlier iterations)
  bool try_stale_ = true;    // this solve: that LU may still precondition (unreducedDirection)
  Eigen::MatrixXd gm_v_, gm_z_, gm_h_;  // GMRES: basis, preconditioned basis, Hessenberg
  Vec gm_g_, gm_c_, gm_s_, gm_w_;
  mutable Vec jtmp_;
  int factorizations_ = 0, gmres_iterations_ = 0;
  Vec krhs_, ksol_;
};

// A problem in FCLIB terms: local (u = W r + q) or global (M v = H r + f, u = H^T v + w).
struct Problem {
  bool global = false;
  int dim = 3;  // 2 or 3; 2D problems are embedded in 3D with a decoupled, unloaded 2nd tangent
  int contacts = 0;
  SpMat W;      // local (3n x 3n, after embedding)
  Vec q, mu;
  SpMat M, H;   // global (H: ndof x 3n)
  Vec f, w;
};

// Reads a Siconos numerics ASCII problem (.dat): local FrictionContactProblem, or the global
// GlobalFrictionContactProblem when `global` is set (e.g. GFC3D_*.dat). Throws std::runtime_error.
Problem readSiconosDat(const std::string& path, bool global);
// Reduces a global problem to the local one: W = H^T M^-1 H, q = H^T M^-1 f + w (sparse LU of M).
// Entries of W that are exactly zero (contacts on independent bodies) stay out of its pattern.
void reduceGlobal(Problem& p);
// Embeds a 2D problem (rows N, T per contact) into 3D (N, T, T2 with W_T2T2 = 1, q_T2 = 0).
void embed2D(Problem& p);

}  // namespace rodsim::ac
