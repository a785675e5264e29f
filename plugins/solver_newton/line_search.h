// How far to go along a Newton step dq: the Goldstein-Price line search of Tong et al. (2023)
// (SI Algorithm 1) on the merit phi(alpha) = 1/2 |R_free(q + alpha dq)|^2, and the watchdog
// (Chamberlain et al. 1982) that lets full Newton steps through as long as they make progress.
// README.md, "Newton details shared by both", gives the parameters and the one deviation from
// Algorithm 1.
#pragma once

#include "newton_options.h"

#include <rodsim/linalg.h>

namespace rodsim::newton {

// The merit along the step, evaluated by the caller: NewtonCore evaluates the world at
// q + alpha dq into its trial buffers (the last evaluated point is the one a search returns).
class TrialPoints {
 public:
  // Evaluates the residual at q + alpha dq, and the stiffness there if `with_stiffness`; rnorm
  // receives |R_free|. False when the residual is not finite there (the caller keeps the reason).
  virtual bool evaluate(double alpha, bool with_stiffness, double& rnorm) = 0;
  // True when the search must end at once without a step (a stop request): it then fails.
  virtual bool stopRequested() const { return false; }

 protected:
  ~TrialPoints() = default;
};

struct StepLength {
  double alpha = -1;            // the step fraction taken; -1: no finite point (nothing to take)
  double rnorm = 0;             // |R_free| at q + alpha dq, the last point evaluated
  bool with_stiffness = false;  // that evaluation assembled the stiffness
};

// The full step alpha = min(1, alpha_cap), evaluated once (with the stiffness if asked):
// no line search, or the watchdog's relaxed step. Fails when the residual there is not finite.
StepLength fullStep(TrialPoints& trials, double alpha_cap, bool stiffness_at_first);

// SI Algorithm 1 from alpha = min(1, alpha_cap) on the bracket [0, alpha_cap], given phi(0) = phi0
// and phi'(0) = dphi0 < 0: accept alpha when
//   m2 alpha phi'(0) <= phi(alpha) - phi(0) <= m1 alpha phi'(0),
// otherwise bisect (too little decrease lowers the upper end, more decrease than the tangent
// raises the lower end, a non-finite residual lowers the upper end) until the bracket is narrower
// than alpha_min or max_trials points were tried. Then take the trial with the lowest phi if one
// decreased it, else the last bisection point clamped to [alpha_min, alpha_cap] (evaluated again
// if it is not the last point evaluated). The first trial point is evaluated with the stiffness if
// `stiffness_at_first` (it is usually the next iterate). Fails only when that last point's
// residual is not finite.
StepLength goldsteinPrice(TrialPoints& trials, const NewtonOptions& opt, double phi0, double dphi0,
                          double alpha_cap, bool stiffness_at_first);

// The watchdog: |R|^2 is a poor merit for stiff rods (a full Newton step that bends a beam first
// raises its axial forces, and the Goldstein-Price test then accepts only short steps). Full steps
// are taken while one of `watchdog` consecutive steps brings phi below the sufficient-decrease
// bound of a reference iterate, phi_ref + m1 min(1, cap_ref) phi'_ref(0); otherwise the solver
// returns to the reference iterate and runs the line search there.
class Watchdog {
 public:
  // Sizes the copy of the reference iterate (allocates only when n changed).
  void resize(int n);
  // A new Newton solve: no reference iterate, no return yet.
  void reset() {
    held_ = false;
    returned_ = false;
  }
  // Before a relaxed step from q along dq: q becomes the reference iterate unless one is held.
  void holdReference(const Vec& q, const Vec& dq, double phi0, double dphi0, double cap);
  // After the relaxed step (alpha < 0 if it failed) to merit phi: true when the solver must return
  // to the reference iterate (point(), step()) and search there; the reference is released either
  // on progress or on return.
  bool mustReturn(const NewtonOptions& opt, double alpha, double phi);

  const Vec& point() const { return q_; }  // the reference iterate and its Newton step
  const Vec& step() const { return dq_; }
  double phi0() const { return phi_; }
  double dphi0() const { return dphi0_; }
  double cap() const { return cap_; }
  // The current solve went back to a reference iterate at least once.
  bool returned() const { return returned_; }

 private:
  Vec q_, dq_;
  double phi_ = 0, dphi0_ = 0, cap_ = 1;
  int relaxed_ = 0;  // relaxed steps since the reference iterate
  bool held_ = false, returned_ = false;
};

}  // namespace rodsim::newton
