// Start-up of ipc end to end (issue 39; plugins/contact_ipc/README.md, "Start-up: pairs inside
// d_hat"): a rod at rest 5 um above a slope, inside the default d_hat = 0.1 r = 200 um
// (scenes/contact/resting_rod_incline_ipc.toml), stays where it is with mu > tan(alpha) and slides
// at g (sin(alpha) - mu cos(alpha)) with mu < tan(alpha); rods placed exactly touching (gap 0) are
// accepted by `rodsim check` and run; a restart continues such a run bit for bit.
#include "csv_table.h"
#include "run_rodsim.h"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>

using namespace rodsim::test;

namespace {

constexpr const char* kScene = "scenes/contact/resting_rod_incline_ipc.toml";
constexpr double g = 9.81, alpha = 0.3, r = 0.002, gap0 = 5e-6, dt = 1e-3, duration = 0.2;

CsvTable run(const std::string& name, const std::string& sets) {
  auto dir = scratchDir("ipc-resting-" + name);
  const CommandResult res = runRodsim(std::string("run ") + kScene + " --quiet --output " + dir.string() + sets);
  INFO(res.output);
  REQUIRE(res.status == 0);
  return readCsv(dir / "timeseries.csv");
}

// Least-squares slope of column y against t over the rows with t >= t0.
double slope(const CsvTable& ts, const std::string& y, double t0) {
  double n = 0, st = 0, sy = 0, stt = 0, sty = 0;
  for (std::size_t i = 0; i < ts.rows.size(); ++i) {
    const double t = ts.num(i, "t"), v = ts.num(i, y);
    if (t < t0) continue;
    n += 1;
    st += t;
    sy += v;
    stt += t * t;
    sty += t * v;
  }
  return (n * sty - st * sy) / (n * stt - st * st);
}

}  // namespace

TEST_CASE("ipc: a rod resting 5 um above a slope (inside d_hat) stays at rest with mu > tan(alpha)") {
  const double mu = 0.5, eps_v = 1e-4;  // eps_v: ipc's default friction smoothing velocity
  const CsvTable ts = run("stick", "");
  const std::size_t last = ts.rows.size() - 1;
  REQUIRE(ts.num(last, "t") == doctest::Approx(duration));
  // Normal: no lift-off (the plain barrier threw it 3.3 mm high at 0.23 m/s); it settles into the
  // barrier by less than its initial gap: every gap stays positive and below 5 um.
  double z_max = 0;
  for (std::size_t i = 1; i <= last; ++i) {
    CAPTURE(i);
    z_max = std::max(z_max, ts.num(i, "z_mid"));
    CHECK(ts.num(i, "min_gap") > 0);
    CHECK(ts.num(i, "min_gap") < gap0);
  }
  CHECK(z_max <= r + gap0 + 1e-12);
  // Along the slope. The smoothed static friction of IPC (f1 of the slip per step, eps_u = eps_v dt)
  // holds the load m g sin(alpha) at a slip rate v_c with mu f1(v_c / eps_v) = tan(alpha): it
  // creeps at v_c = eps_v (1 - sqrt(1 - tan(alpha)/mu)) = 38 um/s whatever the start. The start-up
  // itself adds a slip bounded by one step of free sliding (the barrier carries no force where the
  // rod starts, so the lagged friction has no normal force in step 1: g sin(alpha) dt^2 = 2.9 um)
  // and the stop from v1 = g sin(alpha) dt at g (mu cos(alpha) - sin(alpha)): v1^2 / (2 a) = 2.4 um;
  // 6 um leaves room for the stop's discretization (measured 5.3 um).
  const double v_c = eps_v * (1 - std::sqrt(1 - std::tan(alpha) / mu));
  const double x_end = ts.num(last, "x_mid"), v_end = ts.num(last, "vx_mid");
  MESSAGE("after 0.2 s: x ", x_end * 1e6, " um, vx ", v_end * 1e6, " um/s (creep v_c ", v_c * 1e6, " um/s), gap ",
          ts.num(last, "min_gap") * 1e6, " um");
  CHECK(v_end == doctest::Approx(v_c).epsilon(0.01));
  CHECK(x_end > 0);
  CHECK(x_end - v_c * duration < 6e-6);
  CHECK(x_end < 15e-6);
  // With a smoothing velocity 100 times smaller the creep vanishes: the start-up slip alone.
  const CsvTable fine = run("stick-fine", " --set contact.eps_v=1e-6");
  const double x_fine = fine.num(fine.rows.size() - 1, "x_mid");
  MESSAGE("eps_v = 1e-6 m/s: x after 0.2 s ", x_fine * 1e6, " um");
  CHECK(std::abs(x_fine) < 6e-6);
}

TEST_CASE("ipc: the rod starting 5 um above the slope slides at g (sin(alpha) - mu cos(alpha)) with mu < tan(alpha)") {
  for (const double mu : {0.2, 0.1}) {
    CAPTURE(mu);
    const CsvTable ts = run("slide-" + std::to_string(mu), " --set contact.friction=" + std::to_string(mu));
    const double a = slope(ts, "vx_mid", 0.05), expected = g * (std::sin(alpha) - mu * std::cos(alpha));
    MESSAGE("mu ", mu, ": acceleration ", a, " m/s^2, g (sin a - mu cos a) = ", expected);
    CHECK(a == doctest::Approx(expected).epsilon(0.01));
    for (std::size_t i = 1; i < ts.rows.size(); ++i) CHECK(ts.num(i, "min_gap") > 0);
  }
}

