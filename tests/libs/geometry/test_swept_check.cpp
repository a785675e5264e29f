// SweptCrossingCheck (rodsim/geometry/swept_check.h), the continuous check of an accepted step:
// against brute-force time sampling of the exact segment distance along q0 + t (q1 - q0) on random
// motions of two rods (no false negatives; every crossing reported is real, at a time no later than
// the sampled one), a rotation (an arc, not a translation), the exclusion callback, a pair already
// overlapping at the start, and a node passing through a plane and through a sphere.
#include <rodsim/geometry/segment_segment_distance.h>
#include <rodsim/geometry/swept_check.h>
#include <rodsim/testing/fake_world.h>

#include <doctest/doctest.h>

#include <Eigen/Geometry>

#include <algorithm>
#include <cmath>
#include <random>

using namespace rodsim;
using rodsim::geometry::SweptCrossingCheck;
using rodsim::testing::SpringChain;

namespace {

struct TwoRods {
  SpringChain a, b;
  std::vector<Rod*> rods;
  TwoRods(int nodes, double radius)
      : a("a", options(nodes, radius, Vec3(-0.5, 0, 0), Vec3(0.5, 0, 0))),
        b("b", options(nodes, radius, Vec3(0, -0.5, 0.2), Vec3(0, 0.5, 0.2))) {
    b.setDofOffset(a.numDofs());
    rods = {&a, &b};
  }
  static SpringChain::Options options(int n, double r, Vec3 p, Vec3 q) {
    SpringChain::Options o;
    for (int i = 0; i < n; ++i) o.points.push_back(p + (q - p) * double(i) / (n - 1));
    o.radius = r;
    return o;
  }
  int dofs() const { return a.numDofs() + b.numDofs(); }
};

auto noExclusion = [](const SweptCrossingCheck::Edge&, const SweptCrossingCheck::Edge&) { return false; };
auto sameRod = [](const SweptCrossingCheck::Edge& e, const SweptCrossingCheck::Edge& f) { return e.rod == f.rod; };

Vec3 at(const Vec& q, int x) { return q.segment<3>(x); }

}  // namespace

TEST_CASE("swept check: random motions against brute-force time sampling") {
  const double r = 0.02, R = SweptCrossingCheck::kCrossingFraction * 2 * r;
  TwoRods w(4, r);
  SweptCrossingCheck check;
  check.bind(w.rods, {});
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> U(-1, 1);
  int crossings = 0, trials = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    Vec q0(w.dofs()), q1(w.dofs());
    for (int i = 0; i < w.dofs(); ++i) {
      q0[i] = 0.5 * U(rng);
      q1[i] = q0[i] + 0.6 * U(rng);
    }
    // brute force: every pair of edges of different rods above R at t = 0, sampled on [0, 1]
    double first = 2;
    bool apart = false;
    const auto& edges = check.edges();
    for (std::size_t i = 0; i < edges.size(); ++i)
      for (std::size_t j = i + 1; j < edges.size(); ++j) {
        const auto &A = edges[i], &B = edges[j];
        if (A.rod == B.rod) continue;
        auto dist = [&](double t) {
          const Vec q = q0 + t * (q1 - q0);
          return geometry::segmentDistance(at(q, A.x0), at(q, A.x1), at(q, B.x0), at(q, B.x1));
        };
        if (!(dist(0) > R)) continue;
        apart = true;
        for (int k = 1; k <= 400; ++k)
          if (dist(k / 400.0) < R) {
            first = std::min(first, k / 400.0);
            break;
          }
      }
    if (!apart) continue;
    ++trials;
    Crossing c;
    const bool found = check.find(q0, q1, sameRod, c);
    if (first <= 1) {
      ++crossings;
      CHECK(found);  // no false negative
    }
    if (found) {
      // a real crossing: the pair reported is within the tolerance of R at the reported time (1e-6
      // of its starting margin; looser, 1e-3, where the advancement ran out of its 200 iterations)
      int ia = -1, ib = -1;
      for (const auto& e : edges) {
        if (e.rod == 0 && e.index == c.edge_a) ia = e.id;
        if (e.rod == 1 && e.index == c.edge_b) ib = e.id;
      }
      REQUIRE(ia >= 0);
      REQUIRE(ib >= 0);
      const Vec q = q0 + c.time_fraction * (q1 - q0);
      const auto &A = edges[ia], &B = edges[ib];
      const double d = geometry::segmentDistance(at(q, A.x0), at(q, A.x1), at(q, B.x0), at(q, B.x1));
      CHECK(d <= R + 1e-3 * c.distance);
      CHECK(d >= R - 1e-12);
      CHECK(c.time_fraction >= 0);
      CHECK(c.time_fraction < 1);
      CHECK(c.rod_a == "a");
      CHECK(c.rod_b == "b");
    }
  }
  MESSAGE(trials, " motions, ", crossings, " crossings by sampling");
  CHECK(crossings > 100);
}

