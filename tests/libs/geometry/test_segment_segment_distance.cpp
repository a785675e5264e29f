// Segment-segment distance (Tong et al. 2023, Eqs. 10-13): Lumelsky classification, D with gradient and
// Hessian in the three regimes, the line-line primitive, |e_a x e_b|^2, and the closest-point rule
// of alart-curnier. Derivatives against central finite differences (the checks moved from
// contact_imc keep their relative 1e-6; the new ones use centralTolerance(h)).
#include "geometry_checks.h"

#include <rodsim/geometry/segment_segment_distance.h>

#include <doctest/doctest.h>

#include <cmath>
#include <random>

using namespace rodsim::geometry;
using namespace rodsim::geometry::test;

namespace {

EdgeDistance dist(const Vec12& x, int order) {
  EdgeDistance d;
  edgeDistance(x.segment<3>(0), x.segment<3>(3), x.segment<3>(6), x.segment<3>(9), order, d);
  return d;
}

// Gradient and Hessian of D at x against finite differences; the regime must not change within
// the stencil.
void checkDistance(const Vec12& x, DistanceType expected, double h = 1e-6) {
  const EdgeDistance d = dist(x, 2);
  CAPTURE(distanceTypeName(d.type));
  REQUIRE(d.type == expected);
  for (int i = 0; i < 12; ++i)
    for (double s : {-h, h}) {
      Vec12 y = x;
      y[i] += s;
      REQUIRE(dist(y, 0).type == expected);
    }
  // D itself against the brute-force segment distance
  CHECK(d.D == doctest::Approx(segmentDistance(x.segment<3>(0), x.segment<3>(3), x.segment<3>(6), x.segment<3>(9)))
                   .epsilon(1e-12));
  const Vec12 g = fdGradient([](const Vec12& y) { return dist(y, 0).D; }, x, h);
  const Eigen::MatrixXd H = fdJacobian([](const Vec12& y) { return Eigen::VectorXd(dist(y, 1).grad); }, x, h);
  const double eg = relErr(d.grad, g), eh = relErr(d.hess, H);
  MESSAGE(distanceTypeName(expected), ": gradient rel. error ", eg, ", Hessian rel. error ", eh);
  CHECK(eg <= 1e-6);
  CHECK(eh <= 1e-6);
  CHECK((d.hess - d.hess.transpose()).norm() <= 1e-12 * d.hess.norm());
}

}  // namespace

TEST_CASE("Lumelsky classification: point-point, point-edge, edge-edge, parallel edges") {
  // crossing edges: interior closest points
  CHECK(lumelsky({-1, 0, 0}, {1, 0, 0}, {0.2, -1, 1}, {-0.1, 1, 1}).type() == DistanceType::EdgeEdge);
  // the end of edge 2 above the middle of edge 1
  CHECK(lumelsky({-1, 0, 0}, {1, 0, 0}, {0.3, 0, 1}, {0.5, 0.2, 3}).type() == DistanceType::PointEdge);
  // end to end
  CHECK(lumelsky({0, 0, 0}, {1, 0, 0}, {1.5, 0.3, 0.2}, {2.5, 1, 0}).type() == DistanceType::PointPoint);
  // exactly parallel, overlapping: no unique closest points; pinned -> point-edge at the line distance
  const ClosestPoints par = lumelsky({0, 0, 0}, {1, 0, 0}, {0.5, 0, 2}, {1.5, 0, 2});
  CHECK(par.parallel);
  CHECK(par.type() == DistanceType::PointEdge);
  CHECK(segmentDistance({0, 0, 0}, {1, 0, 0}, {0.5, 0, 2}, {1.5, 0, 2}) == doctest::Approx(2.0));
  // exactly parallel, disjoint along the line: point-point
  CHECK(lumelsky({0, 0, 0}, {1, 0, 0}, {2, 0, 1}, {3, 0, 1}).type() == DistanceType::PointPoint);
  // anti-parallel overlapping
  CHECK(segmentDistance({0, 0, 0}, {1, 0, 0}, {1.5, 0, 0.5}, {0.2, 0, 0.5}) == doctest::Approx(0.5));
}

