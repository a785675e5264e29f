// The bend/twist energy of one node and its derivatives (see bend_twist_energy.h).
#include "bend_twist_energy.h"

#include <rodsim/geometry/so3.h>

namespace rodsim::cosserat {

double bendTwistEnergy(const Vec3& x_prev, const Vec3& x_node, const Vec3& x_next, const Mat3& Qp, const Mat3& Qi,
                       const RotationDofJacobians& rotation_p, const RotationDofJacobians& rotation_i,
                       const BendTwistNode& node, Vec15* grad, Mat15* hess) {
  // θ = log(Q_p Q_iᵀ) = D̂ κ̂ (Eq. 20, the rod's sign: Q_i = exp(-[θ]) Q_p).
  const Vec3 theta = geometry::logSO3(Qp * Qi.transpose());
  const Vec3 u = theta - node.theta0;
  // Eq. 10: B = B̂/E², κ = κ̂/E over the Voronoi length D = E D̂, i.e. 1/(D̂ E³) = 8 D̂²/L³.
  const Vec3 ep = x_node - x_prev, ei = x_next - x_node;
  const double lp = ep.norm(), li = ei.norm(), L = lp + li;
  const double k = node.rescaling ? 8.0 * node.rest_voronoi * node.rest_voronoi / (L * L * L) : 1.0 / node.rest_voronoi;
  const Vec3 m = k * node.B.cwiseProduct(u);  // ∂U/∂θ
  const double U = 0.5 * u.dot(m);
  if (!grad && !hess) return U;

  const double t2 = theta.squaredNorm();
  const RotationMatrixFunction inv_right = inverseRightJacobianCoefficients(t2);
  const RotationMatrixFunction inv_left = inverseLeftJacobianCoefficients(t2);
  const Mat3 Jr_inv = matrixOf(inv_right, theta), Jl_inv = matrixOf(inv_left, theta);
  Eigen::Matrix<double, 3, 6> A;  // ∂θ/∂[φ_p, φ_i]
  A.block<3, 3>(0, 0) = -Jl_inv * rotation_p.right;
  A.block<3, 3>(0, 3) = Jr_inv * rotation_i.right;
  const Eigen::Matrix<double, 6, 1> grad_phi = A.transpose() * m;

  // ∂L/∂[x_prev, x_node, x_next] (∂ℓ/∂x = ∓t on the first/second node of an element) and -3U/L.
  const Vec3 tp = ep / lp, ti = ei / li;
  Vec9 dL;
  dL << -tp, tp - ti, ti;
  const double dU_dL = node.rescaling ? -3.0 * U / L : 0.0;

  if (grad) {
    grad->segment<9>(0) = dU_dL * dL;
    grad->segment<6>(9) = grad_phi;
  }
  if (hess) {
    hess->setZero();
    // The curvature's first derivatives: Aᵀ (B̂/(D̂E³)) A.
    Eigen::Matrix<double, 6, 6> Hphi = A.transpose() * (k * node.B).asDiagonal() * A;
    // Its second derivatives contracted with m: the derivatives of A_pᵀ m = -J_l(φ_p) J_r⁻¹(θ) m and
    // A_iᵀ m = J_l(φ_i) J_l⁻¹(θ) m at fixed m, through φ_p, φ_i themselves and through θ (∂θ/∂φ = A).
    const Mat3 dJr_inv_m = derivativeOfProduct(inv_right, theta, m);  // ∂(J_r⁻¹(θ) m)/∂θ
    const Mat3 dJl_inv_m = derivativeOfProduct(inv_left, theta, m);    // ∂(J_l⁻¹(θ) m)/∂θ
    Hphi.block<3, 3>(0, 0) -= derivativeOfProduct(rotation_p.left_coefficients, rotation_p.phi, Jr_inv * m);
    Hphi.block<3, 6>(0, 0) -= rotation_p.left * dJr_inv_m * A;
    Hphi.block<3, 3>(3, 3) += derivativeOfProduct(rotation_i.left_coefficients, rotation_i.phi, Jl_inv * m);
    Hphi.block<3, 6>(3, 0) += rotation_i.left * dJl_inv_m * A;
    hess->block<6, 6>(9, 9) = Hphi;
    if (node.rescaling) {
      // U = 8 D̂² q(θ)/L³: ∂²U/∂L² = 12 U/L², ∂m/∂L = -3 m/L; ∂²ℓ/∂x² = ±(I - t tᵀ)/ℓ.
      Mat9 Hx = (12.0 * U / (L * L)) * dL * dL.transpose();
      const Mat3 Pp = (Mat3::Identity() - tp * tp.transpose()) / lp;
      const Mat3 Pi = (Mat3::Identity() - ti * ti.transpose()) / li;
      Mat9 d2L = Mat9::Zero();
      d2L.block<3, 3>(0, 0) += Pp, d2L.block<3, 3>(3, 3) += Pp, d2L.block<3, 3>(0, 3) -= Pp, d2L.block<3, 3>(3, 0) -= Pp;
      d2L.block<3, 3>(3, 3) += Pi, d2L.block<3, 3>(6, 6) += Pi, d2L.block<3, 3>(3, 6) -= Pi, d2L.block<3, 3>(6, 3) -= Pi;
      Hx += dU_dL * d2L;
      hess->block<9, 9>(0, 0) = Hx;
      const Eigen::Matrix<double, 6, 9> Hphix = (-3.0 / L) * grad_phi * dL.transpose();
      hess->block<6, 9>(9, 0) = Hphix;
      hess->block<9, 6>(0, 9) = Hphix.transpose();
    }
  }
  return U;
}

}  // namespace rodsim::cosserat
