// The two Newton solvers of the solver_newton plugin: implicit-euler (backward Euler on Eq. 7 of
// Tong et al. (2023)) and static (load-ramped equilibrium with bisection of failed increments).
#pragma once

#include "newton_core.h"

#include <rodsim/solver.h>

namespace rodsim::newton {

// Newton hands its linear system to one impulse contact model (LinearizedImpulseContact): two would
// each solve it alone and one would be ignored, so a scene with two is refused at bind.
void requireOneImpulseContact(World& world);

// Whether a step should compare the velocity predictor with q_n and start Newton from the one with
// the lower residual: when rods with rotation-vector DOFs (Cosserat) meet a contact solved through
// the residual (README.md, "Predictor"). implicit-euler and implicit-bdf2.
bool startFromBetterPredictor(World& world);

// Barrier contacts are undefined at and beyond contact: shortens the free DOFs' predictor motion
// q - q_n to the fraction that the World's CCD allows from q_n, so that Newton starts collision free
// (no change without a StepBoundContact). `scratch` holds the displacement (resized, no allocation
// once sized). implicit-euler, implicit-bdf2 and implicit-midpoint.
void startCollisionFree(World& world, const Vec& q_n, Vec& q, Vec& scratch);

class ImplicitEulerSolver : public Solver {
 public:
  static Schema schema();
  explicit ImplicitEulerSolver(const Params& p);
  void bind(World& world) override {
    requireOneImpulseContact(world);
    compare_starts_ = startFromBetterPredictor(world);
  }
  StepReport step(World& world, double dt) override;
  const NewtonCore& core() const { return core_; }
  // Steps that started from q_n instead of the velocity predictor (its residual was lower; only
  // with rotation-vector rods in contact, see startFromBetterPredictor).
  long positionStarts() const { return position_starts_; }

 private:

  NewtonCore core_;
  bool velocity_predictor_ = true;
  bool compare_starts_ = false;  // startFromBetterPredictor of the bound world (fixed at bind)
  long position_starts_ = 0;
  Vec q_n_, v_n_, q_, v_, q_start_;
};

class StaticSolver : public Solver {
 public:
  static Schema schema();
  explicit StaticSolver(const Params& p);
  void bind(World& world) override { requireOneImpulseContact(world); }
  StepReport step(World& world, double dt) override;
  // Checkpoint: the load factor of the last converged state.
  void saveState(std::vector<double>& out) const override { out.push_back(last_load_); }
  void loadState(const std::vector<double>& in) override { last_load_ = in.at(0); }
  const NewtonCore& core() const { return core_; }
  // Load factor at time t: min(1, t / ramp_time), or 1 without a ramp.
  double loadAt(double t) const;
  // Load cuts taken in the last step.
  int lastCuts() const { return last_cuts_; }

 private:
  NewtonCore core_;
  double ramp_time_;
  int max_load_cuts_;
  double last_load_ = 0;  // load factor of the last converged state (0: the initial state)
  int last_cuts_ = 0;
  Vec q_n_, q_conv_, q_, zero_;
};

}  // namespace rodsim::newton
