// The "rss" force through the rodsim command: a rod sedimenting broadside reaches the terminal
// velocity of slender-body theory and, at steady state, the hydrodynamic force balances its weight
// (momentum balance); two flagella spun by their motors touch with a positive gap, and the GMRES
// path reproduces the dense LU reference.
#include "csv_table.h"
#include "run_rodsim.h"
#include "stokeslet_operator.h"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <numbers>
#include <string>
#include <vector>

using namespace rodsim::test;

namespace {

constexpr double kPi = std::numbers::pi;
constexpr double kEta = 0.1, kRadius = 1e-3, kLength = 0.1, kDensity = 2000.0, kG = 9.81;
constexpr int kNodes = 41;

std::string sedimentingRod() {
  return R"(
[simulation]
duration = 0.3
dt = 1e-3

[solver]
type = "implicit-euler"
tolerance = 1e-9

[[rod]]
name = "rod"
model = "der"
nodes = 41
radius = 1e-3
density = 2000.0
youngs_modulus = 1e9
poisson_ratio = 0.5
geometry = { shape = "straight", start = [0, 0, 0], end = [0.1, 0, 0] }

[[force]]
type = "gravity"
g = [0, 0, -9.81]

[[force]]
type = "rss"
viscosity = 0.1
tolerance = 1e-10

[output]
every = 0.1

[[probe]]
name = "vz_mid"
type = "node-velocity"
rod = "rod"
node = 20
component = "z"

[[probe]]
name = "vz_end"
type = "node-velocity"
rod = "rod"
node = 0
component = "z"
)";
}

}  // namespace

TEST_CASE("a rod sedimenting broadside reaches the slender-body terminal velocity, forces balanced") {
  const auto dir = scratchDir("rss_sedimentation");
  const auto scene = writeText(dir / "sediment.toml", sedimentingRod());
  const CommandResult r = runRodsim("run " + scene.string() + " --output " + (dir / "out").string() + " --quiet");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  const CsvTable ts = readCsv(dir / "out" / "timeseries.csv");
  const std::size_t last = ts.rows.size() - 1;
  const double U = ts.num(last, "vz_mid"), U_end = ts.num(last, "vz_end");
  // Steady: the relaxation time m / c is about 0.03 s, the run 0.3 s.
  CHECK(std::abs(ts.num(last - 10, "vz_mid") / U - 1) < 1e-5);
  CHECK(std::abs(U_end / U - 1) < 2e-3);  // a stiff rod falls as a whole (its ends bend ~0.1%)

  // Slender-body theory for a cylinder of radius a = eps / sqrt(e) (see test_rss_operator.cpp):
  // weight rho pi h^2 L g = 4 pi eta U L / (ln p + 0.839 + 0.185/p + 0.233/p^2), p = L / 2a.
  const double a = 1.02 * kRadius * std::exp(-0.5), p = kLength / (2 * a);
  const double weight = kDensity * kPi * kRadius * kRadius * kLength * kG;
  const double U_sbt = -weight * (std::log(p) + 0.839 + 0.185 / p + 0.233 / (p * p)) / (4 * kPi * kEta * kLength);
  MESSAGE("terminal velocity " << U << " m/s, slender-body theory " << U_sbt << " m/s");
  // The theory's fit (~1%) plus the resolution (edge = 2.5 eps: ~1% by test_rss_operator).
  CHECK(std::abs(U / U_sbt - 1) < 0.03);

  // Momentum balance: the densities that move the final shape at the final velocities, times the
  // hat-function lengths, add up to minus the weight.
  const CsvTable fin = readCsv(dir / "out" / "final.csv");
  REQUIRE(fin.rows.size() == static_cast<std::size_t>(kNodes));
  std::vector<rodsim::Vec3> x(kNodes);
  for (int i = 0; i < kNodes; ++i) x[i] = rodsim::Vec3(fin.num(i, "x"), fin.num(i, "y"), fin.num(i, "z"));
  rodsim::rss::StokesletOperator op;
  std::vector<rodsim::rss::Segment> segments;
  for (int i = 0; i + 1 < kNodes; ++i) segments.push_back({i, i + 1});
  op.setTopology(kNodes, segments, std::vector<double>(kNodes, 1.02 * kRadius), {0, kNodes}, 1);
  op.assemble(x);
  rodsim::Vec rhs(3 * kNodes), F = rodsim::Vec::Zero(3 * kNodes);
  for (int i = 0; i < kNodes; ++i) rhs.segment<3>(3 * i) = 8 * kPi * kEta * rodsim::Vec3(0, 0, U);
  op.solveLu(rhs, F);
  double Fz = 0;
  for (int i = 0; i < kNodes; ++i) {
    double len = 0;
    if (i > 0) len += 0.5 * (x[i] - x[i - 1]).norm();
    if (i + 1 < kNodes) len += 0.5 * (x[i + 1] - x[i]).norm();
    Fz += len * F[3 * i + 2];  // force of the rod on the fluid
  }
  MESSAGE("drag " << Fz << " N, weight " << weight << " N");
  CHECK(std::abs(-Fz / weight - 1) < 1e-3);  // measured 3e-5: the rod still accelerates by 1e-5
}

