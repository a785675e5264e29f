// Rods that start interpenetrated: `rodsim check` and `run` refuse them (exit 2, nothing written)
// for every contact model, naming the rods, edges and depths, unless the contact sets
// allow_initial_overlap = true; then imc and alart-curnier push the rods apart and min_gap reports
// the initial overlap (step 0), while ipc refuses (its barrier is undefined on overlapping rods).
#include "csv_table.h"
#include "run_rodsim.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

using namespace rodsim::test;

namespace {

const char* const kModels[] = {"imc", "ipc", "alart-curnier"};

// Two rods of radius 5 mm crossing at right angles with their centre lines 3 mm apart (7 mm
// interpenetrated), mid-edge on both (edge 10 of each); `a` clamped at both ends.
std::string crossingRods(const std::string& contact_type, const std::string& contact_extra = "") {
  return R"([simulation]
duration = 0.01
dt = 1e-3

[solver]
type = "implicit-euler"

[[rod]]
name = "a"
model = "der"
nodes = 21
radius = 0.005
density = 1000.0
youngs_modulus = 1e6
geometry = { shape = "straight", start = [-0.1, 0, 0], end = [0.1, 0, 0] }

[[rod]]
name = "b"
model = "der"
nodes = 21
radius = 0.005
density = 1000.0
youngs_modulus = 1e6
geometry = { shape = "straight", start = [0.005, -0.105, 0.003], end = [0.005, 0.095, 0.003] }

[[constraint]]
name = "a_left"
type = "clamp"
rod = "a"
nodes = [0, 1]

[[constraint]]
name = "a_right"
type = "clamp"
rod = "a"
nodes = [19, 20]

[[force]]
type = "gravity"

[output]
every = 0.0

[[contact]]
type = ")" + contact_type + "\"\n" + contact_extra;
}
// 1-based line of the first line of `scene` that starts with `text`.
int lineOf(const std::string& scene, const std::string& text) {
  int line = 1;
  for (std::size_t pos = 0; pos < scene.size(); pos = scene.find('\n', pos) + 1, ++line)
    if (scene.compare(pos, text.size(), text) == 0) return line;
  return -1;
}
const int kContactLine = lineOf(crossingRods("imc"), "[[contact]]");

// One rod with the given geometry (radius 5 mm, free), a floor plane at z = 0 and a contact model.
std::string oneRod(const std::string& geometry, const std::string& contact_type, bool floor = false) {
  std::string s = R"([simulation]
duration = 0.01
dt = 1e-3

[solver]
type = "implicit-euler"

[[rod]]
name = "r"
model = "der"
radius = 0.005
density = 1000.0
youngs_modulus = 1e6
)" + geometry + "\n";
  if (floor) s += "\n[[obstacle]]\nname = \"floor\"\nshape = \"plane\"\norigin = [0, 0, 0]\nnormal = [0, 0, 1]\n";
  return s + "\n[[contact]]\ntype = \"" + contact_type + "\"\n";
}

// Runs `check` and `run` on `scene`: both exit 2 with `fragments` in the message and the scene
// location `location`; run writes nothing.
void expectRefused(const std::string& name, const std::string& scene, const std::string& location,
                   const std::vector<std::string>& fragments) {
  auto dir = scratchDir("overlap-" + name);
  auto file = writeText(dir / "scene.toml", scene);
  auto out = dir / "out";
  for (const std::string verb : {"check", "run"}) {
    const CommandResult r =
        runRodsim(verb + " " + file.string() + (verb == "run" ? " --quiet --output " + out.string() : std::string()));
    INFO(verb << ": " << r.output);
    CHECK(r.status == 2);
    CHECK(r.output.find(file.string() + ":" + location) != std::string::npos);
    for (const auto& f : fragments) CHECK_MESSAGE(r.output.find(f) != std::string::npos, "missing: " << f);
  }
  CHECK_FALSE(std::filesystem::exists(out));  // nothing written
}

}  // namespace

TEST_CASE("rods that start interpenetrated are refused by every contact model, naming rods, edges and depth") {
  for (const std::string model : kModels) {
    CAPTURE(model);
    expectRefused("crossing-" + model, crossingRods(model), std::to_string(kContactLine) + ":1",
                  {"contact '" + model + "' (" + model + "): the rods start interpenetrated: 9 overlaps",
                   "rods 'a' edge 9 and 'b' edge 10 overlap by 4.17 mm",
                   "... and 4 more",
                   "deepest: rods 'a' edge 10 and 'b' edge 10 overlap by 7 mm (distance between centre lines 3 mm, "
                   "radii sum 10 mm)",
                   "set allow_initial_overlap = true in [[contact]] '" + model + "'"});
  }
}

