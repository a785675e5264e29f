// Cosserat rods with the Newton solvers (implicit-euler, static), end to end through the rodsim
// command, on the scenes of the explicit validation: the Timoshenko cantilever of Gazzola et al. (2018)
// (Fig. 5, Eq. 29) at a hundred times the explicit stability limit and in one static load step, and
// the Euler buckling load of the clamped-free column (Appendix E.1, Eq. E1) found by the static solver
// in five load steps. Numbers and their origin: docs/validation/cosserat.md, "Implicit and static
// solvers". Also: ground and force_law = "gazzola2018" are refused under them, with the reason; and
// implicit-euler with contact (imc, ipc, alart-curnier, spring-dashpot) on the dropped-rod and
// rope-over-bar scenes at dt = 1 ms and default contact parameters (plugins/solver_newton/README.md,
// "Predictor").
#include "csv_table.h"
#include "run_rodsim.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <string>
#include <vector>

using namespace rodsim::test;

namespace {

constexpr double kPi = 3.14159265358979323846;
// Fig. 5 settings (scenes/validation/cosserat_timoshenko.toml)
constexpr double L = 3.0, r = 0.25, E = 1e6, G = 1e4, alpha = 4.0 / 3.0, F = 15.0;
const double A = kPi * r * r, I = kPi * std::pow(r, 4) / 4;
const double timoshenko = F * L / (alpha * G * A) + F * L * L * L / (3 * E * I);  // Eq. 29 at s = L

// The explicit stability limit of the Timoshenko scene, as position-verlet estimates it when refusing a
// step that is too long ("... estimated at 0.00166 s ...").
double explicitLimit() {
  auto dir = scratchDir("cosserat-implicit-limit");
  CommandResult res = runRodsim(fmt::format(
      "run scenes/validation/cosserat_timoshenko.toml --quiet --output {} --set simulation.dt=0.1", dir.string()));
  REQUIRE(res.status != 0);  // refused at the first step (3), or up front by the dry step (2)
  const std::string key = "estimated at ";
  std::string text = res.output;
  if (text.find(key) == std::string::npos && std::filesystem::exists(dir / "summary.json"))
    text = readText(dir / "summary.json");
  const auto at = text.find(key);
  INFO(res.output);
  REQUIRE(at != std::string::npos);
  return std::stod(text.substr(at + key.size()));
}

struct Run {
  std::vector<std::vector<double>> rows;  // step,t,iterations,wall_ms,contacts,min_gap,K,U,probe
  double tip() const { return rows.back().back(); }
  double meanIterations() const {
    double s = 0;
    for (std::size_t k = 1; k < rows.size(); ++k) s += rows[k][2];
    return s / double(rows.size() - 1);
  }
};

Run run(const std::string& scene, const std::string& name, const std::string& sets) {
  auto dir = scratchDir(name);
  CommandResult res =
      runRodsim(fmt::format("run scenes/validation/{} --quiet --output {} {}", scene, dir.string(), sets));
  INFO(res.output);
  REQUIRE(res.status == 0);
  Run out;
  out.rows = readNumericCsv(dir / "timeseries.csv");
  REQUIRE(out.rows.size() >= 2);
  return out;
}

}  // namespace

TEST_CASE("Timoshenko cantilever with implicit-euler at 100x the explicit stability limit: Eq. 29 within 1 %") {
  const double limit = explicitLimit(), dt = 0.166;
  // The residual floor of this stiff rod (E A / l = 8e6 N/m times the round-off of positions of 3 m)
  // is about 2e-8 N: the default absolute tolerance 1e-8 N lies below it, 1e-7 N is 1e-8 of the load.
  const Run r = run("cosserat_timoshenko.toml", "cosserat-implicit-euler",
                    fmt::format("--set solver.type=implicit-euler --set simulation.dt={} --set solver.tolerance=1e-7", dt));
  const double tip = -r.tip(), earlier = -r.rows[r.rows.size() * 5 / 6].back();
  const double err = std::abs(tip - timoshenko) / timoshenko;
  MESSAGE(fmt::format("explicit limit {:.5f} s, dt = {} s ({:.0f}x): tip {:.6f} m, Eq. 29 {:.6f} m, error {:.3e}, "
                      "{} steps, {:.2f} Newton iterations per step",
                      limit, dt, dt / limit, tip, timoshenko, err, r.rows.size() - 1, r.meanIterations()));
  CHECK(dt >= 99 * limit);
  CHECK(err < 0.01);
  CHECK(std::abs(tip - earlier) < 1e-4 * tip);  // settled: the damping (Eq. 31) is implicit too
  CHECK(r.meanIterations() < 3);
}

