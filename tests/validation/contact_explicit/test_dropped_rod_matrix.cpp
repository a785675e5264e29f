// The composition matrix of contact with rod models and solvers, end to end through the rodsim
// command (docs/validation/contact-explicit.md):
//  - every rod model x solver x contact model on scenes/contact/dropped_rod.toml: either `rodsim
//    check` refuses it (exit 2, with a reason), or `rodsim run` stops the dropped rod on the beam:
//    smallest gap over the run >= -1 % of the radius, contact in some steps, the dropped rod's end
//    state not through the beam (final rod-rod gap >= -1 % of r) and, where the model dissipates the
//    impact (implicit solvers; the velocity-level alart-curnier step), resting on it (final gap
//    within the model's force band + 5 % of r). No combination may run and ignore contact.
//  - Coulomb friction with position-verlet + alart-curnier (velocity-level step) on DER and Cosserat
//    rods dropped onto a slope (tilt alpha = 0.3 rad): stick for mu = 0.5 > tan(alpha), slip with
//    a = g (sin(alpha) - mu cos(alpha)) for mu = 0.2.
// The static solver is left out: a dropped rod has no equilibrium before it lands (the static
// solver stops with "unconstrained", which is right).
#include "csv_table.h"
#include "run_rodsim.h"

#include <doctest/doctest.h>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

using namespace rodsim::test;

