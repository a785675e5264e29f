// The shear/stretch energy of one element and its derivatives (see shear_stretch_energy.h).
#include "shear_stretch_energy.h"

#include <rodsim/geometry/skew.h>

namespace rodsim::cosserat {

using geometry::skew;

double shearStretchEnergy(const Vec3& xa, const Vec3& xb, const Mat3& Q, const RotationDofJacobians& rotation,
                          const ShearStretchElement& element, Vec9* grad, Mat9* hess) {
  const double lhat = element.rest_length;
  const Vec3 v = Q * (xb - xa);                                        // ℓ_e in material components
  const Vec3 strain = v / lhat - Vec3::UnitZ() - element.sigma0;       // σ - σ° (Eq. 9)
  const Vec3 n = element.S.cwiseProduct(strain);                      // n_L = Ŝ (σ - σ°) (Eq. 11)
  const double U = 0.5 * lhat * strain.dot(n);
  if (!grad && !hess) return U;

  const Vec3 Qtn = Q.transpose() * n;
  const Vec3 n_cross_v = n.cross(v);
  if (grad) {
    grad->segment<3>(0) = -Qtn;
    grad->segment<3>(3) = Qtn;
    grad->segment<3>(6) = rotation.left * n_cross_v;  // -J_l(φ) times the couple (Q ℓ) × n of addElasticForce
  }
  if (hess) {
    // Gᵀ (Ŝ/ℓ̂) G: the change of σ itself.
    Eigen::Matrix<double, 3, 9> G;
    G.block<3, 3>(0, 0) = -Q;
    G.block<3, 3>(0, 3) = Q;
    G.block<3, 3>(0, 6) = skew(v) * rotation.right;
    *hess = G.transpose() * (element.S / lhat).asDiagonal() * G;
    // n · v is bilinear in (x, Q): its second derivatives are those of the rotation.
    const Mat3 mixed = -Q.transpose() * skew(n) * rotation.right;  // ∂²(n·v)/∂x_b ∂φ
    hess->block<3, 3>(3, 6) += mixed;
    hess->block<3, 3>(0, 6) -= mixed;
    hess->block<3, 3>(6, 3) += mixed.transpose();
    hess->block<3, 3>(6, 0) -= mixed.transpose();
    hess->block<3, 3>(6, 6) += derivativeOfProduct(rotation.left_coefficients, rotation.phi, n_cross_v) +
                               rotation.left * skew(n) * skew(v) * rotation.right;
  }
  return U;
}

}  // namespace rodsim::cosserat
