// Rod-rod and rotating-cylinder contact (alart-curnier) end to end through the rodsim command.
//  - A rod lying across a fixed rod on a "slope" (gravity tilted by alpha): sticks exactly when
//    tan(alpha) < mu, slides along the fixed rod with a = g (sin(alpha) - mu cos(alpha)) otherwise
//    (crossing from one edge of the fixed rod to the next), no penetration.
//  - A rod dropped across a rod clamped at its ends: bounces, comes to rest, no penetration.
//  - A rod on a spinning drum: slip, stick (moving with the surface), slip again once the slope
//    beats friction, lift-off; event times against the point-on-a-circle ODE.
//  - The same drum with imc and ipc: the same events, and their creep while sticking.
//  - The per-step contact report (timeseries.csv columns and summary.json "contact_report").
#include "ac_table.h"
#include "run_rodsim.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>

using namespace rodsim::test;

namespace {

constexpr double g = 9.81, alpha = 0.3, dt = 1e-3;

Table run(const std::string& scene, const std::string& tag, const std::string& sets, std::string* summary = nullptr) {
  auto dir = scratchDir("ac-rod-" + tag);
  CommandResult res = runRodsim("run scenes/contact_ac/" + scene + " --quiet --output " + dir.string() + " " + sets);
  INFO(res.output);
  REQUIRE(res.status == 0);
  if (summary) *summary = readText(dir / "summary.json");
  return parseTable(readText(dir / "timeseries.csv"));
}

Table across(double mu, const std::string& tag) {
  return run("rod_across_rod_incline.toml", "across-" + tag, "--set contact.ac.friction=" + std::to_string(mu));
}

}  // namespace

TEST_CASE("rod across a fixed rod, tan(alpha) = 0.309 < mu = 0.5: sticks exactly, no penetration") {
  const Table t = across(0.5, "stick");
  REQUIRE(t.size() == 251);
  double vmax = 0, xmax = 0, zerr = 0;
  for (std::size_t i = 1; i < t.size(); ++i) {
    vmax = std::max({vmax, std::abs(t.at(i, "vx_4")), std::abs(t.at(i, "vx_5"))});
    xmax = std::max(xmax, std::abs(t.at(i, "x_4") - 0.001));
    zerr = std::max(zerr, std::abs(t.at(i, "z_4") - 0.01));
    CHECK(t.at(i, "contacts") == 1);
    CHECK(t.at(i, "min_gap") > -1e-12);
  }
  MESSAGE("max |v_x| = " << vmax << " m/s, max |x - x0| = " << xmax << " m, max |z - 2r| = " << zerr << " m");
  CHECK(vmax < 1e-9);   // the pull is g sin(alpha) = 2.9 m/s^2
  CHECK(xmax < 1e-12);
  CHECK(zerr < 1e-12);  // resting on the fixed rod: zero penetration, no gap
}

TEST_CASE("rod across a fixed rod, mu = 0.2 < tan(alpha): slides with a = g (sin(alpha) - mu cos(alpha))") {
  const double mu = 0.2, a = g * (std::sin(alpha) - mu * std::cos(alpha));
  const Table t = across(mu, "slide");
  REQUIRE(t.size() == 251);
  for (std::size_t i = 1; i < t.size(); ++i) {
    const double ti = t.at(i, "t");
    CHECK(t.at(i, "vx_4") == doctest::Approx(a * ti).epsilon(1e-6));
    CHECK(t.at(i, "vx_5") == doctest::Approx(a * ti).epsilon(1e-6));
    CHECK(std::abs(t.at(i, "z_4") - 0.01) < 1e-12);
    CHECK(t.at(i, "contacts") == 1);  // also while crossing node 6 of the fixed rod (x = 0.02)
  }
  const double n = 250;
  const double x_end = 0.001 + a * dt * dt * n * (n + 1) / 2;  // implicit Euler positions
  MESSAGE("x(T) = " << t.at(250, "x_4") << " vs " << x_end << "; v(T) = " << t.at(250, "vx_4") << " vs " << a * 0.25);
  CHECK(t.at(250, "x_4") == doctest::Approx(x_end).epsilon(1e-6));
  CHECK(x_end > 0.02);  // it did cross from edge 5 to edge 6 of the fixed rod
}

TEST_CASE("rod across a fixed rod, frictionless: a = g sin(alpha)") {
  const Table t = across(0.0, "frictionless");
  CHECK(t.at(250, "vx_4") == doctest::Approx(g * std::sin(alpha) * 0.25).epsilon(1e-6));
}

