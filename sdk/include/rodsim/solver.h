// Time integrators and equilibrium solvers.
#pragma once

#include <rodsim/component.h>

#include <string>

namespace rodsim {

struct StepReport {
  bool ok = true;
  int iterations = 0;     // linear solves (Newton iterations) taken; 0 for explicit steps
  double residual = 0;    // final free-DOF force residual norm, N
  std::string message;    // why the step failed
};

// A Solver advances the World from world.time() to world.time() + dt and commits the result.
class Solver : public Component {
 public:
  using Component::Component;
  virtual StepReport step(World& world, double dt) = 0;
};

}  // namespace rodsim
