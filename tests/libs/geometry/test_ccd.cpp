// CCD (rodsim/geometry/ccd.h, used by the ipc model and the swept check of the other models): edge-edge conservative advancement and node-plane crossing. The returned
// time is never later than the time the gap reaches its target (a fraction of the starting gap),
// hence never later than the time of impact; checked on crossing, parallel, nearly parallel and
// rotating edges, zero motion, touching at the start, and 5000 random motions against dense
// sampling of the exact segment distance.
#include <rodsim/geometry/ccd.h>

#include <doctest/doctest.h>

#include <Eigen/Geometry>

#include <algorithm>
#include <cmath>
#include <random>

using namespace rodsim::geometry;

namespace {

// Segment distance by an independent method: minimize over s on a fine grid, t by projection,
// then refine s by golden section around the best sample (the function of s is convex).
double segDistRef(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1) {
  auto at = [&](double s) {
    const Vec3 p = p0 + s * (p1 - p0), e = q1 - q0;
    const double L = e.squaredNorm();
    const double t = L > 0 ? std::clamp((p - q0).dot(e) / L, 0.0, 1.0) : 0.0;
    return (p - q0 - t * e).norm();
  };
  double lo = 0, hi = 1;
  for (int it = 0; it < 70; ++it) {  // ternary search: distance to a convex set along a segment is convex
    const double a = lo + (hi - lo) / 3, b = hi - (hi - lo) / 3;
    if (at(a) < at(b)) hi = b;
    else lo = a;
  }
  return std::min({at(0.5 * (lo + hi)), at(0), at(1)});
}

struct Motion {
  Vec3 p0, p1, q0, q1, dp0, dp1, dq0, dq1;
  double gap(double t, double R) const {
    return segDistRef(p0 + t * dp0, p1 + t * dp1, q0 + t * dq0, q1 + t * dq1) - R;
  }
  CcdResult ccd(double R, const CcdOptions& o) const { return edgeEdgeCcd(p0, p1, q0, q1, dp0, dp1, dq0, dq1, R, o); }
};

}  // namespace

TEST_CASE("CCD: edges crossing under translation stop at the target gap, before the time of impact") {
  // edge a along x at z = 1 moves down by 2; edge b along y at z = 0; R = 0.2: gap 0.8, closing
  // rate 2 -> impact at t = 0.4, target gap 0.08 at t = 0.36. Translation: V is the exact rate, so
  // conservative advancement lands on it in one iteration.
  const CcdOptions opt;
  const Motion m{Vec3(-1, 0, 1), Vec3(1, 0, 1), Vec3(0, -1, 0), Vec3(0, 1, 0),
                 Vec3(0, 0, -2), Vec3(0, 0, -2), Vec3::Zero(), Vec3::Zero()};
  const CcdResult r = m.ccd(0.2, opt);
  CHECK(r.gap0 == doctest::Approx(0.8));
  CHECK(r.t == doctest::Approx(0.36).epsilon(1e-12));
  CHECK(r.t < 0.4);
  CHECK(m.gap(r.t, 0.2) == doctest::Approx(0.08).epsilon(1e-9));
  // parallel edges approaching face to face: same numbers
  const Motion par{Vec3(0, 0, 1), Vec3(1, 0, 1), Vec3(0, 0, 0), Vec3(1, 0, 0),
                   Vec3(0, 0, -2), Vec3(0, 0, -2), Vec3::Zero(), Vec3::Zero()};
  CHECK(par.ccd(0.2, opt).t == doctest::Approx(0.36).epsilon(1e-12));
  // both move toward each other: closing rate 2 (1 each)
  const Motion both{Vec3(0, 0, 1), Vec3(1, 0, 1), Vec3(0, 0, 0), Vec3(1, 0, 0),
                    Vec3(0, 0, -1), Vec3(0, 0, -1), Vec3(0, 0, 1), Vec3(0, 0, 1)};
  CHECK(both.ccd(0.2, opt).t == doctest::Approx(0.36).epsilon(1e-12));
}

