// The "spring-dashpot" contact with obstacles and friction end to end through the rodsim command
// (issue 39), at the model's DEFAULT parameters:
//  - the composition scenes of tests/validation/contact_explicit (a rope dropped across a clamped bar
//    onto a floor, scenes/contact/rope_over_bar.toml, friction 0.3; a rod dropped across a clamped
//    beam onto a floor, scenes/contact/dropped_rod.toml, friction 0.5) with --set
//    contact.type=spring-dashpot, DER and Cosserat rods, implicit-euler at 1 ms and position-verlet
//    at the rods' own stable dt: smallest gap over the run >= -2 % of the dropped rod's radius,
//    kinetic energy at the end <= 1 % of its peak, resting on the held rod and on the floor;
//  - Coulomb stick and slip under implicit-euler (scenes/contact/dropped_rod_incline.toml, tilt
//    alpha = 0.3 rad): mu = 0.5 creeps at the regularized law's v_s atanh(tan(alpha)/mu) (sticks to
//    within it), mu = 0.2 slides with a = g (sin(alpha) - mu cos(alpha)).
#include "csv_table.h"
#include "rod_gaps.h"
#include "run_rodsim.h"

#include <doctest/doctest.h>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using namespace rodsim::test;

namespace {

struct Scene {
  std::string file, held, dropped;
  double held_radius, radius;  // m
};

// The dropped rod's final gaps (m) to the held rod and to the floor z = 0.
std::pair<double, double> finalGaps(const Scene& scene, const std::filesystem::path& final_csv) {
  const auto nodes = finalNodes(final_csv);
  const auto &held = nodes.at(scene.held), &dropped = nodes.at(scene.dropped);
  return {rodGap(dropped, scene.radius, held, scene.held_radius), floorGap(dropped, scene.radius)};
}

void runScene(const Scene& scene) {
  for (const std::string rod : {"der", "cosserat"})
    for (const std::string solver : {"implicit-euler", "position-verlet"}) {
      CAPTURE(rod);
      CAPTURE(solver);
      const std::string models = " --set rod." + scene.held + ".model=" + rod + " --set rod." + scene.dropped +
                                 ".model=" + rod + " --set solver.type=" + solver +
                                 " --set contact.type=spring-dashpot --set simulation.duration=0.6";
      // the rods' dt: 1 ms, or the largest an explicit solver accepts for them ("use dt <= X s")
      std::string dt = "1e-3";
      const CommandResult check = runRodsim("check " + scene.file + models + " --set simulation.dt=1e-3");
      const auto p = check.output.find("use dt <= ");
      if (check.status != 0 && p != std::string::npos) dt = check.output.substr(p + 10, check.output.find(' ', p + 10) - p - 10);
      const std::string sets = models + " --set simulation.dt=" + dt;
      REQUIRE_MESSAGE(runRodsim("check " + scene.file + sets).status == 0, "refused");
      const auto dir = scratchDir("spring-dashpot-" + std::filesystem::path(scene.file).stem().string() + "-" + rod +
                                  "-" + solver);
      const CommandResult run = runRodsim("run " + scene.file + " --quiet --output " + dir.string() + sets);
      INFO(run.output);
      REQUIRE(run.status == 0);
      const std::string summary = readText(dir / "summary.json");
      const CsvTable ts = readCsv(dir / "timeseries.csv");
      double ke_max = 0;
      for (std::size_t i = 0; i < ts.rows.size(); ++i) ke_max = std::max(ke_max, ts.num(i, "kinetic_energy"));
      const double ke_end = ts.num(ts.rows.size() - 1, "kinetic_energy");
      const double min_gap = jsonNumber(summary, "min_gap");
      const auto [gap_rod, gap_floor] = finalGaps(scene, dir / "final.csv");
      MESSAGE(scene.file << " " << rod << " + " << solver << " (dt " << dt << "): min gap / r = "
                         << min_gap / scene.radius << ", KE end / max = " << ke_end / ke_max << ", final gap to "
                         << scene.held << " / r = " << gap_rod / scene.radius
                         << ", to the floor / r = " << gap_floor / scene.radius);
      CHECK(jsonNumber(summary, "steps_with_contact") > 0);
      CHECK(min_gap >= -0.02 * scene.radius);
      CHECK(ke_end <= 0.01 * ke_max);
      CHECK(gap_rod >= -0.02 * scene.radius);
      CHECK(gap_rod <= 0.2 * scene.radius);
      CHECK(gap_floor >= -0.02 * scene.radius);
      CHECK(gap_floor <= 0.2 * scene.radius);
    }
}

}  // namespace

