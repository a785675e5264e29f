// implicit-midpoint: the implicit midpoint rule on M q'' = F, second order and symplectic, solved as
// a backward-Euler half step to the midpoint followed by a linear extrapolation (README.md,
// "implicit-midpoint"):
//   q_m = q_{n+1/2} solves  R(q_m) = M (q_m - q_n - h v_n) / h^2 - F(q_m, v_m) = 0,   h = dt/2,
//   v_m = (q_m - q_n)/h,    q_{n+1} = 2 q_m - q_n,    v_{n+1} = 2 v_m - v_n.
// The Newton solve is NewtonCore's implicit-Euler solve with the step h (J = M/h^2 + K + C/h), with
// contact forces taken at q_{n+1} (J gains 2 K_c(q_{n+1})).
#pragma once

#include "newton_core.h"

#include <rodsim/solver.h>

#include <vector>

namespace rodsim::newton {

class ImplicitMidpointSolver : public Solver {
 public:
  static Schema schema();
  explicit ImplicitMidpointSolver(const Params& p);
  void bind(World& world) override;
  StepReport step(World& world, double dt) override;
  const NewtonCore& core() const { return core_; }
  // Steps whose Newton solve started from q_n instead of the velocity predictor (Cosserat rods in
  // contact, as implicit-euler).
  long positionStarts() const { return position_starts_; }

 private:
  NewtonCore core_;
  bool velocity_predictor_ = true;
  bool compare_starts_ = false;
  ContactExtrapolation* contact_at_end_ = nullptr;  // the World's, when the scene has contacts
  std::vector<int> rotation_triplets_;  // freeRotationTriplets of the bound world, found at the first step
  bool triplets_found_ = false;
  long position_starts_ = 0;
  Vec q_n_, v_n_, q_m_, q_, v_, scratch_, residual_;
};

}  // namespace rodsim::newton