namespace {

constexpr double kRadius = 0.002;  // both rods of dropped_rod.toml

double jsonNumber(const std::string& json, const std::string& key) {
  const auto p = json.find("\"" + key + "\":");
  REQUIRE_MESSAGE(p != std::string::npos, "no " << key << " in summary.json");
  return std::stod(json.substr(p + key.size() + 3));
}

// Closest distance between segments [p0, p1] and [q0, q1] (normal equations, then clamping).
double segmentDistance(const Eigen::Vector3d& p0, const Eigen::Vector3d& p1, const Eigen::Vector3d& q0,
                       const Eigen::Vector3d& q1) {
  const Eigen::Vector3d d1 = p1 - p0, d2 = q1 - q0, r = p0 - q0;
  const double a = d1.dot(d1), e = d2.dot(d2), f = d2.dot(r), c = d1.dot(r), b = d1.dot(d2);
  const double den = a * e - b * b;
  double s = den > 1e-18 ? std::clamp((b * f - c * e) / den, 0.0, 1.0) : 0.0;
  double t = (b * s + f) / e;
  if (t < 0) {
    t = 0;
    s = std::clamp(-c / a, 0.0, 1.0);
  } else if (t > 1) {
    t = 1;
    s = std::clamp((b - c) / a, 0.0, 1.0);
  }
  return (p0 + s * d1 - q0 - t * d2).norm();
}

// Smallest gap between the rods 'drop' and 'beam' in final.csv (centerline distance minus radii).
double finalRodGap(const std::filesystem::path& final_csv) {
  const CsvTable t = readCsv(final_csv);
  std::map<std::string, std::vector<Eigen::Vector3d>> nodes;
  for (std::size_t i = 0; i < t.rows.size(); ++i)
    nodes[t.rows[i][t.col("rod")]].emplace_back(t.num(i, "x"), t.num(i, "y"), t.num(i, "z"));
  const auto &a = nodes.at("drop"), &b = nodes.at("beam");
  double gap = 1e9;
  for (std::size_t i = 0; i + 1 < a.size(); ++i)
    for (std::size_t j = 0; j + 1 < b.size(); ++j)
      gap = std::min(gap, segmentDistance(a[i], a[i + 1], b[j], b[j + 1]) - 2 * kRadius);
  return gap;
}

struct Combination {
  std::string rod, solver, contact;
  std::string settings() const {
    std::string s = " --set rod.beam.model=" + rod + " --set rod.drop.model=" + rod + " --set solver.type=" + solver +
                    " --set contact.type=" + contact;
    const bool expl = solver == "position-verlet" || solver == "pefrl";
    if (!expl) return s + " --set simulation.dt=1e-3";
    // Explicit steps: dt below the stability limit, contact stiffness included (the solvers refuse
    // a larger one naming it). imc: a fixed k = 1 J, penalty stiffness 2 k / h^2 = 5e5 N/m at the
    // band's edge, stiffer inside it: the Cosserat rod's impact on its clamped beam reaches a Gershgorin
    // bound of 3.5e6 N/m on 1.3e-4 kg nodes, a limit of 1.1e-5 s, so an 8e-6 s kick keeps a margin;
    // it holds the impact overlap to a few 1e-6 m (measured 0.5 % of r); the slip tolerance gives a
    // friction slope mu f_n 15 / (2 nu) the same kick integrates (contact_imc README, "Explicit solvers").
    // Explicit steps are symplectic (no numerical damping), and the penalty and barrier contacts are
    // elastic along the normal: a heavier air damping (c L / m = 40 1/s instead of 4) takes the
    // bounce and the clamped beam's vibration out within the run, so that the rod comes to rest on
    // the beam as it does with the implicit solvers, whose backward Euler damps both.
    if (contact == "imc")
      return s + " --set force.air.coefficient=0.5 --set simulation.dt=8e-6 --set contact.stiffness=1 --set contact.delta=1e-4 --set contact.slip_tolerance=1";
    // ipc: its adaptive kappa_min = max(m/dt^2, F/d_hat) grows as 1/dt^2, so that dt^2 K/m never falls
    // below the stability bound: a fixed kappa, and a friction smoothing eps_v a 1e-6 s kick integrates.
    if (contact == "ipc")
      return s + " --set force.air.coefficient=0.5 --set simulation.dt=1e-6 --set simulation.duration=0.3 --set contact.kappa=1e3 --set contact.eps_v=1";
    return s + " --set force.air.coefficient=0.5 --set simulation.dt=2e-5";
  }
  // The penalty and barrier models are elastic in the normal direction: under explicit kicks (no
  // numerical damping) the rod still bounces on the beam at the end of the affordable run; they must
  // keep contact (no penetration, contact steps, not through the beam) but are not required at rest.
  // Every combination that runs brings the rod to rest on the beam (the settings above).
  bool mustRest() const { return true; }
  // Force band of the model: a resting rod sits this far above the beam (imc delta, ipc d_hat = r/10).
  double band() const {
    if (contact == "ipc") return 0.1 * kRadius;
    if (contact == "imc") return (solver == "position-verlet" || solver == "pefrl") ? 1e-4 : 1e-5;
    return 0.0;
  }
};

}  // namespace