TEST_CASE("CCD: nearly parallel and rotating edges, receding edges, zero motion, touching at the start") {
  const CcdOptions opt;
  // nearly parallel edges, one tilting toward the other: the first end to close sets the time
  const Motion tilt{Vec3(0, 0, 1), Vec3(1, 0, 1.001), Vec3(0, 0, 0), Vec3(1, 0, 0),
                    Vec3(0, 0, -0.5), Vec3(0, 0, -1.5), Vec3::Zero(), Vec3::Zero()};
  // true: gap(t) = 1.001 - 1.5 t - 0.2 at the p1 end... first reaches 0 at t = 0.801/1.5 = 0.534
  const CcdResult r = tilt.ccd(0.2, opt);
  const double toi = (1.001 - 0.2) / 1.5;
  CHECK(r.t <= toi);
  CHECK(tilt.gap(r.t, 0.2) >= opt.gap_fraction * r.gap0 * (1 - 1e-12));
  CHECK(tilt.gap(r.t, 0.2) <= (opt.gap_fraction + 2 * opt.tolerance) * r.gap0);  // tight within tolerance
  MESSAGE("tilting parallel edges: t = ", r.t, " (impact ", toi, "), ", r.iterations, " iterations");
  // a spinning edge above another (rotation: V overestimates the closing rate; still safe and tight)
  Motion spin{Vec3(-1, 0, 0.5), Vec3(1, 0, 0.5), Vec3(0, -1, 0), Vec3(0, 1, 0),
              Vec3(0, 0, -0.5), Vec3(0, 0, 0.5), Vec3::Zero(), Vec3::Zero()};
  spin.dp0 = Vec3(0, 0, -1);
  spin.dp1 = Vec3(0, 0, 1);
  const CcdResult rs = spin.ccd(0.2, opt);
  CHECK(rs.t == 1);  // tilting about a point above the crossing: the gap shrinks from 0.3 to 0.15 only
  // receding and zero motion: full step
  const Motion away{Vec3(-1, 0, 1), Vec3(1, 0, 1), Vec3(0, -1, 0), Vec3(0, 1, 0),
                    Vec3(0, 0, 1), Vec3(0, 0, 1), Vec3::Zero(), Vec3::Zero()};
  CHECK(away.ccd(0.2, opt).t == 1);
  const Motion still{Vec3(-1, 0, 1), Vec3(1, 0, 1), Vec3(0, -1, 0), Vec3(0, 1, 0),
                     Vec3::Zero(), Vec3::Zero(), Vec3::Zero(), Vec3::Zero()};
  CHECK(still.ccd(0.2, opt).t == 1);
  CHECK(still.ccd(0.2, opt).iterations == 0);
  // touching (gap 0) or overlapping at the start: no step at all
  CHECK(still.ccd(1.0, opt).t == 0);
  CHECK(still.ccd(1.5, opt).t == 0);
  // touching up to 1e-12: a tiny but positive step
  const CcdResult tiny = away.ccd(1.0 - 1e-12, opt);
  CHECK(tiny.t == 1);
  Motion close = still;
  close.dp0 = close.dp1 = Vec3(0, 0, -1);
  const CcdResult rc = close.ccd(1.0 - 1e-12, opt);
  CHECK(rc.t > 0);
  CHECK(rc.t < 1e-11);
}

