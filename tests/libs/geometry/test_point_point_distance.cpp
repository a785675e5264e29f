// pointPointSq: value, gradient and Hessian against central finite differences.
#include "geometry_checks.h"

#include <rodsim/geometry/point_point_distance.h>

#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>

using namespace rodsim::geometry;
using namespace rodsim::geometry::test;

TEST_CASE("point-point squared distance: gradient and Hessian by finite differences") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  const double h = 1e-5, tol = centralTolerance(h);
  auto g = [](const Vec6& y) {
    double v;
    pointPointSq(y.segment<3>(0), y.segment<3>(3), v, nullptr, nullptr);
    return v;
  };
  auto dg = [](const Vec6& y) {
    double v;
    Vec6 d;
    pointPointSq(y.segment<3>(0), y.segment<3>(3), v, &d, nullptr);
    return Eigen::VectorXd(d);
  };
  for (int trial = 0; trial < 10; ++trial) {
    Vec6 x;
    for (int i = 0; i < 6; ++i) x[i] = u(rng);
    double v;
    Vec6 d;
    Mat6 H;
    pointPointSq(x.segment<3>(0), x.segment<3>(3), v, &d, &H);
    CHECK(v == doctest::Approx((x.segment<3>(0) - x.segment<3>(3)).squaredNorm()).epsilon(1e-15));
    CHECK(relErr(d, fdGradient(g, x, h)) <= tol);
    CHECK(relErr(H, fdJacobian(dg, x, h)) <= tol);
  }
  // coincident points: g = 0, zero gradient, the constant Hessian
  double v;
  Vec6 d;
  Mat6 H;
  pointPointSq(Vec3(1, 2, 3), Vec3(1, 2, 3), v, &d, &H);
  CHECK(v == 0.0);
  CHECK(d.norm() == 0.0);
  CHECK(H.trace() == 12.0);
}