TEST_CASE("rod dropped across a rod clamped at its ends: comes to rest, no penetration") {
  std::string summary;
  const Table t = run("rod_across_rod.toml", "drop", "--set simulation.duration=0.4", &summary);
  REQUIRE(t.size() == 401);
  double min_gap = 1;
  std::size_t first = 0;
  for (std::size_t i = 1; i < t.size(); ++i) {
    if (!std::isnan(t.at(i, "min_gap"))) min_gap = std::min(min_gap, t.at(i, "min_gap"));
    if (!first && t.at(i, "contacts") > 0) first = i;
  }
  const double ke = t.at(400, "kinetic_energy"), dz = std::abs(t.at(400, "top_z") - t.at(300, "top_z"));
  MESSAGE("first contact at step " << first << ", min gap " << min_gap << " m, KE(0.4 s) = " << ke
                                   << " J, |z(0.4) - z(0.3)| = " << dz << " m, rest height " << t.at(400, "top_z"));
  CHECK(first == 20);          // falls 2 mm: t = sqrt(2 h / g) = 0.0202 s
  CHECK(min_gap > -1e-12);     // zero penetration, during the impact too
  CHECK(t.at(400, "contacts") >= 1);
  CHECK(ke < 1e-12);           // vs 1.5e-4 J of potential energy released
  CHECK(dz < 1e-8);
  CHECK(t.at(400, "top_z") < 0.01);  // resting on the sagging clamped rod: 2r below the start minus the sag
  CHECK(t.at(400, "top_z") > 0.0099);
}

TEST_CASE("rod on a spinning drum: slip, stick with the surface, slip, lift-off (vs the point-on-a-circle ODE)") {
  const double mu = 0.3, R = 0.02, rho = 0.022, vs = 5.0 * R;
  // Reference: the rod (uniform, along the axis) as a point on the circle of radius rho, angle th
  // from the top, speed v; normal force per mass g cos(th) - v^2/rho; the surface moves at vs at
  // the contact point and the impulses act on the centerline (no rolling).
  double th = 0, v = 0, tt = 0, t_stick = -1, t_slip = -1, th_slip = 0, t_lift = -1;
  const double h = 1e-6;
  int state = 0;  // 0 slip (slower than the surface), 1 stick, 2 slip (faster)
  while (tt < 0.2) {
    const double N = g * std::cos(th) - v * v / rho;
    if (N < 0) {
      t_lift = tt;
      break;
    }
    double a = 0;
    if (state == 0) {
      a = g * std::sin(th) + mu * N;
      if (v + a * h >= vs) {
        v = vs;
        a = 0;
        state = 1;
        t_stick = tt;
      }
    } else if (state == 1 && g * std::sin(th) > mu * N) {
      state = 2;
      t_slip = tt;
      th_slip = th;
    }
    if (state == 2) a = g * std::sin(th) - mu * N;
    v += a * h;
    th += v / rho * h;
    tt += h;
  }
  REQUIRE(t_lift > 0);
  std::string summary;
  const Table t = run("rotating_cylinder.toml", "drum", "", &summary);
  REQUIRE(t.size() == 201);
  double s_stick = -1, s_slip = -1, s_th_slip = 0, s_lift = -1, stick_err = 0, rho_err = 0;
  for (std::size_t i = 1; i < t.size(); ++i) {
    const double x = t.at(i, "x_mid"), z = t.at(i, "z_mid"), vx = t.at(i, "vx_mid"), vz = t.at(i, "vz_mid");
    const double r = std::hypot(x, z), vt = (vx * z - vz * x) / r, ti = t.at(i, "t");
    if (t.at(i, "contacts") > 0) CHECK(t.at(i, "min_gap") > -1e-12);
    const bool stick = std::abs(vt - vs) < 1e-9;
    if (stick && s_stick < 0) s_stick = ti;
    if (s_stick > 0 && s_slip < 0 && !stick) {
      s_slip = ti;
      s_th_slip = std::atan2(x, z);
    }
    if (s_stick > 0 && s_slip < 0) {
      stick_err = std::max(stick_err, std::abs(vt - vs));
      rho_err = std::max(rho_err, std::abs(r - rho));
    }
    if (s_slip > 0 && s_lift < 0 && t.at(i, "contacts") == 0) s_lift = ti;
  }
  MESSAGE("stick " << s_stick << " s (ODE " << t_stick << "), slip " << s_slip << " s at " << s_th_slip
                   << " rad (ODE " << t_slip << ", " << th_slip << "), lift-off " << s_lift << " s (ODE " << t_lift
                   << "); during stick |v_t - vs| <= " << stick_err << ", |r - rho| <= " << rho_err);
  CHECK(std::abs(s_stick - t_stick) < 2e-3);
  CHECK(std::abs(s_slip - t_slip) < 2e-3);
  CHECK(std::abs(s_th_slip - th_slip) < 0.01);
  CHECK(std::abs(s_lift - t_lift) < 3e-3);
  CHECK(s_slip - s_stick > 0.04);  // a real stick phase (46 ms)
  CHECK(stick_err < 1e-9);
  CHECK(rho_err < 1e-10);  // timeseries.csv carries 10 significant digits; the gap itself is min_gap
}

