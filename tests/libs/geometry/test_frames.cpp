// Frame geometry: the two perpendicular-vector conventions, the two parallel transports (they are
// the same rotation), signed angles, wrapAngle and the curvature binormal of Eq. 2.
#include <rodsim/geometry/frames.h>
#include <rodsim/geometry/so3.h>

#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <random>

using namespace rodsim::geometry;

namespace {

Vec3 randomUnit(std::mt19937& rng) {
  std::normal_distribution<double> n;
  return Vec3(n(rng), n(rng), n(rng)).normalized();
}

}  // namespace

TEST_CASE("anyPerpendicular and perpendicularFromZ: unit, perpendicular, and their conventions") {
  std::mt19937 rng(5);
  for (int i = 0; i < 20; ++i) {
    const Vec3 t = randomUnit(rng);
    for (const Vec3& p : {anyPerpendicular(t), perpendicularFromZ(t)}) {
      CHECK(std::abs(p.norm() - 1) < 1e-15 * 10);
      CHECK(std::abs(p.dot(t)) < 1e-15 * 10);
    }
  }
  // anyPerpendicular projects the axis least aligned with t; perpendicularFromZ projects e_z
  // unless |t_z| >= 0.9, then e_x.
  const Vec3 t = Vec3(0.8, 0.1, 0.59).normalized();
  CHECK((anyPerpendicular(t) - (Vec3::UnitY() - t.y() * t).normalized()).norm() == 0.0);
  CHECK((perpendicularFromZ(t) - (Vec3::UnitZ() - t.z() * t).normalized()).norm() == 0.0);
  CHECK((perpendicularFromZ(Vec3::UnitZ()) - Vec3::UnitX()).norm() == 0.0);
  CHECK((anyPerpendicular(Vec3::UnitZ()) - Vec3::UnitX()).norm() == 0.0);
  CHECK((perpendicularFromZ(Vec3::UnitX()) - Vec3::UnitZ()).norm() == 0.0);
  CHECK((anyPerpendicular(Vec3::UnitX()) - Vec3::UnitY()).norm() == 0.0);
}

TEST_CASE("parallelTransport and parallelTransportExp: the same minimal rotation, axis a x b fixed") {
  std::mt19937 rng(9);
  for (int i = 0; i < 20; ++i) {
    const Vec3 a = randomUnit(rng), b = randomUnit(rng);
    if (a.dot(b) < -0.99) continue;  // the rational formula is singular at b = -a
    const Vec3 v = anyPerpendicular(a);
    const Vec3 w = parallelTransport(v, a, b), w2 = parallelTransportExp(v, a, b);
    CHECK((w - w2).norm() < 1e-13);
    CHECK(std::abs(w.dot(b)) < 1e-13);
    CHECK((parallelTransport(a, a, b) - b).norm() < 1e-13);
    CHECK((parallelTransportExp(a, a, b) - b).norm() < 1e-13);
    const Vec3 n = a.cross(b);
    CHECK((parallelTransportExp(n, a, b) - n).norm() < 1e-13);
  }
  const Vec3 u(0.3, 0.4, 0.5), a = Vec3::UnitX();
  CHECK((parallelTransportExp(u, a, a) - u).norm() == 0.0);  // no rotation below |a x b| = 1e-14
}

TEST_CASE("signedAngle, wrapAngle and the curvature binormal of Eq. 2") {
  const Vec3 n = Vec3::UnitZ();
  CHECK(signedAngle(Vec3::UnitX(), Vec3::UnitY(), n) == doctest::Approx(std::numbers::pi / 2));
  CHECK(signedAngle(Vec3::UnitY(), Vec3::UnitX(), n) == doctest::Approx(-std::numbers::pi / 2));
  CHECK(wrapAngle(3 * std::numbers::pi + 0.1) == doctest::Approx(-std::numbers::pi + 0.1));
  CHECK(wrapAngle(-0.2) == -0.2);
  // turning angle phi between the edges: |kb| = 2 tan(phi / 2), along e0 x e1
  for (double phi : {1e-3, 0.3, 1.0, 2.5}) {
    const Vec3 e0(0.7, 0, 0), e1 = 1.3 * Vec3(std::cos(phi), std::sin(phi), 0);
    const Vec3 kb = curvatureBinormal(e0, e1);
    CAPTURE(phi);
    CHECK(kb.norm() == doctest::Approx(2 * std::tan(phi / 2)).epsilon(1e-14));
    CHECK(kb.normalized().dot(Vec3::UnitZ()) == doctest::Approx(1.0));
  }
}
