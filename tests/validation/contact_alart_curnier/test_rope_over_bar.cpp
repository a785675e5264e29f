// The velocity-level (Moreau-Jean) step of alart-curnier with position-verlet and Coulomb friction,
// at the contact model's default parameters and at the largest dt the rods accept without contact
// (issue 39, item 3; plugins/contact_alart_curnier/README.md, "Explicit solvers"):
//  - scenes/contact/rope_over_bar.toml (a 61-node soft rope, r = 1 mm, dropped across a clamped bar
//    onto a floor, mu = 0.3) on DER and Cosserat rods: every contact solve converges (exit 0), the
//    smallest gap over the run is >= -2 % of the rope's radius, and at the end the rope rests on the
//    bar and on the floor with a kinetic energy below 1 % of the m g h its fall released;
//  - its relatives, the same checks (on Cosserat rods through the impacts only, 0.15 s): the symmetric
//    crossing (the rope centred on the bar's middle node, crossing it at a rope node: both rods have
//    a kink exactly at the contact), and simultaneous impacts (the rope tilted so that it reaches the
//    bar and the floor in the same step);
//  - scenes/contact/dropped_rod.toml with friction (mu = 0.5) on both rod models.
#include "csv_table.h"
#include "rod_gaps.h"
#include "run_rodsim.h"

#include <doctest/doctest.h>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

using namespace rodsim::test;

namespace {

constexpr double kRopeRadius = 0.001, kBarRadius = 0.003;
constexpr double kRopeMass = 1000.0 * M_PI * kRopeRadius * kRopeRadius * 0.3;  // rho A L, kg

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

// The largest dt the rods accept without contact: the explicit solver refuses 2e-5 s at step 1 and
// names the safe step ("use dt <= X s"); a hair below it (the printed value is rounded).
double largestAcceptedDt(const std::string& sets) {
  const auto dir = scratchDir("rope-over-bar-dt");
  const CommandResult r = runRodsim("run scenes/contact/rope_over_bar.toml --quiet --output " + dir.string() + sets +
                                    " --set simulation.dt=2e-5 --set simulation.duration=1e-4");
  const std::string reason = readText(dir / "summary.json");
  INFO(r.output);
  INFO(reason);
  REQUIRE(r.status == 3);
  const auto p = reason.find("use dt <= ");
  REQUIRE(p != std::string::npos);
  return 0.995 * std::stod(reason.substr(p + 10));
}

struct RopeRun {
  double min_gap = 0, steps_with_contact = 0, wall_s = 0;
  double ke_end = 0, mgh = 0;
  double rope_bar_gap = 0;          // final: smallest distance between the rods' centre lines minus the radii
  double end_z0 = 0, end_z1 = 0;    // final: height of the rope's two end nodes (r on the floor)
  double max_ac_iterations = 0, max_prox_iterations = 0, max_natmap_rel = 0;
};

RopeRun runRope(const std::string& name, const std::string& model, double dt, double duration,
                const std::string& extra, double start_z) {
  const std::string sets = " --set solver.type=position-verlet --set contact.type=alart-curnier --set rod.rope.model=" +
                           model + " --set rod.bar.model=" + model;
  const auto dir = scratchDir("rope-over-bar-" + name + "-" + model);
  const CommandResult r = runRodsim("run scenes/contact/rope_over_bar.toml --quiet --output " + dir.string() + sets +
                                    extra + " --set simulation.dt=" + number(dt) +
                                    " --set simulation.duration=" + number(duration));
  INFO(r.output);
  const std::string summary = readText(dir / "summary.json");
  INFO(summary);
  REQUIRE(r.status == 0);
  RopeRun out;
  out.min_gap = jsonNumber(summary, "min_gap");
  out.steps_with_contact = jsonNumber(summary, "steps_with_contact");
  out.wall_s = jsonNumber(summary, "wall_time_s");
  const CsvTable ts = readCsv(dir / "timeseries.csv");
  out.ke_end = ts.num(ts.rows.size() - 1, "kinetic_energy");
  for (std::size_t i = 0; i < ts.rows.size(); ++i) {
    out.max_ac_iterations = std::max(out.max_ac_iterations, ts.num(i, "contact.ac_iterations"));
    out.max_prox_iterations = std::max(out.max_prox_iterations, ts.num(i, "contact.prox_iterations"));
    const std::string rel = ts.rows[i][ts.col("contact.natmap_rel")];
    if (!rel.empty()) out.max_natmap_rel = std::max(out.max_natmap_rel, std::stod(rel));
  }
  const auto nodes = finalNodes(dir / "final.csv");
  const auto &rope = nodes.at("rope"), &bar = nodes.at("bar");
  double z_mean = 0;
  for (const auto& x : rope) z_mean += x.z() / rope.size();
  out.mgh = kRopeMass * 9.81 * (start_z - z_mean);  // equal node masses but the ends' halves: close enough
  out.rope_bar_gap = rodGap(rope, kRopeRadius, bar, kBarRadius);
  out.end_z0 = rope.front().z();
  out.end_z1 = rope.back().z();
  MESSAGE(name << " " << model << " (dt " << dt << " s, " << duration << " s): min gap " << out.min_gap
                << " m, steps with contact " << out.steps_with_contact << ", final KE " << out.ke_end << " J = "
                << out.ke_end / out.mgh << " m g h, rope-bar gap " << out.rope_bar_gap << " m, ends at z = "
                << out.end_z0 << ", " << out.end_z1 << " m, AC iterations per step <= " << out.max_ac_iterations
                << ", proximal <= " << out.max_prox_iterations << ", natural map rel <= " << out.max_natmap_rel
                << ", wall " << out.wall_s << " s");
  return out;
}

// At rest on the bar and on the floor: the rods touch (within 2 % of the rope's radius) and both
// ends of the rope lie on the floor (centre line at z = r).
void checkResting(const RopeRun& run) {
  CHECK(std::abs(run.rope_bar_gap) <= 0.02 * kRopeRadius);
  CHECK(std::abs(run.end_z0 - kRopeRadius) <= 0.02 * kRopeRadius);
  CHECK(std::abs(run.end_z1 - kRopeRadius) <= 0.02 * kRopeRadius);
}

}  // namespace