TEST_CASE("dropped rod: every rod model x solver x contact model is refused up front or stops the rod") {
  const std::string scene = "scenes/contact/dropped_rod.toml";
  int works = 0, refused = 0;
  std::string table = "\n| rod | solver | contact | result | min gap / r | steps with contact | final gap / r | final KE (J) |\n|---|---|---|---|---|---|---|---|\n";
  for (const std::string rod : {"der", "cosserat"})
    for (const std::string solver : {"implicit-euler", "position-verlet", "pefrl"})
      for (const std::string contact : {"imc", "ipc", "alart-curnier"}) {
        const Combination c{rod, solver, contact};
        CAPTURE(rod);
        CAPTURE(solver);
        CAPTURE(contact);
        const CommandResult check = runRodsim("check " + scene + c.settings());
        if (check.status == 2) {
          // refused: both components named, a reason given
          CHECK(check.output.find("cannot work with") != std::string::npos);
          ++refused;
          table += "| " + rod + " | " + solver + " | " + contact + " | refused (exit 2) | | | | |\n";
          continue;
        }
        REQUIRE_MESSAGE(check.status == 0, check.output);
        const auto dir = scratchDir("dropped-rod-" + rod + "-" + solver + "-" + contact);
        const CommandResult run = runRodsim("run " + scene + " --quiet --output " + dir.string() + c.settings());
        INFO(run.output);
        const std::string summary = readText(dir / "summary.json");
        INFO(summary);
        REQUIRE(run.status == 0);
        const double min_gap = jsonNumber(summary, "min_gap");
        const double steps = jsonNumber(summary, "steps_with_contact");
        const double final_gap = finalRodGap(dir / "final.csv");
        CHECK(steps > 0);
        CHECK(min_gap >= -0.01 * kRadius);
        CHECK(final_gap >= -0.01 * kRadius);
        const CsvTable ts = readCsv(dir / "timeseries.csv");
        const double ke = ts.num(ts.rows.size() - 1, "kinetic_energy");
        if (c.mustRest()) {
          CHECK(final_gap <= c.band() + 0.05 * kRadius);
          CHECK(ke <= 1e-6);  // at rest: below 0.4 % of the impact energy m g h = 2.5e-4 J
        }
        ++works;
        char row[256];
        std::snprintf(row, sizeof row, "| %s | %s | %s | works%s | %.2e | %.0f | %.2e | %.1e |\n", rod.c_str(),
                      solver.c_str(), contact.c_str(), c.mustRest() ? ", at rest" : "", min_gap / kRadius, steps,
                      final_gap / kRadius, ke);
        table += row;
      }
  MESSAGE(table);
  CHECK(works + refused == 18);
}

namespace {

struct IncRow {
  double t, x, vx;
  int contacts;
  double min_gap;
};

std::vector<IncRow> runIncline(const std::string& rod, double mu) {
  const auto dir = scratchDir("dropped-rod-incline-" + rod + "-" + std::to_string(mu));
  const CommandResult r = runRodsim("run scenes/contact/dropped_rod_incline.toml --quiet --output " + dir.string() +
                                    " --set rod.rod.model=" + rod + " --set contact.friction=" + std::to_string(mu));
  INFO(r.output);
  REQUIRE(r.status == 0);
  const CsvTable t = readCsv(dir / "timeseries.csv");
  std::vector<IncRow> rows;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const std::string gap = t.rows[i][t.col("min_gap")];
    rows.push_back({t.num(i, "t"), t.num(i, "x_mid"), t.num(i, "vx_mid"), int(t.num(i, "contacts")),
                    gap.empty() ? 1e9 : std::stod(gap)});
  }
  return rows;
}

}  // namespace

TEST_CASE("dropped rod on a slope, position-verlet + alart-curnier: Coulomb stick and slip on DER and Cosserat") {
  constexpr double g = 9.81, alpha = 0.3, r = 0.002;
  for (const std::string rod : {"der", "cosserat"}) {
    CAPTURE(rod);
    {  // mu = 0.5 > tan(alpha) = 0.309: the landing impulse stops it (v_t <= mu v_n) and it sticks
      const auto rows = runIncline(rod, 0.5);
      const auto land = std::find_if(rows.begin(), rows.end(), [](const IncRow& x) { return x.contacts > 0; });
      REQUIRE(land != rows.end());
      double disp = 0, gap = 1e9;
      for (auto it = land; it != rows.end(); ++it) {
        disp = std::max(disp, std::abs(it->x - land->x));
        gap = std::min(gap, it->min_gap);
      }
      MESSAGE(rod << " stick: landed at t = " << land->t << " s, displacement along the slope after landing "
                  << disp << " m, min gap " << gap << " m");
      // The pull along the slope is g sin(alpha) = 2.9 m/s^2; a creep of even 1e-6 of it over the
      // 0.085 s after landing would move the rod 1e-8 m: the tolerance is a tenth of that.
      CHECK(disp < 1e-9);
      CHECK(gap >= -0.01 * r);
    }
    {  // mu = 0.2 < tan(alpha): it slides with a = g (sin(alpha) - mu cos(alpha))
      const double mu = 0.2, a = g * (std::sin(alpha) - mu * std::cos(alpha));
      const auto rows = runIncline(rod, mu);
      const auto land = std::find_if(rows.begin(), rows.end(), [](const IncRow& x) { return x.contacts > 0; });
      REQUIRE(land != rows.end());
      const auto from = std::find_if(land, rows.end(), [&](const IncRow& x) { return x.t >= land->t + 0.02; });
      REQUIRE(from != rows.end());
      const IncRow& to = rows.back();
      const double acc = (to.vx - from->vx) / (to.t - from->t);
      double gap = 1e9;
      for (const auto& x : rows) gap = std::min(gap, x.min_gap);
      MESSAGE(rod << " slip: a = " << acc << " m/s^2, analytic " << a << " (rel " << (acc - a) / a << "), min gap "
                  << gap << " m");
      CHECK(std::abs(acc - a) < 0.02 * a);
      CHECK(gap >= -0.01 * r);
    }
  }
}