TEST_CASE("distance gradient and Hessian by finite differences in all three regimes") {
  SUBCASE("edge-edge") { checkDistance(pack({-1, 0, 0}, {1, 0.1, 0}, {0.2, -1, 2.1}, {-0.1, 1, 1.9}), DistanceType::EdgeEdge); }
  SUBCASE("edge-edge near the switch to point-edge (s = 1e-3 from the end)") {
    // edge 2 crosses above edge 1 at s ~ 0.999
    checkDistance(pack({0, 0, 0}, {1, 0, 0}, {0.999, -1, 2}, {0.999, 1, 2.2}), DistanceType::EdgeEdge);
  }
  SUBCASE("edge-edge, nearly parallel (1e-2 rad)") {
    checkDistance(pack({0, 0, 0}, {1, 0, 0}, {0.3, -0.005, 2}, {1.3, 0.005, 2}), DistanceType::EdgeEdge);
  }
  SUBCASE("point-edge") { checkDistance(pack({-1, 0, 0}, {1, 0, 0}, {0.3, 0.1, 1}, {0.5, 0.2, 3}), DistanceType::PointEdge); }
  SUBCASE("point-edge, point on edge i") { checkDistance(pack({0.3, 0.1, 1}, {0.5, 0.2, 3}, {-1, 0, 0}, {1, 0, 0}), DistanceType::PointEdge); }
  SUBCASE("point-edge near the switch to edge-edge") {
    // q0 is 1e-3 beyond the edge-edge region (t would be -1e-3)
    checkDistance(pack({-1, 0, 0}, {1, 0, 0}, {0.3, 0, 1}, {0.3, 2, 1 + 2e-3}), DistanceType::PointEdge);
  }
  SUBCASE("point-edge from exactly parallel edges") {
    checkDistance(pack({0, 0, 0}, {1, 0, 0}, {0.5, 0, 2}, {1.5, 0, 2}), DistanceType::PointEdge);
  }
  SUBCASE("point-point") { checkDistance(pack({0, 0, 0}, {1, 0, 0}, {1.5, 0.3, 0.2}, {2.5, 1, 0}), DistanceType::PointPoint); }
  SUBCASE("point-point near the switch to point-edge") {
    checkDistance(pack({0, 0, 0}, {1, 0, 0}, {1.001, 0, 1}, {1.5, 0, 2}), DistanceType::PointPoint);
  }
}

TEST_CASE("line-line squared distance (Eq. 13): gradient and Hessian by finite differences") {
  std::mt19937 rng(13);
  std::uniform_real_distribution<double> u(-0.5, 0.5);
  const double h = 1e-5, tol = centralTolerance(h);
  auto g = [](const Vec12& y) {
    double v;
    edgeEdgeSq(y.segment<3>(0), y.segment<3>(3), y.segment<3>(6), y.segment<3>(9), v, nullptr, nullptr);
    return v;
  };
  auto dg = [](const Vec12& y) {
    double v;
    Vec12 d;
    edgeEdgeSq(y.segment<3>(0), y.segment<3>(3), y.segment<3>(6), y.segment<3>(9), v, &d, nullptr);
    return Eigen::VectorXd(d);
  };
  for (int trial = 0; trial < 10; ++trial) {
    // two edges of length ~2 crossing at about a right angle, about one unit apart along z
    Vec12 x = pack(Vec3(-1, 0, 0), Vec3(1, 0, 0), Vec3(0, -1, 1), Vec3(0, 1, 1));
    for (int i = 0; i < 12; ++i) x[i] += u(rng);
    double v;
    Vec12 d;
    Mat12 H;
    edgeEdgeSq(x.segment<3>(0), x.segment<3>(3), x.segment<3>(6), x.segment<3>(9), v, &d, &H);
    const Vec3 n = (x.segment<3>(3) - x.segment<3>(0)).cross(x.segment<3>(9) - x.segment<3>(6)).normalized();
    CHECK(v == doctest::Approx(std::pow(n.dot(x.segment<3>(6) - x.segment<3>(0)), 2)).epsilon(1e-12));
    CAPTURE(trial);
    CHECK(relErr(d, fdGradient(g, x, h)) <= tol);
    CHECK(relErr(H, fdJacobian(dg, x, h)) <= tol);
  }
}

