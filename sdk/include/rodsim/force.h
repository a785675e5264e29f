// External forces and fields: gravity, point loads, damping, fluid drag...
#pragma once

#include <rodsim/component.h>

namespace rodsim {

// A Force adds generalized forces (global indexing) evaluated at ctx.q. Implicit solvers also
// call addStiffness; a force that leaves it empty is treated explicitly (its Jacobian ignored,
// as Tong et al. (2023) do for the RSS drag). External loads multiply by ctx.load_scale.
class Force : public Component {
 public:
  using Component::Component;

  // Once per step, before the solver's first evaluation, with the state the step starts from
  // (ctx.q_start, ctx.v_start; valid during the call only: copy what you need). A force that
  // depends on that state alone (an explicit force, like the RSS drag) may start computing here,
  // on another thread, and finish in addForce: its work then overlaps the rods' and contacts'.
  virtual void beginStep(const EvalContext& /*ctx*/) {}
  virtual void addForce(const EvalContext& ctx, Vec& f) = 0;    // N, N m
  // True when addForce adds the same vector at every configuration of a step: the force depends
  // on the start state alone (explicit, like the RSS drag) and has no stiffness. Solvers may then
  // add it last (World::addStepConstantForces), after the work that does not need it.
  virtual bool constantInStep() const { return false; }
  virtual void addStiffness(const EvalContext& /*ctx*/, StiffnessSink& /*K*/) {}  // K -= dF/dq
  // Potential energy (J) for forces that have one (gravity, point load); 0 otherwise.
  virtual double potentialEnergy(const EvalContext& /*ctx*/) const { return 0.0; }
  // True when addForce reads the velocities of the step (ctx.velocity(i)), like a damping.
  // Explicit solvers then integrate it over each kick instead of freezing it at the velocity
  // before the kick (World::evaluateVelocityForces).
  virtual bool velocityDependent() const { return false; }
};

}  // namespace rodsim