TEST_CASE("allow_initial_overlap = true: imc and alart-curnier push the rods apart, min_gap reports the overlap") {
  for (const std::string model : {"imc", "alart-curnier"}) {
    CAPTURE(model);
    auto dir = scratchDir("overlap-allowed-" + model);
    auto file = writeText(dir / "scene.toml", crossingRods(model, "allow_initial_overlap = true\n"));
    const CommandResult c = runRodsim("check " + file.string());
    INFO(c.output);
    CHECK(c.status == 0);
    const CommandResult r = runRodsim("run " + file.string() + " --quiet --output " + (dir / "out").string());
    INFO(r.output);
    REQUIRE(r.status == 0);
    const std::string summary = readText(dir / "out" / "summary.json");
    CHECK(jsonNumber(summary, "min_gap") == doctest::Approx(-0.007).epsilon(1e-9));
    const CsvTable ts = readCsv(dir / "out" / "timeseries.csv");
    CHECK(ts.num(0, "step") == 0);
    CHECK(ts.num(0, "min_gap") == doctest::Approx(-0.007).epsilon(1e-9));  // step 0: the initial state
    CHECK(ts.num(1, "min_gap") > -1e-6);  // pushed apart within the first step
  }
}

TEST_CASE("ipc refuses allow_initial_overlap = true on overlapping rods (its barrier is undefined there)") {
  auto dir = scratchDir("overlap-ipc-allowed");
  auto file = writeText(dir / "scene.toml", crossingRods("ipc", "allow_initial_overlap = true\n"));
  for (const std::string verb : {"check", "run"}) {
    const CommandResult r = runRodsim(verb + " " + file.string() +
                                      (verb == "run" ? " --quiet --output " + (dir / "out").string() : std::string()));
    INFO(r.output);
    CHECK(r.status == 2);
    CHECK(r.output.find(file.string() + ":" + std::to_string(kContactLine + 2) + ":") != std::string::npos);
    CHECK(r.output.find("'allow_initial_overlap': ipc cannot start from overlapping rods") != std::string::npos);
    CHECK(r.output.find("deepest: rods 'a' edge 10 and 'b' edge 10, by 7 mm") != std::string::npos);
  }
  CHECK_FALSE(std::filesystem::exists(dir / "out"));
}

TEST_CASE("a node below a floor plane is an overlap") {
  // 11 nodes from z = 10 mm down to z = -2 mm: nodes 5 to 10 are closer to the plane than the radius.
  const std::string geometry =
      "nodes = 11\ngeometry = { shape = \"straight\", start = [0, 0, 0.01], end = [0.1, 0, -0.002] }";
  for (const std::string model : kModels) {
    CAPTURE(model);
    expectRefused("floor-" + model, oneRod(geometry, model, true), "",
                  {"6 overlaps", "rod 'r' node 5 is inside obstacle 'floor'",
                   "deepest: rod 'r' node 10 is inside obstacle 'floor' by 7 mm (signed distance of the centre line "
                   "from the surface -2 mm, radius 5 mm)"});
  }
}

TEST_CASE("self-overlap of a rod folded on itself; a straight rod's neighbouring edges are no overlap") {
  // A hairpin: 10 edges along x at z = 0, a 6 mm edge up, 10 edges back at z = 6 mm (radius 5 mm).
  std::string points = "geometry = { shape = \"polyline\", points = [";
  for (int i = 0; i <= 10; ++i) points.append("[").append(std::to_string(0.01 * i)).append(", 0, 0], ");
  for (int i = 10; i >= 0; --i) points.append("[").append(std::to_string(0.01 * i)).append(i ? ", 0, 0.006], " : ", 0, 0.006]");
  points += "] }";
  // Thick and finely divided: edges 5 mm long, 20 mm across, so that edges e and e + 2 are closer
  // than the sum of their radii, but neighbours along the rod.
  const std::string straight =
      "nodes = 11\nradius = 0.01\ngeometry = { shape = \"straight\", start = [0, 0, 0], end = [0.05, 0, 0] }";
  for (const std::string model : kModels) {
    CAPTURE(model);
    expectRefused("hairpin-" + model, oneRod(points, model), "",
                  {"rod 'r' edges 0 and 20 overlap by 4 mm (distance between centre lines 6 mm, radii sum 10 mm)"});
    auto dir = scratchDir("overlap-straight-" + model);
    std::string scene = oneRod(straight, model);
    scene.replace(scene.find("radius = 0.005\n"), 15, "");  // the geometry line sets it
    auto file = writeText(dir / "scene.toml", scene);
    const CommandResult r = runRodsim("check " + file.string());
    INFO(r.output);
    CHECK(r.status == 0);
  }
}