TEST_CASE("two flagella spun by their motors bundle and touch with a positive gap") {
  // scenes/flagella/m2_close.toml: heads 3.25 mm apart, contact within about 0.15 s.
  const auto dir = scratchDir("flagella_m2_close");
  const CommandResult r = runRodsim("run scenes/flagella/m2_close.toml --set simulation.duration=0.4 --output " +
                                    (dir / "out").string() + " --quiet");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  const std::string summary = readText(dir / "out" / "summary.json");
  CHECK(summary.find("\"status\": \"ok\"") != std::string::npos);
  const CsvTable ts = readCsv(dir / "out" / "timeseries.csv");
  int contact_steps = 0;
  double min_gap = 1e9;
  for (std::size_t k = 0; k < ts.rows.size(); ++k) {
    if (ts.num(k, "contacts") > 0) {
      ++contact_steps;
      min_gap = std::min(min_gap, ts.num(k, "min_gap"));
    }
  }
  MESSAGE(contact_steps << " steps with contact, min gap " << min_gap << " m");
  CHECK(contact_steps > 100);
  // IMC keeps pairs apart: the gap stays positive and inside the delta = 1e-5 m band.
  CHECK(min_gap > 0);
  CHECK(min_gap < 1e-5);
  // Both motors feel an axial reaction of the same sign: the propulsive force of Eq. D.1.
  double t0 = 0, t1 = 0;
  int n = 0;
  for (std::size_t k = ts.rows.size() / 2; k < ts.rows.size(); ++k, ++n) {
    t0 += ts.num(k, "thrust0");
    t1 += ts.num(k, "thrust1");
  }
  MESSAGE("mean motor reactions " << t0 / n << ", " << t1 / n << " N");
  CHECK(t0 * t1 > 0);
}

TEST_CASE("the GMRES path reproduces the dense LU reference on the flagella") {
  const auto dir = scratchDir("flagella_gmres_lu");
  std::vector<CsvTable> finals;
  for (std::string solver : {"lu", "gmres"}) {
    const CommandResult r = runRodsim("run scenes/flagella/m2.toml --set simulation.duration=0.05 --set force.linear_solver=" +
                                      solver + " --set force.tolerance=1e-10 --output " + (dir / solver).string() + " --quiet");
    REQUIRE_MESSAGE(r.status == 0, r.output);
    finals.push_back(readCsv(dir / solver / "final.csv"));
  }
  double diff = 0;
  for (std::size_t i = 0; i < finals[0].rows.size(); ++i)
    for (const char* c : {"x", "y", "z"}) diff = std::max(diff, std::abs(finals[0].num(i, c) - finals[1].num(i, c)));
  MESSAGE("max position difference after 50 steps: " << diff << " m");
  CHECK(diff < 1e-9);  // the motion is ~1e-2 m; solver tolerance 1e-10 on the densities
}

