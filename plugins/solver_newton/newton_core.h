// Newton iteration on the free DOFs with the Goldstein-Price line search of the IMC seed
// (seed 002, SI Algorithm 1 and Algorithm 2), shared by the implicit-euler and static solvers.
//
// Residual (N) at a configuration q, on every DOF:
//   inertial (implicit Euler, Eq. 7):  R(q) = M (q - q_n - dt v_n) / dt^2 - F(q),  J = M/dt^2 + K
//   quasi-static:                      R(q) = -F(q),                              J = K
// Newton solves J_ff dq_f = -R_f on the free DOFs f (fixed DOFs keep their prescribed values) and
// steps q <- q + alpha dq, alpha from the line search on phi(alpha) = 1/2 |R_f(q + alpha dq)|^2.
#pragma once

#include "sparse_assembly.h"

#include <rodsim/capabilities.h>
#include <rodsim/component.h>
#include <rodsim/params.h>

#include <string>
#include <vector>

namespace rodsim::newton {

struct NewtonOptions {
  double tolerance = 1e-8;           // N, absolute bound on |R_free|
  double relative_tolerance = 1e-10;  // times the force scale (see README)
  int max_iterations = 50;           // linear solves per Newton solve
  bool line_search = true;
  double m1 = 0.1, m2 = 0.9;        // Goldstein-Price constants (SI Algorithm 1)
  double alpha_min = 1e-3, alpha_max = 2.0;
  int max_trials = 100;
  int watchdog = 4;  // relaxed full steps before falling back to the line search; 0: never
  std::string linear_solver = "umfpack";
  double levenberg_shift = 1e-8;  // first shift, relative to mean |diag J|
  int levenberg_retries = 6;      // each retry multiplies the shift by 100
  // One Newton step, taken in full and accepted (linearly implicit Euler); set by implicit-euler's
  // `scheme`, not declared by declare().
  bool linearized = false;

  // Declares the parameters above in a solver schema, and reads them back.
  static void declare(Schema& s);
  static NewtonOptions fromParams(const Params& p);
};

struct NewtonResult {
  bool ok = false;
  int solves = 0;          // linear solves (including Levenberg retries)
  double residual = 0;     // |R_free| at the returned q, N
  double force_scale = 0;  // N, for the relative criterion
  bool singular = false;   // a Jacobian stayed singular after every Levenberg shift
  std::string message;     // why it failed
};

// Which rods a static solve leaves free to move rigidly (for error messages); "" when every rod
// is held at two nodes or more (or at one node and a twist).
std::string describeUnconstrained(World& world);

class NewtonCore {
 public:
  explicit NewtonCore(const NewtonOptions& options);

  // Sizes every work vector for `world` (allocates only when the DOF count changed) and
  // refreshes the fixed-DOF map and the contact kinds. Call once per step before solve().
  void prepare(World& world);

  // Solves R(q) = 0 from the initial guess q (prescribed values already written), in place.
  // ctx: t, dt, quasi_static, load_scale, q_start, v_start set by the caller; ctx.q is managed
  // here. inertial: include M (q - q_n - dt v_n)/dt^2 (needs ctx.q_start, ctx.v_start, dt > 0).
  // On return, residual() is R (all DOFs) at the last evaluated configuration, which is q.
  NewtonResult solve(World& world, EvalContext& ctx, Vec& q, bool inertial);

  const Vec& residual() const { return R_; }
  // |R_free| after each evaluation of an accepted iterate in the last solve() (capacity
  // reserved in prepare(), so recording it does not allocate).
  const std::vector<double>& history() const { return history_; }
  const NewtonOptions& options() const { return opt_; }
  const SparseAssembler& assembler() const { return assembler_; }
  // Set by the static solver: a Levenberg shift is also applied when the Newton step is not a
  // descent direction of the energy (R . dq >= 0), i.e. when K is indefinite along dq.
  void setEnergyDescentCheck(bool on) { energy_check_ = on; }

 private:
  // prefactor: assemble and factorize the Jacobian before the step-constant forces are added.
  bool evaluate(World& world, EvalContext& ctx, const Vec& q, Vec& F, Vec& R,
                StiffnessSink* K, double& rnorm, std::string& why, bool prefactor = false);
  // The Jacobian of sink_ into the assembler (true when its pattern changed), its symmetry, and
  // its factorization ahead of linearStep (which then starts from it).
  bool assembleJacobian(World& world, const EvalContext& ctx);
  bool symmetricJacobian() const;
  void prefactorize(World& world, const EvalContext& ctx);
  bool linearStep(World& world, EvalContext& ctx, double& dphi0, std::string& why,
                  bool& singular, int& solves);
  double lineSearch(World& world, EvalContext& ctx, const Vec& q, double phi0, double dphi0,
                    double alpha_cap, bool full_step, bool& have_k, double& rnorm,
                    std::string& why);
  std::string describeDof(World& world, int g) const;
  // One Newton solve from q (solve() may run it twice: with the watchdog, then without).
  NewtonResult iterate(World& world, EvalContext& ctx, Vec& q, bool watchdog);
  NewtonResult iterateOnce(World& world, EvalContext& ctx, Vec& q, bool watchdog);

  NewtonOptions opt_;
  LinearSolver linear_;
  SparseAssembler assembler_;
  StiffnessSink sink_, trial_sink_;
  bool energy_check_ = false;
  bool inertial_ = false;
  bool has_barrier_ = false;
  int impulse_contact_ = -1, impulse_count_ = 0;
  LinearizedImpulseContact* impulse_ = nullptr;  // the contact at impulse_contact_

  // Work vectors: global (size numDofs) and matrix-sized (free DOFs, or global for impulse).
  Vec F_, R_, F_trial_, R_trial_, dq_, q_trial_, scaled_dq_;
  Vec q_ref_, dq_ref_;  // watchdog reference point and its Newton step
  Vec q_first_;         // initial guess, for the retry without the watchdog
  bool watchdog_returned_ = false;
  // Whether the line search assembles the stiffness at its first trial point (lineSearch), and
  // whether the last solve converged after a single linear solve (the prediction for the next).
  bool trial_k_ = true, last_one_solve_ = false;
  bool prefactored_ = false, prefactored_ok_ = false;  // prefactorize() ran; its factorization succeeded  // the last iterate() went back to a watchdog reference point
  Vec b_, x_, Jx_;
  std::vector<double> history_;
};

}  // namespace rodsim::newton