TEST_CASE("Timoshenko cantilever with static: Eq. 29 within 1 % in one load step") {
  const Run r = run("cosserat_timoshenko.toml", "cosserat-static",
                    "--set solver.type=static --set solver.ramp_time=1 --set simulation.duration=1 "
                    "--set simulation.dt=1 --set solver.tolerance=1e-7");
  const double tip = -r.tip(), err = std::abs(tip - timoshenko) / timoshenko;
  MESSAGE(fmt::format("static, one load step: tip {:.6f} m, Eq. 29 {:.6f} m, error {:.3e}, {} Newton iterations", tip,
                      timoshenko, err, r.rows.back()[2]));
  CHECK(r.rows.size() == 2);
  CHECK(err < 0.01);
  CHECK(r.rows.back()[2] <= 5);
}

TEST_CASE("Euler buckling (clamped-free, Eq. E1) with static: the lateral stiffness vanishes at F_c within 1 %") {
  // A dead tip load F (0.19 .. 0.95 F_c in five load steps) tilted by 1e-3 rad: the lateral tip
  // deflection delta grows like 1/(1 - F/F_c), so the lateral stiffness H/delta (H = 1e-3 F) falls
  // linearly to zero at the buckling load; the line through the last three load steps gives it.
  const double EI = 1e6 * kPi * std::pow(0.05, 4) / 4, Fc = kPi * kPi * EI / 4;  // L = 1 m
  const int n = 400;
  const double Fd = Fc / std::pow(1 - 0.5 / n, 2);  // the clamp holds element 0's frame: length L - h/2
  const double Fmax = 0.95 * Fc, tilt = 1e-3;
  const Run r = run("cosserat_euler_buckling.toml", "cosserat-static-euler",
                    fmt::format("--set solver.type=static --set solver.ramp_time=1 --set simulation.duration=1 "
                                "--set simulation.dt=0.2 --set rod.column.nodes={} --set 'rod.column.initial_velocity=[0, 0, 0]' "
                                "--set 'force.tip.force=[{}, 0, -{}]'",
                                n + 1, tilt * Fmax, Fmax));
  REQUIRE(r.rows.size() == 6);
  std::vector<double> P, k;
  for (std::size_t s = 3; s < r.rows.size(); ++s) {
    P.push_back(r.rows[s][1] * Fmax);                    // axial load at this step (load scale t)
    k.push_back(tilt * P.back() / r.rows[s].back());   // lateral stiffness H / delta
  }
  double mp = 0, mk = 0;
  for (std::size_t j = 0; j < P.size(); ++j) mp += P[j] / P.size(), mk += k[j] / P.size();
  double sxy = 0, sxx = 0;
  for (std::size_t j = 0; j < P.size(); ++j) sxy += (P[j] - mp) * (k[j] - mk), sxx += (P[j] - mp) * (P[j] - mp);
  const double slope = sxy / sxx, critical = mp - mk / slope;
  double iterations = 0;
  for (std::size_t s = 1; s < r.rows.size(); ++s) iterations += r.rows[s][2];
  MESSAGE(fmt::format("n = {}: buckling load {:.4f} N, Eq. E1 F_c = {:.4f} N (error {:.3e}), discrete threshold F_d = "
                      "{:.4f} N ({:+.3e}); {} Newton iterations in 5 load steps",
                      n, critical, Fc, critical / Fc - 1, Fd, critical / Fd - 1, iterations));
  CHECK(std::abs(critical / Fc - 1) < 0.01);
  // Above F_d by the column's shortening and shear (axial strain F/EA = 0.15 %): 0.3-0.4 % (docs).
  CHECK(std::abs(critical / Fd - 1) < 0.005);
  CHECK(iterations <= 25);
}