TEST_CASE("the overlapped fluid (overlap = true, or measured when not given) gives the same run bit for bit") {
  // m2_close: heads 3.25 mm apart, so that the run has contact steps (imc) as well.
  const auto dir = scratchDir("flagella_overlap");
  std::vector<std::string> finals;
  std::vector<CsvTable> series;
  for (std::string overlap : {"false", "true", "measured"}) {
    const std::string set = overlap == "measured" ? "" : " --set force.fluid.overlap=" + overlap;
    const CommandResult r = runRodsim("run scenes/flagella/m2_close.toml --set simulation.duration=0.25" + set +
                                      " --output " + (dir / overlap).string() + " --quiet");
    REQUIRE_MESSAGE(r.status == 0, r.output);
    finals.push_back(readText(dir / overlap / "final.csv"));
    series.push_back(readCsv(dir / overlap / "timeseries.csv"));
  }
  int contact_steps = 0;
  for (int other : {1, 2}) {
    CHECK(finals[0] == finals[other]);
    REQUIRE(series[0].rows.size() == series[other].rows.size());
    for (std::size_t k = 0; k < series[0].rows.size(); ++k) {
      contact_steps += other == 1 && series[0].num(k, "contacts") > 0;
      CHECK(series[0].num(k, "iterations") == series[other].num(k, "iterations"));
      CHECK(series[0].num(k, "fluid.gmres_iterations") == series[other].num(k, "fluid.gmres_iterations"));
    }
  }
  CHECK(contact_steps > 50);
}

TEST_CASE("overlap = true with threads > 1 is refused with the reason") {
  const CommandResult r = runRodsim("check scenes/flagella/m2.toml --set force.fluid.overlap=true --set force.fluid.threads=2");
  CHECK(r.status == 2);
  CHECK(r.output.find("threads") != std::string::npos);
  CHECK(r.output.find("overlap") != std::string::npos);
}

TEST_CASE("flagella in a fluid and in contact restart bit for bit (overlap = true)") {
  // The rss force's warm start, solve count and preconditioner (refactored at load from the
  // positions it was factored at) are in the checkpoint; imc keeps its contact stiffness.
  namespace fs = std::filesystem;
  const auto dir = scratchDir("flagella_restart");
  const std::string sets = " --set simulation.duration=0.3 --set output.checkpoint_every=0.15 --set output.checkpoint_keep=10"
                           " --set force.fluid.overlap=true";
  CommandResult r = runRodsim("run scenes/flagella/m2_close.toml --quiet --output " + (dir / "full").string() + sets);
  REQUIRE_MESSAGE(r.status == 0, r.output);
  fs::copy(dir / "full", dir / "resumed", fs::copy_options::recursive);
  for (const auto& f : fs::directory_iterator(dir / "resumed/checkpoints"))
    if (f.path().filename() != "step_000000000150.ckpt") fs::remove(f.path());
  REQUIRE(fs::exists(dir / "resumed/checkpoints/step_000000000150.ckpt"));
  r = runRodsim("run --restart " + (dir / "resumed").string() + " --quiet");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK(readText(dir / "full/final.csv") == readText(dir / "resumed/final.csv"));
  const CsvTable a = readCsv(dir / "full/timeseries.csv"), b = readCsv(dir / "resumed/timeseries.csv");
  REQUIRE(a.rows.size() == b.rows.size());
  int contact_steps = 0;
  for (std::size_t k = 0; k < a.rows.size(); ++k) {
    contact_steps += a.num(k, "contacts") > 0;
    for (const char* c : {"iterations", "contacts", "min_gap", "thrust0", "fluid.gmres_iterations", "fluid.relative_residual"})
      CHECK_MESSAGE(a.rows[k].at(a.col(c)) == b.rows[k].at(b.col(c)), c << " at row " << k);  // as written
  }
  CHECK(contact_steps > 50);
}
