// Contact models. The core Contact interface is what the kernel needs of every model (candidates
// once per step, the starting overlap, statistics); how a model couples to a solver is a capability:
//  - ForceContact (imc, ipc): a force with gradient and Hessian, like a Force; implicit solvers add
//    it to their Newton system, explicit solvers to their kicks (with its stiffness in the
//    stability estimate).
//  - StepBoundContact (ipc): a Newton step or a predictor must stay collision free:
//    maxStepFraction bounds it (continuous collision detection).
//  - LinearizedImpulseContact (alart-curnier): contact and friction impulses solved together with
//    an implicit solver's linearized system: solveLinearized replaces the plain linear solve.
//  - VelocityImpulseContact (alart-curnier): a velocity-level (Moreau-Jean) contact solve with the
//    lumped mass, for explicit solvers.
// Solvers declare which of these they can drive (Schema::require), so that a model no solver of the
// scene can drive is refused before the run instead of being ignored.
#pragma once

#include <rodsim/component.h>

#include <limits>
#include <string>
#include <vector>

namespace rodsim {

struct ContactStats {
  int active = 0;  // pairs in contact (inside the model's force band) now
  double min_gap = std::numeric_limits<double>::infinity();  // m; distance minus radii; < 0 penetrates
};

// The selection every contact model declares the same way, so that a scene can swap models:
// `rods` and `obstacles`, optional lists of names (absent or empty: all). Read them with
// Params::optionalStrings and resolve them at bind with resolveRods and resolveObstacles.
inline void declareContactSelection(Schema& s) {
  s.optional<std::vector<std::string>>(
      "rods", "Rods in contact with each other and themselves (absent or empty: all rods).");
  s.optional<std::vector<std::string>>(
      "obstacles", "Obstacles the rods' nodes touch, by name: planes, spheres, cylinders (spinning ones drag "
                   "through friction); absent or empty: all obstacles of the scene.");
  s.add<bool>("allow_initial_overlap", false,
              "Accept a scene whose rods start interpenetrated (distance between centre lines below the sum of "
              "the radii). Off: `rodsim check` and `run` refuse it, naming the rods, their edges and the overlap.");
}

// One place where two rods (or a rod and an obstacle) overlap: the distance between the centre
// lines is below the sum of the radii. Edge indexes are each rod's own.
struct Overlap {
  std::string rod_a, rod_b;  // rod names; rod_b is the obstacle's name for a rod-obstacle overlap
  int edge_a = -1, edge_b = -1;  // edge of rod_a; edge of rod_b (-1 for an obstacle: edge_a is then a node)
  double gap = 0;  // m, distance minus radii (< 0)
};

class Contact : public Component {
 public:
  using Component::Component;

  // Once per step, at the committed configuration q: broad phase, candidate pairs, stiffness.
  virtual void beginStep(const EvalContext& /*ctx*/) {}
  // True when the model handles [[obstacle]] contact (the kernel refuses obstacles otherwise).
  virtual bool usesObstacles() const { return false; }
  // Contact count and smallest gap in the configuration last evaluated.
  virtual ContactStats stats() const { return {}; }
  // Every overlap between the model's rods (and its obstacles) in configuration q, with the model's
  // own exclusion of neighbouring edges. The kernel calls it before the first step: a scene that
  // starts interpenetrated is refused unless it allows it (allow_initial_overlap).
  virtual void findOverlaps(const Vec& /*q*/, std::vector<Overlap>& /*out*/) const {}
};

}  // namespace rodsim
