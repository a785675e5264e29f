#include "newton_core.h"

#include <rodsim/contact.h>
#include <rodsim/rod.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

namespace rodsim::newton {

namespace {

std::string fmtNum(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

}  // namespace

// ------------------------------------------------------------------------------------ options

void NewtonOptions::declare(Schema& s) {
  // What Newton on M q'' = F needs of the others (checked by the kernel before a run).
  s.require(ComponentKind::Rod, {RodStiffness::kInterfaceId},
            "Newton needs the Hessian of every rod's elastic energy: the cosserat rod has none, so use an "
            "explicit solver (position-verlet or pefrl) with it.");
  s.require(ComponentKind::Contact, {ForceContact::kInterfaceId, LinearizedImpulseContact::kInterfaceId},
            "Newton adds contact as forces with a Hessian (imc, ipc) or solves impulses with its linearized "
            "system (alart-curnier).");
  s.add<double>("tolerance", 1e-8,
                "Converged when the free-DOF force residual norm |R_free| is below this.")
      .unit("N").greater(0);
  s.add<double>("relative_tolerance", 1e-10,
                "Also converged when |R_free| <= relative_tolerance * force scale, the force scale "
                "being the largest of |R_free| at the initial guess and |M a|, |F| over all DOFs "
                "(supports included) at the current iterate; 0 disables it.")
      .atLeast(0).less(1);
  s.add<int>("max_iterations", 50, "Newton iterations (linear solves) allowed per solve.")
      .atLeast(1);
  s.add<bool>("line_search", true,
              "Goldstein-Price line search on 1/2 |R_free|^2 (IMC seed SI Algorithm 1); false: "
              "full Newton steps (still capped by barrier contacts).");
  s.add<double>("line_search_m1", 0.1,
                "Sufficient-decrease constant m1: accept when m2 alpha phi'(0) <= phi(alpha) - "
                "phi(0) <= m1 alpha phi'(0).")
      .greater(0).less(1);
  s.add<double>("line_search_m2", 0.9, "Curvature constant m2 of the Goldstein-Price test (> m1).")
      .greater(0).less(1);
  s.add<double>("line_search_alpha_min", 1e-3,
                "Smallest step fraction: bisection stops when the bracket is narrower, and the "
                "step taken is never shorter (unless a barrier contact caps it).")
      .greater(0).atMost(1);
  s.add<double>("line_search_alpha_max", 2.0, "Largest step fraction tried (upper end of the bracket).")
      .atLeast(1);
  s.add<int>("line_search_max_trials", 100, "Force evaluations allowed per line search.").atLeast(1);
  s.add<int>("line_search_watchdog", 4,
             "Watchdog: full Newton steps are taken without the line search test as long as one "
             "of this many consecutive steps brings phi below the sufficient-decrease bound of "
             "the reference point; otherwise the solver returns to that point and runs the line "
             "search there. 0: the plain line search at every iteration (SI Algorithm 1).")
      .atLeast(0);
  s.add<std::string>("linear_solver", "auto",
                     "Sparse direct solver: auto (SimplicialLDLT while the Jacobian is symmetric, "
                     "UMFPACK LU otherwise), umfpack (LU, unsymmetric-safe), sparselu (Eigen "
                     "SparseLU), ldlt (SimplicialLDLT, symmetric Jacobians only).")
      .choices(LinearSolver::names());
  s.add<double>("levenberg_shift", 1e-8,
                "First diagonal shift, relative to mean |diag J|, added when the Jacobian is "
                "singular (or, for the static solver, indefinite along the Newton step).")
      .greater(0);
  s.add<int>("levenberg_retries", 6, "Shifted refactorizations tried; each multiplies the shift by 100.")
      .atLeast(0);
}

NewtonOptions NewtonOptions::fromParams(const Params& p) {
  NewtonOptions o;
  o.tolerance = p.real("tolerance");
  o.relative_tolerance = p.real("relative_tolerance");
  o.max_iterations = static_cast<int>(p.integer("max_iterations"));
  o.line_search = p.boolean("line_search");
  o.m1 = p.real("line_search_m1");
  o.m2 = p.real("line_search_m2");
  if (!(o.m1 < o.m2))
    throw ParamError("line_search_m2", "line_search_m2 (" + fmtNum(o.m2) +
                                           ") must be larger than line_search_m1 (" +
                                           fmtNum(o.m1) + ")");
  o.alpha_min = p.real("line_search_alpha_min");
  o.alpha_max = p.real("line_search_alpha_max");
  o.max_trials = static_cast<int>(p.integer("line_search_max_trials"));
  o.watchdog = static_cast<int>(p.integer("line_search_watchdog"));
  o.linear_solver = p.string("linear_solver");
  try {
    LinearSolver::parse(o.linear_solver);
  } catch (const std::invalid_argument& e) {
    throw ParamError("linear_solver", e.what());
  }
  o.levenberg_shift = p.real("levenberg_shift");
  o.levenberg_retries = static_cast<int>(p.integer("levenberg_retries"));
  return o;
}

// ------------------------------------------------------------------------------------ helpers

std::string describeUnconstrained(World& world) {
  const auto& fixed = world.fixedMask();
  std::string out;
  for (int r = 0; r < world.numRods(); ++r) {
    Rod& rod = world.rod(r);
    int fixed_nodes = 0, last_fixed = -1;
    for (int n = 0; n < rod.numNodes(); ++n) {
      const int g = rod.globalPositionDof(n);
      if (fixed[g] && fixed[g + 1] && fixed[g + 2]) {
        ++fixed_nodes;
        last_fixed = n;
      }
    }
    bool twist_fixed = false;
    for (int e = 0; e < rod.numEdges(); ++e)
      if (rod.twistDof(e) >= 0 && fixed[rod.dofOffset() + rod.twistDof(e)]) twist_fixed = true;
    std::string what;
    if (fixed_nodes == 0)
      what = "no node of rod '" + rod.name() +
             "' is held: its rigid-body translation and rotation are unconstrained";
    else if (fixed_nodes == 1 && !twist_fixed)
      what = "rod '" + rod.name() + "' is held at node " + std::to_string(last_fixed) +
             " only: its rigid rotation about that node is unconstrained";
    if (!what.empty()) out += (out.empty() ? "" : "; ") + what;
  }
  return out;
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

// ------------------------------------------------------------------------------------ core

NewtonCore::NewtonCore(const NewtonOptions& options)
    : opt_(options), linear_(LinearSolver::parse(options.linear_solver)) {}

void NewtonCore::prepare(World& world) {
  const int n = world.numDofs();
  if (F_.size() != n) {
    for (Vec* v : {&F_, &R_, &F_trial_, &R_trial_, &dq_, &q_trial_, &scaled_dq_, &q_ref_, &dq_ref_})
      v->setZero(n);
  }
  has_barrier_ = false;
  impulse_contact_ = -1;
  impulse_count_ = 0;
  impulse_ = nullptr;
  for (int c = 0; c < world.numContacts(); ++c) {
    Contact& contact = world.contact(c);
    if (contact.as<StepBoundContact>()) has_barrier_ = true;
    if (auto* impulse = contact.as<LinearizedImpulseContact>()) {
      if (impulse_contact_ < 0) {
        impulse_contact_ = c;
        impulse_ = impulse;
      }
      ++impulse_count_;
    }
  }
  assembler_.setFixed(world.fixedMask(), impulse_contact_ >= 0
                                             ? SparseAssembler::Layout::GlobalIdentity
                                             : SparseAssembler::Layout::Free);
  const int m = assembler_.size();
  if (b_.size() != m) {
    b_.setZero(m);
    x_.setZero(m);
    Jx_.setZero(m);
  }
  if (history_.capacity() < static_cast<std::size_t>(opt_.max_iterations) + 2)
    history_.reserve(opt_.max_iterations + 2);
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
    prefactorize(world, ctx);
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

bool NewtonCore::assembleJacobian(World& world, const EvalContext& ctx) {
  return assembler_.assemble(sink_.entries(), inertial_ ? &world.mass() : nullptr,
                             inertial_ ? 1.0 / (ctx.dt * ctx.dt) : 0.0);
}

bool NewtonCore::symmetricJacobian() const {
  return linear_.kind() == LinearSolver::Kind::Auto && assembler_.isSymmetric();
}

void NewtonCore::prefactorize(World& world, const EvalContext& ctx) {
  const SpMat& A = assembler_.matrix();
  if (assembleJacobian(world, ctx)) linear_.analyzePattern(A);
  prefactored_ok_ = linear_.factorize(A, symmetricJacobian());
  prefactored_ = true;
}

bool NewtonCore::linearStep(World& world, EvalContext& ctx, double& dphi0, std::string& why,
                            bool& singular, int& solves) {
  const auto& map = assembler_.globalOf();
  const auto& fixed = world.fixedMask();
  const int m = assembler_.size();
  // prefactorize() assembled and factorized this Jacobian already (first attempt below).
  const bool prefactored = std::exchange(prefactored_, false);
  const bool rebuilt = !prefactored && assembleJacobian(world, ctx);
  const SpMat& A = assembler_.matrix();
  for (int i = 0; i < m; ++i) b_[i] = fixed[map[i]] ? 0.0 : -R_[map[i]];

  if (impulse_contact_ >= 0) {
    // Global layout: matrix index == global DOF. The contact model solves A dq = b + impulses.
    Contact& contact = world.contact(impulse_contact_);
    LinearizedImpulseContact& impulse = *impulse_;
    LinearizedSystem sys;
    sys.A = &A;
    sys.b = &b_;
    sys.fixed = &fixed;
    sys.ctx = &ctx;
    dq_.setZero();
    ++solves;
    if (!impulse.solveLinearized(sys, dq_)) {
      why = "impulse contact '" + contact.name() + "' did not solve the linearized system";
      const std::string reason = impulse.failureReason();
      if (!reason.empty()) why += " (" + reason + ")";
      return false;
    }
    for (int g = 0; g < dq_.size(); ++g)
      if (fixed[g]) dq_[g] = 0.0;
    if (!dq_.allFinite()) {
      why = "impulse contact '" + contact.name() + "' returned a non-finite step";
      return false;
    }
    Jx_.noalias() = A * dq_;
    dphi0 = 0;
    for (int g = 0; g < m; ++g)
      if (!fixed[g]) dphi0 += R_[g] * Jx_[g];
    return true;
  }

  if (rebuilt) linear_.analyzePattern(A);
  // The Levenberg shift below only moves the diagonal: the symmetry is that of the first attempt.
  const bool symmetric = symmetricJacobian();
  double mu = 0, base = -1;
  bool ok = false;
  for (int attempt = 0; attempt <= opt_.levenberg_retries && !ok; ++attempt) {
    if (attempt > 0) {
      if (base < 0) {
        base = assembler_.meanAbsDiagonal();
        if (!(base > 0) || !std::isfinite(base)) base = 1.0;
      }
      const double target = base * opt_.levenberg_shift * std::pow(100.0, attempt - 1);
      assembler_.shiftDiagonal(target - mu);
      mu = target;
    }
    if (!(attempt == 0 && prefactored ? prefactored_ok_ : linear_.factorize(A, symmetric))) continue;
    ++solves;
    if (!linear_.solve(b_, x_)) continue;
    Jx_.noalias() = A * x_;
    // Normwise backward error: tiny for a backward-stable factorization even when J is badly
    // conditioned (stiff rods), large only for garbage from a (numerically) singular one.
    const double scale = assembler_.frobeniusNorm() * x_.norm() + b_.norm();
    if (!((Jx_ - b_).norm() <= 1e-8 * scale + 1e-300)) continue;
    // Static solver: a Newton step along which the energy grows means K is indefinite there.
    if (energy_check_ && attempt < opt_.levenberg_retries && !(b_.dot(x_) > 0)) continue;
    ok = true;
  }
  if (!ok) {
    singular = true;
    std::string free_rods = describeUnconstrained(world);
    if (free_rods.empty())
      free_rods = "every rod is held at two nodes or more: a mechanism, or a DOF without "
                  "stiffness (and without mass in a static solve)";
    why = "singular Jacobian (still singular with a Levenberg shift of " + fmtNum(mu) +
          "); unconstrained: " + free_rods;
    return false;
  }
  // phi'(0) = R_f . (J dq_f) with the unshifted Jacobian.
  if (mu != 0) Jx_ -= mu * x_;
  dphi0 = -b_.dot(Jx_);
  dq_.setZero();
  for (int i = 0; i < m; ++i) dq_[map[i]] = x_[i];
  return true;
}

double NewtonCore::lineSearch(World& world, EvalContext& ctx, const Vec& q, double phi0,
                              double dphi0, double alpha_cap, bool full_step, bool& have_k,
                              double& rnorm, std::string& why) {
  const bool search = !full_step && opt_.line_search && impulse_contact_ < 0 && dphi0 < 0;
  double lo = 0, hi = alpha_cap, alpha = std::min(1.0, alpha_cap);
  double last_alpha = -1, last_rn = 0;
  double best_alpha = -1, best_phi = phi0;  // lowest merit among the trials
  bool last_ok = false, last_k = false, accepted = false;
  std::string trial_why;
  for (int trial = 0; trial < opt_.max_trials; ++trial) {
    q_trial_ = q + alpha * dq_;
    // The stiffness at the first trial point serves the next iteration; it is skipped when the
    // solve is expected to stop there (see trial_k_), and assembled later if it does not.
    const bool with_k = trial == 0 && trial_k_;
    double rn = 0;
    last_ok = evaluate(world, ctx, q_trial_, F_trial_, R_trial_, with_k ? &trial_sink_ : nullptr,
                       rn, trial_why);
    last_alpha = alpha;
    last_rn = rn;
    last_k = with_k;
    if (!search) {
      accepted = last_ok;
      break;
    }
    if (last_ok) {
      const double d = 0.5 * rn * rn - phi0;
      if (0.5 * rn * rn < best_phi) {
        best_phi = 0.5 * rn * rn;
        best_alpha = alpha;
      }
      if (d >= opt_.m2 * alpha * dphi0 && d <= opt_.m1 * alpha * dphi0) {
        accepted = true;
        break;
      }
      if (d < opt_.m2 * alpha * dphi0)
        lo = alpha;  // decreased more than the tangent predicts: the step can grow
      else
        hi = alpha;  // not enough decrease: shorten
    } else {
      hi = alpha;  // NaN/Inf out there: shorten
    }
    if (hi - lo < opt_.alpha_min) break;
    alpha = 0.5 * (lo + hi);
  }
  if (!accepted) {
    if (!search) {
      why = trial_why;
      return -1;
    }
    // The bracket collapsed without a Goldstein-Price point. The authors' code takes the last
    // bisection point (kept inside [alpha_min, cap]); we take the trial with the lowest merit
    // when one decreased it (the lower Goldstein bound rejects steps that decrease phi much more
    // than its tangent predicts, e.g. one landing on the root), and their choice otherwise.
    if (best_alpha > 0)
      alpha = best_alpha;
    else
      alpha = std::clamp(alpha, std::min(opt_.alpha_min, alpha_cap), alpha_cap);
    if (alpha != last_alpha || !last_ok) {
      q_trial_ = q + alpha * dq_;
      last_k = false;
      if (!evaluate(world, ctx, q_trial_, F_trial_, R_trial_, nullptr, last_rn, trial_why)) {
        why = "line search found no finite residual along the Newton step: " + trial_why;
        return -1;
      }
    }
  }
  F_.swap(F_trial_);
  R_.swap(R_trial_);
  if (last_k) {
    std::swap(sink_, trial_sink_);
    have_k = true;
  } else {
    have_k = false;
  }
  rnorm = last_rn;
  return alpha;
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
  if (first.ok || !watchdog_returned_) return first;  // without a return the plain search is the same
  q = q_first_;
  NewtonResult again = iterate(world, ctx, q, false);
  again.solves += first.solves;
  if (!again.ok) again.message += " (retried with the plain line search after the watchdog's attempt failed)";
  return again;
}

NewtonResult NewtonCore::iterate(World& world, EvalContext& ctx, Vec& q, bool watchdog) {
  const NewtonResult result = iterateOnce(world, ctx, q, watchdog);
  last_one_solve_ = result.ok && result.solves == 1;
  return result;
}

NewtonResult NewtonCore::iterateOnce(World& world, EvalContext& ctx, Vec& q, bool watchdog) {
  history_.clear();
  watchdog_returned_ = false;
  NewtonResult res;
  std::string why;
  double rnorm = 0;
  // Factorize the first Jacobian before the step-constant forces are added (see evaluate), unless
  // an impulse contact solves the linear systems.
  prefactored_ = false;
  const bool prefactor = impulse_contact_ < 0 && world.hasStepConstantForces();
  if (!evaluate(world, ctx, q, F_, R_, &sink_, rnorm, why, prefactor)) {
    res.message = "at the initial guess: " + why;
    return res;
  }
  bool have_k = true;
  bool have_ref = false;  // watchdog state
  int relaxed = 0;
  double phi_ref = 0, dphi0_ref = 0, cap_ref = 1;
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
    if (res.solves >= opt_.max_iterations) {
      res.message = "did not converge: |R_free| = " + fmtNum(rnorm) + " N after " +
                    std::to_string(res.solves) + " iterations (tolerance " + fmtNum(tol) + " N)";
      return res;
    }
    if (!have_k) {
      if (!evaluate(world, ctx, q, F_, R_, &sink_, rnorm, why)) {
        res.message = why;
        return res;
      }
      have_k = true;
    }
    // A solve that converged after one linear solve last time is expected to do so again: its
    // first trial point then needs no stiffness. Otherwise (and from the second solve on) the
    // trial point is likely the next iterate, whose stiffness is assembled with its forces.
    trial_k_ = !(res.solves == 0 && last_one_solve_);
    double dphi0 = 0;
    ctx.q = &q;  // linearize at the current iterate (evaluate() may have pointed it elsewhere)
    if (!linearStep(world, ctx, dphi0, why, res.singular, res.solves)) {
      res.message = why + " at iteration " + std::to_string(res.solves) + ", |R_free| = " +
                    fmtNum(rnorm) + " N";
      return res;
    }
    if (impulse_contact_ >= 0) {
      // With contact impulses r: the contact model solved A dq = b + r, so the residual
      // including contact at q is R - r = -A dq (free rows).
      const double reff = Jx_.norm();
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
        res.message = "barrier contacts allow no step (maxStepFraction = " + fmtNum(f) + ")";
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
      // Watchdog (Chamberlain et al. 1982): |R|^2 is a poor merit for stiff rods (a full Newton
      // step that bends a beam first raises the axial forces), so full steps are taken while
      // one of `watchdog` consecutive steps achieves sufficient decrease relative to the
      // reference point; otherwise return there and run the Goldstein-Price search.
      if (!have_ref) {
        q_ref_ = q;
        dq_ref_ = dq_;
        phi_ref = phi0;
        dphi0_ref = dphi0;
        cap_ref = cap;
        relaxed = 0;
        have_ref = true;
      }
      alpha = lineSearch(world, ctx, q, phi0, dphi0, cap, /*full_step=*/true, have_k, rnorm, why);
      ++relaxed;
      const double phi = 0.5 * rnorm * rnorm;
      if (alpha >= 0 && phi <= phi_ref + opt_.m1 * std::min(1.0, cap_ref) * dphi0_ref) {
        have_ref = false;  // progress: the next iterate becomes the reference
      } else if (alpha < 0 || relaxed >= opt_.watchdog) {
        dq_ = dq_ref_;
        have_ref = false;
        watchdog_returned_ = true;
        alpha = lineSearch(world, ctx, q_ref_, phi_ref, dphi0_ref, cap_ref, false, have_k, rnorm,
                           why);
      }
    } else {
      alpha = lineSearch(world, ctx, q, phi0, dphi0, cap, /*full_step=*/false, have_k, rnorm, why);
    }
    if (alpha < 0) {
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
