// Rates of rotation-vector DOFs (RodRotationVectors: Cosserat elements) for the multistep and
// extrapolating schemes. Such a rod's frame DOFs are a rotation vector phi relative to the committed
// frame, Q = exp(-[phi]) Q_c, rebased to phi = 0 at every commit with the velocity kept as the angular
// velocity omega (dQ/dt = -[omega] Q; plugins/rod_cosserat/README.md). A scheme that combines values
// of phi or of its rate phi' away from phi = 0 converts with the right Jacobian of SO(3):
// omega = J_r(phi) phi'.
#pragma once

#include <rodsim/capabilities.h>
#include <rodsim/component.h>
#include <rodsim/rod.h>

#include <cmath>
#include <vector>

namespace rodsim::newton {

// J_r(x) = I - (1 - cos a)/a^2 [x] + (a - sin a)/a^3 [x]^2, a = |x| (Taylor series below a^2 = 1e-4).
inline Mat3 rightJacobian(const Vec3& x) {
  const double a2 = x.squaredNorm();
  double alpha, beta;
  if (a2 < 1e-4) {
    alpha = 0.5 - a2 / 24 + a2 * a2 / 720;
    beta = 1.0 / 6 - a2 / 120 + a2 * a2 / 5040;
  } else {
    const double a = std::sqrt(a2);
    alpha = (1 - std::cos(a)) / a2;
    beta = (a - std::sin(a)) / (a2 * a);
  }
  Mat3 X;
  X << 0, -x.z(), x.y(), x.z(), 0, -x.x(), -x.y(), x.x(), 0;
  return Mat3::Identity() - alpha * X + beta * X * X;
}

// The global index of the first DOF of every free rotation-vector triplet of `world` (three
// consecutive DOFs of a RodRotationVectors rod's element, none of them prescribed), in rod and
// element order.
inline std::vector<int> freeRotationTriplets(World& world) {
  std::vector<int> out;
  const auto& fixed = world.fixedMask();
  for (int r = 0; r < world.numRods(); ++r) {
    Rod& rod = world.rod(r);
    if (!rod.as<RodRotationVectors>()) continue;
    const int elements = rod.numEdges() + (isClosedRod(rod) ? 1 : 0);  // a ring has one element more
    for (int e = 0; e < elements; ++e) {
      const std::vector<int> dofs = rod.frameDofs(e);
      if (dofs.size() != 3 || dofs[1] != dofs[0] + 1 || dofs[2] != dofs[0] + 2) continue;
      const int g = rod.dofOffset() + dofs[0];
      if (!fixed[g] && !fixed[g + 1] && !fixed[g + 2]) out.push_back(g);
    }
  }
  return out;
}

}  // namespace rodsim::newton
