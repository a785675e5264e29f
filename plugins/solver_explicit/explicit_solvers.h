// Explicit symplectic time integrators on the World: position-verlet (Gazzola et al. 2018,
// Appendix B, one force evaluation per step) and pefrl (Omelyan, Mryglod and Folk 2002, fourth
// order, four force evaluations per step). See README.md in this folder.
#pragma once

#include <rodsim/capabilities.h>
#include <rodsim/solver.h>

#include "implicit_contact.h"

#include <string>
#include <vector>

namespace rodsim::explicit_solver {

// A splitting scheme x += a_k h v, v += b_k h M⁻¹F(x) (drift a_0, kick b_0, drift a_1, ..., drift a_K).
struct Scheme {
  std::vector<double> drift;  // K + 1 coefficients
  std::vector<double> kick;   // K coefficients
};
Scheme positionVerletScheme();
Scheme pefrlScheme();
// Largest ω h for which the scheme is stable on ẍ = -ω² x (2 for position Verlet).
double stabilityBound(const Scheme& s);

class ExplicitSolver : public Solver {
 public:
  // compose_rotations: drift through Rod::drift (Cosserat rotations composed on SO(3)) instead of
  // adding h v to every DOF.
  ExplicitSolver(const Params& p, Scheme scheme, std::string type, bool compose_rotations);
  StepReport step(World& world, double dt) override;
  // The implicit contact step's warm start (the last step's contact forces).
  void saveState(std::vector<double>& out) const override { implicit_contact_.saveState(out); }
  void loadState(const std::vector<double>& in) override { implicit_contact_.loadState(in); }

  // Highest angular frequency sqrt(λ_max(M⁻¹K)) of the free DOFs at the current state, by power
  // iteration with K v = -(F(q + εv) - F(q - εv)) / 2ε (velocities held fixed). rad/s.
  double estimateMaxFrequency(World& world, double dt);
  // Stability limit h_max / ω_max (s) found at the first step (0 before).
  double criticalTimeStep() const { return dt_crit_; }
  double schemeBound() const { return bound_; }

 protected:
  // velocity_default: the default of `velocity_forces` (explicit, midpoint or rk4).
  static void declareCommon(Schema& s, const std::string& velocity_default);

 private:
  EvalContext context(double t, double dt) const;
  void evaluate(World& world, double t, double dt);
  void driftRods(World& world, double h);
  const Vec& swapIntoWorld(World& world);
  // f += the change that integrating the velocity-dependent forces over a kick of length tau
  // (midpoint rule or RK4) makes to the force frozen at the velocity before the kick.
  // v: the velocity before the kick.
  void integrateVelocityForces(World& world, double t, double dt, double tau, const Vec& v);

  // The World's threads (ParallelLoops, SDK 1.10; found at the first step): the per-DOF passes run in
  // blocks of at least kDofGrain DOFs, each DOF with the operations of the one-thread pass, so the
  // trajectory is bit for bit the same for any thread count. nullptr: one thread.
  ParallelLoops* loops_ = nullptr;
  static constexpr int kDofGrain = 8192;
  // f(begin, end) over blocks of [0, n) (one call f(0, n) on one thread).
  template <class F> void perDof(int n, F&& f) { parallelForBlocks(loops_, n, kDofGrain, f); }

  Scheme scheme_;
  std::string type_;
  double bound_ = 2.0;
  std::string stability_;  // refuse | warn | off
  double safety_ = 0.9;
  int power_iterations_ = 50;
  bool checked_ = false;
  double dt_crit_ = 0;
  double checked_dt_ = 0;
  // work arrays, sized at the first step
  Vec q_, v_, qs_, f_, a_, m_inv_, free_, x_, y_, fp_, v0_, residual_;
  std::vector<int> fixed_list_;
  std::vector<double> q0_fixed_;  // start-of-step values of the fixed DOFs
  bool qs_fresh_ = false;         // step() has just written qs_ = q_ - dt v_
  const Vec* v_start_ = &v0_;     // the start-of-step velocity: v0_, or the World's v (position-verlet)
  bool compose_rotations_ = false;
  enum class VelocityForces { Explicit, Midpoint, Rk4 } velocity_forces_ = VelocityForces::Explicit;
  Vec outside_rods_;                  // free_ on DOFs no rod owns (they drift by h v), 0 elsewhere
  Vec g0_, g_, vstage_, gsum_;        // velocity-dependent forces and stage velocities of a kick

  // --- contact (README.md, "Contact")
  // The scene's contact models by coupling, found at the first step: force contacts (their
  // stiffness bounds the stable step while they are active) and velocity-impulse contacts (a
  // Moreau-Jean contact step before the last drift).
  void findContacts(World& world);
  // Gershgorin bound of the active force contacts' stiffness at the configuration just evaluated,
  // combined with the elastic estimate; false (report filled) when dt exceeds safety x that limit
  // and `stability` is refuse.
  bool contactStable(World& world, double t, double dt, StepReport& report);
  // The velocity-level contact step at the end of the step: v += dv, q += dt/2 dv (and the
  // step-averaged force += M dv / dt).
  bool contactImpulses(World& world, double t, double dt, StepReport& report);
  // The implicit contact step at the end of the step; report.iterations its Newton iterations.
  bool implicitContactStep(World& world, double t_end, double dt, StepReport& report);
  // "N pairs active in 'imc', ..." or "no contact active", for failure messages.
  std::string activeContacts(World& world) const;
  using ForceContactRef = ImplicitContactStep::Model;  // the contact and its ForceContact
  struct VelocityContactRef {
    Contact* contact;
    VelocityImpulseContact* impulses;
  };
  bool contacts_found_ = false;
  std::vector<ForceContactRef> force_contacts_;
  // contact_forces = "implicit": the force contacts solved at the end of the step with the lumped
  // mass (implicit_contact.h) instead of added to the kicks; the kicks then evaluate the World
  // without them (contact_free_, the World's capability; null: in the kicks, as "explicit").
  bool implicit_contacts_ = true;
  ContactFreeEvaluation* contact_free_ = nullptr;
  ImplicitContactStep implicit_contact_;
  Vec contact_force_;
  int contact_max_iterations_ = 50;
  std::vector<VelocityContactRef> velocity_contacts_;
  StiffnessSink contact_k_;  // capacity kept: no allocation once warm
  Vec rowsum_;               // Gershgorin row sums, zero between uses
  Vec dv_;                   // velocity change of the contact impulses
  Vec q_detect_;             // where the velocity-level step detects contacts: q_pred - dt/2 v_free
  bool contact_warned_ = false;
  // The last full contact-stiffness bound (contactStable): the active pairs it saw, whether dt was
  // then within half the safe step, and the kicks since.
  int bound_active_ = -1, kicks_since_bound_ = 0;
  bool bound_roomy_ = false;
};

class PositionVerlet : public ExplicitSolver {
 public:
  static Schema schema();
  explicit PositionVerlet(const Params& p);
};

class Pefrl : public ExplicitSolver {
 public:
  static Schema schema();
  explicit Pefrl(const Params& p);
};

}  // namespace rodsim::explicit_solver
