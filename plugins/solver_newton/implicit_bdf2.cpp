// implicit-bdf2 (README.md, "implicit-bdf2"): the variable-step two-step BDF on M q'' = F, one
// Newton solve per step on NewtonCore's backward-Euler residual with a shifted start (q^, v^) and a
// shortened step b = dt / a0 (implicit_bdf2.h has the formulas).
#include "implicit_bdf2.h"

#include "newton_solvers.h"  // requireOneImpulseContact, startFromBetterPredictor, startCollisionFree
#include "rotation_rates.h"

#include <rodsim/capabilities.h>
#include <rodsim/contact.h>

#include <cmath>
#include <stdexcept>
#include <string>

namespace rodsim::newton {

namespace {

const char* kBdf2Name = "implicit-bdf2";

StepReport bdf2Failure(StepReport r, const std::string& message) {
  r.ok = false;
  r.message = std::string(kBdf2Name) + ": " + message;
  return r;
}

bool sameBits(const Vec& a, const Vec& b) { return a.size() == b.size() && (a.array() == b.array()).all(); }

}  // namespace

Schema ImplicitBdf2Solver::schema() {
  Schema s{kBdf2Name,
           "Two-step backward differentiation formula (BDF2) on M q'' = F, second order and L-stable: it damps "
           "what dt does not resolve (stretch and shear waves, contact stiffness, impacts) and little else "
           "(amplitude error O((omega dt)^4) per step). With w = dt_n/dt_{n-1}: (1+2w)/(1+w) q_{n+1} - (1+w) q_n + "
           "w^2/(1+w) q_{n-1} = dt v_{n+1}, the same in v with dt M^{-1} F(q_{n+1}, v_{n+1}); solved by Newton "
           "on the free DOFs with the Goldstein-Price line search, as implicit-euler, with every force and "
           "contact (force and impulse models) at the step's end. The first step, and the first after the "
           "state was set from outside (Python), is a backward-Euler step."};
  NewtonOptions::declare(s);
  s.add<std::string>("predictor", "velocity",
                     "Newton's first iterate: velocity = q_n + dt v_n, position = q_n. Prescribed DOFs take "
                     "their values at t_{n+1} either way.")
      .choices({"velocity", "position"});
  return s;
}

ImplicitBdf2Solver::ImplicitBdf2Solver(const Params& p)
    : Solver(p), core_(NewtonOptions::fromParams(p)), velocity_predictor_(p.string("predictor") == "velocity") {}

void ImplicitBdf2Solver::bind(World& world) {
  requireOneImpulseContact(world);
  compare_starts_ = startFromBetterPredictor(world);
  triplets_found_ = false;  // the fixed mask is complete at the first step
}

bool ImplicitBdf2Solver::historyMatchesWorld(World& world) const {
  return sameBits(q_committed_, world.q()) && sameBits(v_committed_, world.v());
}

StepReport ImplicitBdf2Solver::step(World& world, double dt) {
  StepReport rep;
  const double t_n = world.time(), t = t_n + dt;
  if (!(dt > 0) || !std::isfinite(dt)) return bdf2Failure(rep, "time step must be > 0, got " + formatNumber(dt));
  const int n = world.numDofs();
  for (Vec* v : {&q_n_, &v_n_, &q_hat_, &v_hat_, &q_, &v_, &q_start_})
    if (v->size() != n) v->setZero(n);
  q_n_ = world.q();
  v_n_ = world.v();
  if (!q_n_.allFinite() || !v_n_.allFinite())
    return bdf2Failure(rep, "the state at t = " + formatNumber(t_n) + " is not finite (NaN/Inf)");
  if (!triplets_found_) {
    rotation_triplets_ = freeRotationTriplets(world);
    triplets_found_ = true;
  }

  // The coefficients: BDF2 with the step ratio w when the history is this World's, else backward
  // Euler (a0 = 1, a1 = -1, a2 = 0). Also backward Euler when the step grows more than twofold (the
  // full step after a failed one was cut into substeps): variable-step BDF2 is zero-stable only for
  // w < 1 + sqrt(2), and its extrapolation q^ amplifies the history's errors by about w/2.
  const bool two_step = has_history_ && q_prev_.size() == n && dt <= 2 * dt_prev_ &&
                        (trust_restored_history_ || historyMatchesWorld(world));
  double a0 = 1, a1 = -1, a2 = 0;
  if (two_step) {
    const double w = dt / dt_prev_;
    a0 = (1 + 2 * w) / (1 + w);
    a1 = -(1 + w);
    a2 = w * w / (1 + w);
  }
  const double b = dt / a0;
  if (two_step) {
    q_hat_ = -(a1 * q_n_ + a2 * q_prev_) / a0;
    v_hat_ = -(a1 * v_n_ + a2 * v_prev_) / a0;
  } else {
    q_hat_ = q_n_;
    v_hat_ = v_n_;
  }

  world.beginStep(dt);
  core_.prepare(world);
  if (velocity_predictor_)
    q_ = q_n_ + dt * v_n_;
  else
    q_ = q_n_;
  world.prescribe(t, q_);
  if (!q_.allFinite()) return bdf2Failure(rep, "prescribed values at t = " + formatNumber(t) + " are not finite");
  startCollisionFree(world, q_n_, q_, v_);  // v_: scratch here

  EvalContext ctx;
  ctx.t = t;
  ctx.dt = b;  // velocities (q - q^)/b = v_{n+1}; inertia M (q - q^ - b v^)/b^2
  ctx.quasi_static = false;
  ctx.load_scale = 1.0;
  ctx.q_start = &q_hat_;
  ctx.v_start = &v_hat_;
  if (velocity_predictor_ && compare_starts_) {
    q_start_ = q_n_;
    world.prescribe(t, q_start_);
    core_.startFromLowerResidual(world, ctx, q_, q_start_, /*inertial=*/true);
  }
  const NewtonResult r = core_.solve(world, ctx, q_, /*inertial=*/true);
  rep.iterations = r.solves;
  rep.residual = r.residual;
  if (!r.ok)
    return bdf2Failure(rep, "step from t = " + formatNumber(t_n) + " (dt = " + formatNumber(dt) + ") failed: " + r.message);
  v_ = (q_ - q_hat_) / b;
  // Rotation vectors (Cosserat): v_ is the rate of phi at phi_{n+1}; the rod keeps the angular
  // velocity omega = J_r(phi) phi' across its rebase to phi = 0 (rotation_rates.h).
  for (const int g : rotation_triplets_) v_.segment<3>(g) = rightJacobian(q_.segment<3>(g)) * v_.segment<3>(g);
  if (!v_.allFinite()) return bdf2Failure(rep, "non-finite velocity at t = " + formatNumber(t));
  world.commitStep(t, q_, v_, core_.residual());

  // The history for the next step: state n in the frames of state n+1. Positions and DER twists as
  // they are; a rotation vector's frame moved by the step's increment phi_{n+1}, so state n sits at
  // -phi_{n+1} (Q_n = exp(phi_{n+1}) Q_{n+1}), and its rate there is J_r(-phi_{n+1})^{-1} omega_n.
  q_prev_ = q_n_;
  v_prev_ = v_n_;
  for (const int g : rotation_triplets_) {
    const Vec3 back = -q_.segment<3>(g);
    q_prev_.segment<3>(g) = back;
    v_prev_.segment<3>(g) = rightJacobian(back).lu().solve(Vec3(v_n_.segment<3>(g)));
  }
  dt_prev_ = dt;
  has_history_ = true;
  q_committed_ = world.q();
  v_committed_ = world.v();
  trust_restored_history_ = false;
  if (!two_step) ++starting_steps_;
  return rep;
}

// [has_history, dt_prev, n, q_prev (n), v_prev (n)]
void ImplicitBdf2Solver::saveState(std::vector<double>& out) const {
  const int n = has_history_ ? static_cast<int>(q_prev_.size()) : 0;
  out.assign({has_history_ ? 1.0 : 0.0, dt_prev_, static_cast<double>(n)});
  out.insert(out.end(), q_prev_.data(), q_prev_.data() + n);
  out.insert(out.end(), v_prev_.data(), v_prev_.data() + n);
}

void ImplicitBdf2Solver::loadState(const std::vector<double>& in) {
  if (in.size() < 3 || in.size() != 3 + 2 * static_cast<std::size_t>(in[2]))
    throw std::runtime_error(std::string(kBdf2Name) + ": the saved solver state has " + std::to_string(in.size()) +
                             " values, not the 3 + 2 n of its history");
  const int n = static_cast<int>(in[2]);
  has_history_ = in[0] != 0.0 && n > 0;
  dt_prev_ = in[1];
  q_prev_ = Eigen::Map<const Vec>(in.data() + 3, n);
  v_prev_ = Eigen::Map<const Vec>(in.data() + 3 + n, n);
  // A restored state is the committed one: the next step continues the two-step scheme. Its check
  // against the World (historyMatchesWorld) starts again from the state it is restored to.
  q_committed_.resize(0);
  v_committed_.resize(0);
  trust_restored_history_ = has_history_;
}

}  // namespace rodsim::newton
