// Readings of a World between steps that the probes and the Python module share: a constraint's
// reaction (force and torque), a rod's strains and internal loads (RodStrainReport, SDK 1.7) and the
// context at the committed state that external and contact forces are evaluated in.
#pragma once

#include <rodsim/kernel/world.h>

#include <rodsim/capabilities.h>

#include <string>
#include <vector>

namespace rodsim::kernel {

// What a constraint exerts on the rods it holds, from the last committed residual on its DOFs
// (residual = M a - F: on a prescribed DOF, the force the constraint supplies).
struct Reaction {
  Vec3 force = Vec3::Zero();   // N, world frame: the sum over its nodes
  Vec3 torque = Vec3::Zero();  // N m, world frame, about `point`
  Vec3 point = Vec3::Zero();   // m: the mean position of the held nodes now
  int nodes = 0;               // held nodes
  int frames = 0;              // held edge frames (twist or rotation DOFs) whose reaction is a torque
};

// The torque sums the moments (x_i - point) x f_i of the node forces and, for every edge whose frame
// DOFs (Rod::frameDofs) the constraint prescribes, the torque of the reaction on those DOFs as the
// rod converts it (RodStrainReport::frameTorque; a rod without that capability: the reaction on its
// twistDof along the edge's tangent).
Reaction constraintReaction(KernelWorld& world, const Constraint& constraint);

// The rod's RodStrainReport, or an InputError naming the rod and `what` needs it.
const RodStrainReport& strainReport(const Rod& rod, const std::string& what);

// Per-rod arrays of RodStrainReport at the rod's last configuration (the committed one between steps).
struct RodStrains {
  std::vector<double> stretch, shear, force;  // per element: 1, 3, 3 numbers
  std::vector<double> curvature, couple;      // per junction: 3, 3 numbers
  std::vector<int> junction_nodes;
  bool shearable = false;
};
void readRodStrains(const RodStrainReport& report, RodStrains& out);

// An evaluation context at the committed state whose velocity (EvalContext::velocity) is the
// committed one, q_start = q - dt v: where the external-force and contact-force readings evaluate the
// scene's forces and contact models. at() refills it (reusing q_start's storage) and returns a context
// that points into this object and the world, valid until the next at() or step.
class CommittedState {
 public:
  const EvalContext& at(KernelWorld& world, double dt);

 private:
  Vec q_start_;
  EvalContext ctx_;
};

}  // namespace rodsim::kernel
