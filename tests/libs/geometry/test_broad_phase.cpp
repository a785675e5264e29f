// Sweep and prune over boxes (moved from contact_imc's tests) and segment boxes.
#include <rodsim/geometry/broad_phase.h>
#include <rodsim/geometry/types.h>

#include <doctest/doctest.h>

#include <random>
#include <utility>
#include <vector>

using namespace rodsim::geometry;

TEST_CASE("sweep and prune finds exactly the brute-force pairs on random box sets") {
  std::mt19937 rng(12345);
  SweepAndPrune sap;
  std::vector<std::pair<int, int>> out;
  for (int trial = 0; trial < 20; ++trial) {
    const int n = 5 + trial * 37;
    std::uniform_real_distribution<double> pos(0, 1), size(0, trial % 2 ? 0.3 : 0.05);
    std::vector<Aabb> boxes(n);
    for (auto& b : boxes) {
      const Vec3 p(pos(rng), pos(rng), 0.2 * pos(rng)), s(size(rng), size(rng), size(rng));
      b = {p, p + s};
    }
    // touching boxes (closed intervals) count
    if (n > 2) boxes[1] = {boxes[0].hi, boxes[0].hi + Vec3(0.1, 0.1, 0.1)};
    CAPTURE(n);
    const auto expected = bruteForcePairs(boxes);
    sap.query(boxes, out);
    CHECK(out == expected);
    sap.querySweep(boxes, out);
    CHECK(out == expected);
    sap.queryGrid(boxes, out);
    CHECK(out == expected);
  }
}

TEST_CASE("the grid broad phase finds the brute-force pairs on a pile of crossing rods") {
  // Three layers of M rods (along x, y, x) of 2 mm edges boxes grown by 1 mm, layers touching: the
  // layout of scripts/make_rod_pile.py, where the sweep compares O(M) boxes per box.
  SweepAndPrune sap;
  std::vector<std::pair<int, int>> grid, sweep;
  for (int M : {3, 12, 25}) {
    std::vector<Aabb> boxes;
    const double s = 0.01, e = 0.005, r = 0.002, pad = 0.001;
    const int edges = 2 * (M + 1);
    for (int layer = 0; layer < 3; ++layer)
      for (int i = 0; i < M; ++i)
        for (int k = 0; k < edges; ++k) {
          const double c = (i - 0.5 * (M - 1)) * s + (layer % 2 ? 0.3 : 0.15) * s, z = r + layer * 2 * r;
          const double a = -0.5 * (M + 1) * s + k * e;
          const Vec3 p = layer % 2 ? Vec3(c, a, z) : Vec3(a, c, z), q = layer % 2 ? Vec3(c, a + e, z) : Vec3(a + e, c, z);
          boxes.push_back(segmentBox(p, q, r + pad));
        }
    CAPTURE(M);
    const auto expected = bruteForcePairs(boxes);
    sap.queryGrid(boxes, grid);
    sap.querySweep(boxes, sweep);
    CHECK(grid == expected);
    CHECK(sweep == expected);
    sap.query(boxes, grid);
    CHECK(grid == expected);
  }
}

TEST_CASE("segmentBox: the segment's box grown by the pad on every side") {
  const Aabb b = segmentBox(Vec3(1, -2, 3), Vec3(-1, 2, 3), 0.5);
  CHECK((b.lo - Vec3(-1.5, -2.5, 2.5)).norm() == 0.0);
  CHECK((b.hi - Vec3(1.5, 2.5, 3.5)).norm() == 0.0);
  CHECK(b.overlaps(segmentBox(Vec3(1.5, 2.5, 3.5), Vec3(3, 3, 5), 0.0)));  // touching
  CHECK_FALSE(b.overlaps(segmentBox(Vec3(1.6, 0, 3), Vec3(3, 0, 3), 0.0)));
}
