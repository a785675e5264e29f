// findOverlaps of a contact model against all pairs: a pile of straight rods dropped at random in a
// small box over a floor plane (z = 0), many crossing each other and some through the floor. A
// straight rod has no self-overlap outside the models' neighbour exclusion, so the reference is every
// pair of edges of different rods closer than the sum of the radii, and every node closer to the
// plane than its radius.
#pragma once

#include "contact_checks.h"
#include <rodsim/testing/fake_world.h>

#include <rodsim/contact.h>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace rodsim::test {

// Segment-segment distance by dense sampling refined with a few clamped projections: an independent
// reference (no shared code with the models).
inline double referenceSegmentDistance(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1) {
  double best = std::numeric_limits<double>::infinity();
  auto pointSegment = [](const Vec3& p, const Vec3& a, const Vec3& b) {
    const Vec3 d = b - a;
    const double t = d.squaredNorm() > 0 ? std::clamp((p - a).dot(d) / d.squaredNorm(), 0.0, 1.0) : 0.0;
    return (p - (a + t * d)).norm();
  };
  // The minimum over s of the distance from p(s) to segment q is convex in s: golden-section search.
  double lo = 0, hi = 1;
  auto f = [&](double s) { return pointSegment(p0 + s * (p1 - p0), q0, q1); };
  for (int k = 0; k < 200; ++k) {
    const double m1 = lo + (hi - lo) * 0.381966, m2 = lo + (hi - lo) * 0.618034;
    if (f(m1) < f(m2)) hi = m2; else lo = m1;
  }
  best = std::min({f(0.5 * (lo + hi)), f(0), f(1)});
  return best;
}

using OverlapKey = std::tuple<std::string, int, std::string, int>;

// A rod-rod pair with its lesser (rod, edge) first; a rod-obstacle pair as it is.
inline OverlapKey overlapKey(const std::string& ra, int ea, const std::string& rb, int eb) {
  if (eb >= 0 && std::tie(rb, eb) < std::tie(ra, ea)) return {rb, eb, ra, ea};
  return {ra, ea, rb, eb};
}

// "r<k>" (appended piecewise: GCC 12's -Wrestrict misfires on pileRodName(k)).
inline std::string pileRodName(int k) {
  std::string s = "r";
  s += std::to_string(k);
  return s;
}

struct OverlapPile {
  ObstacleWorld world;
  std::vector<std::pair<OverlapKey, double>> expected;  // sorted by key
};

// `rods` straight rods of `nodes` nodes, 4 cm long, radius 2 mm, centres in a 6 x 6 x 2 cm box whose
// bottom is 1 cm below the floor.
inline void buildPile(OverlapPile& pile, int rods, int nodes, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  const double radius = 2e-3, length = 0.04;
  pile.world.body.name = "floor";
  pile.world.body.shape = Obstacle::Shape::Plane;
  std::vector<std::vector<Vec3>> points;
  for (int k = 0; k < rods; ++k) {
    const Vec3 c(0.03 * u(rng), 0.03 * u(rng), 0.01 * u(rng));
    Vec3 d(u(rng), u(rng), 0.3 * u(rng));
    d.normalize();
    testing::SpringChain::Options o;
    o.points = testing::line(nodes, c - 0.5 * length * d, c + 0.5 * length * d);
    o.radius = radius;
    points.push_back(o.points);
    pile.world.addRod<testing::SpringChain>(pileRodName(k), o);
  }
  for (int a = 0; a < rods; ++a)
    for (int b = a + 1; b < rods; ++b)
      for (int i = 0; i + 1 < nodes; ++i)
        for (int j = 0; j + 1 < nodes; ++j) {
          const double gap =
              referenceSegmentDistance(points[a][i], points[a][i + 1], points[b][j], points[b][j + 1]) - 2 * radius;
          if (gap < 0) pile.expected.push_back({overlapKey(pileRodName(a), i, pileRodName(b), j), gap});
        }
  for (int a = 0; a < rods; ++a)
    for (int i = 0; i < nodes; ++i)
      if (points[a][i].z() < radius)
        pile.expected.push_back({{pileRodName(a), i, "floor", -1}, points[a][i].z() - radius});
  std::sort(pile.expected.begin(), pile.expected.end());
}

// The contact's overlaps equal the reference: same pairs, each rod's own edge (node) indexes, gaps
// to 1e-9 m.
inline void checkOverlaps(const Contact& contact, OverlapPile& pile) {
  std::vector<Overlap> found;
  contact.findOverlaps(pile.world.q(), found);
  std::vector<std::pair<OverlapKey, double>> got;
  for (const Overlap& o : found) {
    CHECK(o.gap < 0);
    got.push_back({overlapKey(o.rod_a, o.edge_a, o.rod_b, o.edge_b), o.gap});
  }
  std::sort(got.begin(), got.end());
  REQUIRE(pile.expected.size() > 20);  // the pile does overlap, rod-rod and rod-floor
  CHECK(got.size() == pile.expected.size());
  for (std::size_t i = 0; i < std::min(got.size(), pile.expected.size()); ++i) {
    const auto& key = pile.expected[i].first;  // (rod a, edge a, rod b, edge b)
    CAPTURE(std::get<0>(key));
    CAPTURE(std::get<1>(key));
    CAPTURE(std::get<2>(key));
    CAPTURE(std::get<3>(key));
    CHECK(got[i].first == pile.expected[i].first);
    CHECK(std::abs(got[i].second - pile.expected[i].second) < 1e-9);
  }
}

}  // namespace rodsim::test
