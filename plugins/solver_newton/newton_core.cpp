// The Newton loop (SI Algorithm 2 of Tong et al. (2023)): evaluate the residual, stop when it is small
// enough, take the linear step (linear_step.cpp), choose the step length (line_search.cpp), repeat.
// The loop itself is iterateOnce, at the end; what precedes it is what it calls.
#include "newton_core.h"

#include <rodsim/contact.h>
#include <rodsim/rod.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace rodsim::newton {

NewtonCore::NewtonCore(const NewtonOptions& options) : opt_(options), linear_(options) {}

void NewtonCore::prepare(World& world) {
  const int n = world.numDofs();
  if (F_.size() != n) {
    for (Vec* v : {&F_, &R_, &F_trial_, &R_trial_, &dq_, &q_trial_, &scaled_dq_}) v->setZero(n);
  }
  watchdog_.resize(n);
  has_barrier_ = false;
  impulse_contact_ = -1;
  impulse_ = nullptr;
  stop_ = worldCapability<StopRequests>(world);
  for (int c = 0; c < world.numContacts(); ++c) {
    Contact& contact = world.contact(c);
    if (contact.as<StepBoundContact>()) has_barrier_ = true;
    // one at most: the solvers refuse a second at bind (requireOneImpulseContact)
    if (auto* impulse = contact.as<LinearizedImpulseContact>(); impulse && impulse_contact_ < 0) {
      impulse_contact_ = c;
      impulse_ = impulse;
    }
  }
  linear_.prepare(world.fixedMask(), /*global_layout=*/impulse_contact_ >= 0);
  if (history_.capacity() < static_cast<std::size_t>(opt_.max_iterations) + 2)
    history_.reserve(opt_.max_iterations + 2);
}

std::string NewtonCore::describeDof(World& world, int g) const {
  for (int r = 0; r < world.numRods(); ++r) {
    Rod& rod = world.rod(r);
    const int j = g - rod.dofOffset();
    if (j < 0 || j >= rod.numDofs()) continue;
    for (int n = 0; n < rod.numNodes(); ++n) {
      const int p = rod.positionDof(n);
      if (j >= p && j < p + 3)
        return "DOF " + std::to_string(g) + " (rod '" + rod.name() + "', node " +
               std::to_string(n) + ", " + "xyz"[j - p] + ")";
    }
    for (int e = 0; e < rod.numEdges(); ++e)
      if (rod.twistDof(e) == j)
        return "DOF " + std::to_string(g) + " (rod '" + rod.name() + "', twist of edge " +
               std::to_string(e) + ")";
    return "DOF " + std::to_string(g) + " (rod '" + rod.name() + "')";
  }
  return "DOF " + std::to_string(g);
}

bool NewtonCore::evaluate(World& world, EvalContext& ctx, const Vec& q, Vec& F, Vec& R,
                          StiffnessSink* K, double& rnorm, std::string& why, bool prefactor) {
  ctx.q = &q;
  F.setZero();
  if (K) K->clear();
  if (prefactor) {
    // The Jacobian does not depend on the step-constant forces (an explicit fluid drag): factorize
    // it before adding them, so that their computation on another thread overlaps this work.
    world.evaluateVarying(ctx, F, K);
    linear_.prefactorize(*K, inertia(world, ctx));
    world.addStepConstantForces(ctx, F);
  } else {
    world.evaluate(ctx, F, K);
  }
  if (inertial_) {
    const Vec& m = world.mass();
    const double inv_dt2 = 1.0 / (ctx.dt * ctx.dt);
    R.array() = m.array() * (q - *ctx.q_start - ctx.dt * *ctx.v_start).array() * inv_dt2 -
                F.array();
  } else {
    R = -F;
  }
  if (!R.allFinite()) {
    int bad = 0;
    while (bad < R.size() && std::isfinite(R[bad])) ++bad;
    why = (q.allFinite() ? "non-finite force (NaN/Inf) at " : "non-finite configuration at ") +
          describeDof(world, bad);
    return false;
  }
  const auto& fixed = world.fixedMask();
  double s = 0;
  for (Eigen::Index g = 0; g < R.size(); ++g)
    if (!fixed[g]) s += R[g] * R[g];
  rnorm = std::sqrt(s);
  return true;
}

bool NewtonCore::startFromLowerResidual(World& world, EvalContext& ctx, Vec& q, Vec& alternative, bool inertial) {
  double r_q = 0, r_alternative = 0;
  residualAt(world, ctx, q, inertial, r_q);
  if (!residualAt(world, ctx, alternative, inertial, r_alternative) || !(r_alternative < r_q)) return false;
  q.swap(alternative);
  return true;
}

bool NewtonCore::residualAt(World& world, EvalContext& ctx, const Vec& q, bool inertial, double& rnorm) {
  inertial_ = inertial;
  std::string why;
  if (evaluate(world, ctx, q, F_trial_, R_trial_, nullptr, rnorm, why)) return true;
  rnorm = std::numeric_limits<double>::infinity();
  return false;
}