TEST_CASE("what has no stiffness is refused under the Newton solvers, with the reason: ground, force_law gazzola2018") {
  // `rodsim check` takes the solver's first step (dry): both throw at the first stiffness request.
  const CommandResult snake = runRodsim("check scenes/snake.toml --set solver.type=implicit-euler");
  INFO(snake.output);
  CHECK(snake.status == 2);
  CHECK(snake.output.find("ground works with the explicit solvers") != std::string::npos);
  const CommandResult written = runRodsim(
      "check scenes/validation/cosserat_timoshenko.toml --set solver.type=static --set solver.ramp_time=1 "
      "--set solver.tolerance=1e-7 --set rod.beam.force_law=gazzola2018");
  INFO(written.output);
  CHECK(written.status == 2);
  CHECK(written.output.find("force_law = \"gazzola2018\"") != std::string::npos);
  CHECK(written.output.find("no stiffness matrix") != std::string::npos);
  // The same scenes are fine with what they are made for.
  CHECK(runRodsim("check scenes/snake.toml").status == 0);
  CHECK(runRodsim("check scenes/validation/cosserat_timoshenko.toml --set solver.type=static --set solver.ramp_time=1 "
                  "--set solver.tolerance=1e-7")
            .status == 0);
}

namespace {


}  // namespace

TEST_CASE("implicit-euler with contact on Cosserat rods at dt = 1 ms, default contact parameters: imc, ipc, alart-curnier, "
          "spring-dashpot") {
  // Both rods of each scene Cosserat rods. Newton used to fail at an impact or in the step after it
  // (dropped rod: imc at step 149, |R_free| = 119 N after 50 iterations; spring-dashpot at step 68),
  // where the velocity predictor carried the approach velocity into the contact; the solver now starts
  // such a step from q_n when its residual is lower (plugins/solver_newton/README.md, "Predictor").
  struct Scene {
    std::string file, held, dropped;
    double radius;  // m, the dropped rod's
  };
  for (const Scene& scene : {Scene{"scenes/contact/dropped_rod.toml", "beam", "drop", 0.002},
                             Scene{"scenes/contact/rope_over_bar.toml", "bar", "rope", 0.001}})
    for (const std::string contact : {"imc", "ipc", "alart-curnier", "spring-dashpot"}) {
      CAPTURE(scene.file);
      CAPTURE(contact);
      const auto dir =
          scratchDir(fmt::format("cosserat-implicit-contact-{}-{}", std::filesystem::path(scene.file).stem().string(), contact));
      const CommandResult res = runRodsim(fmt::format(
          "run {} --quiet --output {} --set rod.{}.model=cosserat --set rod.{}.model=cosserat --set contact.type={} "
          "--set simulation.dt=1e-3",
          scene.file, dir.string(), scene.held, scene.dropped, contact));
      INFO(res.output);
      const std::string summary = readText(dir / "summary.json");
      INFO(summary);
      REQUIRE(res.status == 0);
      const CsvTable ts = readCsv(dir / "timeseries.csv");
      double ke_max = 0, iterations = 0;
      for (std::size_t i = 0; i < ts.rows.size(); ++i) {
        ke_max = std::max(ke_max, ts.num(i, "kinetic_energy"));
        iterations += ts.num(i, "iterations");
      }
      const double ke_end = ts.num(ts.rows.size() - 1, "kinetic_energy");
      const double min_gap = jsonNumber(summary, "min_gap"), steps = jsonNumber(summary, "steps");
      MESSAGE(fmt::format("{} + {}: min gap {:.3e} r, KE end / peak {:.1e}, {:.2f} Newton iterations per step, {:.2f} s",
                          scene.file, contact, min_gap / scene.radius, ke_end / ke_max, iterations / steps,
                          jsonNumber(summary, "wall_time_s")));
      CHECK(jsonNumber(summary, "steps_with_contact") > 0);
      CHECK(min_gap >= -0.02 * scene.radius);  // no more overlap than 2 % of the dropped rod's radius
      CHECK(ke_end < 0.01 * ke_max);           // at rest: the kinetic energy down to 1 % of its peak
      CHECK(iterations / steps < 5);           // 2.3-3.6 measured (the solver's README)
    }
}
