// segmentNormal (segment_normal.h): the closest-point normal and the envelope-theorem gradient
// weights dD/dx_k = w_k n against edgeDistance()'s analytic gradient and against central finite
// differences of the distance, on random pairs (interior, clamped and parallel closest points),
// and the normal of intersecting centre lines.
#include "geometry_checks.h"

#include <rodsim/geometry/segment_normal.h>

#include <doctest/doctest.h>

#include <random>

using namespace rodsim::geometry;
using namespace rodsim::geometry::test;

namespace {

Vec12 gradientOf(const SegmentNormal& sn) {
  Vec12 g;
  for (int k = 0; k < 4; ++k) g.segment<3>(3 * k) = sn.w[k] * sn.n;
  return g;
}

double distanceOf(const Vec12& x) {
  return segmentDistance(x.segment<3>(0), x.segment<3>(3), x.segment<3>(6), x.segment<3>(9));
}

}  // namespace

TEST_CASE("segmentNormal: distance, normal and gradient weights equal edgeDistance's on random pairs") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  int checked = 0;
  for (int trial = 0; trial < 500; ++trial) {
    Vec12 x;
    for (int i = 0; i < 12; ++i) x[i] = u(rng);
    SegmentNormal sn;
    segmentNormal(x.segment<3>(0), x.segment<3>(3), x.segment<3>(6), x.segment<3>(9), sn);
    EdgeDistance ed;
    edgeDistance(x.segment<3>(0), x.segment<3>(3), x.segment<3>(6), x.segment<3>(9), 1, ed);
    CHECK(sn.D == doctest::Approx(ed.D).epsilon(1e-12));
    CHECK(std::abs(sn.n.norm() - 1) <= 1e-14);
    CHECK((gradientOf(sn) - ed.grad).norm() <= 1e-10 * (1 + ed.grad.norm()));
    // central differences of the plain distance, where it is smooth at the scale of h
    if (sn.D > 1e-3) {
      const double h = 1e-7;
      const Vec12 g = fdGradient(distanceOf, x, h);
      CHECK((gradientOf(sn) - g).norm() <= centralTolerance(h) * (1 + g.norm()));
      ++checked;
    }
  }
  CHECK(checked > 400);
}

TEST_CASE("segmentNormal: parallel segments and intersecting centre lines") {
  // parallel, one above the other at distance 0.3: normal along z, weights sum to zero per segment
  SegmentNormal sn;
  segmentNormal({0, 0, 0}, {1, 0, 0}, {0.5, 0, 0.3}, {1.5, 0, 0.3}, sn);
  CHECK(sn.D == doctest::Approx(0.3).epsilon(1e-14));
  CHECK((sn.n - Vec3(0, 0, 1)).norm() <= 1e-14);
  CHECK(sn.w[0] + sn.w[1] == doctest::Approx(-1));
  CHECK(sn.w[2] + sn.w[3] == doctest::Approx(1));
  // crossing centre lines (D = 0): the normal is along e1 x e2
  segmentNormal({-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, sn);
  CHECK(sn.D == 0);
  CHECK(std::abs(std::abs(sn.n.z()) - 1) <= 1e-14);
  // collinear overlapping: some unit normal perpendicular to the segments
  segmentNormal({0, 0, 0}, {1, 0, 0}, {0.5, 0, 0}, {2, 0, 0}, sn);
  CHECK(sn.D == 0);
  CHECK(std::abs(sn.n.x()) <= 1e-14);
  CHECK(std::abs(sn.n.norm() - 1) <= 1e-14);
}

TEST_CASE("segmentDistanceHessian: the closed form equals edgeDistance's Hessian and central differences") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  int by_free[3] = {0, 0, 0};
  for (int trial = 0; trial < 600; ++trial) {
    Vec12 x;
    for (int i = 0; i < 12; ++i) x[i] = u(rng);
    if (trial % 7 == 0) x.segment<3>(9) = x.segment<3>(6) + 0.8 * (x.segment<3>(3) - x.segment<3>(0));  // parallel
    SegmentNormal sn;
    segmentNormal(x.segment<3>(0), x.segment<3>(3), x.segment<3>(6), x.segment<3>(9), sn);
    if (sn.D < 1e-3) continue;
    Mat12 H;
    segmentDistanceHessian(x.segment<3>(0), x.segment<3>(3), x.segment<3>(6), x.segment<3>(9), sn, H);
    EdgeDistance ed;
    edgeDistance(x.segment<3>(0), x.segment<3>(3), x.segment<3>(6), x.segment<3>(9), 2, ed);
    CAPTURE(trial);
    CHECK((H - ed.hess).norm() <= 1e-9 * (1 + ed.hess.norm()));
    ++by_free[int(sn.s_free) + int(sn.t_free)];
  }
  MESSAGE("pairs with 0, 1, 2 interior parameters: ", by_free[0], ", ", by_free[1], ", ", by_free[2]);
  CHECK(by_free[0] > 20);
  CHECK(by_free[1] > 20);
  CHECK(by_free[2] > 20);
  // and against central differences of the gradient on an interior (edge-edge) pair
  Vec12 x;
  x << -1, 0, 0, 1, 0.1, 0, 0.2, -1, 0.5, -0.1, 1, 0.45;
  auto grad = [](const Vec12& y) {
    SegmentNormal s;
    segmentNormal(y.segment<3>(0), y.segment<3>(3), y.segment<3>(6), y.segment<3>(9), s);
    Eigen::VectorXd g(12);
    for (int k = 0; k < 4; ++k) g.segment<3>(3 * k) = s.w[k] * s.n;
    return g;
  };
  SegmentNormal sn;
  segmentNormal(x.segment<3>(0), x.segment<3>(3), x.segment<3>(6), x.segment<3>(9), sn);
  REQUIRE(sn.s_free);
  REQUIRE(sn.t_free);
  Mat12 H;
  segmentDistanceHessian(x.segment<3>(0), x.segment<3>(3), x.segment<3>(6), x.segment<3>(9), sn, H);
  const double h = 1e-6;
  const Eigen::MatrixXd J = fdJacobian(grad, x, h);
  CHECK(relErr(H, J) <= centralTolerance(h));
}
