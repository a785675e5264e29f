// Contact models. Three kinds share one interface; a solver asks kind() what to call.
//  - Penalty (IMC): a force with gradient and Hessian, like a Force.
//  - Barrier (IPC): a force with gradient and Hessian whose line search must stay collision
//    free: maxStepFraction bounds the Newton step (continuous collision detection).
//  - Impulse (Alart-Curnier): contact and friction impulses solved together with the solver's
//    linearized system: solveLinearized replaces the plain linear solve.
#pragma once

#include <rodsim/component.h>

#include <Eigen/SparseCore>

#include <limits>
#include <string>
#include <vector>

namespace rodsim {

// The linear system a Newton iteration of an implicit solver would solve, restricted to free DOFs
// mapped back to global indexing: A dq = b (A = M/dt^2 + K, b = -residual), fixed DOFs have dq = 0.
struct LinearizedSystem {
  const Eigen::SparseMatrix<double>* A = nullptr;  // global, N/m
  const Vec* b = nullptr;                          // global, N
  const std::vector<char>* fixed = nullptr;
  const EvalContext* ctx = nullptr;
};

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
}

class Contact : public Component {
 public:
  using Component::Component;
  enum class Kind { Penalty, Barrier, Impulse };

  virtual Kind kind() const = 0;
  // Once per step, at the committed configuration q: broad phase, candidate pairs, stiffness.
  virtual void beginStep(const EvalContext& /*ctx*/) {}
  // Penalty and barrier: contact (and friction) forces at ctx.q, and K = -dF/dq.
  virtual void addForce(const EvalContext& /*ctx*/, Vec& /*f*/) {}
  virtual void addStiffness(const EvalContext& /*ctx*/, StiffnessSink& /*K*/) {}
  // Penalty and barrier: contact energy (J) at ctx.q, for energy-based line searches.
  virtual double energy(const EvalContext& /*ctx*/) const { return 0.0; }
  // Barrier: largest fraction of the step dq from q that keeps every pair apart (CCD).
  virtual double maxStepFraction(const Vec& /*q*/, const Vec& /*dq*/) { return 1.0; }
  // Impulse: solve sys with contact impulses; write the step into dq (global). Return false if
  // the contact solver did not converge.
  virtual bool solveLinearized(const LinearizedSystem& /*sys*/, Vec& /*dq*/) { return false; }
  // Why the last solveLinearized returned false, in one line ("" when it did not say): the solver
  // puts it into the step's failure message (and so into summary.json).
  virtual std::string failureReason() const { return {}; }
  // True when the model handles [[obstacle]] contact (the kernel refuses obstacles otherwise).
  virtual bool usesObstacles() const { return false; }
  // Contact count and smallest gap in the configuration last evaluated.
  virtual ContactStats stats() const { return {}; }
};

}  // namespace rodsim