// The drum side by side (imc and ipc against the spinning cylinder, surface velocity in their
// friction): the same events within a few steps, but the smooth models creep while they "stick".
// Events by one criterion for all three: stick = |v_t - v_s| < 1 % of v_s; slip = the first step
// after stick beyond it; lift-off = no contact. ipc starts d_hat = 0.2 mm above the drum, as the
// other models' runs do relative to their own contact distance (a start inside the band would be
// accepted too: the pair's barrier then starts from its initial gap), and rests about d_hat off the
// surface.
TEST_CASE("rod on a spinning drum side by side: alart-curnier, imc and ipc; the smooth models creep") {
  const double vs = 5.0 * 0.02;
  struct Events {
    double stick = -1, slip = -1, lift = -1, creep = 0;
  };
  auto events = [&](const Table& t) {
    Events e;
    for (std::size_t i = 1; i < t.size(); ++i) {
      const double x = t.at(i, "x_mid"), z = t.at(i, "z_mid"), vx = t.at(i, "vx_mid"), vz = t.at(i, "vz_mid");
      const double r = std::hypot(x, z), vt = (vx * z - vz * x) / r, ti = t.at(i, "t");
      const bool stick = std::abs(vt - vs) < 1e-2 * vs;
      if (stick && e.stick < 0) e.stick = ti;
      if (e.stick > 0 && e.slip < 0 && !stick) e.slip = ti;
      if (ti >= 0.04 && ti <= 0.07) e.creep = std::max(e.creep, std::abs(vt - vs));
      if (e.slip > 0 && e.lift < 0 && t.at(i, "contacts") == 0) e.lift = ti;
    }
    return e;
  };
  const Events ac = events(run("rotating_cylinder.toml", "drum-ac", ""));
  const Events imc = events(run("rotating_cylinder.toml", "drum-imc", "--set contact.type=imc"));
  const Events ipc = events(run("rotating_cylinder.toml", "drum-ipc",
                                "--set contact.type=ipc --set 'rod.rod.geometry={ shape = \"straight\", "
                                "start = [0, -0.05, 0.0222], end = [0, 0.05, 0.0222] }'"));
  for (const auto& [name, e] : {std::pair<const char*, Events>{"alart-curnier", ac}, {"imc", imc}, {"ipc", ipc}})
    MESSAGE(std::string(name) << ": stick " << e.stick << " s, slip " << e.slip << " s, lift-off " << e.lift
                 << " s, |v_t - v_s| while sticking (0.04-0.07 s) <= " << e.creep << " m/s");
  for (const Events* e : {&imc, &ipc}) {
    CHECK(std::abs(e->stick - ac.stick) <= 3e-3);
    CHECK(std::abs(e->slip - ac.slip) <= 3e-3);
    CHECK(std::abs(e->lift - ac.lift) <= 6e-3);
  }
  CHECK(ac.creep < 1e-9);
  // imc: below its slip tolerance nu = 1e-4 m/s, but not zero; ipc: of the order of eps_v = 1e-4 m/s
  CHECK(imc.creep > 1e-6);
  CHECK(imc.creep < 1e-4);
  CHECK(ipc.creep > 1e-6);
  CHECK(ipc.creep < 3e-4);
}

TEST_CASE("per-step contact report: columns, nu = 3n/m, natural-map residuals, summary means") {
  std::string summary;
  const Table t = run("inclined_plane.toml", "report", "--set contact.friction=0.2", &summary);
  for (const char* c : {"contacts", "nu", "solves", "ac_iterations", "prox_iterations", "f_ac", "natmap_rel",
                        "natmap_abs", "solve_ms"})
    CHECK(t.has(std::string("alart-curnier.") + c));
  for (std::size_t i = 1; i < t.size(); ++i) {
    CHECK(t.at(i, "alart-curnier.contacts") == 11);
    // 11 nodes x 3 + 10 twists, all free
    CHECK(t.at(i, "alart-curnier.nu") == doctest::Approx(3.0 * 11 / 43));
    CHECK(t.at(i, "alart-curnier.solves") == t.at(i, "iterations"));
    CHECK(t.at(i, "alart-curnier.natmap_rel") <= 1e-10);
    CHECK(t.at(i, "alart-curnier.natmap_abs") < 1e-12);
    CHECK(t.at(i, "alart-curnier.f_ac") < 1e-12);
    CHECK(t.at(i, "alart-curnier.ac_iterations") >= 0);
  }
  CHECK(summary.find("\"contact_report\": {\"alart-curnier.contacts\": 11") != std::string::npos);
}
