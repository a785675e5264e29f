// A rod on an inclined plane (alart-curnier contact), end to end through the rodsim command:
// it sticks exactly when tan(alpha) < mu and slides with a = g (sin(alpha) - mu cos(alpha))
// otherwise; no penetration. Implicit Euler integrates a constant acceleration exactly in the
// velocity (v_n = a n dt), so the sliding velocity is checked to 1e-6 relative.
#include "ac_table.h"
#include "run_rodsim.h"

#include <doctest/doctest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

using namespace rodsim::test;

namespace {

constexpr double g = 9.81, alpha = 0.3, T = 0.2, radius = 0.005;

struct Row {
  double t, vx, x, z;
  double min_gap;
};

// Runs scenes/contact_ac/inclined_plane.toml with friction mu and the implicit-euler scheme;
// returns every timeseries row.
std::vector<Row> run(double mu, const std::string& tag, const std::string& scheme = "nonlinear") {
  auto dir = scratchDir("ac-inclined-" + tag + "-" + scheme);
  CommandResult res = runRodsim("run scenes/contact_ac/inclined_plane.toml --quiet --output " + dir.string() +
                                " --set contact.friction=" + std::to_string(mu) + " --set solver.scheme=" + scheme);
  INFO(res.output);
  REQUIRE(res.status == 0);
  const Table t = parseTable(readText(dir / "timeseries.csv"));
  std::vector<Row> rows;
  for (std::size_t i = 0; i < t.size(); ++i) {
    Row r{};
    r.t = t.at(i, "t");
    r.min_gap = std::isnan(t.at(i, "min_gap")) ? 1e9 : t.at(i, "min_gap");
    r.vx = t.at(i, "vx_mid");
    r.x = t.at(i, "x_mid");
    r.z = t.at(i, "z_mid");
    rows.push_back(r);
  }
  REQUIRE(rows.size() == 201);
  return rows;
}

void checkSticks(const std::string& scheme) {
  const auto rows = run(0.5, "stick", scheme);
  double vmax = 0, xmax = 0, pen = 0;
  for (const auto& r : rows) {
    vmax = std::max(vmax, std::abs(r.vx));
    xmax = std::max(xmax, std::abs(r.x));
    pen = std::max(pen, radius - r.z);
    if (r.t > 0) CHECK(r.min_gap > -1e-12);
  }
  MESSAGE("max |v_x| = " << vmax << " m/s, max |x| = " << xmax << " m, max penetration = " << pen << " m");
  // The gravity pull is g sin(alpha) = 2.9 m/s^2: a creep of even 1e-6 of it over 0.2 s would show.
  CHECK(vmax < 1e-9);
  CHECK(xmax < 1e-12);
  CHECK(pen < 1e-12);
}

void checkSlides(const std::string& scheme) {
  const double mu = 0.2;
  const double a = g * (std::sin(alpha) - mu * std::cos(alpha));
  const auto rows = run(mu, "slide", scheme);
  for (const auto& r : rows) {
    if (r.t < 0.01) continue;
    CHECK(r.vx == doctest::Approx(a * r.t).epsilon(1e-6));
    CHECK(std::abs(r.z - radius) < 1e-12);
  }
  MESSAGE("v_x(T) = " << rows.back().vx << ", a T = " << a * T);
  // Positions: implicit Euler gives x_n = a dt^2 n (n + 1) / 2.
  const double dt = 1e-3;
  const double n = 200;
  CHECK(rows.back().x == doctest::Approx(a * dt * dt * n * (n + 1) / 2).epsilon(1e-6));
}

}  // namespace

TEST_CASE("tan(alpha) = 0.309 < mu = 0.5: the rod sticks exactly, no creep, no penetration") {
  checkSticks("nonlinear");
}

TEST_CASE("tan(alpha) = 0.309 > mu = 0.2: sliding with a = g (sin(alpha) - mu cos(alpha))") {
  checkSlides("nonlinear");
}

// The paper's own time stepping (one linearized step and one contact problem per time step): a
// straight rod on a plane is a linear problem, so the same exact results.
TEST_CASE("linearized scheme: sticks exactly when tan(alpha) < mu") { checkSticks("linearized"); }
TEST_CASE("linearized scheme: slides with a = g (sin(alpha) - mu cos(alpha))") { checkSlides("linearized"); }

TEST_CASE("frictionless (mu = 0): a = g sin(alpha)") {
  const auto rows = run(0.0, "frictionless");
  CHECK(rows.back().vx == doctest::Approx(g * std::sin(alpha) * T).epsilon(1e-6));
}
