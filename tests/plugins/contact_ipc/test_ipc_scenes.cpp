// The ipc contact model end to end through the rodsim command: a rod pressed onto a crossing rod
// (scenes/contact/rod_on_crossing_rod_ipc.toml, the physics of the imc scene) comes to rest with a
// positive gap at every step, ending inside (0, d_hat) where the barrier force kappa |b'(gap)| equals
// the contact force carried by the lower rod's clamps; the clamps carry the whole load.
#include "csv_table.h"
#include "run_rodsim.h"

#include <doctest/doctest.h>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace rodsim::test;

namespace {

using V3 = Eigen::Vector3d;

using Table = CsvTable;

std::map<std::string, std::vector<V3>> centerlines(const std::filesystem::path& final_csv) {
  std::map<std::string, std::vector<V3>> rods;
  const Table t = readCsv(final_csv);
  for (const auto& r : t.rows) rods[r[0]].push_back(V3(std::stod(r[2]), std::stod(r[3]), std::stod(r[4])));
  return rods;
}

// Segment-segment distance independent of the plugin: ternary search over the parameter on the
// first segment (the distance to a convex set is convex along a segment), projection on the second.
double segDist(const V3& p0, const V3& p1, const V3& q0, const V3& q1) {
  auto at = [&](double s) {
    const V3 p = p0 + s * (p1 - p0), e = q1 - q0;
    const double t = std::clamp((p - q0).dot(e) / e.squaredNorm(), 0.0, 1.0);
    return (p - q0 - t * e).norm();
  };
  double lo = 0, hi = 1;
  for (int it = 0; it < 100; ++it) {
    const double a = lo + (hi - lo) / 3, b = hi - (hi - lo) / 3;
    if (at(a) < at(b)) hi = b;
    else lo = a;
  }
  return std::min({at(0.5 * (lo + hi)), at(0), at(1)});
}

double minDistance(const std::vector<V3>& a, const std::vector<V3>& b) {
  double d = 1e300;
  for (std::size_t i = 0; i + 1 < a.size(); ++i)
    for (std::size_t j = 0; j + 1 < b.size(); ++j) d = std::min(d, segDist(a[i], a[i + 1], b[j], b[j + 1]));
  return d;
}

// Barrier derivative b'(d) of -(d - d_hat)^2 ln(d/d_hat), written out independently of the plugin.
double barrierSlope(double d, double d_hat) {
  return -2 * (d - d_hat) * std::log(d / d_hat) - (d - d_hat) * (d - d_hat) / d;
}

}  // namespace

TEST_CASE("ipc: a rod pressed onto a crossing rod rests with a positive gap inside d_hat at every step") {
  const double h = 0.002, d_hat = 1e-5, load = 2e-3;
  auto dir = scratchDir("ipc-crossing");
  CommandResult res = runRodsim("run scenes/contact/rod_on_crossing_rod_ipc.toml --quiet --output " + dir.string());
  INFO(res.output);
  REQUIRE(res.status == 0);
  const Table ts = readCsv(dir / "timeseries.csv");
  REQUIRE(ts.rows.size() == 11);  // step 0 and 10 load steps
  int contact_steps = 0;
  double min_gap_all = 1e300;
  for (std::size_t i = 1; i < ts.rows.size(); ++i) {
    // (empty while no pair is within d_hat + the candidate margin of each other)
    if (ts.rows[i][ts.col("min_gap")].empty()) continue;
    const double g = std::stod(ts.rows[i][ts.col("min_gap")]);
    CAPTURE(i);
    CHECK(g > 0);  // never touching, never penetrating
    min_gap_all = std::min(min_gap_all, g);
    if (std::stoi(ts.rows[i][ts.col("contacts")]) > 0) ++contact_steps;
  }
  CHECK(contact_steps >= 8);
  const auto& last = ts.rows.back();
  auto val = [&](const char* c) { return std::stod(last[ts.col(c)]); };
  // the final gap, measured from final.csv independently of the plugin
  auto rods = centerlines(dir / "final.csv");
  const double gap = minDistance(rods["upper"], rods["lower"]) - 2 * h;
  const double kappa = val("ipc.kappa");
  const double lower = val("lower_left_fz") + val("lower_right_fz");
  const double upper = val("upper_left_fz") + val("upper_right_fz");
  // expected separation: the single crossing pair carries the contact force F_c (what the lower
  // rod's clamps take): kappa |b'(gap)| = F_c, solved by bisection on (0, d_hat)
  double lo = 1e-12 * d_hat, hi = d_hat;
  for (int it = 0; it < 200; ++it) {
    const double mid = 0.5 * (lo + hi);
    (kappa * -barrierSlope(mid, d_hat) > lower ? lo : hi) = mid;
  }
  const double expected = 0.5 * (lo + hi);
  MESSAGE("rest gap ", gap, " m (d_hat ", d_hat, " m), expected from kappa = ", kappa, " N/m and F_c = ", lower,
          " N: ", expected, " m; smallest gap over the run ", min_gap_all, " m");
  CHECK(gap > 0);
  CHECK(gap < d_hat);
  CHECK(gap == doctest::Approx(val("min_gap")).epsilon(1e-6));
  CHECK(std::abs(gap - expected) < 1e-3 * d_hat);
  // global equilibrium: the four clamps carry the load; the lower rod only through the contact
  CHECK(upper + lower == doctest::Approx(load).epsilon(1e-6));
  CHECK(lower > 0.2 * load);
  const std::string summary = readText(dir / "summary.json");
  CHECK(summary.find("\"status\": \"ok\"") != std::string::npos);
}

TEST_CASE("ipc: a rod sliding on two rails decelerates at mu g (lagged friction against the slip), then sticks") {
  const double g = 9.81, v0 = 0.05, eps_v = 1e-4;
  for (double mu : {0.3, 0.0}) {
    CAPTURE(mu);
    auto dir = scratchDir("ipc-slide-" + std::to_string(mu));
    CommandResult res = runRodsim("run scenes/contact/rod_sliding_on_rails_ipc.toml --quiet --output " +
                                  dir.string() + " --set contact.friction=" + std::to_string(mu));
    INFO(res.output);
    REQUIRE(res.status == 0);
    const Table ts = readCsv(dir / "timeseries.csv");
    auto vx = [&](double t) {
      for (const auto& r : ts.rows)
        if (std::abs(std::stod(r[ts.col("t")]) - t) < 1e-9) return std::stod(r[ts.col("slider_vx")]);
      FAIL("no row at t = " << t);
      return 0.0;
    };
    for (std::size_t i = 1; i < ts.rows.size(); ++i) {
      CAPTURE(i);
      CHECK(std::stod(ts.rows[i][ts.col("min_gap")]) > 0);
      CHECK(std::stoi(ts.rows[i][ts.col("contacts")]) == 2);  // one crossing per rail
    }
    if (mu > 0) {
      // deceleration while sliding, away from the first steps and the stop (17 ms)
      const double decel = (vx(0.004) - vx(0.014)) / 0.010;
      MESSAGE("deceleration ", decel, " m/s^2, mu g = ", mu * g);
      CHECK(decel == doctest::Approx(mu * g).epsilon(0.02));
      // sticks after v0/(mu g) (+ 6 ms to settle): speeds below the smoothing velocity eps_v
      for (const auto& r : ts.rows)
        if (std::stod(r[ts.col("t")]) > v0 / (mu * g) + 0.006) CHECK(std::abs(std::stod(r[ts.col("slider_vx")])) < eps_v);
    } else {
      CHECK(vx(0.03) == doctest::Approx(v0).epsilon(1e-3));
    }
  }
}
