// Sedimentation of a straight rod under the local slender-body drag of plugins/slender_body_drag (Gazzola
// et al. 2018, Sec. IV.6, Eqs. 43-44), end to end through rodsim: falling along its axis the rod sinks
// twice as fast as falling broadside, and both terminal speeds balance the weight per length,
//     rho A g = c U_perp = (c / 2) U_par,      c = 4 pi mu / ln(L / r).
// docs/validation/cosserat.md, "Slender-body drag", tabulates the same numbers.
//
// Tolerance. Weight and drag are both proportional to each node's Voronoi length, so the rod translates
// rigidly (no elastic force) and every scheme relaxes to the exact fixed point U: the velocity obeys
// m dU/dt = m g - c' U (c' = c or c/2 per length), whose error decays like exp(-t / tau) with
// tau = rho A / c' (11.5 ms broadside, 23.0 ms axially), discretely by (1 - dt/tau)^n (the explicit
// kick) or (1 + dt/tau)^-n (implicit Euler). Over 0.5 s both are below 1e-9; with the round-off of
// summing 5000 steps, 1e-7 is a sound bound for the terminal speeds and 2e-7 for their ratio (the issue
// asks for the ratio within 1 %).
#include "csv_table.h"
#include "run_rodsim.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <numbers>
#include <string>

using namespace rodsim::test;

namespace {

constexpr double g = 9.81, rho = 1000.0, r = 0.01, L = 1.0, mu = 10.0;
const double rhoA = rho * std::numbers::pi * r * r;
const double c = 4 * std::numbers::pi * mu / std::log(L / r);  // Eq. 43
const double U_perp = rhoA * g / c, U_par = 2 * rhoA * g / c;

struct Fall {
  double vx = 0, vz = 0, vz_end = 0;
};

Fall fall(const std::string& scene, const std::string& solver, bool axial, const std::string& extra) {
  auto dir = scratchDir(fmt::format("sedimentation-{}-{}-{}{}", scene, solver, axial ? "axial" : "broadside",
                                    extra.empty() ? "" : "-full-jacobian"));
  std::string sets = fmt::format("--set solver.type={} {}", solver, extra);
  if (axial) sets += " --set 'rod.rod.geometry.end=[0, 0, -1]'";
  CommandResult res = runRodsim(fmt::format("run scenes/validation/sedimentation_{}.toml --quiet --output {} {}", scene,
                                            dir.string(), sets));
  INFO(res.output);
  REQUIRE(res.status == 0);
  const CsvTable t = readCsv(dir / "timeseries.csv");
  REQUIRE(t.rows.size() > 100);
  const std::size_t last = t.rows.size() - 1;
  return {t.num(last, "vx"), t.num(last, "vz"), t.num(last, "vz_end")};
}

}  // namespace

TEST_CASE("sedimentation: a rod falls twice as fast along its axis as broadside, at the terminal speeds of Eq. 43") {
  struct Case {
    const char* rod;
    const char* solver;
    const char* sets;
  };
  for (const Case& k : {Case{"cosserat", "position-verlet", ""}, Case{"cosserat", "pefrl", ""},
                        Case{"der", "implicit-euler", ""},
                        Case{"der", "implicit-euler", "--set force.fluid.position_jacobian=true"},
                        Case{"der", "position-verlet", ""}, Case{"der", "pefrl", ""}}) {
    const Fall side = fall(k.rod, k.solver, false, k.sets), ax = fall(k.rod, k.solver, true, k.sets);
    const double ratio = ax.vz / side.vz;
    MESSAGE(fmt::format("{} + {}{}: broadside {:.8f} m/s (closed form {:.8f}, error {:.1e}), axial {:.8f} m/s (closed form "
                        "{:.8f}, error {:.1e}), ratio {:.8f}",
                        k.rod, k.solver, *k.sets ? " (full Jacobian)" : "", -side.vz, U_perp, std::abs(-side.vz / U_perp - 1), -ax.vz, U_par,
                        std::abs(-ax.vz / U_par - 1), ratio));
    CHECK(std::abs(-side.vz / U_perp - 1) < 1e-7);
    CHECK(std::abs(-ax.vz / U_par - 1) < 1e-7);
    CHECK(std::abs(ratio - 2) < 2e-7);
    // rigid translation: the end node falls with the middle one, nothing drifts sideways
    CHECK(std::abs(side.vz_end / side.vz - 1) < 1e-7);
    CHECK(std::abs(ax.vz_end / ax.vz - 1) < 1e-7);
    CHECK(std::abs(side.vx) < 1e-9);
    CHECK(std::abs(ax.vx) < 1e-9);
  }
}
