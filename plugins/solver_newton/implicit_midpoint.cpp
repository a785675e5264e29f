// implicit-midpoint (README.md, "implicit-midpoint"): a backward-Euler half step h = dt/2 to the
// midpoint q_m by NewtonCore, then q_{n+1} = 2 q_m - q_n, v_{n+1} = 2 v_m - v_n. This is the implicit
// midpoint rule exactly: with q_{n+1} = q_n + dt (v_n + v_{n+1})/2 and M (v_{n+1} - v_n) = dt F(q_m, v_m),
// q_m = (q_n + q_{n+1})/2, v_m = (v_n + v_{n+1})/2 = (q_m - q_n)/h, eliminating q_{n+1} and v_{n+1}
// leaves M (q_m - q_n - h v_n)/h^2 = F(q_m, v_m): the backward-Euler residual of step h.
//
// Contact forces are taken at the step's end instead, F_c(q_{n+1}) with q_{n+1} = 2 q_m - q_n, through
// the World's ContactExtrapolation (s = 2): M (v_{n+1} - v_n) = dt (F(q_m, v_m) + F_c(q_{n+1})). At the
// midpoint a contact force only keeps q_m out of the obstacle, and the extrapolated end point lands
// inside it by about the step's motion: the penalty then returns the overlap as energy on the next
// step, and the barrier's end point leaves its domain (the failures within the first impacts that
// kept contact off this solver). At the end point the gaps that are committed are the ones solved
// for (Deuflhard, Krause & Ertel 2008 take contact at the end for the same reason). The scheme stays
// second order while no contact is active.
#include "implicit_midpoint.h"

#include "newton_solvers.h"  // requireOneImpulseContact, startCollisionFree
#include "rotation_rates.h"

#include <rodsim/capabilities.h>
#include <rodsim/contact.h>
#include <rodsim/rod.h>

#include <cmath>
#include <cstdio>
#include <vector>
#include <string>

namespace rodsim::newton {

namespace {

const char* kName = "implicit-midpoint";

// Sets the World's contact extrapolation for one step and resets it on every return.
class ContactAtStepEnd {
 public:
  explicit ContactAtStepEnd(ContactExtrapolation* world) : world_(world) {
    if (world_) world_->setContactExtrapolation(2.0);
  }
  ~ContactAtStepEnd() {
    if (world_) world_->setContactExtrapolation(1.0);
  }
  ContactAtStepEnd(const ContactAtStepEnd&) = delete;
  ContactAtStepEnd& operator=(const ContactAtStepEnd&) = delete;

