// Prescribed motion of DOFs: clamps, motors, moving supports.
#pragma once

#include <rodsim/component.h>

#include <vector>

namespace rodsim {

// A Constraint prescribes a fixed set of global DOFs. Solvers remove them from the Newton system
// and the kernel reports, on those DOFs, the reaction force the constraint exerts.
class Constraint : public Component {
 public:
  using Component::Component;

  // Global DOFs this constraint prescribes; valid after bind, constant for the run.
  virtual const std::vector<int>& dofs() const = 0;
  // Global DOFs that carry a position (for reaction forces): x of each node, y and z follow.
  virtual const std::vector<int>& positionDofs() const = 0;
  // Write the prescribed values at time t (s) into q (global). May call Rod::setConfiguration
  // to find twist angles that realise a material frame.
  virtual void prescribe(double t, Vec& q) = 0;
};

}  // namespace rodsim
