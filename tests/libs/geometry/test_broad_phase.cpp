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
    sap.query(boxes, out);
    CAPTURE(n);
    CHECK(out == bruteForcePairs(boxes));
  }
}

TEST_CASE("segmentBox: the segment's box grown by the pad on every side") {
  const Aabb b = segmentBox(Vec3(1, -2, 3), Vec3(-1, 2, 3), 0.5);
  CHECK((b.lo - Vec3(-1.5, -2.5, 2.5)).norm() == 0.0);
  CHECK((b.hi - Vec3(1.5, 2.5, 3.5)).norm() == 0.0);
  CHECK(b.overlaps(segmentBox(Vec3(1.5, 2.5, 3.5), Vec3(3, 3, 5), 0.0)));  // touching
  CHECK_FALSE(b.overlaps(segmentBox(Vec3(1.6, 0, 3), Vec3(3, 0, 3), 0.0)));
}
