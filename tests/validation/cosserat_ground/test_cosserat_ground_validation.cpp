// The `ground` force of plugins/cosserat_ground against the analytic solutions of Gazzola et al.
// (2018), Appendix F (rolling and slipping on an incline, rolling under an axial couple, anisotropic
// longitudinal friction), and the slithering snake of its Sec. V.2, end to end through rodsim.
// docs/validation/cosserat.md, "Surface friction and the snake", tabulates the same numbers.
#include "csv_table.h"
#include "run_rodsim.h"

#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <fmt/format.h>
#include <sstream>
#include <string>

using namespace rodsim::test;

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double g = 9.81, m = 1.0, r = 0.025, J = m * r * r / 2;  // the rod of Fig. 16-17
constexpr double mu_s = 0.4, mu_k = 0.2;                            // Fig. 16

// Runs a scene with overrides and returns its timeseries (header + rows).
CsvTable run(const std::string& scene, const std::string& tag, const std::string& sets) {
  auto dir = scratchDir("cosserat-ground-" + tag);
  CommandResult res = runRodsim(fmt::format("run {} --quiet --output {} {}", scene, dir.string(), sets));
  INFO(res.output);
  REQUIRE(res.status == 0);
  CsvTable t = readCsv(dir / "timeseries.csv");
  REQUIRE(t.rows.size() > 100);
  return t;
}

double relErr(double a, double b) { return std::abs(a - b) / std::abs(b); }

}  // namespace

TEST_CASE("rod on an incline: pure rolling below tan(alpha) = 3 mu_s, rolling and slipping above (Appendix F.1)") {
  const double T = 0.5;
  for (double deg : {20.0, 45.0, 50.0, 51.0, 60.0, 70.0}) {
    const double a = deg * kPi / 180;
    const bool rolls = std::tan(a) <= 3 * mu_s;  // |F_noslip| = m g sin(a) / 3 <= mu_s m g cos(a)
    const double v = rolls ? 2.0 / 3.0 * g * std::sin(a) * T : g * (std::sin(a) - mu_k * std::cos(a)) * T;
    const double w = rolls ? v / r : mu_k * m * g * std::cos(a) * r / J * T;
    const CsvTable t = run("scenes/validation/cosserat_ground_incline.toml", fmt::format("incline-{:g}", deg),
                           fmt::format("--set 'force.gravity.g=[0, {:.17g}, {:.17g}]'", -g * std::sin(a), -g * std::cos(a)));
    const std::size_t last = t.rows.size() - 1;
    const double vs = -t.num(last, "vy"), ws = t.num(last, "ground.spin");
    const double ET = 0.5 * m * vs * vs, ER = 0.5 * J * ws * ws;
    MESSAGE(fmt::format("alpha = {:4.1f} deg ({}): v = {:.5f} m/s (analytic {:.5f}, error {:.2e}), omega = {:.4f} rad/s "
                        "(analytic {:.4f}, error {:.2e}), E_T = {:.4f} J, E_R = {:.4f} J",
                        deg, rolls ? "rolls" : "slips", vs, v, relErr(vs, v), ws, w, relErr(ws, w), ET, ER));
    CHECK(relErr(vs, v) < 2e-3);
    CHECK(relErr(ws, w) < 3e-3);
    CHECK(std::abs(t.num(last, "vz")) < 1e-6);  // stays on the plane
    CHECK(t.num(last, "ground.contacts") == 10);
    CHECK(t.num(last, "ground.normal_force") == doctest::Approx(m * g * std::cos(a)).epsilon(1e-6));
    CHECK(t.num(last, "ground.lateral_kinetic") == (rolls ? 0.0 : 1.0));  // static (no slip) vs kinetic
  }
}

TEST_CASE("rod on an inclined plane (normal tilted, gravity vertical) rolls as on a plane with tilted gravity") {
  const double a = 30 * kPi / 180, sa = std::sin(a), ca = std::cos(a);
  const CsvTable t = run(
      "scenes/validation/cosserat_ground_incline.toml", "incline-tilted-plane",
      fmt::format("--set 'force.ground.normal=[0, {0:.17g}, {1:.17g}]' --set 'force.gravity.g=[0, 0, -9.81]' "
                  "--set 'rod.rod.geometry.start=[-0.5, {2:.17g}, {3:.17g}]' --set 'rod.rod.geometry.end=[0.5, {2:.17g}, {3:.17g}]'",
                  sa, ca, r * sa, r * ca));
  const std::size_t last = t.rows.size() - 1;
  const double v = 2.0 / 3.0 * g * sa * 0.5;
  // down the slope: (0, cos a, -sin a)
  CHECK(t.num(last, "vy") == doctest::Approx(v * ca).epsilon(2e-3));
  CHECK(t.num(last, "vz") == doctest::Approx(-v * sa).epsilon(2e-3));
  CHECK(std::abs(t.num(last, "ground.spin")) == doctest::Approx(v / r).epsilon(2e-3));
  CHECK(t.num(last, "ground.lateral_kinetic") == 0.0);
}