InertiaTerm NewtonCore::inertia(World& world, const EvalContext& ctx) const {
  return {inertial_ ? &world.mass() : nullptr, inertial_ ? 1.0 / (ctx.dt * ctx.dt) : 0.0};
}

bool NewtonCore::linearStep(World& world, EvalContext& ctx, double& dphi0, std::string& why,
                            bool& singular, int& solves) {
  if (impulse_contact_ >= 0)
    return linear_.solveWithImpulses(world.fixedMask(), sink_, inertia(world, ctx), R_, *impulse_,
                                     world.contact(impulse_contact_).name(), ctx, dq_, dphi0, why, solves);
  return linear_.solve(world, sink_, inertia(world, ctx), R_, dq_, dphi0, why, singular, solves);
}

double NewtonCore::lineSearch(World& world, EvalContext& ctx, const Vec& q, double phi0,
                              double dphi0, double alpha_cap, bool full_step, bool& have_k,
                              double& rnorm, std::string& why) {
  // Trial points q + alpha dq_, evaluated into q_trial_, F_trial_, R_trial_ (and trial_sink_).
  struct Trials final : TrialPoints {
    NewtonCore& core;
    World& world;
    EvalContext& ctx;
    const Vec& q;
    std::string why;
    Trials(NewtonCore& c, World& w, EvalContext& x, const Vec& from) : core(c), world(w), ctx(x), q(from) {}
    bool evaluate(double alpha, bool with_stiffness, double& rn) override {
      core.q_trial_ = q + alpha * core.dq_;
      return core.evaluate(world, ctx, core.q_trial_, core.F_trial_, core.R_trial_,
                           with_stiffness ? &core.trial_sink_ : nullptr, rn, why);
    }
    bool stopRequested() const override { return core.stopRequested(); }
  } trials(*this, world, ctx, q);
  // The stiffness at the first trial point serves the next iteration; it is skipped when the
  // solve is expected to stop there (see trial_k_), and assembled later if it does not.
  const bool search = !full_step && opt_.line_search && impulse_contact_ < 0 && dphi0 < 0;
  const StepLength s = search ? goldsteinPrice(trials, opt_, phi0, dphi0, alpha_cap, trial_k_)
                              : fullStep(trials, alpha_cap, trial_k_);
  if (s.alpha < 0 && stopRequested()) {
    why = "stopped on request";
    return -1;
  }
  if (s.alpha < 0) {
    why = search ? "line search found no finite residual along the Newton step: " + trials.why : trials.why;
    return -1;
  }
  // The point reached becomes the iterate's evaluation.
  F_.swap(F_trial_);
  R_.swap(R_trial_);
  if (s.with_stiffness) {
    std::swap(sink_, trial_sink_);
    have_k = true;
  } else {
    have_k = false;
  }
  rnorm = s.rnorm;
  return s.alpha;
}

NewtonResult NewtonCore::solve(World& world, EvalContext& ctx, Vec& q, bool inertial) {
  inertial_ = inertial;
  const bool watchdog = opt_.watchdog > 0 && opt_.line_search && !opt_.linearized && impulse_contact_ < 0;
  if (!watchdog || !inertial) return iterate(world, ctx, q, watchdog);
  // The watchdog's relaxed full steps can cycle where contact forces are stiff (a node landing in a
  // penalty band or on a barrier: a spaghetti pile with imc or ipc failed at its first impacts). A
  // time step that fails after the watchdog had to return to its reference point is solved again
  // from the same start with the plain line search.
  q_first_ = q;
  const NewtonResult first = iterate(world, ctx, q, true);
  if (first.ok || first.stopped || !watchdog_.returned()) return first;  // without a return the plain search is the same
  q = q_first_;
  NewtonResult again = iterate(world, ctx, q, false);
  again.solves += first.solves;
  if (!again.ok) again.message += " (retried with the plain line search after the watchdog's attempt failed)";
  return again;
}

NewtonResult NewtonCore::iterate(World& world, EvalContext& ctx, Vec& q, bool watchdog) {
  const NewtonResult result = iterateOnce(world, ctx, q, watchdog);
  last_solves_ = result.ok ? result.solves : 0;
  return result;
}

