// implicit-bdf2: the two-step backward differentiation formula on M q'' = F, second order and
// L-stable, solved as one backward-Euler-like Newton solve per step (README.md, "implicit-bdf2"):
//   with w = dt_n / dt_{n-1}, a0 = (1 + 2w)/(1 + w), a1 = -(1 + w), a2 = w^2/(1 + w):
//     a0 q_{n+1} + a1 q_n + a2 q_{n-1} = dt v_{n+1},   a0 v_{n+1} + a1 v_n + a2 v_{n-1} = dt M^{-1} F_{n+1}
//   so that with b = dt/a0, q^ = -(a1 q_n + a2 q_{n-1})/a0, v^ = -(a1 v_n + a2 v_{n-1})/a0:
//     R(q) = M (q - q^ - b v^) / b^2 - F(q, (q - q^)/b) = 0,   v_{n+1} = (q_{n+1} - q^)/b:
// NewtonCore's implicit-Euler residual of a step b from (q^, v^). Everything is evaluated at the
// step's end, contacts included (force and impulse models). The first step, and a step after the
// state was set from outside, is a backward-Euler step (no history yet).
#pragma once

#include "newton_core.h"

#include <rodsim/solver.h>

#include <vector>

namespace rodsim::newton {

class ImplicitBdf2Solver : public Solver {
 public:
  static Schema schema();
  explicit ImplicitBdf2Solver(const Params& p);
  void bind(World& world) override;
  StepReport step(World& world, double dt) override;
  // The history (the previous step's state in the current frames, its length, whether it exists),
  // so that a restart continues the same two-step scheme bit for bit.
  void saveState(std::vector<double>& out) const override;
  void loadState(const std::vector<double>& in) override;
  const NewtonCore& core() const { return core_; }
  // Steps taken as backward-Euler steps for want of a history (the first one, and after the state
  // was set from outside the solver).
  long startingSteps() const { return starting_steps_; }

 private:
  // Whether the World's state is still the one this solver committed last (not set from outside).
  bool historyMatchesWorld(World& world) const;

  NewtonCore core_;
  bool velocity_predictor_ = true;
  bool compare_starts_ = false;
  std::vector<int> rotation_triplets_;  // freeRotationTriplets of the bound world, found at the first step
  bool triplets_found_ = false;
  // History: state n-1 expressed in the frames of state n (rotation vectors relative to the
  // committed frames: phi_{n-1} = -(the increment of the last step), rates converted accordingly).
  bool has_history_ = false;
  double dt_prev_ = 0;
  Vec q_prev_, v_prev_;
  Vec q_committed_, v_committed_;  // the World's state after the last commit (after its rebase)
  bool trust_restored_history_ = false;  // loadState: the World holds the state the history was saved with
  Vec q_n_, v_n_, q_hat_, v_hat_, q_, v_, q_start_;
  long starting_steps_ = 0;
};

}  // namespace rodsim::newton