TEST_CASE("swept check: a rod tip sweeping across another along an arc; exclusion; overlapping at the start") {
  const double r = 0.01;
  TwoRods w(5, r);
  SweptCrossingCheck check;
  check.bind(w.rods, {});
  // rod a from the origin along x, rotated by 0.6 rad about z within the step (tip moves ~0.6 m);
  // rod b stands along z at angle 0.3 rad, 0.9 m from the axis: only the tip region reaches it.
  Vec q0(w.dofs()), q1(w.dofs());
  for (int n = 0; n < 5; ++n) {
    const Vec3 p(0.25 * n, 0, 0);
    q0.segment<3>(w.a.globalPositionDof(n)) = p;
    q1.segment<3>(w.a.globalPositionDof(n)) = Eigen::AngleAxisd(0.6, Vec3::UnitZ()) * p;
    const Vec3 s = 0.9 * Vec3(std::cos(0.3), std::sin(0.3), 0) + Vec3(0, 0, -0.2 + 0.1 * n);
    q0.segment<3>(w.b.globalPositionDof(n)) = s;
    q1.segment<3>(w.b.globalPositionDof(n)) = s;
  }
  Crossing c;
  REQUIRE(check.find(q0, q1, sameRod, c));
  CHECK(c.rod_a == "a");
  CHECK(c.edge_a == 3);  // from 0.75 m to 1 m: the edge that passes 0.9 m from the axis
  CHECK(c.rod_b == "b");
  // The linear interpolation of the nodes is a chord, not the arc: the crossing is near 0.3/0.6 of the step.
  CHECK(c.time_fraction > 0.3);
  CHECK(c.time_fraction < 0.7);
  // excluded: nothing (another exclusion: bound again)
  check.bind(w.rods, {});
  CHECK_FALSE(check.find(q0, q1, [](const auto&, const auto&) { return true; }, c));
  check.bind(w.rods, {});
  // a half-turn less: no crossing
  for (int n = 0; n < 5; ++n)
    q1.segment<3>(w.a.globalPositionDof(n)) = Eigen::AngleAxisd(0.2, Vec3::UnitZ()) * Vec3(0.25 * n, 0, 0);
  CHECK_FALSE(check.find(q0, q1, noExclusion, c));
  // already closer than the crossing distance at the start (an allowed overlap): not reported
  Vec q2 = q0;
  for (int n = 0; n < 5; ++n) q2.segment<3>(w.b.globalPositionDof(n)) = Vec3(0.6, 0.2 * n - 0.4, 0.005);
  CHECK_FALSE(check.find(q2, q2, noExclusion, c));
}

TEST_CASE("swept check: a node through a plane and through a sphere") {
  const double r = 0.01;
  TwoRods w(3, r);
  Obstacle plane;
  plane.name = "floor";
  plane.origin = Vec3(0, 0, -1);
  Obstacle ball;
  ball.name = "ball";
  ball.shape = Obstacle::Shape::Sphere;
  ball.center = Vec3(3, 0, 0);
  ball.radius = 0.1;
  SweptCrossingCheck check;
  check.bind(w.rods, {&plane, &ball});
  Vec q0(w.dofs());
  w.a.initialDofs(q0.segment(0, w.a.numDofs()));
  w.b.initialDofs(q0.segment(w.a.numDofs(), w.b.numDofs()));
  Crossing c;
  Vec q1 = q0;
  CHECK_FALSE(check.find(q0, q1, sameRod, c));
  q1.segment<3>(w.b.globalPositionDof(2)) += Vec3(0, 0, -1.5);  // b's last node through the floor
  REQUIRE(check.find(q0, q1, sameRod, c));
  CHECK(c.rod_a == "b");
  CHECK(c.edge_a == 2);
  CHECK(c.edge_b == -1);
  CHECK(c.rod_b == "floor");
  CHECK(c.time_fraction == doctest::Approx((1.2 - 0.5 * r) / 1.5));
  // a's first node straight through the ball and out again within the step
  q1 = q0;
  q1.segment<3>(w.a.globalPositionDof(0)) = Vec3(6, 0, 0) - q0.segment<3>(w.a.globalPositionDof(0));
  q1.segment<3>(w.a.globalPositionDof(0)) = q0.segment<3>(w.a.globalPositionDof(0)) + Vec3(7, 0, 0);
  REQUIRE(check.find(q0, q1, sameRod, c));
  CHECK(c.rod_b == "ball");
  CHECK(c.rod_a == "a");
  CHECK(c.edge_a == 0);
}