NewtonResult NewtonCore::iterateOnce(World& world, EvalContext& ctx, Vec& q, bool watchdog) {
  history_.clear();
  watchdog_.reset();
  NewtonResult res;
  std::string why;
  double rnorm = 0;
  // Factorize the first Jacobian before the step-constant forces are added (see evaluate), unless
  // an impulse contact solves the linear systems.
  linear_.dropPrefactorization();
  const bool prefactor = impulse_contact_ < 0 && world.hasStepConstantForces();
  if (!evaluate(world, ctx, q, F_, R_, &sink_, rnorm, why, prefactor)) {
    res.message = "at the initial guess: " + why;
    return res;
  }
  bool have_k = true;
  const double r0 = rnorm;
  for (;;) {
    history_.push_back(rnorm);
    res.residual = rnorm;
    res.force_scale = std::max({r0, (R_ + F_).norm(), F_.norm()});
    const double tol = std::max(opt_.tolerance, opt_.relative_tolerance * res.force_scale);
    if (rnorm <= tol) {
      res.ok = true;
      return res;
    }
    // A stop request (SIGINT, SIGTERM to rodsim run) ends the solve before its next linear solve:
    // a step of many iterations, each a large factorization, could otherwise hold it for minutes.
    if (stopRequested()) {
      res.stopped = true;
      res.message = "stopped on request after " + std::to_string(res.solves) + " linear solves, |R_free| = " +
                    formatNumber(rnorm) + " N";
      return res;
    }
    if (res.solves >= opt_.max_iterations) {
      res.message = "did not converge: |R_free| = " + formatNumber(rnorm) + " N after " +
                    std::to_string(res.solves) + " iterations (tolerance " + formatNumber(tol) + " N)";
      return res;
    }
    if (!have_k) {
      if (!evaluate(world, ctx, q, F_, R_, &sink_, rnorm, why)) {
        res.message = why;
        return res;
      }
      have_k = true;
    }
    // A solve is expected to converge after as many linear solves as the last one (time steps of
    // a smooth motion take the same count: 2 or 3 for a DER helix): the trial point after that
    // solve then needs no stiffness. Before it, and past it (the prediction failed), the trial
    // point is likely the next iterate, whose stiffness is assembled with its forces.
    trial_k_ = res.solves + 1 != last_solves_;
    double dphi0 = 0;
    ctx.q = &q;  // linearize at the current iterate (evaluate() may have pointed it elsewhere)
    if (!linearStep(world, ctx, dphi0, why, res.singular, res.solves)) {
      res.stopped = stopRequested();
      res.message = why + " at iteration " + std::to_string(res.solves) + ", |R_free| = " +
                    formatNumber(rnorm) + " N";
      return res;
    }
    if (impulse_contact_ >= 0) {
      // With contact impulses r: the contact model solved A dq = b + r, so the residual
      // including contact at q is R - r = -A dq (free rows).
      const double reff = linear_.jacobianTimesStep().norm();
      if (reff <= tol || opt_.linearized) res.residual = reff;
      if (reff <= tol) {
        res.ok = true;
        return res;
      }
    }
    double cap = opt_.alpha_max;
    if (has_barrier_) {
      scaled_dq_ = opt_.alpha_max * dq_;
      const double f = world.maxStepFraction(q, scaled_dq_);
      if (!(f > 0) || !std::isfinite(f)) {
        res.message = "barrier contacts allow no step (maxStepFraction = " + formatNumber(f) + ")";
        return res;
      }
      cap = std::min(1.0, f) * opt_.alpha_max;
    }
    if (!opt_.line_search || impulse_contact_ >= 0) cap = std::min(cap, 1.0);
    if (opt_.linearized) {
      // Linearly implicit: q + dq is the step (shortened only where a barrier contact's CCD
      // demands it); the residual reported is that of the point the step was linearized at.
      // R_ (support reactions) is brought to the new q.
      q += std::min(cap, 1.0) * dq_;
      res.ok = evaluate(world, ctx, q, F_, R_, nullptr, rnorm, why);
      if (!res.ok) res.message = "after the linearized step: " + why;
      return res;
    }
    const double phi0 = 0.5 * rnorm * rnorm;
    double alpha = 0;
    const bool can_search = opt_.line_search && impulse_contact_ < 0 && dphi0 < 0;
    if (can_search && watchdog) {
      // The watchdog (line_search.h): a relaxed full step, unless the last `watchdog` steps made
      // too little progress; then back to the reference iterate and the Goldstein-Price search.
      watchdog_.holdReference(q, dq_, phi0, dphi0, cap);
      alpha = lineSearch(world, ctx, q, phi0, dphi0, cap, /*full_step=*/true, have_k, rnorm, why);
      if (watchdog_.mustReturn(opt_, alpha, 0.5 * rnorm * rnorm)) {
        dq_ = watchdog_.step();
        alpha = lineSearch(world, ctx, watchdog_.point(), watchdog_.phi0(), watchdog_.dphi0(), watchdog_.cap(),
                           /*full_step=*/false, have_k, rnorm, why);
      }
    } else {
      alpha = lineSearch(world, ctx, q, phi0, dphi0, cap, /*full_step=*/false, have_k, rnorm, why);
    }
    if (alpha < 0) {
      res.stopped = stopRequested();
      res.message = why + " at iteration " + std::to_string(res.solves);
      return res;
    }
    q.swap(q_trial_);  // q <- q + alpha dq (q_trial_ keeps the old buffer; same size)
    // The last evaluate() left ctx.q at q_trial_, which now holds the previous iterate. The
    // linearized system handed to an impulse contact is read at ctx.q: it must be the new q.
    ctx.q = &q;
  }
}

}  // namespace rodsim::newton