TEST_CASE("rod under an axial couple: rolls below F_noslip = 2 C_s / (3 r) = mu_s m g, slips above (Appendix F.1)") {
  const double T = 1.0, Cmax = 1.5 * r * mu_s * m * g;  // 0.14715 N m
  for (double C : {0.05, 0.14, 0.16, 0.3}) {
    const bool rolls = 2 * C / (3 * r) <= mu_s * m * g;
    const double v = rolls ? 2 * C / (3 * r * m) * T : mu_k * g * T;
    const double w = rolls ? v / r : (C - mu_k * m * g * r) / J * T;
    std::string sets;
    for (int i = 0; i < 10; ++i) sets += fmt::format(" --set 'force.couple{}.torque=[{:.17g}, 0, 0]'", i, C / 10);
    const CsvTable t = run("scenes/validation/cosserat_ground_couple.toml", fmt::format("couple-{:g}", C), sets);
    const std::size_t last = t.rows.size() - 1;
    const double vs = -t.num(last, "vy"), ws = t.num(last, "ground.spin");
    MESSAGE(fmt::format("C_s = {:.3f} N m ({}, threshold {:.5f}): v = {:.5f} m/s (analytic {:.5f}, error {:.2e}), "
                        "omega = {:.3f} rad/s (analytic {:.3f}, error {:.2e})",
                        C, rolls ? "rolls" : "slips", Cmax, vs, v, relErr(vs, v), ws, w, relErr(ws, w)));
    // omega: the paper's gamma = 1e-6 kg/(m s) rotational damping takes up to 0.3 % at 800 rad/s
    CHECK(relErr(vs, v) < 3e-3);
    CHECK(relErr(ws, w) < 5e-3);
    CHECK(std::abs(t.num(last, "vx")) < 1e-9);  // no axial drift
    CHECK(t.num(last, "ground.lateral_kinetic") == (rolls ? 0.0 : 1.0));
  }
}

TEST_CASE("anisotropic longitudinal friction: static below mu_s m g, kinetic above, forward and backward (Appendix F.2)") {
  const double T = 0.25, v_eps = 1e-4;
  for (double F : {5.0, 7.8, 7.9, 10.0, -3.9, -4.0, -5.0, -10.0}) {
    const bool forward = F >= 0;  // F . t >= 0, t = +x
    const double ms = forward ? 0.8 : 0.4, mk = forward ? 0.4 : 0.2;
    const bool slides = std::abs(F) > ms * m * g;
    const double v = slides ? (std::abs(F) - mk * m * g) * T / m : 0.0;
    const CsvTable t = run("scenes/validation/cosserat_ground_axial.toml", fmt::format("axial-{:g}", F),
                           fmt::format("--set 'force.pull.g=[{:g}, 0, 0]'", F));
    const std::size_t last = t.rows.size() - 1;
    const double vs = std::abs(t.num(last, "vx"));
    // The discrete threshold: static friction (capped at mu_s m g) holds the acceleration at
    // (|F| - mu_s m g)/m until |v| exceeds v_eps, t_s = m v_eps / (|F| - mu_s m g); kinetic after.
    const double ts = slides ? m * v_eps / (std::abs(F) - ms * m * g) : 0.0;
    const double v_delay = slides ? v_eps + (std::abs(F) - mk * m * g) * (T - ts) / m : 0.0;
    MESSAGE(fmt::format("F = {:5.1f} N ({}, {}): v = {:.5f} m/s (analytic {:.5f}; with the threshold delay {:.5f}), "
                        "E_T = {:.5f} J (analytic {:.5f})",
                        F, forward ? "forward" : "backward", slides ? "slides" : "static", vs, v, v_delay,
                        0.5 * m * vs * vs, 0.5 * m * v * v));
    if (slides) {
      CHECK(relErr(vs, v) < 1e-2);  // 0.8 % at 7.9 N, where the threshold delay is 1.9 ms
      CHECK(relErr(vs, v_delay) < 1e-3);
      CHECK(t.num(last, "vx") * F > 0);
      CHECK(t.num(last, "ground.axial_kinetic") == 1.0);
    } else {
      CHECK(vs < 1e-9);  // held by static friction
      CHECK(t.num(last, "ground.axial_kinetic") == 0.0);
    }
    CHECK(std::abs(t.num(last, "vy")) < 1e-9);
  }
}