TEST_CASE("ipc: rods placed exactly touching (gap 0) are accepted by check and run alike") {
  // The rod on the slope with its centre line at z = r; and a rod lying across a clamped beam, centre
  // lines 2 r apart. Both start with pairs at gap 0 (to round-off), which the kernel's overlap check
  // lets through and the barrier is undefined at: ipc starts them with its zero moved below contact
  // by 1e-2 d_hat = 2 um, so they may press in by no more than that.
  const double floor = 1e-2 * 0.1 * r;
  {
    const std::string touching = " --set 'rod.rod.geometry={shape=\"straight\",start=[0,-0.05,0.002],end=[0,0.05,0.002]}'";
    const CommandResult c = runRodsim(std::string("check ") + kScene + touching);
    INFO(c.output);
    CHECK(c.status == 0);
    const CsvTable ts = run("touching", touching);
    const std::size_t last = ts.rows.size() - 1;
    for (std::size_t i = 1; i <= last; ++i) {
      CHECK(ts.num(i, "min_gap") > -floor);
      CHECK(ts.num(i, "min_gap") <= 0);
    }
    CHECK(ts.num(last, "x_mid") < 15e-6);
  }
  auto dir = scratchDir("ipc-touching-crossing");
  auto file = writeText(dir / "scene.toml", R"([simulation]
duration = 0.05
dt = 1e-3

[solver]
type = "implicit-euler"

[[rod]]
name = "beam"
model = "der"
nodes = 11
radius = 0.002
density = 1000.0
youngs_modulus = 1e7
geometry = { shape = "straight", start = [-0.05, 0, 0], end = [0.05, 0, 0] }

[[rod]]
name = "top"
model = "der"
nodes = 11
radius = 0.002
density = 1000.0
youngs_modulus = 1e7
geometry = { shape = "straight", start = [0, -0.05, 0.004], end = [0, 0.05, 0.004] }

[[constraint]]
name = "left"
type = "clamp"
rod = "beam"
nodes = [0, 1]

[[constraint]]
name = "right"
type = "clamp"
rod = "beam"
nodes = [9, 10]

[[force]]
type = "gravity"

[[contact]]
type = "ipc"
friction = 0.3

[output]
every = 0.0

[[probe]]
name = "top_z"
type = "node-position"
rod = "top"
node = 5
component = "z"
)");
  const CommandResult c = runRodsim("check " + file.string());
  INFO(c.output);
  CHECK(c.status == 0);
  const CommandResult res = runRodsim("run " + file.string() + " --quiet --output " + (dir / "out").string());
  INFO(res.output);
  REQUIRE(res.status == 0);
  const CsvTable ts = readCsv(dir / "out" / "timeseries.csv");
  for (std::size_t i = 1; i < ts.rows.size(); ++i) {
    CAPTURE(i);
    CHECK(ts.num(i, "min_gap") > -floor);
  }
  CHECK(ts.num(ts.rows.size() - 1, "contacts") >= 1);  // sagging with the beam, on it
}

TEST_CASE("ipc start pairs are checkpointed: a restart continues bit for bit") {
  // Without them in the checkpoint a restart would take the pairs at the checkpoint's gaps as start
  // pairs (other activation gaps) and go its own way.
  namespace fs = std::filesystem;
  for (const std::string variant : {"5um", "touching"}) {
    CAPTURE(variant);
    auto dir = scratchDir("ipc-resting-restart-" + variant);
    std::string sets = " --set simulation.duration=0.02 --set output.checkpoint_every=0.001 --set output.checkpoint_keep=100";
    if (variant == "touching")
      sets += " --set 'rod.rod.geometry={shape=\"straight\",start=[0,-0.05,0.002],end=[0,0.05,0.002]}'";
    CommandResult r = runRodsim(std::string("run ") + kScene + " --quiet --output " + (dir / "full").string() + sets);
    INFO(r.output);
    REQUIRE(r.status == 0);
    fs::copy(dir / "full", dir / "resumed", fs::copy_options::recursive);
    for (const auto& f : fs::directory_iterator(dir / "resumed/checkpoints"))
      if (f.path().filename() != "step_000000000005.ckpt") fs::remove(f.path());
    REQUIRE(fs::exists(dir / "resumed/checkpoints/step_000000000005.ckpt"));
    r = runRodsim("run --restart " + (dir / "resumed").string() + " --quiet");
    INFO(r.output);
    REQUIRE(r.status == 0);
    CHECK(readText(dir / "full/final.csv") == readText(dir / "resumed/final.csv"));
    CHECK(rowsWithout(readCsv(dir / "full/timeseries.csv"), {"wall_ms"}) ==
          rowsWithout(readCsv(dir / "resumed/timeseries.csv"), {"wall_ms"}));
  }
}
