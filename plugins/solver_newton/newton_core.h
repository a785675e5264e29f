// Newton iteration on the free DOFs with the Goldstein-Price line search of Tong et al. (2023)
// (SI Algorithm 1 and Algorithm 2), shared by the implicit-euler and static solvers.
//
// Residual (N) at a configuration q, on every DOF:
//   inertial (implicit Euler, Eq. 7):  R(q) = M (q - q_n - dt v_n) / dt^2 - F(q),  J = M/dt^2 + K
//   quasi-static:                      R(q) = -F(q),                              J = K
// Newton solves J_ff dq_f = -R_f on the free DOFs f (fixed DOFs keep their prescribed values) and
// steps q <- q + alpha dq, alpha from the line search on phi(alpha) = 1/2 |R_f(q + alpha dq)|^2.
//
// Read in this order: newton_options.h (the parameters), newton_core.cpp (the loop: evaluate,
// converge?, linear step, step length), linear_step.h/.cpp (assemble J, factorize, solve, or hand
// the system to an impulse contact), line_search.h/.cpp (Goldstein-Price and the watchdog),
// sparse_assembly.h/.cpp (the cached sparse pattern and the factorizations).
#pragma once

#include "line_search.h"
#include "linear_step.h"
#include "newton_options.h"
#include "sparse_assembly.h"

#include <rodsim/capabilities.h>
#include <rodsim/component.h>

#include <string>
#include <vector>

namespace rodsim::newton {

struct NewtonResult {
  bool ok = false;
  int solves = 0;          // linear solves (including Levenberg retries)
  double residual = 0;     // |R_free| at the returned q, N
  double force_scale = 0;  // N, for the relative criterion
  bool singular = false;   // a Jacobian stayed singular after every Levenberg shift
  bool stopped = false;    // abandoned on a stop request (StopRequests): do not retry, fail the step
  std::string message;     // why it failed
};

class NewtonCore {
 public:
  explicit NewtonCore(const NewtonOptions& options);

  // Sizes every work vector for `world` (allocates only when the DOF count changed) and
  // finds the contact that provides linearized impulses (LinearizedImpulseContact), if any. Call once
  // per step before solve().
  void prepare(World& world);

  // Solves R(q) = 0 from the initial guess q (prescribed values already written), in place.
  // ctx: t, dt, quasi_static, load_scale, q_start, v_start set by the caller; ctx.q is managed
  // here. inertial: include M (q - q_n - dt v_n)/dt^2 (needs ctx.q_start, ctx.v_start, dt > 0).
  // On return, residual() is R (all DOFs) at the last evaluated configuration, which is q.
  NewtonResult solve(World& world, EvalContext& ctx, Vec& q, bool inertial);

  // |R_free| at q without the stiffness (prepare() first), for choosing where a solve starts; false
  // (and rnorm = +inf) when the residual there is not finite. Uses the line search's trial buffers:
  // residual() and the next solve() are unaffected.
  bool residualAt(World& world, EvalContext& ctx, const Vec& q, bool inertial, double& rnorm);

  // Of two starting points for the same equations (prescribed values written in both), leaves in
  // `q` the one with the lower |R_free|: `q` (the velocity predictor, evaluated first) unless
  // `alternative` (q_n) is finite and lower, in which case the two are swapped and true returned
  // (README.md, "Predictor").
  bool startFromLowerResidual(World& world, EvalContext& ctx, Vec& q, Vec& alternative, bool inertial);

  const Vec& residual() const { return R_; }
  // |R_free| after each evaluation of an accepted iterate in the last solve() (capacity
  // reserved in prepare(), so recording it does not allocate).
  const std::vector<double>& history() const { return history_; }
  const NewtonOptions& options() const { return opt_; }
  const SparseAssembler& assembler() const { return linear_.assembler(); }
  // Set by the static solver: a Levenberg shift is also applied when the Newton step is not a
  // descent direction of the energy (R . dq >= 0), i.e. when K is indefinite along dq.
  void setEnergyDescentCheck(bool on) { linear_.setEnergyDescentCheck(on); }

 private:
  // F, R and |R_free| at q (and the stiffness into K unless K is null). prefactor: the split
  // first evaluation, which factorizes J before the step-constant forces are added.
  bool evaluate(World& world, EvalContext& ctx, const Vec& q, Vec& F, Vec& R,
                StiffnessSink* K, double& rnorm, std::string& why, bool prefactor = false);
  InertiaTerm inertia(World& world, const EvalContext& ctx) const;
  // dq and phi'(0) at the current iterate (ctx.q), from R_ and sink_.
  bool linearStep(World& world, EvalContext& ctx, double& dphi0, std::string& why,
                  bool& singular, int& solves);
  // The step length along dq_ from q (full_step: the watchdog's relaxed step, no search); the
  // point reached is evaluated into F_, R_ (and sink_ when have_k). -1 on failure (why).
  double lineSearch(World& world, EvalContext& ctx, const Vec& q, double phi0, double dphi0,
                    double alpha_cap, bool full_step, bool& have_k, double& rnorm,
                    std::string& why);
  std::string describeDof(World& world, int g) const;
  // One Newton solve from q (solve() may run it twice: with the watchdog, then without).
  NewtonResult iterate(World& world, EvalContext& ctx, Vec& q, bool watchdog);
  NewtonResult iterateOnce(World& world, EvalContext& ctx, Vec& q, bool watchdog);

  NewtonOptions opt_;
  LinearStep linear_;
  Watchdog watchdog_;
  StiffnessSink sink_, trial_sink_;  // the stiffness at the iterate, and at the line search's trial point
  bool inertial_ = false;
  bool has_barrier_ = false;
  int impulse_contact_ = -1;
  LinearizedImpulseContact* impulse_ = nullptr;  // the contact at impulse_contact_
  // The World's stop requests (SDK 1.6), checked before every linear solve and line search trial.
  const StopRequests* stop_ = nullptr;
  bool stopRequested() const { return stop_ && stop_->stopRequested(); }

  // Work vectors, global (size numDofs).
  Vec F_, R_, F_trial_, R_trial_, dq_, q_trial_, scaled_dq_;
  Vec q_first_;  // initial guess, for the retry without the watchdog
  // Whether the line search assembles the stiffness at its first trial point (lineSearch), and
  // the linear solves the last solve converged after (0: it failed), the prediction for the next:
  // the trial point after as many solves is expected to end the solve and needs no stiffness.
  bool trial_k_ = true;
  int last_solves_ = 0;
  std::vector<double> history_;
};

}  // namespace rodsim::newton
