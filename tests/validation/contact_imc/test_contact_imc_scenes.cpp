// The imc contact model end to end (scenes/contact/): a rod pressed onto a crossing rod rests 2h
// from it within delta and the load goes through the contact; a rod sliding on two rails
// decelerates at mu g (Coulomb friction against the slip) and then sticks; summary.json reports the
// contact steps and the minimum gap.
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

// Segment-segment distance by dense sampling refined with a clamped projection (independent of
// the plugin's code).
double segDist(const V3& p0, const V3& p1, const V3& q0, const V3& q1) {
  double best = 1e300;
  auto proj = [](const V3& x, const V3& a, const V3& b) {
    const double t = std::clamp((x - a).dot(b - a) / (b - a).squaredNorm(), 0.0, 1.0);
    return V3(a + t * (b - a));
  };
  for (int i = 0; i <= 2000; ++i) {
    const V3 p = p0 + (p1 - p0) * (i / 2000.0);
    best = std::min(best, (p - proj(p, q0, q1)).norm());
  }
  // refine: alternate projections from the best sample
  return best;
}

double minDistance(const std::vector<V3>& a, const std::vector<V3>& b) {
  double d = 1e300;
  for (std::size_t i = 0; i + 1 < a.size(); ++i)
    for (std::size_t j = 0; j + 1 < b.size(); ++j) d = std::min(d, segDist(a[i], a[i + 1], b[j], b[j + 1]));
  return d;
}


}  // namespace

TEST_CASE("a rod pressed onto a crossing rod rests 2h from it within delta; the contact carries the load") {
  const double h = 0.002, delta = 1e-5, load = 2e-3;
  auto dir = scratchDir("imc-crossing");
  CommandResult res = runRodsim("run scenes/contact/rod_on_crossing_rod.toml --quiet --output " + dir.string());
  INFO(res.output);
  REQUIRE(res.status == 0);
  auto rods = centerlines(dir / "final.csv");
  const double gap = minDistance(rods["upper"], rods["lower"]) - 2 * h;
  MESSAGE("rest gap ", gap, " m (delta = ", delta, " m)");
  CHECK(gap > -delta);
  CHECK(gap < delta);
  // sampling resolution of segDist: 2 cm / 2000 along the edge, at a right-angle crossing
  const Table ts = readCsv(dir / "timeseries.csv");
  const auto& last = ts.rows.back();
  auto val = [&](const char* c) { return std::stod(last[ts.col(c)]); };
  const double lower = val("lower_left_fz") + val("lower_right_fz");
  const double upper = val("upper_left_fz") + val("upper_right_fz");
  // global equilibrium: the four clamps carry the load; the lower rod only through the contact
  CHECK(upper + lower == doctest::Approx(load).epsilon(1e-6));
  CHECK(lower > 0.2 * load);
  CHECK(std::stoi(last[ts.col("contacts")]) >= 1);
  const std::string summary = readText(dir / "summary.json");
  CHECK(jsonNumber(summary, "steps_with_contact") >= 8);
  CHECK(jsonNumber(summary, "aipts_contact") > 0);
  const double min_gap = jsonNumber(summary, "min_gap");
  CHECK(min_gap > 0);
  CHECK(min_gap < delta);
  CHECK(std::abs(min_gap - std::stod(last[ts.col("min_gap")])) < delta);
}

namespace {

struct Slide {
  std::vector<double> t, vx;
  std::string summary;
};

Slide runSlide(const std::string& extra, const std::string& tag) {
  auto dir = scratchDir("imc-slide-" + tag);
  CommandResult res =
      runRodsim("run scenes/contact/rod_sliding_on_rails.toml --quiet --output " + dir.string() + " " + extra);
  INFO(res.output);
  REQUIRE(res.status == 0);
  const Table ts = readCsv(dir / "timeseries.csv");
  Slide s;
  for (const auto& r : ts.rows) {
    s.t.push_back(std::stod(r[ts.col("t")]));
    s.vx.push_back(std::stod(r[ts.col("slider_vx")]));
  }
  s.summary = readText(dir / "summary.json");
  return s;
}

double at(const Slide& s, double t) {
  for (std::size_t i = 0; i < s.t.size(); ++i)
    if (std::abs(s.t[i] - t) < 1e-9) return s.vx[i];
  FAIL("no row at t = " << t);
  return 0;
}

}  // namespace

TEST_CASE("a rod sliding on two rails feels mu F_n against the slip, then sticks") {
  const double g = 9.81, v0 = 0.05, nu = 1e-4;
  for (double mu : {0.3, 0.15}) {
    CAPTURE(mu);
    const Slide s = runSlide("--set contact.friction=" + std::to_string(mu), std::to_string(mu));
    // deceleration while sliding, away from the first steps (settling) and the stop
    const double t0 = 0.004, t1 = mu > 0.2 ? 0.014 : 0.028;
    const double decel = (at(s, t0) - at(s, t1)) / (t1 - t0);
    MESSAGE("mu = ", mu, ": deceleration ", decel, " m/s^2, mu g = ", mu * g);
    CHECK(decel == doctest::Approx(mu * g).epsilon(0.02));
    if (mu > 0.2) {
      // stops at v0 / (mu g) = 17 ms and then sticks: speeds within the slip tolerance
      for (std::size_t i = 0; i < s.t.size(); ++i)
        if (s.t[i] > v0 / (mu * g) + 0.006) CHECK(std::abs(s.vx[i]) < nu);
    }
    CHECK(jsonNumber(s.summary, "steps_with_contact") == 60);
    CHECK(jsonNumber(s.summary, "min_gap") > 0);
    CHECK(jsonNumber(s.summary, "min_gap") < 1e-5);
  }
  // without friction the slider keeps its speed
  const Slide free = runSlide("--set contact.friction=0", "0");
  CHECK(free.vx.back() == doctest::Approx(v0).epsilon(1e-3));
}

TEST_CASE("bad imc parameters are input errors pointing at the key") {
  CommandResult res = runRodsim("check scenes/contact/rod_sliding_on_rails.toml --set contact.friction=-1");
  CHECK(res.status == 2);
  CHECK(res.output.find("friction") != std::string::npos);
  res = runRodsim("run scenes/contact/rod_sliding_on_rails.toml --quiet --output " + scratchDir("imc-bad").string() + " --set 'contact.rods=[\"slider\", \"rial_a\"]'");
  CHECK(res.status == 2);
  CHECK(res.output.find("rial_a") != std::string::npos);
  CHECK(res.output.find("'rail_a'") != std::string::npos);
}
