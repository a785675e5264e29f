// Rotations of the Cosserat rod (Gazzola et al. 2018, Sec. III.A, Eq. 16): the Rodrigues exponential, the matrix
// logarithm and the inverse Jacobians of the exponential map, all robust near zero angle (Taylor
// series below 0.1 rad, so no 0/0 and no cancellation at 1e-12 rad, and no transcendental function
// for the small angles of a time step or of a well-resolved rod).
//
// Used by rod_cosserat (frames, curvatures, the clamp) and frames.h (parallelTransportExp).
// Header-only and inline: the Cosserat hot loops inline the small-angle branches (their AVX-512/AVX2
// clones included), so these must stay visible to the compiler at every call site.
//
// Conventions (plugins/rod_cosserat/README.md): a rotation vector θ (rad) gives R = exp([θ]x) (right-hand rotation by
// |θ| about θ). log(R) is its inverse for |θ| < π.
#pragma once

#include <rodsim/geometry/skew.h>
#include <rodsim/geometry/types.h>

#include <algorithm>
#include <cmath>

namespace rodsim::geometry {

// Coefficients a = sinθ/θ and b = (1 - cosθ)/θ² of the Rodrigues formula (Eq. 16), from θ².
// Below θ = 0.1 rad (all time-step increments of a stable explicit step) a Taylor polynomial to
// θ⁸, exact to round-off (next terms < 3e-18), so no sin, cos or sqrt.
inline void rodriguesCoefficients(double t2, double& a, double& b) {
  if (t2 < 1e-2) {
    a = 1.0 + t2 * (-1.0 / 6.0 + t2 * (1.0 / 120.0 + t2 * (-1.0 / 5040.0 + t2 * (1.0 / 362880.0))));
    b = 0.5 + t2 * (-1.0 / 24.0 + t2 * (1.0 / 720.0 + t2 * (-1.0 / 40320.0 + t2 * (1.0 / 3628800.0))));
  } else {
    const double t = std::sqrt(t2);
    const double s = std::sin(t), c = std::cos(t);  // one sincos
    a = s / t;
    b = (1.0 - c) / t2;
  }
}

// exp([θ]x) = I + sinθ/θ [θ] + (1 - cosθ)/θ² [θ]²  (Rodrigues, Eq. 16), [θ]² = θθᵀ - θ² I.
inline Mat3 expSO3(const Vec3& th) {
  const double x = th.x(), y = th.y(), z = th.z(), t2 = x * x + y * y + z * z;
  double a, b;
  rodriguesCoefficients(t2, a, b);
  const double d = 1.0 - b * t2;  // cosθ
  Mat3 R;
  R << d + b * x * x, b * x * y - a * z, b * x * z + a * y,  //
      b * x * y + a * z, d + b * y * y, b * y * z - a * x,   //
      b * x * z - a * y, b * y * z + a * x, d + b * z * z;
  return R;
}

// Coefficient c(θ) = 1/θ² - (1 + cosθ)/(2θ sinθ) of [θ]² in the inverse Jacobians (1/12 at 0):
// its Taylor polynomial in θ² for θ < 0.1 rad, and the closed form.
inline double invJacobianCoefficientSmall(double t2) {
  return 1.0 / 12.0 + t2 * (1.0 / 720.0 + t2 * (1.0 / 30240.0 + t2 * (1.0 / 1209600.0 + t2 * (1.0 / 47900160.0))));
}
inline double invJacobianCoefficient(double t2) {
  if (t2 < 1e-2) return invJacobianCoefficientSmall(t2);
  const double t = std::sqrt(t2);
  return 1.0 / t2 - (1.0 + std::cos(t)) / (2.0 * t * std::sin(t));
}

// log(R) for a rotation R, |θ| in [0, π]: θ = vee(R - R^T) θ / (2 sinθ). Below θ = 0.1 rad (cosθ > 0,
// sin²θ < 1e-2) the factor θ / sinθ = arcsin(s)/s is a polynomial in s² = sin²θ (truncation < 2e-18),
// so no atan2 and no sqrt; above, atan2; near π the axis comes from the symmetric part. If `jc` is
// given it receives invJacobianCoefficient(θ²).
// arcsin(s)/s = θ / sinθ for sinθ = s < 0.1 and cosθ > 0, as a polynomial in s² (the small-angle
// branch of logSO3): Σ (2k)! / (4^k (k!)² (2k+1)) s^{2k}, truncated below 2e-18.
inline double asinOverSin(double s2) {
  return 1.0 + s2 * (1.0 / 6.0 + s2 * (3.0 / 40.0 + s2 * (5.0 / 112.0 + s2 * (35.0 / 1152.0 + s2 * (63.0 / 2816.0 + s2 * (231.0 / 13312.0 + s2 * (143.0 / 10240.0)))))));
}

// The curvature range of a bent rod (the snake bends 0.1-0.3 rad per element): the same two
// functions as polynomials valid for sin²θ < 0.2 (θ < 0.4636 rad, cosθ > 0), so that the vectorized
// curvature pass needs no atan2 there either (CosseratRod, nodeCurvatures). arcsin(s)/s to s^42
// (truncation below 1.2e-18 at s² = 0.2); c(θ) to θ^16 from its Bernoulli series
// c = Σ_{n>=1} (-1)^(n+1) B_2n θ^(2n-2) / (2n)! (truncation below 1e-19 at θ² = 0.215). Both agree with
// the closed forms to a few 1e-16 relative (tests/libs/geometry/test_so3.cpp).
inline constexpr double kWideS2 = 0.2;
inline double asinOverSinWide(double s2) {
  return 1.0 / 1.0 + s2 * (1.0 / 6.0 + s2 * (3.0 / 40.0 + s2 * (5.0 / 112.0 + s2 * (35.0 / 1152.0 + s2 * (63.0 / 2816.0 + s2 * (231.0 / 13312.0 + s2 * (143.0 / 10240.0 + s2 * (6435.0 / 557056.0 + s2 * (12155.0 / 1245184.0 + s2 * (46189.0 / 5505024.0 + s2 * (88179.0 / 12058624.0 + s2 * (676039.0 / 104857600.0 + s2 * (1300075.0 / 226492416.0 + s2 * (5014575.0 / 973078528.0 + s2 * (9694845.0 / 2080374784.0 + s2 * (100180065.0 / 23622320128.0 + s2 * (116680311.0 / 30064771072.0 + s2 * (2268783825.0 / 635655159808.0 + s2 * (1472719325.0 / 446676598784.0 + s2 * (34461632205.0 / 11269994184704.0 + s2 * (67282234305.0 / 23639499997184.0)))))))))))))))))))));
}
inline double invJacobianCoefficientWide(double t2) {
  return 1.0 / 12.0 + t2 * (1.0 / 720.0 + t2 * (1.0 / 30240.0 + t2 * (1.0 / 1209600.0 + t2 * (1.0 / 47900160.0 + t2 * (5.284190138687493e-10 + t2 * (1.3382536530684679e-11 + t2 * (3.3896802963225827e-13 + t2 * (8.586062056277845e-15))))))));
}

// The large-angle branch of logSO3 (out of line: the hot loops inline only the polynomial).
[[gnu::noinline]] inline Vec3 logSO3Large(const Mat3& R, const Vec3& w, double s2, double tr, double* jc) {
  const double c = std::clamp(0.5 * (tr - 1.0), -1.0, 1.0);
  const double s = std::sqrt(s2);  // sinθ >= 0
  const double t = std::atan2(s, c);
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

[[gnu::always_inline]] inline Vec3 logSO3(const Mat3& R, double* jc = nullptr) {
  const Vec3 w(R(2, 1) - R(1, 2), R(0, 2) - R(2, 0), R(1, 0) - R(0, 1));  // 2 sinθ u
  const double s2 = 0.25 * w.squaredNorm();                               // sin²θ
  const double tr = R(0, 0) + R(1, 1) + R(2, 2);
  if (s2 < 1e-2 && tr > 1.0) [[likely]] {
    const double f = asinOverSin(s2);
    if (jc) *jc = invJacobianCoefficientSmall(s2 * f * f);  // s2 f² = θ²
    return (0.5 * f) * w;
  }
  return logSO3Large(R, w, s2, tr, jc);
}

// log(R) as the curvature pass computes it (CosseratRod, nodeCurvatures): logSO3's small-angle
// polynomial below 0.1 rad, the wide polynomials above up to sin²θ < kWideS2 (cosθ > 0), the closed
// forms beyond. Differs from logSO3 between 0.1 and 0.46 rad by round-off only.
inline Vec3 logSO3Curvature(const Mat3& R, double& jc) {
  const Vec3 w(R(2, 1) - R(1, 2), R(0, 2) - R(2, 0), R(1, 0) - R(0, 1));  // 2 sinθ u
  const double s2 = 0.25 * w.squaredNorm();                               // sin²θ
  const double tr = R(0, 0) + R(1, 1) + R(2, 2);
  if (s2 < 1e-2 && tr > 1.0) {
    const double f = asinOverSin(s2);
    jc = invJacobianCoefficientSmall(s2 * f * f);
    return (0.5 * f) * w;
  }
  if (s2 < kWideS2 && tr > 1.0) {
    const double f = asinOverSinWide(s2);
    jc = invJacobianCoefficientWide(s2 * f * f);
    return (0.5 * f) * w;
  }
  return logSO3Large(R, w, s2, tr, &jc);
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

}  // namespace rodsim::geometry