TEST_CASE("spring-dashpot at defaults: rope dropped across a bar onto a floor (friction 0.3), DER and Cosserat, implicit-euler and position-verlet") {
  runScene({"scenes/contact/rope_over_bar.toml", "bar", "rope", 0.003, 0.001});
}

TEST_CASE("spring-dashpot at defaults: rod dropped across a beam onto a floor (friction 0.5), DER and Cosserat, implicit-euler and position-verlet") {
  runScene({"scenes/contact/dropped_rod.toml", "beam", "drop", 0.002, 0.002});
}

TEST_CASE("spring-dashpot, implicit-euler: Coulomb stick (mu = 0.5) and slip (mu = 0.2) of a rod dropped onto a slope") {
  constexpr double g = 9.81, alpha = 0.3, r = 0.002, vs = 1e-3;  // vs: the default slip_velocity
  for (const std::string rod : {"der", "cosserat"})
    for (double mu : {0.5, 0.2}) {
      CAPTURE(rod);
      CAPTURE(mu);
      const auto dir = scratchDir("spring-dashpot-incline-" + rod + "-" + std::to_string(mu));
      const CommandResult run =
          runRodsim("run scenes/contact/dropped_rod_incline.toml --quiet --output " + dir.string() +
                    " --set solver.type=implicit-euler --set simulation.dt=1e-3 --set contact.type=spring-dashpot" +
                    " --set rod.rod.model=" + rod + " --set contact.friction=" + std::to_string(mu));
      INFO(run.output);
      REQUIRE(run.status == 0);
      const CsvTable t = readCsv(dir / "timeseries.csv");
      std::size_t land = 0;
      while (land < t.rows.size() && t.num(land, "contacts") == 0) ++land;
      REQUIRE(land < t.rows.size());
      std::size_t from = land;
      while (from < t.rows.size() && t.num(from, "t") < t.num(land, "t") + 0.02) ++from;
      REQUIRE(from + 1 < t.rows.size());
      const std::size_t last = t.rows.size() - 1;
      double gap = 1e9, disp = 0;
      for (std::size_t i = land; i < t.rows.size(); ++i) {
        gap = std::min(gap, t.num(i, "min_gap"));
        disp = std::max(disp, std::abs(t.num(i, "x_mid") - t.num(land, "x_mid")));
      }
      CHECK(gap >= -0.01 * r);
      if (mu == 0.5) {
        // Coulomb sticks (tan(alpha) = 0.309 < mu); the regularized law creeps at
        // v = v_s atanh(tan(alpha)/mu) = 0.72 mm/s: the displacement after landing is that creep
        const double creep = vs * std::atanh(std::tan(alpha) / mu);
        const double v = (t.num(last, "x_mid") - t.num(from, "x_mid")) / (t.num(last, "t") - t.num(from, "t"));
        MESSAGE(rod << " stick: displacement along the slope after landing " << disp << " m, creep " << v
                    << " m/s (v_s atanh(tan(alpha)/mu) = " << creep << "), min gap " << gap << " m");
        CHECK(v == doctest::Approx(creep).epsilon(0.05));
        CHECK(disp < 1.2 * creep * (t.num(last, "t") - t.num(land, "t")));
      } else {
        const double a = g * (std::sin(alpha) - mu * std::cos(alpha));
        const double acc = (t.num(last, "vx_mid") - t.num(from, "vx_mid")) / (t.num(last, "t") - t.num(from, "t"));
        MESSAGE(rod << " slip: a = " << acc << " m/s^2, analytic " << a << " (rel " << (acc - a) / a
                    << "), displacement after landing " << disp << " m, min gap " << gap << " m");
        CHECK(acc == doctest::Approx(a).epsilon(0.02));
      }
    }
}