TEST_CASE("rope over a bar, position-verlet + alart-curnier with friction: converges, no penetration, at rest") {
  struct Case {
    std::string name, sets;
    double start_z;  // mean height of the rope's centre line at t = 0
  };
  const Case cases[] = {
      // The plain scene: the rope lands on the bar at t = 0.045 s, its ends on the floor at 0.093 s;
      // by 0.4 s its elastic waves have died down to below 1 % of the energy of the fall.
      {"plain", "", 0.044},
      // Symmetric crossing: the rope centred on the bar's middle node, its own node 30 on the bar (a
      // kink of both polygons exactly at the contact; two rope edges meet the bar there).
      {"symmetric", " --set 'rod.rope.geometry.start=[0,-0.15,0.044]' --set 'rod.rope.geometry.end=[0,0.15,0.044]'",
       0.044},
      // Simultaneous impacts: the rope tilted (z = 0.0605 at y = -0.1 down to 0.011 at y = 0.2) reaches
      // the bar and, with its low end, the floor after the same 1 cm fall, in the same step.
      {"simultaneous",
       " --set 'rod.rope.geometry.start=[0.002,-0.1,0.0605]' --set 'rod.rope.geometry.end=[0.002,0.2,0.011]'",
       0.5 * (0.0605 + 0.011)},
  };
  for (const std::string model : {"der", "cosserat"}) {
    CAPTURE(model);
    const std::string rods = " --set rod.rope.model=" + model + " --set rod.bar.model=" + model;
    const double dt = largestAcceptedDt(rods + " --set solver.type=position-verlet --set contact.type=alart-curnier");
    for (const Case& c : cases) {
      CAPTURE(c.name);
      // To rest (0.4 s) on DER rods and in the plain Cosserat scene; the Cosserat variants (dt 2.6x
      // smaller: 10-15 s each to rest) through both impacts and the ends' landing (0.15 s), to keep
      // the test within a minute.
      const bool to_rest = model == "der" || c.name == "plain";
      const RopeRun run = runRope(c.name, model, dt, to_rest ? 0.4 : 0.15, c.sets, c.start_z);
      CHECK(run.steps_with_contact > 0);
      CHECK(run.min_gap >= -0.02 * kRopeRadius);
      if (!to_rest) continue;
      CHECK(run.mgh > 1.5e-4);  // the fall: centre of mass from 36-44 mm to ~9 mm, m g h = 2.5-3.2e-4 J
      CHECK(run.ke_end < 0.01 * run.mgh);
      checkResting(run);
    }
  }
}

TEST_CASE("dropped rod with friction, position-verlet + alart-curnier at default contact parameters") {
  // scenes/contact/dropped_rod.toml (mu = 0.5): the rod lands on the beam at 0.63 m/s, tips over it
  // and sticks leaning on the beam and the floor.
  constexpr double r = 0.002;
  for (const std::string model : {"der", "cosserat"}) {
    CAPTURE(model);
    const auto dir = scratchDir("dropped-rod-friction-" + model);
    const CommandResult run = runRodsim(
        "run scenes/contact/dropped_rod.toml --quiet --output " + dir.string() + " --set rod.beam.model=" + model +
        " --set rod.drop.model=" + model +
        " --set solver.type=position-verlet --set contact.type=alart-curnier --set simulation.dt=2e-5");
    INFO(run.output);
    REQUIRE(run.status == 0);
    const std::string summary = readText(dir / "summary.json");
    CHECK(jsonNumber(summary, "steps_with_contact") > 0);
    CHECK(jsonNumber(summary, "min_gap") >= -0.02 * r);
    const CsvTable ts = readCsv(dir / "timeseries.csv");
    // at rest: below 1 % of the m g h of the fall (2.5e-4 J; the light air damping of the scene leaves
    // the rods ringing at ~1e-6 J at 0.6 s)
    const double ke = ts.num(ts.rows.size() - 1, "kinetic_energy");
    MESSAGE(model << ": min gap " << jsonNumber(summary, "min_gap") << " m, final KE " << ke << " J");
    CHECK(ke < 0.01 * 2.5e-4);
  }
}
