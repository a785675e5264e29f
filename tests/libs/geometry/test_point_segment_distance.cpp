// pointEdgeSq (point-line, Eq. 12 squared) and pointSegmentDistance (Eq. 12 inside, Eq. 11 at the
// ends): derivatives against central finite differences, the closest point at either end.
#include "geometry_checks.h"

#include <rodsim/geometry/point_segment_distance.h>

#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>

using namespace rodsim::geometry;
using namespace rodsim::geometry::test;

TEST_CASE("point-line squared distance (Eq. 12): gradient and Hessian by finite differences") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  const double h = 1e-5, tol = centralTolerance(h);
  auto g = [](const Vec9& y) {
    double v;
    pointEdgeSq(y.segment<3>(0), y.segment<3>(3), y.segment<3>(6), v, nullptr, nullptr);
    return v;
  };
  auto dg = [](const Vec9& y) {
    double v;
    Vec9 d;
    pointEdgeSq(y.segment<3>(0), y.segment<3>(3), y.segment<3>(6), v, &d, nullptr);
    return Eigen::VectorXd(d);
  };
  for (int trial = 0; trial < 10; ++trial) {
    Vec9 x;
    for (int i = 0; i < 9; ++i) x[i] = u(rng);
    x.segment<3>(6) += Vec3(2, 0, 0);  // |b - a| ~ 2: a well-conditioned line
    double v;
    Vec9 d;
    Mat9 H;
    pointEdgeSq(x.segment<3>(0), x.segment<3>(3), x.segment<3>(6), v, &d, &H);
    const Vec3 p = x.segment<3>(0), a = x.segment<3>(3), e = x.segment<3>(6) - a;
    CHECK(v == doctest::Approx((p - a).cross(e).squaredNorm() / e.squaredNorm()).epsilon(1e-13));
    CAPTURE(trial);
    CHECK(relErr(d, fdGradient(g, x, h)) <= tol);
    CHECK(relErr(H, fdJacobian(dg, x, h)) <= tol);
  }
}

TEST_CASE("point-segment distance: gradient and Hessian by finite differences (from contact_ipc)") {
  const Vec3 a(0, 0, 0), b(1, 0.1, -0.2);
  for (const Vec3& p : {Vec3(0.4, 0.5, 0.3), Vec3(-0.3, 0.2, 0.1), Vec3(1.4, 0.3, -0.5)}) {
    Vec9 x;
    x << p, a, b;
    auto D = [](const Vec9& y, int order) {
      PointSegmentDistance out;
      pointSegmentDistance(y.segment<3>(0), y.segment<3>(3), y.segment<3>(6), order, out);
      return out;
    };
    const PointSegmentDistance ps = D(x, 2);
    CAPTURE(static_cast<int>(ps.type));
    const Eigen::VectorXd g = fdGradient([&](const Vec9& y) { return D(y, 0).D; }, x, 1e-6);
    const Eigen::MatrixXd H = fdJacobian([&](const Vec9& y) { return Eigen::VectorXd(D(y, 1).grad); }, x, 1e-6);
    CHECK(relErr(ps.grad, g) < 1e-8);
    CHECK(relErr(ps.hess, H) < 1e-7);
  }
  CHECK(static_cast<int>(([] {
          PointSegmentDistance o;
          pointSegmentDistance(Vec3(-1, 1, 0), Vec3(0, 0, 0), Vec3(1, 0, 0), 0, o);
          return o.type;
        }())) == static_cast<int>(DistanceType::PointPoint));
}

TEST_CASE("point-segment distance: the closest point at either end (point-point), and on the segment") {
  const Vec3 a(0, 0, 0), b(2, 0, 0);
  const double h = 1e-6, tol = centralTolerance(h);
  struct Case {
    Vec3 p;
    DistanceType type;
    double D;
  };
  // beyond a, beyond b (the nearer end), inside
  for (const Case& c : {Case{Vec3(-0.5, 0.3, 0.4), DistanceType::PointPoint, std::sqrt(0.25 + 0.09 + 0.16)},
                        Case{Vec3(2.6, 0, 0.8), DistanceType::PointPoint, 1.0},
                        Case{Vec3(1.3, 0.6, 0.8), DistanceType::PointEdge, 1.0}}) {
    Vec9 x;
    x << c.p, a, b;
    auto D = [](const Vec9& y, int order) {
      PointSegmentDistance out;
      pointSegmentDistance(y.segment<3>(0), y.segment<3>(3), y.segment<3>(6), order, out);
      return out;
    };
    const PointSegmentDistance ps = D(x, 2);
    CAPTURE(distanceTypeName(c.type));
    CHECK(ps.type == c.type);
    CHECK(ps.D == doctest::Approx(c.D).epsilon(1e-14));
    CHECK(relErr(ps.grad, fdGradient([&](const Vec9& y) { return D(y, 0).D; }, x, h)) <= tol);
    CHECK(relErr(ps.hess, fdJacobian([&](const Vec9& y) { return Eigen::VectorXd(D(y, 1).grad); }, x, h)) <= tol);
    if (c.type == DistanceType::PointPoint) {  // the far end takes no part
      const int far = c.p.x() < 0 ? 6 : 3;
      CHECK(ps.grad.segment<3>(far).norm() == 0.0);
    }
  }
}
