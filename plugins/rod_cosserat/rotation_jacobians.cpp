// The Jacobians of the exponential map and their derivatives (see rotation_jacobians.h).
//
// Coefficients, with θ² = t2, a = sin θ/θ, b = (1 - cos θ)/θ², s = (θ - sin θ)/θ³:
//   J_r:   α = -b,  β = s        J_l: α = b, β = s
//   J_r⁻¹: α = ½,   β = c        J_l⁻¹: α = -½, β = c,   c = 1/θ² - (1 + cos θ)/(2θ sin θ)
// and their t2-derivatives (d/dt2 = (1/2θ) d/dθ):
//   a' = (cos θ - a)/(2 t2),  b' = (a - 2b)/(2 t2),  s' = -(a' + s)/t2,
//   c' = -1/t2² + (θ + sin θ)/(4θ³ (1 - cos θ)).
// Below t2 = 0.2 the closed forms lose digits to cancellation (b' and s' at θ → 0 are differences of
// nearly equal terms divided by t2), so the Taylor series in t2 are used there:
//   b = Σ (-t2)^k/(2k+2)!,  s = Σ (-t2)^k/(2k+3)!   (ten terms: the next is below 1e-25 at t2 = 0.2),
//   c = Σ c_k t2^k, the Bernoulli series of so3.h's invJacobianCoefficientWide (to t2⁸, truncation
//   below 1e-19 at t2 = 0.215), differentiated term by term.
#include "rotation_jacobians.h"

#include <rodsim/geometry/skew.h>

#include <cmath>

namespace rodsim::cosserat {

namespace {

constexpr double kSeriesBelow = 0.2;  // t2: Taylor series below, closed forms above

// b = (1 - cos θ)/θ² and s = (θ - sin θ)/θ³ with their t2-derivatives.
void bAndS(double t2, double& b, double& db, double& s, double& ds) {
  if (t2 < kSeriesBelow) {
    // Σ_k (-1)^k t2^k / (2k+2)! and Σ_k (-1)^k t2^k / (2k+3)! by Horner, and their derivatives term by
    // term; the coefficients (-1)^k / (2k+2)! and (-1)^k / (2k+3)!, k = 0 .. 9, are computed once.
    struct Series {
      double b[10], s[10];
      Series() {
        double fb = 2.0, fs = 6.0, sign = 1.0;
        for (int k = 0; k < 10; ++k) {
          b[k] = sign / fb, s[k] = sign / fs;
          sign = -sign;
          fb *= (2.0 * k + 3.0) * (2.0 * k + 4.0);
          fs *= (2.0 * k + 4.0) * (2.0 * k + 5.0);
        }
      }
    };
    static const Series c;
    b = db = s = ds = 0;
    for (int k = 9; k >= 0; --k) b = b * t2 + c.b[k], s = s * t2 + c.s[k];
    for (int k = 9; k >= 1; --k) db = db * t2 + k * c.b[k], ds = ds * t2 + k * c.s[k];
    return;
  }
  const double th = std::sqrt(t2), sn = std::sin(th), cs = std::cos(th);
  const double a = sn / th, da = (cs - a) / (2.0 * t2);
  b = (1.0 - cs) / t2;
  db = (a - 2.0 * b) / (2.0 * t2);
  s = (1.0 - a) / t2;
  ds = -(da + s) / t2;
}

// c(θ) of the inverse Jacobians and dc/dt2.
void inverseCoefficient(double t2, double& c, double& dc) {
  if (t2 < kSeriesBelow) {
    static constexpr double ck[] = {1.0 / 12.0,           1.0 / 720.0,           1.0 / 30240.0,
                                    1.0 / 1209600.0,      1.0 / 47900160.0,      5.284190138687493e-10,
                                    1.3382536530684679e-11, 3.3896802963225827e-13, 8.586062056277845e-15};
    c = dc = 0;
    for (int k = 8; k >= 0; --k) c = c * t2 + ck[k];
    for (int k = 8; k >= 1; --k) dc = dc * t2 + k * ck[k];
    return;
  }
  const double th = std::sqrt(t2), sn = std::sin(th), cs = std::cos(th);
  c = 1.0 / t2 - (1.0 + cs) / (2.0 * th * sn);
  dc = -1.0 / (t2 * t2) + (th + sn) / (4.0 * th * t2 * (1.0 - cs));
}

}  // namespace

RotationMatrixFunction rightJacobianCoefficients(double t2) {
  double b, db, s, ds;
  bAndS(t2, b, db, s, ds);
  return {-b, s, -db, ds};
}

RotationMatrixFunction leftJacobianCoefficients(double t2) {
  double b, db, s, ds;
  bAndS(t2, b, db, s, ds);
  return {b, s, db, ds};
}

RotationMatrixFunction inverseRightJacobianCoefficients(double t2) {
  double c, dc;
  inverseCoefficient(t2, c, dc);
  return {0.5, c, 0.0, dc};
}

RotationMatrixFunction inverseLeftJacobianCoefficients(double t2) {
  double c, dc;
  inverseCoefficient(t2, c, dc);
  return {-0.5, c, 0.0, dc};
}

Mat3 matrixOf(const RotationMatrixFunction& A, const Vec3& x) {
  const Mat3 X = geometry::skew(x);
  return Mat3::Identity() + A.alpha * X + A.beta * (X * X);
}

Mat3 derivativeOfProduct(const RotationMatrixFunction& A, const Vec3& x, const Vec3& u) {
  // A(x) u = u + α x × u + β (x (x·u) - |x|² u), α and β functions of t2 = |x|² (∂t2/∂x = 2 xᵀ).
  const double xu = x.dot(u), t2 = x.squaredNorm();
  const Vec3 xxu = x.cross(u), xxxu = x * xu - t2 * u;
  return -A.alpha * geometry::skew(u) + (2.0 * A.d_alpha) * xxu * x.transpose() +
         A.beta * (xu * Mat3::Identity() + x * u.transpose() - 2.0 * u * x.transpose()) +
         (2.0 * A.d_beta) * xxxu * x.transpose();
}

RotationDofJacobians rotationDofJacobians(const Vec3& phi) {
  RotationDofJacobians j;
  j.phi = phi;
  j.left_coefficients = leftJacobianCoefficients(phi.squaredNorm());
  j.left = matrixOf(j.left_coefficients, phi);
  j.right = j.left.transpose();
  return j;
}

}  // namespace rodsim::cosserat
