// Rotations for the Cosserat rod (seed Sec. III.A, Eq. 16): the Rodrigues exponential, the matrix
// logarithm and the inverse Jacobians of the exponential map, all robust near zero angle (Taylor
// series below 1e-4 rad, so no 0/0 and no cancellation at 1e-12 rad).
//
// Conventions (README.md): a rotation vector θ (rad) gives R = exp([θ]x) (right-hand rotation by
// |θ| about θ). log(R) is its inverse for |θ| < π.
#pragma once

#include <rodsim/linalg.h>

#include <Eigen/Geometry>  // cross products

#include <algorithm>
#include <cmath>

namespace rodsim::cosserat {

inline Mat3 skew(const Vec3& a) {
  Mat3 m;
  m << 0, -a.z(), a.y(), a.z(), 0, -a.x(), -a.y(), a.x(), 0;
  return m;
}

// exp([θ]x) = I + sinθ/θ [θ] + (1 - cosθ)/θ² [θ]²  (Rodrigues, Eq. 16).
inline Mat3 expSO3(const Vec3& th) {
  const double t2 = th.squaredNorm();
  double a, b;  // sinθ/θ, (1 - cosθ)/θ²
  if (t2 < 1e-8) {
    a = 1.0 - t2 / 6.0 * (1.0 - t2 / 20.0);
    b = 0.5 - t2 / 24.0 * (1.0 - t2 / 30.0);
  } else {
    const double t = std::sqrt(t2);
    a = std::sin(t) / t;
    b = (1.0 - std::cos(t)) / t2;
  }
  const Mat3 K = skew(th);
  return Mat3::Identity() + a * K + b * K * K;
}

// Coefficient c(θ) = 1/θ² - (1 + cosθ)/(2θ sinθ) of [θ]² in the inverse Jacobians (1/12 at 0).
inline double invJacobianCoefficient(double t2) {
  if (t2 < 1e-6) return 1.0 / 12.0 + t2 / 720.0 + t2 * t2 / 30240.0;
  const double t = std::sqrt(t2);
  return 1.0 / t2 - (1.0 + std::cos(t)) / (2.0 * t * std::sin(t));
}

// log(R) for a rotation R, |θ| in [0, π]: θ = vee(R - R^T) θ / (2 sinθ). Near θ = 0 the factor is
// the series 1/2 (1 + θ²/6 + 7θ⁴/360); near π the axis comes from the symmetric part. If `jc` is
// given it receives invJacobianCoefficient(θ²), computed from the same sinθ and cosθ.
inline Vec3 logSO3(const Mat3& R, double* jc = nullptr) {
  const Vec3 w(R(2, 1) - R(1, 2), R(0, 2) - R(2, 0), R(1, 0) - R(0, 1));  // 2 sinθ u
  const double c = std::clamp(0.5 * (R.trace() - 1.0), -1.0, 1.0);
  const double s = 0.5 * w.norm();  // sinθ >= 0
  const double t = std::atan2(s, c);
  if (t < 1e-3) {
    const double t2 = t * t;
    if (jc) *jc = 1.0 / 12.0 + t2 / 720.0 + t2 * t2 / 30240.0;
    return 0.5 * (1.0 + t2 / 6.0 + 7.0 * t2 * t2 / 360.0) * w;
  }
  if (jc) *jc = 1.0 / (t * t) - (1.0 + c) / (2.0 * t * s);
  if (t < 3.14159265358979 - 1e-4) return (t / (2.0 * s)) * w;
  // Near π: the symmetric part ½(R + Rᵀ) = cosθ I + (1 - cosθ) u uᵀ gives the axis, w its sign.
  const Mat3 U = (0.5 * (R + R.transpose()) - c * Mat3::Identity()) / (1.0 - c);
  int k = 0;
  U.diagonal().maxCoeff(&k);
  Vec3 u = U.col(k) / std::sqrt(std::max(U(k, k), 1e-300));
  u.normalize();
  if (u.dot(w) < 0) u = -u;
  return t * u;
}

// Inverse right Jacobian applied to m: J_r^{-1}(θ) m = m + ½ θ×m + c θ×(θ×m), with
// exp([θ]) exp([δ]) = exp([θ + J_r^{-1} δ]) + O(δ²). The inverse left Jacobian is J_r^{-1}(-θ).
// `c` is invJacobianCoefficient(|θ|²) (from logSO3).
inline Vec3 invRightJacobianTimes(const Vec3& th, const Vec3& m, double c) {
  const Vec3 tm = th.cross(m);
  return m + 0.5 * tm + c * th.cross(tm);
}
inline Vec3 invLeftJacobianTimes(const Vec3& th, const Vec3& m, double c) { return invRightJacobianTimes(-th, m, c); }
inline Vec3 invRightJacobianTimes(const Vec3& th, const Vec3& m) {
  return invRightJacobianTimes(th, m, invJacobianCoefficient(th.squaredNorm()));
}
inline Vec3 invLeftJacobianTimes(const Vec3& th, const Vec3& m) { return invRightJacobianTimes(-th, m); }

}  // namespace rodsim::cosserat
