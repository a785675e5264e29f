// Cosserat rods with position-verlet, end to end through the rodsim command:
// the Timoshenko cantilever of the Cosserat seed (Fig. 5, Eq. 29) and energy conservation.
#include "run_rodsim.h"

#include <doctest/doctest.h>

#include <cmath>
#include <fmt/format.h>
#include <sstream>
#include <vector>

using namespace rodsim::test;

namespace {

constexpr double kPi = 3.14159265358979323846;
// Fig. 5 settings
constexpr double L = 3.0, r = 0.25, E = 1e6, G = 1e4, alpha = 4.0 / 3.0, F = 15.0;
const double A = kPi * r * r, I = kPi * std::pow(r, 4) / 4;
const double shear_part = F * L / (alpha * G * A), bend_part = F * L * L * L / (3 * E * I);
const double timoshenko = shear_part + bend_part;  // Eq. 29 at s = L
const double euler_bernoulli = bend_part;          // Eq. 30 at s = L

std::vector<std::vector<double>> readCsv(const std::filesystem::path& file) {
  std::istringstream in(readText(file));
  std::string line;
  std::getline(in, line);  // header
  std::vector<std::vector<double>> rows;
  while (std::getline(in, line)) {
    std::vector<double> row;
    std::istringstream ls(line);
    for (std::string cell; std::getline(ls, cell, ',');) row.push_back(cell.empty() ? NAN : std::atof(cell.c_str()));
    rows.push_back(row);
  }
  return rows;
}

double tipDeflection(int elements) {
  auto dir = scratchDir(fmt::format("cosserat-timoshenko-{}", elements));
  CommandResult res = runRodsim(fmt::format("run scenes/validation/cosserat_timoshenko.toml --quiet --output {} "
                                            "--set rod.beam.nodes={}",
                                            dir.string(), elements + 1));
  INFO(res.output);
  REQUIRE(res.status == 0);
  const auto rows = readCsv(dir / "timeseries.csv");
  REQUIRE(rows.size() > 100);
  const double tip = -rows.back().back(), earlier = -rows[rows.size() * 5 / 6].back();
  CHECK(std::abs(tip - earlier) < 1e-4 * tip);  // static: unchanged over the last sixth (100x below the 1% budget)
  return tip;
}

}  // namespace

TEST_CASE("Timoshenko cantilever: tip deflection against Eq. 29, apart from Euler-Bernoulli, first-order convergence") {
  double previous = 1e9;
  for (int n : {32, 64, 128}) {
    const double y = tipDeflection(n);
    const double err = std::abs(y - timoshenko) / timoshenko;
    // Exact small-deflection solution of the discrete rod: shear part exact, bending part that of a
    // beam clamped at the centre of element 0 (its frame is the clamp), minus (L-h/2) h^2/4 (docs).
    const double h = L / n, Le = L - h / 2;
    const double discrete = shear_part + F / (3 * E * I) * (Le * Le * Le - Le * h * h / 4);
    MESSAGE(fmt::format("n = {:3d}: tip {:.6f} m, Eq. 29 {:.6f} (error {:.3e}), Euler-Bernoulli {:.6f}, discrete "
                        "linear {:.6f} (error {:.2e})",
                        n, y, timoshenko, err, euler_bernoulli, discrete, std::abs(y - discrete) / discrete));
    CHECK(err < previous);
    CHECK(err * n == doctest::Approx(1.08).epsilon(0.1));  // first order: error ~ (3/2)(h/L) EB / total
    CHECK(std::abs(y - discrete) / discrete < 5e-4);      // geometric nonlinearity only
    CHECK((y - euler_bernoulli) / euler_bernoulli > 0.3);  // shear softening: 39 % in theory
    previous = err;
    if (n == 128) CHECK(err < 0.01);
  }
}

TEST_CASE("position-verlet conserves the energy of a freely vibrating Cosserat cantilever") {
  auto dir = scratchDir("cosserat-energy");
  CommandResult res = runRodsim(fmt::format(
      "run scenes/validation/cosserat_timoshenko.toml --quiet --output {} --set rod.beam.nodes=33 "
      "--set simulation.duration=4 --set simulation.dt=2e-4 --set force.friction.coefficient=0 "
      "--set 'force.tip.force=[0, 0, 0]' --set 'rod.beam.initial_velocity=[0, 0.05, 0.1]'",
      dir.string()));
  INFO(res.output);
  REQUIRE(res.status == 0);
  const auto rows = readCsv(dir / "timeseries.csv");  // step,t,iterations,wall_ms,contacts,min_gap,K,U,tip
  REQUIRE(rows.size() >= 20000);
  const double E0 = rows.front()[6] + rows.front()[7];
  double worst = 0, kmax = 0;
  for (const auto& row : rows) {
    worst = std::max(worst, std::abs(row[6] + row[7] - E0));
    kmax = std::max(kmax, row[7]);
  }
  MESSAGE(fmt::format("E0 = {:.6e} J, max |E - E0| = {:.3e} J (relative {:.2e}), max elastic energy {:.3e} J", E0, worst,
                      worst / E0, kmax));
  CHECK(kmax > 0.2 * E0);        // the energy really goes back and forth
  CHECK(worst / E0 < 2e-3);      // bounded, O(dt^2) (no dissipation, no drift)
}
