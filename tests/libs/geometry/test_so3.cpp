// SO(3) (Gazzola et al. 2018, Eq. 16): Rodrigues exponential and logarithm, the inverse Jacobians of the
// exponential map, and the polynomials of the curvature pass (moved from rod_cosserat's tests), and
// the derivative of exp against central finite differences.
#include <rodsim/geometry/so3.h>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>

using namespace rodsim::geometry;

TEST_CASE("Rodrigues exponential and logarithm are inverse and accurate from 1e-12 to 1 rad and near pi") {
  const Vec3 axis = Vec3(0.3, -0.5, 0.8).normalized();
  for (double angle : {1e-12, 1e-10, 1e-8, 1e-6, 1e-4, 1e-3, 1e-2, 0.1, 0.5, 1.0, 2.0, 3.0, 3.14159}) {
    const Vec3 th = angle * axis;
    const Mat3 R = expSO3(th);
    CAPTURE(angle);
    CHECK((R * R.transpose() - Mat3::Identity()).norm() < 1e-15 * 10);
    CHECK(R.determinant() == doctest::Approx(1.0).epsilon(1e-14));
    // R v for v ⟂ axis rotated by exactly `angle` (Rodrigues: cos and sin of the angle)
    const Vec3 u = axis.cross(Vec3::UnitX()).normalized(), w = axis.cross(u);
    CHECK((R * u - (std::cos(angle) * u + std::sin(angle) * w)).norm() < 1e-15 * 10);
    const Vec3 back = logSO3(R);
    CHECK((back - th).norm() <= 1e-15 * 10 + 1e-12 * angle);
  }
}

TEST_CASE("inverse Jacobians of the exponential map satisfy exp([θ]) exp([δ]) = exp([θ + J_r^-1 δ]) to O(δ²)") {
  for (double angle : {1e-12, 1e-7, 1e-3, 0.3, 1.5, 2.8}) {
    const Vec3 th = angle * Vec3(1, 2, -0.5).normalized();
    const Vec3 d = 1e-7 * Vec3(0.4, -0.9, 0.3);
    const Vec3 right = logSO3(expSO3(th) * expSO3(d)) - th;
    const Vec3 left = logSO3(expSO3(d) * expSO3(th)) - th;
    CAPTURE(angle);
    CHECK((right - invRightJacobianTimes(th, d)).norm() < 1e-12);
    CHECK((left - invLeftJacobianTimes(th, d)).norm() < 1e-12);
  }
}

TEST_CASE("the wide curvature polynomials (0.1 to 0.46 rad) match the closed forms to ~1e-15 relative") {
  // arcsin(s)/s = θ / sinθ and c(θ) = 1/θ² - (1 + cosθ)/(2θ sinθ), references in long double.
  double worst_f = 0, worst_c = 0;
  for (int k = 0; k <= 2000; ++k) {
    const long double th = 1e-3L + (0.4636L - 1e-3L) * k / 2000.0L;
    const long double sn = std::sin(th), s2 = sn * sn;
    if (!(s2 < kWideS2)) continue;
    const long double f = th / sn, c = 1.0L / (th * th) - (1.0L + std::cos(th)) / (2.0L * th * sn);
    worst_f = std::max(worst_f, double(std::abs(asinOverSinWide(double(s2)) - f) / f));
    // (below 0.09 rad the long double closed form itself loses more than 1e-16 to cancellation;
    // the wide polynomial is used from 0.1 rad)
    if (th > 0.09L) worst_c = std::max(worst_c, double(std::abs(invJacobianCoefficientWide(double(th * th)) - c) / c));
  }
  CAPTURE(worst_f);
  CAPTURE(worst_c);
  CHECK(worst_f < 1e-15);
  CHECK(worst_c < 1e-15);
  // logSO3Curvature against logSO3 (atan2 and the closed form of c above 0.1 rad) on every branch:
  // the small polynomial, the wide one, and the closed forms beyond 0.46 rad and near π.
  for (double angle : {1e-9, 1e-3, 0.05, 0.0999, 0.1001, 0.2, 0.3, 0.4, 0.46, 0.47, 1.0, 2.0, 3.1415}) {
    for (const Vec3& dir : {Vec3(0.3, -0.5, 0.8), Vec3(1, 0, 0), Vec3(-0.2, 0.9, 0.1)}) {
      const Vec3 th = angle * dir.normalized();
      const Mat3 R = expSO3(th);
      double c1 = 0, c2 = 0;
      const Vec3 a = logSO3Curvature(R, c1), b = logSO3(R, &c2);
      CAPTURE(angle);
      CHECK((a - b).norm() <= 2e-15 * angle);
      // the double closed form of c (logSO3 above 0.1 rad) loses about 1e-16 / θ² to cancellation
      CHECK(std::abs(c1 - c2) <= 1e-15 * std::abs(c2) + (angle > 0.09 ? 4e-16 / (angle * angle) : 0.0));
    }
  }
}


TEST_CASE("d/de exp([θ + e δ]) at e = 0 is [J_l(θ) δ]x exp([θ]) by central differences (J_l^-1 from invLeftJacobianTimes)") {
  const double h = 1e-5;
  // O(h^2 + eps/h) for a function with O(1) derivatives, 100 times over (tests/libs/geometry/geometry_checks.h)
  const double tol = 100 * (h * h + std::numeric_limits<double>::epsilon() / h);
  for (double angle : {1e-6, 0.05, 0.3, 1.5, 2.8}) {
    const Vec3 th = angle * Vec3(0.2, -1, 0.6).normalized(), d = Vec3(0.7, 0.1, -0.4);
    const Mat3 dR = (expSO3(th + h * d) - expSO3(th - h * d)) / (2 * h);
    // dR R^T = [w]x with J_l^-1(θ) w = δ
    const Mat3 W = dR * expSO3(th).transpose();
    const Vec3 w(W(2, 1), W(0, 2), W(1, 0));
    CAPTURE(angle);
    CHECK((W + W.transpose()).norm() <= tol);
    CHECK((invLeftJacobianTimes(th, w) - d).norm() <= tol * d.norm());
  }
}
