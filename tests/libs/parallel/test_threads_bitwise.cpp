// [simulation] threads (rodsim run --threads): a run gives the same final.csv, byte for byte, with 1, 2
// and 3 threads. Three scenes cover what is spread over the threads: a 2200-element Cosserat rod with
// three short ones (the rods too unequal to share out, so the long rod spreads its element passes) under
// position-verlet and pefrl (its drifts compose rotations element by element), and twelve equal rods
// (spread over the threads in blocks of rods), besides the explicit solvers' passes over the DOFs.
#include "run_rodsim.h"

#include <doctest/doctest.h>

#include <string>

using namespace rodsim::test;

namespace {

// A long Cosserat cantilever (a quarter of the Timoshenko beam of benchmarks/scenes, 2200 elements:
// above the 2 x 1024 elements from which a rod spreads its passes) loaded at its tip, with gravity,
// damping, rotational damping, and three short rods next to it.
std::string longRodScene(const std::string& solver) {
  std::string s = R"([simulation]
duration = 0.0045
dt = 4.5e-5

[solver]
type = ")" + solver + R"("
stability = "warn"

[[rod]]
name = "beam"
model = "cosserat"
nodes = 2201
radius = 0.25
density = 5000.0
youngs_modulus = 1e6
shear_modulus = 1e4
rotational_damping = 0.05
geometry = { shape = "straight", start = [0, 0, 0], end = [0, 0, 3] }

[[force]]
name = "tip"
type = "point-load"
rod = "beam"
node = -1
force = [-1500.0, 300, 0]

[[force]]
type = "gravity"

[[force]]
name = "air"
type = "damping"
coefficient = 0.5

[[constraint]]
name = "root"
type = "cosserat-clamp"
rod = "beam"
nodes = [0]
elements = [0]
)";
  for (int i = 0; i < 3; ++i) {
    const std::string n = std::to_string(i), x = std::to_string(1 + i);
    s += R"(
[[rod]]
name = "short)" + n + R"("
model = "cosserat"
nodes = 31
radius = 0.01
density = 1000.0
youngs_modulus = 1e6
geometry = { shape = "straight", start = [)" + x + R"(, 0, 0], end = [)" + x + R"(, 0.3, 0] }
)";
  }
  return s + "\n[output]\nevery = 0.0\nformats = [\"csv\"]\n";
}

// Twelve equal cantilevers of 40 elements released horizontal under gravity.
std::string manyRodsScene() {
  std::string s = R"([simulation]
duration = 0.02
dt = 1e-4

[solver]
type = "position-verlet"
velocity_forces = "explicit"

[[force]]
type = "gravity"
)";
  for (int i = 0; i < 12; ++i) {
    const std::string n = std::to_string(i), y = std::to_string(0.05 * i);
    s += R"(
[[rod]]
name = "rod)" + n + R"("
model = "cosserat"
nodes = 41
radius = 0.01
density = 1000.0
youngs_modulus = )" + std::to_string(1e6 * (1 + 0.1 * i)) + R"(
geometry = { shape = "straight", start = [0, )" + y + R"(, 0], end = [0.4, )" + y + R"(, 0] }

[[constraint]]
name = "clamp)" + n + R"("
type = "cosserat-clamp"
rod = "rod)" + n + R"("
nodes = [0]
elements = [0]
)";
  }
  return s + "\n[output]\nevery = 0.0\nformats = [\"csv\"]\n";
}

// final.csv of the scene run with `threads` threads (--threads), checked to have run.
std::string finalCsv(const std::filesystem::path& dir, const std::string& scene_file, int threads) {
  const auto out = dir / ("threads" + std::to_string(threads));
  const CommandResult r =
      runRodsim("run " + scene_file + " --threads " + std::to_string(threads) + " --output " + out.string() + " --quiet");
  INFO(r.output);
  REQUIRE(r.status == 0);
  const std::string csv = readText(out / "final.csv");
  REQUIRE(csv.size() > 100);
  return csv;
}

void checkSameForThreadCounts(const std::string& name, const std::string& scene) {
  const auto dir = scratchDir("threads_bitwise_" + name);
  const std::string file = writeText(dir / (name + ".toml"), scene).string();
  const std::string one = finalCsv(dir, file, 1);
  for (int threads : {2, 3}) {
    CAPTURE(threads);
    CHECK(finalCsv(dir, file, threads) == one);
  }
}

}  // namespace

TEST_CASE("a long Cosserat rod among short ones: the same final.csv on 1, 2 and 3 threads (position-verlet)") {
  checkSameForThreadCounts("long_rod_pv", longRodScene("position-verlet"));
}

TEST_CASE("the same with pefrl (rotations composed element by element in its drifts)") {
  checkSameForThreadCounts("long_rod_pefrl", longRodScene("pefrl"));
}

TEST_CASE("twelve equal rods spread over the threads: the same final.csv on 1, 2 and 3 threads") {
  checkSameForThreadCounts("many_rods", manyRodsScene());
}

TEST_CASE("--threads and simulation.threads refuse bad values") {
  const auto dir = scratchDir("threads_bad");
  const std::string file = writeText(dir / "s.toml", manyRodsScene()).string();
  CommandResult r = runRodsim("run " + file + " --threads two --output " + (dir / "a").string());
  CHECK(r.status == 2);
  CHECK(r.output.find("--threads 'two': expected a whole number >= 0") != std::string::npos);
  r = runRodsim("run " + file + " --threads -1 --output " + (dir / "b").string());
  CHECK(r.status == 2);
  r = runRodsim("run " + file + " --set simulation.threads=-2 --output " + (dir / "c").string());
  CHECK(r.status == 2);
  CHECK(r.output.find("threads") != std::string::npos);
}
