// The bend/twist energy of one Cosserat node (a node with a curvature: an interior node, every node
// of a ring), with its exact gradient and Hessian with respect to the DOFs as the rod defines them
// (README.md, "Energy and forces"; Gazzola et al. (2018), Eqs. 8, 10, 19, 20):
//
//     U = ½ (θ - θ°)ᵀ B̂ (θ - θ°) / (D̂ E³),   θ = log(Q_p Q_iᵀ),   E = (ℓ_p + ℓ_i) / (2 D̂),
//
// p the element before the node, i the element after it, Q_e = exp(-[φ_e]) Q_committed,e. Without
// Eq. 10's rescaling (bend_twist_rescaling = false) E is 1 and U does not depend on the positions.
//
// DOF order [x_prev, x_node, x_next, φ_p, φ_i] (x_prev: the first node of p; x_next: the second node
// of i). With m = ∂U/∂θ = B̂ (θ - θ°)/(D̂ E³) and the Jacobians of the logarithm
// (rotation_jacobians.h; a change δ of φ_p turns Q_p by exp(-[J_r(φ_p) δ]), which moves θ by
// -J_l⁻¹(θ) J_r(φ_p) δ, and one of φ_i turns Q_iᵀ by exp([J_r(φ_i) δ]) on the right):
//   ∂θ/∂φ_p = A_p = -J_l⁻¹(θ) J_r(φ_p),   ∂θ/∂φ_i = A_i = J_r⁻¹(θ) J_r(φ_i),
//   gradient  φ_p: A_pᵀ m = -J_l(φ_p) J_r⁻¹(θ) m,   φ_i: A_iᵀ m = J_l(φ_i) J_l⁻¹(θ) m,
//             x: ∂U/∂L ∂L/∂x with L = ℓ_p + ℓ_i, ∂U/∂L = -3U/L (the bending-length force);
//   Hessian   Aᵀ (B̂/(D̂E³)) A + the derivatives of Aᵀ m at fixed m (derivativeOfProduct of J_l at φ
//             and of J_r⁻¹, J_l⁻¹ at θ), and with the rescaling the L terms: ∂m/∂L = -3m/L,
//             ∂²U/∂L² = 12 U/L², ∂²ℓ/∂x² = (I - t tᵀ)/ℓ.
// Exact for curvature rotations |θ| < π (the principal logarithm; the inverse Jacobians are finite
// there) and rotation vectors φ of any size.
#pragma once

#include "rotation_jacobians.h"

#include <Eigen/Core>

namespace rodsim::cosserat {

using Vec9 = Eigen::Matrix<double, 9, 1>;  // as in shear_stretch_energy.h
using Mat9 = Eigen::Matrix<double, 9, 9>;
using Vec15 = Eigen::Matrix<double, 15, 1>;
using Mat15 = Eigen::Matrix<double, 15, 15>;

// What does not change with the configuration.
struct BendTwistNode {
  double rest_voronoi = 0;    // D̂, m
  Vec3 B = Vec3::Zero();      // diag B̂ = (E Î1, E Î2, G Î3), N m² (Table I)
  Vec3 theta0 = Vec3::Zero(); // rest curvature rotation θ° = D̂ κ̂°
  bool rescaling = true;      // Eq. 10's 1/E³ (bend_twist_rescaling)
};

// U of the node between element p (frame Qp, nodes x_prev and x_node) and element i (frame Qi, nodes
// x_node and x_next); gradient and Hessian over [x_prev, x_node, x_next, φ_p, φ_i] written (not added)
// when asked for.
double bendTwistEnergy(const Vec3& x_prev, const Vec3& x_node, const Vec3& x_next, const Mat3& Qp, const Mat3& Qi,
                       const RotationDofJacobians& rotation_p, const RotationDofJacobians& rotation_i,
                       const BendTwistNode& node, Vec15* grad, Mat15* hess);

}  // namespace rodsim::cosserat