TEST_CASE("distance derivatives in the degenerate configurations, with the tolerance of the FD step") {
  const double h = 1e-6, tol = centralTolerance(h);
  struct Case {
    const char* name;
    Vec12 x;
    DistanceType type;
  };
  for (const Case& c : {
           Case{"parallel, overlapping", pack({0, 0, 0}, {1, 0, 0}, {0.5, 0.3, 1}, {1.5, 0.3, 1}), DistanceType::PointEdge},
           Case{"anti-parallel, overlapping", pack({0, 0, 0}, {1, 0, 0}, {1.5, 0, 1}, {0.2, 0, 1}), DistanceType::PointEdge},
           Case{"parallel, disjoint along the line", pack({0, 0, 0}, {1, 0, 0}, {2, 0, 1}, {3, 0, 1}), DistanceType::PointPoint},
           Case{"closest point at an end of one edge", pack({-1, 0, 0}, {1, 0, 0}, {0.3, 0.1, 1}, {0.5, 0.2, 3}), DistanceType::PointEdge},
           Case{"closest points at an end of both edges", pack({0, 0, 0}, {1, 0, 0}, {1.5, 0.3, 0.2}, {2.5, 1, 0}), DistanceType::PointPoint}}) {
    CAPTURE(c.name);
    const EdgeDistance d = dist(c.x, 2);
    REQUIRE(d.type == c.type);
    CHECK(relErr(d.grad, fdGradient([](const Vec12& y) { return dist(y, 0).D; }, c.x, h)) <= tol);
    CHECK(relErr(d.hess, fdJacobian([](const Vec12& y) { return Eigen::VectorXd(dist(y, 1).grad); }, c.x, h)) <= tol);
  }
}

TEST_CASE("|e_a x e_b|^2: gradient and Hessian by finite differences (from contact_ipc)") {
  const Vec12 x = pack(Vec3(0, 0, 0), Vec3(1, 0.2, 0.1), Vec3(0.3, -0.5, 0.4), Vec3(0.5, 0.6, 0.2));
  Vec12 g;
  Mat12 H;
  const double c = edgeCrossSquared(x.segment<3>(0), x.segment<3>(3), x.segment<3>(6), x.segment<3>(9), &g, &H);
  const Vec3 ea = x.segment<3>(3) - x.segment<3>(0), eb = x.segment<3>(9) - x.segment<3>(6);
  CHECK(c == doctest::Approx(ea.cross(eb).squaredNorm()));
  auto f = [](const Vec12& y) {
    return edgeCrossSquared(y.segment<3>(0), y.segment<3>(3), y.segment<3>(6), y.segment<3>(9), nullptr, nullptr);
  };
  auto gf = [](const Vec12& y) {
    Vec12 gg;
    edgeCrossSquared(y.segment<3>(0), y.segment<3>(3), y.segment<3>(6), y.segment<3>(9), &gg, nullptr);
    return Eigen::VectorXd(gg);
  };
  CHECK(relErr(g, fdGradient(f, x, 1e-6)) < 1e-8);
  CHECK(relErr(H, fdJacobian(gf, x, 1e-6)) < 1e-8);
}

TEST_CASE("closest points of segments (the alart-curnier rule, from contact_alart_curnier)") {
  double s, t;
  closestSegmentPoints(Vec3(0, 0, 0), Vec3(2, 0, 0), Vec3(1, -1, 1), Vec3(1, 1, 1), s, t);
  CHECK(s == doctest::Approx(0.5));
  CHECK(t == doctest::Approx(0.5));
  closestSegmentPoints(Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(3, 1, 0), Vec3(3, 2, 0), s, t);
  CHECK(s == doctest::Approx(1.0));
  CHECK(t == doctest::Approx(0.0));
}

TEST_CASE("the two closest-point rules give the same distance away from parallel edges") {
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int trial = 0; trial < 200; ++trial) {
    Vec3 p[4];
    for (Vec3& v : p) v = Vec3(u(rng), u(rng), u(rng));
    const ClosestPoints cp = lumelsky(p[0], p[1], p[2], p[3]);
    if (cp.parallel) continue;
    double s, t;
    closestSegmentPoints(p[0], p[1], p[2], p[3], s, t);
    const double D = ((p[0] + s * (p[1] - p[0])) - (p[2] + t * (p[3] - p[2]))).norm();
    CAPTURE(trial);
    CHECK(D == doctest::Approx(segmentDistance(p[0], p[1], p[2], p[3])).epsilon(1e-12));
  }
}
