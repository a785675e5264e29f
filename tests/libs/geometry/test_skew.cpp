// skew(v): the cross-product matrix.
#include <rodsim/geometry/skew.h>

#include <doctest/doctest.h>

#include <random>

using namespace rodsim::geometry;

TEST_CASE("skew(v) w = v x w, and skew(v) is antisymmetric") {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int trial = 0; trial < 10; ++trial) {
    const Vec3 v(u(rng), u(rng), u(rng)), w(u(rng), u(rng), u(rng));
    const Mat3 S = skew(v);
    CHECK((S * w - v.cross(w)).norm() <= 1e-16 * 10);
    CHECK((S + S.transpose()).norm() == 0.0);
    CHECK((S * v).norm() <= 1e-16 * 10);
  }
}