namespace {

struct SnakeRun {
  double centroid_x = 0, centroid_y = 0, head_x2 = 0, head_y2 = 0, head_x4 = 0, head_y4 = 0;
  bool finite = true;
};

// Runs scenes/snake.toml for `duration` with overrides; centroid of the final centreline, head x and y
// at t = 2 s and at the end.
SnakeRun runSnake(const std::string& tag, double duration, const std::string& sets) {
  auto dir = scratchDir("cosserat-ground-snake-" + tag);
  CommandResult res = runRodsim(fmt::format("run scenes/snake.toml --quiet --output {} --set simulation.duration={} "
                                            "--set output.every=0 {}",
                                            dir.string(), duration, sets));
  INFO(res.output);
  REQUIRE(res.status == 0);
  SnakeRun s;
  const auto final_rows = readNumericCsv(dir / "final.csv");  // rod,node,x,y,z (rod name: NaN)
  REQUIRE(final_rows.size() == 51);
  for (const auto& row : final_rows) {
    s.centroid_x += row[2] / 51;
    s.centroid_y += row[3] / 51;
    for (int c = 2; c < 5; ++c) s.finite = s.finite && std::isfinite(row[c]);
  }
  std::istringstream header(readText(dir / "timeseries.csv"));
  std::string names;
  std::getline(header, names);
  int col = 0, head = -1, head_y = -1;
  std::stringstream hs(names);
  for (std::string name; std::getline(hs, name, ','); ++col) {
    if (name == "head_x") head = col;
    if (name == "head_y") head_y = col;
  }
  REQUIRE(head >= 0);
  REQUIRE(head_y >= 0);
  const auto rows = readNumericCsv(dir / "timeseries.csv");
  for (const auto& row : rows) {
    if (std::abs(row[1] - 2.0) < 1e-9) s.head_x2 = row[head], s.head_y2 = row[head_y];
    for (std::size_t c = 0; c < row.size(); ++c)  // every cell but min_gap (5: empty, no contact model)
      if (c != 5) s.finite = s.finite && std::isfinite(row[c]);
  }
  s.head_x4 = rows.back()[head];
  s.head_y4 = rows.back()[head_y];
  return s;
}

}  // namespace

TEST_CASE("continuum snake (Sec. V.2, Fig. 10 settings) slithers forward, toward its head") {
  // Regression band, measured with this scene (docs/validation/cosserat.md, "Surface friction and
  // the snake"): head speed 0.582 m/s = 0.58 L/T_m in the ground plane between t = 2 and 4 s (the gait
  // is periodic from the second period on: the centroid moves 0.581-0.583 m per period up to t = 10 s),
  // centroid displacement 2.244 m after 4 s, heading 4.9 deg off +x (set in the first, transient
  // period). The paper reports a scaled forward speed of about 0.6 for this gait (Fig. 10e-f); the band
  // 0.55-0.61 (+-5 %) holds both and excludes the 0.19 of the paper's beta list laid from the tail (as
  // the scene had it; the list is head first, see scenes/snake.toml). Centroid 2.1-2.4 m: 0.50 m in
  // the first period plus 3 periods at the band's speeds (+-0.09 m), with a little margin. Heading
  // within 10 deg of +x (no turning).
  const SnakeRun s = runSnake("forward", 4.0, "");
  const double speed = std::hypot(s.head_x4 - s.head_x2, s.head_y4 - s.head_y2) / 2.0;
  const double shift = std::hypot(s.centroid_x - 0.5, s.centroid_y);
  const double heading = std::atan2(s.centroid_y, s.centroid_x - 0.5) * 180 / std::numbers::pi;
  MESSAGE(fmt::format("snake: head speed {:.4f} m/s over t = 2..4 s, centroid moved {:.4f} m along x and {:.4f} m "
                      "sideways in 4 s ({:.4f} m, heading {:.2f} deg)",
                      speed, s.centroid_x - 0.5, s.centroid_y, shift, heading));
  CHECK(s.finite);
  CHECK(s.head_x4 > s.head_x2);
  CHECK(speed > 0.55);
  CHECK(speed < 0.61);
  CHECK(shift > 2.1);
  CHECK(shift < 2.4);
  CHECK(std::abs(heading) < 10.0);
}

TEST_CASE("symmetric standing wave: no motion with isotropic friction, slow forward motion with anisotropic (Appendix F.3)") {
  // beta_1 = beta_4, beta_2 = beta_3 and 2 pi / lambda_m = 0: the system is symmetric up to inertia.
  // phi_m = 0 as in Fig. 18 (the scene's phase belongs to its travelling wave).
  const std::string wave =
      "--set force.muscles.wave_number=0 --set force.muscles.phase=0 --set 'force.muscles.amplitudes=[0, 10, 15, 15, 10, 0]'";
  const SnakeRun iso = runSnake("isotropic", 3.0,
                                wave + " --set 'force.ground.kinetic_friction=[1.0194, 1.0194, 1.0194]' "
                                       "--set 'force.ground.static_friction=[2.0387, 2.0387, 2.0387]'");
  const SnakeRun aniso = runSnake("anisotropic", 3.0, wave);
  MESSAGE(fmt::format("standing wave, 3 s: centroid moved {:.2e} m (isotropic), {:.4f} m (anisotropic 1 : 1.5 : 2)",
                      iso.centroid_x - 0.5, aniso.centroid_x - 0.5));
  CHECK(iso.finite);
  CHECK(aniso.finite);
  CHECK(std::abs(iso.centroid_x - 0.5) < 1e-3);
  CHECK(aniso.centroid_x - 0.5 > 0.02);
}
