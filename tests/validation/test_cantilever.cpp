// DER cantilevers against beam theory, run end to end through the rodsim command:
// small tip load vs Euler-Bernoulli, large deflection vs the elastica (shooting, elastica.h).
#include "elastica.h"
#include "run_rodsim.h"

#include <doctest/doctest.h>

#include <cmath>
#include <fmt/format.h>
#include <sstream>

using namespace rodsim::test;

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double L = 1.0, r = 0.01, E = 1e7;
const double EI = E * kPi * std::pow(r, 4) / 4;

struct Tip {
  double x, z;
};

// Runs a validation scene with `nodes` nodes and tip load F L^2/EI = p; returns the last node.
Tip runCantilever(const std::string& scene, int nodes, double p) {
  const double F = p * EI / (L * L);
  auto dir = scratchDir(fmt::format("cantilever-{}-{}-{}", scene, nodes, p));
  CommandResult res = runRodsim(fmt::format("run scenes/validation/{}.toml --quiet --output {} --set rod.beam.nodes={} "
                                         "--set 'force.tip.force=[0, 0, {:.17g}]'",
                                         scene, dir.string(), nodes, -F));
  INFO(res.output);
  REQUIRE(res.status == 0);
  std::istringstream csv(readText(dir / "final.csv"));
  std::string line, last;
  while (std::getline(csv, line))
    if (!line.empty()) last = line;
  Tip tip{};
  REQUIRE(std::sscanf(last.c_str(), "beam,%*d,%lf,%*f,%lf", &tip.x, &tip.z) == 2);
  return tip;
}

// The clamp holds nodes 0 and 1: the elastic beam starts at the middle of edge 0.
double effectiveLength(int nodes) { return L - 0.5 * L / (nodes - 1); }

}  // namespace

TEST_CASE("small tip load: Euler-Bernoulli deflection F L^3 / 3EI within 1%, error shrinking with n") {
  const double p = 0.01;
  double previous = 1e9;
  for (int nodes : {11, 21, 41}) {
    const Tip tip = runCantilever("cantilever_small_load", nodes, p);
    const double Le = effectiveLength(nodes);
    const double theory = -(p * EI / (L * L)) * std::pow(Le, 3) / (3 * EI);
    const double err = std::abs(tip.z - theory) / std::abs(theory);
    MESSAGE(fmt::format("n = {}: tip z = {:.6e}, Euler-Bernoulli {:.6e}, relative error {:.3e}", nodes, tip.z, theory, err));
    CHECK(err < previous);
    previous = err;
    if (nodes == 41) CHECK(err < 0.01);
  }
}

TEST_CASE("large deflection: the elastica tip within 1% for F L^2 / EI = 1, 3, 5, error shrinking with n") {
  for (double p : {1.0, 3.0, 5.0}) {
    double previous = 1e9;
    for (int nodes : {11, 21, 41}) {
      const Tip tip = runCantilever("cantilever_large_deflection", nodes, p);
      const double Le = effectiveLength(nodes);
      // Elastica of the effective beam, whose root is at x = L - Le on the clamped axis.
      const auto [xe, ze] = elasticaTip(p * Le * Le / (L * L));
      const double x_theory = (L - Le) + Le * xe, z_theory = Le * ze;
      const double err = std::hypot(tip.x - x_theory, tip.z - z_theory) / std::abs(z_theory);
      MESSAGE(fmt::format("p = {}, n = {}: tip ({:.5f}, {:.5f}), elastica ({:.5f}, {:.5f}), error {:.3e}", p, nodes,
                          tip.x, tip.z, x_theory, z_theory, err));
      CHECK(err < previous);
      previous = err;
      if (nodes == 41) CHECK(err < 0.01);
    }
  }
}
