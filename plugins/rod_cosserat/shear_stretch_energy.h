// The shear/stretch energy of one Cosserat element, with its exact gradient and Hessian with respect
// to the element's DOFs as the rod defines them: its two node positions and its rotation vector φ
// relative to its committed frame (README.md, "Degrees of freedom"; Gazzola et al. (2018), Eqs. 9, 11, 18):
//
//     U = ½ ℓ̂ (σ - σ°)ᵀ Ŝ (σ - σ°),   σ = Q (x_b - x_a) / ℓ̂ - (0, 0, 1),   Q = exp(-[φ]) Q_committed.
//
// DOF order [x_a, x_b, φ]. Used by CosseratRod::addStiffness; the energy and gradient are the same
// function as the rod's (its gradient in φ is the rod's couple through J_l(φ): rotation_jacobians.h).
// With v = Q (x_b - x_a) and n = Ŝ (σ - σ°) (∂U/∂v = n, ∂²U/∂v² = Ŝ/ℓ̂):
//   ∂v/∂x_b = Q = -∂v/∂x_a,   ∂v/∂φ = [v] J_r(φ)      (exp(-[φ + δ]) = exp(-[J_r δ]) exp(-[φ]))
//   gradient  [-Qᵀ n, Qᵀ n, J_l(φ) (n × v)]
//   Hessian   Gᵀ (Ŝ/ℓ̂) G with G = [-Q, Q, [v] J_r], plus the second derivatives of v contracted with n:
//             (x_b, φ): -Qᵀ [n] J_r  (and +Qᵀ [n] J_r for x_a),
//             (φ, φ):   ∂(J_l(φ) y)/∂φ at y = n × v, plus J_l [n] [v] J_r.
#pragma once

#include "rotation_jacobians.h"

#include <Eigen/Core>

namespace rodsim::cosserat {

using Vec9 = Eigen::Matrix<double, 9, 1>;
using Mat9 = Eigen::Matrix<double, 9, 9>;

// What does not change with the configuration.
struct ShearStretchElement {
  double rest_length = 0;          // ℓ̂, m
  Vec3 S = Vec3::Zero();           // diag Ŝ = (α_c G Â, α_c G Â, E Â), N (Table I)
  Vec3 sigma0 = Vec3::Zero();      // rest strain σ°
};

// U of the element with frame Q (rows d1, d2, d3; Q = exp(-[φ]) Q_committed) and nodes x_a, x_b;
// the gradient and Hessian over [x_a, x_b, φ] are written (not added) when asked for.
double shearStretchEnergy(const Vec3& xa, const Vec3& xb, const Mat3& Q, const RotationDofJacobians& rotation,
                          const ShearStretchElement& element, Vec9* grad, Mat9* hess);

}  // namespace rodsim::cosserat
