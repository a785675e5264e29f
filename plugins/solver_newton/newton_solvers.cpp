#include "newton_solvers.h"

#include <rodsim/capabilities.h>
#include <rodsim/contact.h>
#include <rodsim/rod.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace rodsim::newton {

namespace {

std::string num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

StepReport fail(StepReport r, std::string message) {
  r.ok = false;
  r.message = std::move(message);
  return r;
}

void resizeAll(int n, std::initializer_list<Vec*> vs) {
  for (Vec* v : vs)
    if (v->size() != n) v->setZero(n);
}

}  // namespace

void requireOneImpulseContact(World& world) {
  std::string first;
  for (int c = 0; c < world.numContacts(); ++c) {
    Contact& contact = world.contact(c);
    if (!contact.as<LinearizedImpulseContact>()) continue;
    if (first.empty()) {
      first = contact.name();
      continue;
    }
    throw std::runtime_error("contacts '" + first + "' and '" + contact.name() +
                             "' both solve contact impulses with the Newton system, which takes one impulse model: "
                             "use one [[contact]] table (its `rods` and `obstacles` lists select what it covers)");
  }
}

// ---------------------------------------------------------------------------- implicit-euler

// The world has a rod whose DOFs include rotation vectors (RodRotationVectors: Cosserat) and a contact
// model solved through the residual (not an impulse contact, whose impulses R does not contain).
void startCollisionFree(World& world, const Vec& q_n, Vec& q, Vec& scratch) {
  bool barrier = false;
  for (int c = 0; c < world.numContacts() && !barrier; ++c) barrier = world.contact(c).as<StepBoundContact>() != nullptr;
  if (!barrier) return;
  scratch = q - q_n;
  if (!(scratch.squaredNorm() > 0)) return;
  const double f = world.maxStepFraction(q_n, scratch);
  if (f >= 1) return;
  const auto& fixed = world.fixedMask();
  for (int i = 0; i < q.size(); ++i)
    if (!fixed[i]) q[i] = q_n[i] + f * scratch[i];
}

bool startFromBetterPredictor(World& world) {
  if (world.numContacts() == 0) return false;
  for (int c = 0; c < world.numContacts(); ++c)
    if (world.contact(c).as<LinearizedImpulseContact>()) return false;
  for (int r = 0; r < world.numRods(); ++r)
    if (world.rod(r).as<RodRotationVectors>()) return true;
  return false;
}

Schema ImplicitEulerSolver::schema() {
  Schema s{"implicit-euler",
           "Backward Euler on M q'' = F (Tong et al. 2023, Eq. 7) solved by Newton on the free DOFs with "
           "the Goldstein-Price line search of SI Algorithm 1; v = (q_{n+1} - q_n)/dt."};
  NewtonOptions::declare(s);
  s.add<std::string>("predictor", "velocity",
                     "Newton's first iterate: velocity = q_n + dt v_n (free flight), position = q_n "
                     "(the previous positions, as the IMC authors' code starts). Prescribed DOFs "
                     "take their values at t_{n+1} either way.")
      .choices({"velocity", "position"});
  s.add<std::string>("scheme", "nonlinear",
                     "nonlinear: Newton iterates each step to the tolerance (fully implicit Euler). "
                     "linearized: one Newton step per time step from the predictor, taken in full "
                     "and accepted (linearly implicit Euler: the elastic forces implicit through "
                     "M + dt^2 K, the time stepping of Bertails-Descoubes et al. 2011, their Sec. 2.3 and "
                     "footnote 4); with an impulse contact each step then solves one contact "
                     "problem. The residual reported is that of the linearization point.")
      .choices({"nonlinear", "linearized"});
  return s;
}

namespace {
NewtonOptions implicitEulerOptions(const Params& p) {
  NewtonOptions o = NewtonOptions::fromParams(p);
  o.linearized = p.string("scheme") == "linearized";
  return o;
}
}  // namespace

ImplicitEulerSolver::ImplicitEulerSolver(const Params& p)
    : Solver(p), core_(implicitEulerOptions(p)), velocity_predictor_(p.string("predictor") == "velocity") {}

StepReport ImplicitEulerSolver::step(World& world, double dt) {
  StepReport rep;
  const double t_n = world.time(), t = t_n + dt;
  if (!(dt > 0) || !std::isfinite(dt)) return fail(rep, "implicit-euler: time step must be > 0, got " + num(dt));
  const int n = world.numDofs();
  resizeAll(n, {&q_n_, &v_n_, &q_, &v_, &q_start_});
  q_n_ = world.q();
  v_n_ = world.v();
  if (!q_n_.allFinite() || !v_n_.allFinite())
    return fail(rep, "implicit-euler: the state at t = " + num(t_n) + " is not finite (NaN/Inf)");

  world.beginStep(dt);
  core_.prepare(world);
  if (velocity_predictor_)  // prescribe() overwrites the fixed DOFs
    q_ = q_n_ + dt * v_n_;
  else
    q_ = q_n_;
  world.prescribe(t, q_);
  if (!q_.allFinite())
    return fail(rep, "implicit-euler: prescribed values at t = " + num(t) + " are not finite");
  startCollisionFree(world, q_n_, q_, v_);  // v_: scratch here

  EvalContext ctx;
  ctx.t = t;
  ctx.dt = dt;
  ctx.quasi_static = false;
  ctx.load_scale = 1.0;
  ctx.q_start = &q_n_;
  ctx.v_start = &v_n_;
  // Rods with rotation-vector DOFs (Cosserat) in contact: start from q_n when its residual is below
  // the velocity predictor's (README.md, "Predictor"). At an impact and in the step after it, q_n + dt v_n
  // moves the rod by its approach velocity into the contact (dropped rod: 0.3 mm into imc's 10 um band,
  // |R| = 1e4-4e6 N against 0.03-4 N at q_n). The Newton iterates from there load a Cosserat rod far
  // beyond its shear and stretch stiffness, where its energy is not convex in the rotations and their
  // inertia (rho I l / dt^2) is too small to hold them: steps of radians, no convergence. Same
  // equations, same roots; the predictor is evaluated first, as before (imc sets its stiffness there).
  if (velocity_predictor_ && !core_.options().linearized && compare_starts_) {
    q_start_ = q_n_;
    world.prescribe(t, q_start_);
    if (core_.startFromLowerResidual(world, ctx, q_, q_start_, /*inertial=*/true)) ++position_starts_;
  }
  const NewtonResult r = core_.solve(world, ctx, q_, /*inertial=*/true);
  rep.iterations = r.solves;
  rep.residual = r.residual;
  if (!r.ok)
    return fail(rep, "implicit-euler: step from t = " + num(t_n) + " (dt = " + num(dt) +
                         ") failed: " + r.message);
  v_ = (q_ - q_n_) / dt;
  if (!v_.allFinite()) return fail(rep, "implicit-euler: non-finite velocity at t = " + num(t));
  world.commitStep(t, q_, v_, core_.residual());
  return rep;
}

