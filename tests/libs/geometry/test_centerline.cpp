// Centerline builders: straight, helix (with and without a lead), circle, polyline resampling,
// CSV points, and buildCenterline from the geometry.* parameters.
#include <rodsim/geometry/centerline.h>
#include <rodsim/geometry/frames.h>

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <cmath>
#include <numbers>
#include <string>

using namespace rodsim::geometry;
using rodsim::ParamError;
using rodsim::Params;
using rodsim::Schema;
using rodsim::toValue;

namespace {

constexpr double kPi = std::numbers::pi;

Params centerlineParams(std::initializer_list<std::pair<std::string, rodsim::Value>> kv) {
  Schema s{"test", "centerline parameters"};
  declareCenterlineParams(s);
  Params p("test_rod");
  for (const auto& spec : s.params())
    if (spec.fallback) p.set(spec.name, *spec.fallback);
  for (const auto& [k, v] : kv) p.set(k, v);
  return p;
}

}  // namespace

TEST_CASE("centerline builders: straight and helix (from rod_der)") {
  const auto x = straightCenterline(Vec3(1, 2, 3), Vec3(1, 2, 5), 5);
  REQUIRE(x.size() == 5);
  CHECK((x[2] - Vec3(1, 2, 4)).norm() < 1e-15);

  for (bool right : {true, false}) {
    HelixSpec h;
    h.origin = Vec3(0.5, 0, -1);
    h.axis = Vec3(0, 0, -2);
    h.radius = 0.01;
    h.pitch = 0.05;
    h.axial_length = 0.2;
    h.right_handed = right;
    const auto p = helixCenterline(h, 81);
    REQUIRE(p.size() == 81);
    const Vec3 a = h.axis.normalized();
    double lmin = 1e9, lmax = 0;
    for (std::size_t i = 0; i + 1 < p.size(); ++i) {
      const double l = (p[i + 1] - p[i]).norm();
      lmin = std::min(lmin, l);
      lmax = std::max(lmax, l);
    }
    CHECK(lmax / lmin - 1 < 1e-10);
    double phase = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
      const Vec3 d = p[i] - h.origin;
      const Vec3 radial = d - d.dot(a) * a;
      CHECK(radial.norm() == doctest::Approx(0.01).epsilon(1e-12));
      if (i > 0) {
        const Vec3 dp = p[i - 1] - h.origin;
        const Vec3 rp = dp - dp.dot(a) * a;
        phase += std::atan2(a.dot(rp.cross(radial)), rp.dot(radial));
      }
    }
    // Axial advance per turn = pitch; right-handed: counterclockwise about the advance direction.
    const double axial = (p.back() - h.origin).dot(a);
    CHECK(axial == doctest::Approx(0.2).epsilon(1e-12));
    CHECK(phase == doctest::Approx((right ? 1 : -1) * 2 * kPi * 0.2 / 0.05).epsilon(1e-12));
  }

  // With a lead: straight segment on the axis, 45° hook, then the helix; spacing about uniform.
  HelixSpec h;
  h.radius = 0.01;
  h.pitch = 0.05;
  h.axial_length = 0.2;
  h.lead = 0.005;
  const auto p = helixCenterline(h, 70);
  REQUIRE(p.size() == 70);
  CHECK(p[0].norm() < 1e-15);
  CHECK((p[1] - Vec3(0, 0, 0.005)).norm() < 1e-12);
  double lmin = 1e9, lmax = 0;
  for (std::size_t i = 0; i + 1 < p.size(); ++i) {
    const double l = (p[i + 1] - p[i]).norm();
    lmin = std::min(lmin, l);
    lmax = std::max(lmax, l);
  }
  CHECK(lmax / lmin < 1.3);
  const Vec3 last = p.back();
  CHECK(std::hypot(last.x(), last.y()) == doctest::Approx(0.01).epsilon(1e-12));
  CHECK(last.z() == doctest::Approx(0.005 + 0.01 + 0.2).epsilon(1e-12));
}

TEST_CASE("circle: equally spaced, counterclockwise about the axis, starting at anyPerpendicular(axis)") {
  const Vec3 c(1, 2, 3), axis(0, 0, 2);
  const auto x = circleCenterline(c, axis, 0.5, 8);
  REQUIRE(x.size() == 8);
  CHECK((x[0] - (c + 0.5 * anyPerpendicular(axis.normalized()))).norm() < 1e-15);
  for (int k = 0; k < 8; ++k) {
    CHECK((x[k] - c).norm() == doctest::Approx(0.5).epsilon(1e-14));
    const Vec3 a = x[k] - c, b = x[(k + 1) % 8] - c;
    CHECK(std::atan2(a.cross(b).z(), a.dot(b)) == doctest::Approx(2 * kPi / 8).epsilon(1e-13));
  }
}

// resamplePolyline and readPointsCsv: tests/plugins/rod_der/test_der_rod.cpp ("der geometry: polyline
// and point files"), with the der rods built from them.
TEST_CASE("buildCenterline from the geometry.* parameters; a missing key is a ParamError naming it") {
  const auto x = buildCenterline(centerlineParams({{"geometry.shape", toValue("straight")}, {"nodes", toValue(3)},
                                                   {"geometry.start", toValue(Vec3(0, 0, 0))},
                                                   {"geometry.end", toValue(Vec3(0, 0, 2))}}));
  REQUIRE(x.size() == 3);
  CHECK((x[1] - Vec3(0, 0, 1)).norm() < 1e-15);
  try {
    buildCenterline(centerlineParams({{"geometry.shape", toValue("straight")}, {"nodes", toValue(3)},
                                      {"geometry.start", toValue(Vec3(0, 0, 0))}}));
    FAIL("expected a ParamError");
  } catch (const ParamError& e) {
    CHECK(e.key() == "geometry.end");
  }
}

TEST_CASE("readPointsCsv: a point file must be a regular file of bounded size (issue 43)") {
  CHECK_THROWS_WITH_AS(rodsim::geometry::readPointsCsv("/dev/zero"), doctest::Contains("not a regular file"),
                       rodsim::ParamError);
  // a sparse file one byte over the limit: refused before a byte is read
  const auto path = std::filesystem::temp_directory_path() / "rodsim_points_too_large.csv";
  { std::ofstream(path) << "0,0,0\n"; }
  std::filesystem::resize_file(path, rodsim::geometry::kMaxPointFileBytes + 1);
  CHECK_THROWS_WITH_AS(rodsim::geometry::readPointsCsv(path.string()), doctest::Contains("larger than 64 MiB"),
                       rodsim::ParamError);
  std::filesystem::remove(path);
}
