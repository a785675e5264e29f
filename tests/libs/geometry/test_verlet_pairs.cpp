// VerletPairs (rodsim/geometry/verlet_pairs.h), the reusable broad phase of contact_imc, contact_ipc
// and the swept check: on random crumpled segments moved step by step in random directions, every
// answer contains every pair a fresh brute-force test finds (boxes grown by radius + pad at q and at
// q_end; centre lines closer than r_a + r_b + 2 pad), in increasing order, the exclusion applied; the
// list is reused while the nodes move less than the skin and rebuilt beyond it.
#include <rodsim/geometry/segment_segment_distance.h>
#include <rodsim/geometry/verlet_pairs.h>
#include <rodsim/linalg.h>

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

using namespace rodsim;
using rodsim::geometry::Aabb;
using rodsim::geometry::segmentBox;
using rodsim::geometry::VerletPairs;

namespace {

struct Edge {
  int x0, x1;
  double radius;
};

// Three random walks of 15 nodes (steps of 1 cm) in a 4 cm cube, radii 1-3 mm.
std::vector<Edge> crumpled(std::mt19937& rng, Vec& q) {
  std::normal_distribution<double> N(0, 1);
  std::vector<Edge> edges;
  const int rods = 3, nodes = 15;
  q.resize(3 * rods * nodes);
  for (int r = 0; r < rods; ++r) {
    Vec3 p(N(rng), N(rng), N(rng)), dir(N(rng), N(rng), N(rng));
    p *= 0.01;
    for (int i = 0; i < nodes; ++i) {
      const int x = 3 * (r * nodes + i);
      q.segment<3>(x) = p;
      dir = (dir.normalized() + 0.8 * Vec3(N(rng), N(rng), N(rng))).normalized();
      p += 0.01 * dir;
      if (i > 0) edges.push_back({x - 3, x, 0.001 * (1 + r)});
    }
  }
  return edges;
}

// Neighbouring edges (sharing a node) are excluded, as the contact models' exclusions do.
bool adjacent(const std::vector<Edge>& e, int a, int b) { return e[a].x1 == e[b].x0 || e[b].x1 == e[a].x0; }

std::set<std::pair<int, int>> bruteForce(const std::vector<Edge>& e, const Vec& q, const Vec* q_end, double pad,
                                         VerletPairs::Kind kind) {
  std::set<std::pair<int, int>> out;
  for (int a = 0; a < int(e.size()); ++a)
    for (int b = a + 1; b < int(e.size()); ++b) {
      if (adjacent(e, a, b)) continue;
      bool near = false;
      if (kind == VerletPairs::Kind::Boxes) {
        auto box = [&](int i) {
          Aabb bx = segmentBox(q.segment<3>(e[i].x0), q.segment<3>(e[i].x1), e[i].radius + pad);
          if (q_end) {
            const Aabb b1 = segmentBox(q_end->segment<3>(e[i].x0), q_end->segment<3>(e[i].x1), e[i].radius + pad);
            bx.lo = bx.lo.cwiseMin(b1.lo);
            bx.hi = bx.hi.cwiseMax(b1.hi);
          }
          return bx;
        };
        near = box(a).overlaps(box(b));
      } else {
        near = geometry::segmentDistance(q.segment<3>(e[a].x0), q.segment<3>(e[a].x1), q.segment<3>(e[b].x0),
                                         q.segment<3>(e[b].x1)) < e[a].radius + e[b].radius + 2 * pad;
      }
      if (near) out.insert({a, b});
    }
  return out;
}

void walkAndCheck(VerletPairs::Kind kind, bool swept) {
  std::mt19937 rng(kind == VerletPairs::Kind::Boxes ? 3 : 4);
  std::normal_distribution<double> N(0, 1);
  Vec q;
  const std::vector<Edge> edges = crumpled(rng, q);
  VerletPairs list;
  list.bind(edges, kind);
  const double pad = 0.002, skin = 0.003, step = 2e-4;  // 0.2 mm per step and node, skin 3 mm
  Vec q_end = q;
  int checked = 0, found = 0;
  for (int s = 0; s < 200; ++s) {
    for (int i = 0; i < q.size(); ++i) q_end[i] = q[i] + step * N(rng) / std::sqrt(3.0);
    const auto& got = list.pairs(q, swept ? &q_end : nullptr, pad, skin,
                                 [&](int a, int b) { return adjacent(edges, a, b); });
    CHECK(std::is_sorted(got.begin(), got.end()));
    for (const auto& [a, b] : got) CHECK((a < b && !adjacent(edges, a, b)));
    const std::set<std::pair<int, int>> have(got.begin(), got.end());
    for (const auto& p : bruteForce(edges, q, swept ? &q_end : nullptr, pad, kind)) {
      CHECK(have.count(p) == 1);
      ++found;
    }
    ++checked;
    q = q_end;
  }
  CHECK(checked == 200);
  CHECK(found > 200);  // the walks do come close
  // The nodes random-walk about 0.2 mm x sqrt(steps) from a build: a list lasts tens of steps, far
  // fewer builds than queries, and more than one.
  CHECK(list.builds() > 1);
  CHECK(list.builds() < 40);
}

}  // namespace

TEST_CASE("VerletPairs: boxes at q, a superset of the fresh answer at every step") { walkAndCheck(VerletPairs::Kind::Boxes, false); }
TEST_CASE("VerletPairs: swept boxes from q to q_end") { walkAndCheck(VerletPairs::Kind::Boxes, true); }
TEST_CASE("VerletPairs: capsules (centre-line distance)") { walkAndCheck(VerletPairs::Kind::Capsules, false); }

TEST_CASE("VerletPairs: a larger pad or a jump rebuilds; a NaN configuration leaves no list") {
  std::mt19937 rng(5);
  Vec q;
  const std::vector<Edge> edges = crumpled(rng, q);
  VerletPairs list;
  list.bind(edges, VerletPairs::Kind::Capsules);
  list.pairs(q, nullptr, 0.001, 0.002);
  CHECK(list.builds() == 1);
  list.pairs(q, nullptr, 0.001, 0.002);
  CHECK(list.builds() == 1);  // reused
  list.pairs(q, nullptr, 0.0025, 0.002);
  CHECK(list.builds() == 1);  // pad 2.5 mm < 1 + 2 mm built: still covered
  list.pairs(q, nullptr, 0.0035, 0.002);
  CHECK(list.builds() == 2);  // beyond it
  Vec moved = q;
  moved[0] += 0.0021;  // one node 2.1 mm: beyond the skin of the last build (3.5 + 2 - 3.5 mm)
  list.pairs(moved, nullptr, 0.0035, 0.002);
  CHECK(list.builds() == 3);
  Vec bad = q;
  bad[4] = NAN;
  list.pairs(bad, nullptr, 0.001, 0.002);
  list.pairs(q, nullptr, 0.001, 0.002);
  CHECK(list.builds() == 5);  // the NaN build is not reused
  list.forget();
  list.pairs(q, nullptr, 0.001, 0.002);
  CHECK(list.builds() == 6);
}