TEST_CASE("spring-dashpot: a rod on sliders dropped onto a clamped beam, every rod model x solver") {
  // scenes/contact/spring_dashpot_crossing.toml: the Cosserat seed's contact (Eq. 37) has no obstacle and
  // no friction, so it is not in the dropped-rod matrix above; here the dropped rod's ends slide along z,
  // and at rest the one pair in contact carries its weight: overlap m g / k_sc = 1.233e-7 m.
  const std::string scene = "scenes/contact/spring_dashpot_crossing.toml";
  const double weight_overlap = 1000.0 * M_PI * kRadius * kRadius * 0.1 * 9.81 / 1e5;
  int works = 0, refused = 0;
  for (const std::string rod : {"der", "cosserat"})
    for (const std::string solver : {"implicit-euler", "position-verlet", "pefrl"}) {
      CAPTURE(rod);
      CAPTURE(solver);
      const std::string dt = solver == "implicit-euler" ? "1e-3" : "2e-5";
      const std::string sets = " --set rod.beam.model=" + rod + " --set rod.drop.model=" + rod +
                               " --set solver.type=" + solver + " --set simulation.dt=" + dt;
      const CommandResult check = runRodsim("check " + scene + sets);
      if (check.status == 2) {  // cosserat has no Hessian for Newton: refused with the reason
        CHECK(check.output.find("cannot work with") != std::string::npos);
        CHECK((rod == "cosserat" && solver == "implicit-euler"));
        ++refused;
        continue;
      }
      REQUIRE_MESSAGE(check.status == 0, check.output);
      const auto dir = scratchDir("spring-dashpot-crossing-" + rod + "-" + solver);
      const CommandResult run = runRodsim("run " + scene + " --quiet --output " + dir.string() + sets);
      INFO(run.output);
      REQUIRE(run.status == 0);
      const std::string summary = readText(dir / "summary.json");
      CHECK(jsonNumber(summary, "steps_with_contact") > 0);
      // the impact (0.63 m/s) overlaps at most 0.5 % of r (measured 0.43 %)
      CHECK(jsonNumber(summary, "min_gap") >= -0.01 * kRadius);
      const CsvTable ts = readCsv(dir / "timeseries.csv");
      const std::size_t last = ts.rows.size() - 1;
      const double overlap = -ts.num(last, "min_gap");
      MESSAGE(rod, " + ", solver, ": final overlap ", overlap, " m (m g / k = ", weight_overlap, ")");
      // at rest on the beam: the spring carries the weight (DER to 1e-4; the cosserat rods still ring
      // a little at 0.6 s: within 6 %)
      CHECK(overlap == doctest::Approx(weight_overlap).epsilon(0.1));
      CHECK(ts.num(last, "kinetic_energy") < 1e-7);  // impact energy m g h = 3e-4 J
      ++works;
    }
  CHECK(works == 5);
  CHECK(refused == 1);
}