// -------------------------------------------------------------------------------------- static

Schema StaticSolver::schema() {
  Schema s{"static",
           "Quasi-static equilibrium F(q) = 0 by Newton on the free DOFs (no inertia), external "
           "loads scaled by min(1, t / ramp_time); a failed load increment is bisected."};
  NewtonOptions::declare(s);
  s.add<double>("ramp_time", 0.0,
                "Time over which external loads ramp linearly from 0 to full: load scale = "
                "min(1, t / ramp_time). 0: no ramp, full load at every step (set it to the "
                "scene duration to ramp over the whole run).")
      .unit("s").atLeast(0);
  s.add<int>("max_load_cuts", 10,
             "Bisections of a failed increment (load and prescribed motion) allowed per step.")
      .range(0, 60);
  return s;
}

StaticSolver::StaticSolver(const Params& p)
    : Solver(p),
      core_(NewtonOptions::fromParams(p)),
      ramp_time_(p.real("ramp_time")),
      max_load_cuts_(static_cast<int>(p.integer("max_load_cuts"))) {
  core_.setEnergyDescentCheck(true);
}

double StaticSolver::loadAt(double t) const {
  return ramp_time_ > 0 ? std::clamp(t / ramp_time_, 0.0, 1.0) : 1.0;
}

StepReport StaticSolver::step(World& world, double dt) {
  StepReport rep;
  last_cuts_ = 0;
  const double t_n = world.time(), t = t_n + dt;
  if (!(dt > 0) || !std::isfinite(dt)) return fail(rep, "static: time step must be > 0, got " + num(dt));
  const int n = world.numDofs();
  resizeAll(n, {&q_n_, &q_conv_, &q_, &zero_});
  q_n_ = world.q();
  if (!q_n_.allFinite())
    return fail(rep, "static: the state at t = " + num(t_n) + " is not finite (NaN/Inf)");

  world.beginStep(dt);
  core_.prepare(world);
  EvalContext ctx;
  ctx.dt = dt;
  ctx.quasi_static = true;
  ctx.q_start = &q_n_;
  ctx.v_start = &zero_;

  // Continuation from the last converged state (load last_load_ at t_n) to (loadAt(t), t):
  // s in (0, 1] is the fraction of the increment; a failed Newton solve halves the increment.
  const double load0 = last_load_, load1 = loadAt(t);
  q_conv_ = q_n_;
  double s_done = 0, ds = 1;
  bool singular = false;
  while (s_done < 1) {
    const double s = std::min(1.0, s_done + ds);
    ctx.t = t_n + s * dt;
    ctx.load_scale = load0 + s * (load1 - load0);
    q_ = q_conv_;
    world.prescribe(ctx.t, q_);
    if (!q_.allFinite())
      return fail(rep, "static: prescribed values at t = " + num(ctx.t) + " are not finite");
    const NewtonResult r = core_.solve(world, ctx, q_, /*inertial=*/false);
    rep.iterations += r.solves;
    rep.residual = r.residual;
    singular = singular || r.singular;
    if (r.ok) {
      q_conv_.swap(q_);
      s_done = s;
      ds = std::min(1.0, 2 * ds);
      continue;
    }
    if (r.stopped) return fail(rep, "static: " + r.message);
    if (++last_cuts_ > max_load_cuts_) {
      std::string msg = "static: no equilibrium at load scale " + num(ctx.load_scale) +
                        " (t = " + num(ctx.t) + ") after " + std::to_string(max_load_cuts_) +
                        " load cuts; last converged load scale " +
                        num(load0 + s_done * (load1 - load0)) + ": " + r.message;
      if (r.message.find("unconstrained") == std::string::npos) {
        const std::string free_rods = describeUnconstrained(world);
        if (!free_rods.empty()) msg += "; unconstrained: " + free_rods;
        else if (singular) msg += "; the Jacobian was singular";
      }
      return fail(rep, msg);
    }
    ds *= 0.5;
  }
  // The last evaluation of the world was at q_conv_ (the converged solve), so residual() = -F.
  world.commitStep(t, q_conv_, zero_, core_.residual());
  last_load_ = load1;
  return rep;
}

}  // namespace rodsim::newton
