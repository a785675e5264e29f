#include "line_search.h"

#include <algorithm>

namespace rodsim::newton {

StepLength fullStep(TrialPoints& trials, double alpha_cap, bool stiffness_at_first) {
  StepLength s;
  const double alpha = std::min(1.0, alpha_cap);
  double rn = 0;
  if (!trials.evaluate(alpha, stiffness_at_first, rn)) return s;
  s.alpha = alpha;
  s.rnorm = rn;
  s.with_stiffness = stiffness_at_first;
  return s;
}

StepLength goldsteinPrice(TrialPoints& trials, const NewtonOptions& opt, double phi0, double dphi0,
                          double alpha_cap, bool stiffness_at_first) {
  double lo = 0, hi = alpha_cap, alpha = std::min(1.0, alpha_cap);
  double last_alpha = -1, last_rn = 0;  // the last point evaluated
  bool last_ok = false, last_k = false;
  double best_alpha = -1, best_phi = phi0;  // lowest merit among the trials
  for (int trial = 0; trial < opt.max_trials; ++trial) {
    if (trial > 0 && trials.stopRequested()) return {};
    const bool with_k = trial == 0 && stiffness_at_first;
    double rn = 0;
    last_ok = trials.evaluate(alpha, with_k, rn);
    last_alpha = alpha;
    last_rn = rn;
    last_k = with_k;
    if (last_ok) {
      const double d = 0.5 * rn * rn - phi0;  // phi(alpha) - phi(0)
      if (0.5 * rn * rn < best_phi) {
        best_phi = 0.5 * rn * rn;
        best_alpha = alpha;
      }
      if (d >= opt.m2 * alpha * dphi0 && d <= opt.m1 * alpha * dphi0)
        return {alpha, rn, with_k};  // the Goldstein-Price test holds
      if (d < opt.m2 * alpha * dphi0)
        lo = alpha;  // decreased more than the tangent predicts: the step can grow
      else
        hi = alpha;  // not enough decrease: shorten
    } else {
      hi = alpha;  // NaN/Inf out there: shorten
    }
    if (hi - lo < opt.alpha_min) break;
    alpha = 0.5 * (lo + hi);
  }
  // The bracket collapsed without a Goldstein-Price point. The authors' code takes the last
  // bisection point (kept inside [alpha_min, cap]); we take the trial with the lowest merit when
  // one decreased it (the lower Goldstein bound rejects steps that decrease phi much more than its
  // tangent predicts, e.g. one landing on the root), and their choice otherwise.
  if (best_alpha > 0)
    alpha = best_alpha;
  else
    alpha = std::clamp(alpha, std::min(opt.alpha_min, alpha_cap), alpha_cap);
  if (alpha != last_alpha || !last_ok) {
    last_k = false;
    if (!trials.evaluate(alpha, false, last_rn)) return {};
  }
  return {alpha, last_rn, last_k};
}

void Watchdog::resize(int n) {
  if (q_.size() != n) {
    q_.setZero(n);
    dq_.setZero(n);
  }
}

void Watchdog::holdReference(const Vec& q, const Vec& dq, double phi0, double dphi0, double cap) {
  if (held_) return;
  q_ = q;
  dq_ = dq;
  phi_ = phi0;
  dphi0_ = dphi0;
  cap_ = cap;
  relaxed_ = 0;
  held_ = true;
}

bool Watchdog::mustReturn(const NewtonOptions& opt, double alpha, double phi) {
  ++relaxed_;
  if (alpha >= 0 && phi <= phi_ + opt.m1 * std::min(1.0, cap_) * dphi0_) {
    held_ = false;  // progress: the next iterate becomes the reference
    return false;
  }
  if (alpha < 0 || relaxed_ >= opt.watchdog) {
    held_ = false;
    returned_ = true;
    return true;
  }
  return false;
}

}  // namespace rodsim::newton
