// The Jacobians of the exponential map of SO(3) and their inverses, with their derivatives: what the
// Hessian of the Cosserat rod's elastic energy with respect to its rotation-vector DOFs is made of
// (shear_stretch_energy.h, bend_twist_energy.h).
//
// Each of them is a matrix function of a rotation vector x of the form
//
//     A(x) = I + α(|x|²) [x]x + β(|x|²) [x]x²,
//
// so one small type holds α, β and their derivatives with respect to t2 = |x|², and two functions
// give A(x) and the derivative ∂(A(x) u)/∂x for a fixed u. Conventions are libs/geometry's so3.h
// (R = exp([x]x), the Rodrigues formula of Gazzola et al. (2018), Eq. 16):
//
//     exp([x + δ]) = exp([x]) exp([J_r(x) δ]) + O(δ²)      J_r(x) = I - (1-cos θ)/θ² [x] + (θ - sin θ)/θ³ [x]²
//     exp([x + δ]) = exp([J_l(x) δ]) exp([x]) + O(δ²)      J_l(x) = J_r(-x) = J_r(x)ᵀ
//     log(exp([x]) exp([δ])) = x + J_r⁻¹(x) δ + O(δ²)      J_r⁻¹(x) = I + ½ [x] + c(θ) [x]²
//     log(exp([δ]) exp([x])) = x + J_l⁻¹(x) δ + O(δ²)      J_l⁻¹(x) = J_r⁻¹(-x)
//
// with θ = |x| and c(θ) = 1/θ² - (1 + cos θ)/(2θ sin θ) (so3.h, invJacobianCoefficient). The
// coefficients are entire functions of θ² for J_r and J_l; c(θ) is finite for θ < 2π, so the inverse
// Jacobians are used only for curvature rotations, which are below π (logSO3). Every coefficient
// switches to its Taylor series in θ² below θ² = 0.2 (0.45 rad), where the closed forms cancel.
#pragma once

#include <rodsim/linalg.h>

namespace rodsim::cosserat {

// A(x) = I + alpha [x] + beta [x]², alpha and beta functions of t2 = |x|²; d_alpha = dα/dt2,
// d_beta = dβ/dt2.
struct RotationMatrixFunction {
  double alpha = 0, beta = 0, d_alpha = 0, d_beta = 0;
};

RotationMatrixFunction rightJacobianCoefficients(double t2);         // J_r
RotationMatrixFunction leftJacobianCoefficients(double t2);          // J_l = J_r(-x)
RotationMatrixFunction inverseRightJacobianCoefficients(double t2);  // J_r⁻¹
RotationMatrixFunction inverseLeftJacobianCoefficients(double t2);   // J_l⁻¹ = J_r⁻¹(-x)

// A(x).
Mat3 matrixOf(const RotationMatrixFunction& A, const Vec3& x);

// ∂(A(x) u)/∂x for a fixed u (row: component of A u, column: component of x):
//   α (-[u]) + 2α' (x × u) xᵀ + β ((x·u) I + x uᵀ - 2 u xᵀ) + 2β' (x (x·u) - |x|² u) xᵀ.
Mat3 derivativeOfProduct(const RotationMatrixFunction& A, const Vec3& x, const Vec3& u);

// What the Hessian needs of one element's rotation-vector DOFs φ (README.md, "Degrees of freedom":
// Q = exp(-[φ]) Q_committed). A change δ of φ turns the frame by the material rotation J_r(φ) δ:
//   exp(-[φ + δ]) = exp(-[J_r(φ) δ]) exp(-[φ]) + O(δ²),
// so ∂Q/∂φ_k = -[J_r(φ) e_k] Q, and the gradient with respect to φ is J_r(φ)ᵀ = J_l(φ) times the
// gradient with respect to that rotation (minus the couple that addElasticForce returns).
struct RotationDofJacobians {
  Vec3 phi = Vec3::Zero();
  Mat3 right = Mat3::Identity();  // J_r(φ)
  Mat3 left = Mat3::Identity();   // J_l(φ) = J_r(φ)ᵀ
  RotationMatrixFunction left_coefficients;  // to differentiate J_l(φ) y with respect to φ
};
RotationDofJacobians rotationDofJacobians(const Vec3& phi);

}  // namespace rodsim::cosserat
