// RodEdges and NodeSnapshot (rodsim/geometry/rod_edges.h), the edge table and broad phase of
// contact_imc and contact_spring_dashpot: the table (DOFs, node indexes, arc lengths, the radius
// check), closePairs against all pairs by brute force on random crumpled rods (with an exclusion by
// arc length), and the Verlet test of NodeSnapshot.
#include <rodsim/geometry/rod_edges.h>
#include <rodsim/testing/fake_world.h>

#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <set>

using namespace rodsim;
using rodsim::geometry::RodEdge;
using rodsim::geometry::RodEdges;
using rodsim::testing::SpringChain;

namespace {

SpringChain::Options walk(std::mt19937& rng, int nodes, double step, double radius) {
  std::normal_distribution<double> N(0, 1);
  SpringChain::Options o;
  Vec3 p(N(rng) * step, N(rng) * step, N(rng) * step), dir(N(rng), N(rng), N(rng));
  for (int i = 0; i < nodes; ++i) {
    o.points.push_back(p);
    dir = (dir.normalized() + 0.6 * Vec3(N(rng), N(rng), N(rng))).normalized();
    p += step * dir;
  }
  o.radius = radius;
  return o;
}

}  // namespace

TEST_CASE("RodEdges: the table of two rods") {
  std::mt19937 rng(1);
  SpringChain a("a", walk(rng, 5, 0.01, 0.002)), b("b", walk(rng, 4, 0.01, 0.003));
  b.setDofOffset(a.numDofs());
  RodEdges t;
  t.bind({&a, &b}, "edge", "why");
  REQUIRE(t.edges().size() == 7);
  REQUIRE(t.nodeDofs().size() == 9);
  CHECK(t.maxRadius() == 0.003);
  CHECK(t.minRadius() == 0.002);
  const RodEdge& e = t.edges()[5];  // rod b, edge 1
  CHECK(e.rod == 1);
  CHECK(e.index == 1);
  CHECK(e.x0 == b.globalPositionDof(1));
  CHECK(e.x1 == b.globalPositionDof(2));
  CHECK(t.nodeDofs()[e.n0] == e.x0);
  CHECK(t.nodeDofs()[e.n1] == e.x1);
  CHECK(e.s1 - e.s0 == doctest::Approx((b.options().points[2] - b.options().points[1]).norm()));
  CHECK(geometry::arcGap(t.edges()[0], t.edges()[1]) == doctest::Approx(0.0));
  CHECK(geometry::arcGap(t.edges()[3], t.edges()[0]) > 0);
}

TEST_CASE("RodEdges: a non-positive radius is refused, naming the rod and the edge") {
  std::mt19937 rng(2);
  SpringChain::Options o = walk(rng, 3, 0.01, 0.0);
  SpringChain a("flat", o);
  RodEdges t;
  try {
    t.bind({&a}, "element", "it needs one");
    FAIL("no ParamError");
  } catch (const ParamError& err) {
    CHECK(std::string(err.what()).find("rod 'flat' has a non-positive radius on element 0; it needs one") !=
          std::string::npos);
  }
}

TEST_CASE("RodEdges::closePairs = all pairs closer than r_a + r_b + 2 pad, in order, exclusion applied") {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 20; ++trial) {
    CAPTURE(trial);
    SpringChain a("a", walk(rng, 30, 0.004, 0.003)), b("b", walk(rng, 25, 0.004, 0.004));
    b.setDofOffset(a.numDofs());
    RodEdges t;
    t.bind({&a, &b}, "edge", "why");
    Vec q(a.numDofs() + b.numDofs());
    for (int i = 0; i < a.numNodes(); ++i) q.segment<3>(a.globalPositionDof(i)) = a.options().points[i];
    for (int i = 0; i < b.numNodes(); ++i) q.segment<3>(b.globalPositionDof(i)) = b.options().points[i];
    const double pad = 0.002;
    auto excluded = [](const RodEdge& A, const RodEdge& B) {
      return A.rod == B.rod && geometry::arcGap(A, B) <= 2 * (A.radius + B.radius);
    };
    std::vector<std::pair<int, int>> found;
    t.closePairs(q, pad, excluded, [&](int i, int j, double d) {
      if (d < t.edges()[i].radius + t.edges()[j].radius + 2 * pad) found.emplace_back(i, j);
    });
    std::vector<std::pair<int, int>> brute;
    const auto& E = t.edges();
    for (int i = 0; i < static_cast<int>(E.size()); ++i)
      for (int j = i + 1; j < static_cast<int>(E.size()); ++j) {
        if (excluded(E[i], E[j])) continue;
        const double d = geometry::segmentDistance(q.segment<3>(E[i].x0), q.segment<3>(E[i].x1),
                                                   q.segment<3>(E[j].x0), q.segment<3>(E[j].x1));
        if (d < E[i].radius + E[j].radius + 2 * pad) brute.emplace_back(i, j);
      }
    CHECK(!brute.empty());
    CHECK(found == brute);
    CHECK(t.numBoxPairs() >= static_cast<int>(found.size()));
  }
}

TEST_CASE("NodeSnapshot: moved beyond lim") {
  Vec q = Vec::Zero(9);
  const std::vector<int> dofs = {0, 6};
  geometry::NodeSnapshot s;
  CHECK(s.empty());
  s.take(q, dofs);
  CHECK(!s.empty());
  q[7] = 0.5;  // node 1 moves 0.5
  q[3] = 5.0;  // not a listed node
  CHECK(!s.movedBeyond(q, dofs, 0.5));
  CHECK(s.movedBeyond(q, dofs, 0.49));
  CHECK(s.node(1) == Vec3(0, 0, 0));
  s.clear();
  CHECK(s.empty());
}