 private:
  ContactExtrapolation* world_;
};

StepReport midpointFailure(StepReport r, std::string message) {
  r.ok = false;
  r.message = std::string(kName) + ": " + std::move(message);
  return r;
}

}  // namespace

Schema ImplicitMidpointSolver::schema() {
  Schema s{kName,
           "Implicit midpoint rule on M q'' = F (second order, symplectic: no numerical damping): "
           "q_{n+1} = q_n + dt (v_n + v_{n+1})/2, M (v_{n+1} - v_n) = dt F(q_{n+1/2}, v_{n+1/2}), solved as a "
           "backward-Euler half step to the midpoint q_{n+1/2} (Newton on the free DOFs with the Goldstein-Price "
           "line search, as implicit-euler, J = 4 M/dt^2 + K + 2 C/dt) and the extrapolation q_{n+1} = "
           "2 q_{n+1/2} - q_n. Forces and loads are evaluated at the midpoint (t_n + dt/2), force contacts "
           "(imc, ipc, spring-dashpot) at the step's end q_{n+1}; constraints prescribe the midpoint and the end "
           "point. Impulse contacts (alart-curnier) are refused."};
  NewtonOptions::declare(s, /*impulse_contacts=*/false);
  s.add<std::string>("predictor", "velocity",
                     "Newton's first iterate for the midpoint: velocity = q_n + (dt/2) v_n, position = q_n. "
                     "Prescribed DOFs take their values at t_n + dt/2 either way.")
      .choices({"velocity", "position"});
  return s;
}

ImplicitMidpointSolver::ImplicitMidpointSolver(const Params& p)
    : Solver(p), core_(NewtonOptions::fromParams(p)), velocity_predictor_(p.string("predictor") == "velocity") {}

void ImplicitMidpointSolver::bind(World& world) {
  requireOneImpulseContact(world);
  contact_at_end_ = nullptr;
  bool residual_contact = world.numContacts() > 0, rotation_vectors = false;
  for (int c = 0; c < world.numContacts(); ++c) {
    Contact& contact = world.contact(c);
    // The schema's requirement refuses them before a run; a world built without the kernel's check
    // (tests, the Python layer) gets the same reason here.
    if (contact.as<LinearizedImpulseContact>())
      throw std::runtime_error(std::string(kName) + " does not drive contact '" + contact.name() +
                               "': it solves contact impulses for a backward-Euler step (gap and normal "
                               "velocity at the step's end), which the midpoint extrapolation would break; "
                               "use implicit-euler");
  }
  if (residual_contact) {
    contact_at_end_ = worldCapability<ContactExtrapolation>(world);
    if (!contact_at_end_)
      throw std::runtime_error(std::string(kName) + " takes contact forces at the step's end, which needs a World "
                               "with the world-contact-extrapolation capability (rodsim's kernel, SDK 1.9 or later)");
  }
  triplets_found_ = false;  // the fixed mask is complete at the first step
  for (int r = 0; r < world.numRods(); ++r)
    if (world.rod(r).as<RodRotationVectors>()) rotation_vectors = true;
  // As implicit-euler: Cosserat rods with a contact solved through the residual compare the velocity
  // predictor with q_n and start from the lower residual (README.md, "Predictor").
  compare_starts_ = residual_contact && rotation_vectors;
}

StepReport ImplicitMidpointSolver::step(World& world, double dt) {
  StepReport rep;
  const double t_n = world.time(), h = 0.5 * dt, t_m = t_n + h, t = t_n + dt;
  if (!(dt > 0) || !std::isfinite(dt)) return midpointFailure(rep, "time step must be > 0, got " + formatNumber(dt));
  const int n = world.numDofs();
  for (Vec* v : {&q_n_, &v_n_, &q_m_, &q_, &v_, &scratch_, &residual_})
    if (v->size() != n) v->setZero(n);
  q_n_ = world.q();
  v_n_ = world.v();
  if (!q_n_.allFinite() || !v_n_.allFinite())
    return midpointFailure(rep, "the state at t = " + formatNumber(t_n) + " is not finite (NaN/Inf)");
  if (!triplets_found_) {
    rotation_triplets_ = freeRotationTriplets(world);
    triplets_found_ = true;
  }

  // The half step: a backward-Euler step of length h from (q_n, v_n) to the midpoint. Forces see a
  // step of length h (their velocities (q - q_n)/h are v_m); contacts the whole step from q_n to the
  // end point 2 q_m - q_n, over which their velocities are v_m too.
  const ContactAtStepEnd contact_at_end(contact_at_end_);
  world.beginStep(h);
  core_.prepare(world);
  if (velocity_predictor_)
    q_m_ = q_n_ + h * v_n_;
  else
    q_m_ = q_n_;
  world.prescribe(t_m, q_m_);
  if (!q_m_.allFinite()) return midpointFailure(rep, "prescribed values at t = " + formatNumber(t_m) + " are not finite");
  // Barrier contacts: start collision free (the World bounds the end point's step).
  startCollisionFree(world, q_n_, q_m_, scratch_);

  EvalContext ctx;
  ctx.t = t_m;
  ctx.dt = h;
  ctx.quasi_static = false;
  ctx.load_scale = 1.0;
  ctx.q_start = &q_n_;
  ctx.v_start = &v_n_;
  if (velocity_predictor_ && compare_starts_) {
    q_ = q_n_;
    world.prescribe(t_m, q_);
    if (core_.startFromLowerResidual(world, ctx, q_m_, q_, /*inertial=*/true)) ++position_starts_;
  }
  const NewtonResult r = core_.solve(world, ctx, q_m_, /*inertial=*/true);
  rep.iterations = r.solves;
  rep.residual = r.residual;
  if (!r.ok)
    return midpointFailure(rep, "step from t = " + formatNumber(t_n) + " (dt = " + formatNumber(dt) + ", midpoint solve) failed: " + r.message);

  // The end point: q_{n+1} = 2 q_m - q_n, v_{n+1} = 2 v_m - v_n on the free DOFs. The constraints
  // prescribe the fixed DOFs at t_{n+1} (2 q_m - q_n differs from their path by O(dt^2) where it is
  // curved); their velocity is the chord (q_{n+1} - q_n)/dt: 2 v_m - v_n would carry any jump of the
  // prescribed velocity forward as an undamped alternation.
  q_ = 2.0 * q_m_ - q_n_;
  world.prescribe(t, q_);
  if (!q_.allFinite()) return midpointFailure(rep, "prescribed values at t = " + formatNumber(t) + " are not finite");
  const auto& fixed = world.fixedMask();
  const Vec& m = world.mass();
  const Vec& R = core_.residual();  // M (q_m - q_n - h v_n)/h^2 - F(q_m) on every DOF
  const double inv_h2 = 1.0 / (h * h);
  for (int i = 0; i < n; ++i) {
    if (!fixed[i]) {
      v_[i] = 4.0 * (q_m_[i] - q_n_[i]) / dt - v_n_[i];
      residual_[i] = R[i];
    } else {
      v_[i] = (q_[i] - q_n_[i]) / dt;
      // The reaction at the midpoint: M (v_{n+1} - v_n)/dt - F(q_m), with this step's velocities.
      residual_[i] = R[i] - m[i] * (q_m_[i] - q_n_[i] - h * v_n_[i]) * inv_h2 + m[i] * (v_[i] - v_n_[i]) / dt;
    }
  }
  // Rods whose frame DOFs are rotation vectors relative to the committed frames (Cosserat): v_{n+1}
  // above is the rate of phi at phi_{n+1} = 2 phi_m; the rod keeps the velocity across the rebase to
  // phi = 0 (rebaseDofs), where the rate of phi is the angular velocity. Convert it:
  // omega = J_r(phi) phi' (Q = exp(-[phi]) Q_c, dQ/dt = -[omega] Q; plugins/rod_cosserat/README.md).
  // Without it the end velocity is off by 1/2 phi x phi' = O(dt^2) per step: first order overall.
  for (const int g : rotation_triplets_) v_.segment<3>(g) = rightJacobian(q_.segment<3>(g)) * v_.segment<3>(g);
  if (!v_.allFinite()) return midpointFailure(rep, "non-finite velocity at t = " + formatNumber(t));
  world.commitStep(t, q_, v_, residual_);
  return rep;
}

}  // namespace rodsim::newton