TEST_CASE("CCD: no false negatives on random motions (dense sampling of the exact distance)") {
  std::mt19937 rng(12345);
  std::uniform_real_distribution<double> U(-1, 1);
  auto rv = [&] { return Vec3(U(rng), U(rng), U(rng)); };
  const CcdOptions opt;
  const double R = 0.1;
  int limited = 0, checked = 0;
  double worst_ratio = 0, mean_tightness = 0;
#ifdef RODSIM_SANITIZED
  const int trials = 1000;  // the sanitizers check memory and UB; the optimized build samples 5000 motions
#else
  const int trials = 5000;
#endif
  for (int trial = 0; trial < trials; ++trial) {
    Motion m{rv(), rv(), rv(), rv(), 2 * rv(), 2 * rv(), 2 * rv(), 2 * rv()};
    if (trial % 4 == 0) {  // nearly parallel pairs
      const Vec3 e = rv();
      m.q1 = m.q0 + e + 1e-4 * rv();
      m.p1 = m.p0 + e;
    }
    if (trial % 7 == 0) m.dp0 = m.dp1 = m.dq0 = m.dq1 = Vec3::Zero();
    const double g0 = m.gap(0, R);
    if (!(g0 > 1e-6)) continue;
    ++checked;
    const CcdResult r = m.ccd(R, opt);
    REQUIRE(r.t >= 0);
    REQUIRE(r.t <= 1);
    // dense samples on [0, 1]: every sample before r.t keeps the gap above the target
    const int n = 200;
    double first_below = 2, first_impact = 2;
    for (int i = 0; i <= n; ++i) {
      const double t = double(i) / n;
      const double g = m.gap(t, R);
      if (g < opt.gap_fraction * g0 && first_below > 1) first_below = t;
      if (g <= 0 && first_impact > 1) first_impact = t;
    }
    // at r.t itself the gap is still above the target (up to round-off of the distance)
    CHECK(m.gap(r.t, R) >= opt.gap_fraction * g0 - 1e-9);
    CHECK(r.t <= first_below);
    CHECK(r.t < first_impact);
    if (r.t < 1) {
      ++limited;
      worst_ratio = std::max(worst_ratio, r.t / std::min(1.0, first_below));
      // how close to the target the gap came (0 = exactly on the target)
      mean_tightness += (m.gap(r.t, R) - opt.gap_fraction * g0) / g0;
    }
  }
  MESSAGE(checked, " motions, ", limited, " limited by CCD; max t / sampled target time ", worst_ratio,
          ", mean (gap(t) - target)/gap0 ", mean_tightness / std::max(1, limited));
  CHECK(limited > trials / 20);
}

TEST_CASE("CCD: node against a plane is exact") {
  const CcdOptions opt;
  // node 1 m above the plane z = 0, radius 0.2, moving down by 2: gap 0.8 -> target 0.08 at 0.36
  const CcdResult r = nodePlaneCcd(Vec3(0, 0, 1), Vec3(0.3, 0, -2), Vec3::Zero(), Vec3::UnitZ(), 0.2, opt);
  CHECK(r.t == doctest::Approx(0.36).epsilon(1e-14));
  CHECK(nodePlaneCcd(Vec3(0, 0, 1), Vec3(0, 0, 1), Vec3::Zero(), Vec3::UnitZ(), 0.2, opt).t == 1);
  CHECK(nodePlaneCcd(Vec3(0, 0, 1), Vec3(0, 0, -0.1), Vec3::Zero(), Vec3::UnitZ(), 0.2, opt).t == 1);
  CHECK(nodePlaneCcd(Vec3(0, 0, 0.2), Vec3(0, 0, 1), Vec3::Zero(), Vec3::UnitZ(), 0.2, opt).t == 0);
}

TEST_CASE("CCD: node against a sphere and a cylinder is exact") {
  const CcdOptions opt;
  // sphere of radius 1 at the origin, node of radius 0.5 at height 3 moving by (0.3, 0, -4):
  // gap 1.5 -> target 0.15, reached when |x + t dx| = 1.65
  const Vec3 x(0, 0, 3), dx(0.3, 0, -4);
  const CcdResult s = nodeRoundCcd(x, dx, Vec3::Zero(), Vec3::Zero(), 1.0, 0.5, opt);
  CHECK(s.gap0 == doctest::Approx(1.5));
  CHECK((x + s.t * dx).norm() == doctest::Approx(1.65).epsilon(1e-14));
  // cylinder along y: motion along the axis changes nothing
  const Vec3 dy(0.3, 7.0, -4);
  const CcdResult c = nodeRoundCcd(x, dy, Vec3::Zero(), Vec3::UnitY(), 1.0, 0.5, opt);
  CHECK(c.t == doctest::Approx(s.t).epsilon(1e-14));
  // moving away, passing by outside the target, and starting in contact
  CHECK(nodeRoundCcd(x, Vec3(0, 0, 1), Vec3::Zero(), Vec3::Zero(), 1.0, 0.5, opt).t == 1);
  CHECK(nodeRoundCcd(x, Vec3(10, 0, -2.5), Vec3::Zero(), Vec3::Zero(), 1.0, 0.5, opt).t == 1);
  CHECK(nodeRoundCcd(Vec3(0, 0, 1.4), dx, Vec3::Zero(), Vec3::Zero(), 1.0, 0.5, opt).t == 0);
  // a short step that stops before the target: t = 1
  CHECK(nodeRoundCcd(x, 0.1 * dx, Vec3::Zero(), Vec3::Zero(), 1.0, 0.5, opt).t == 1);
}
