// Failure handling and resource limits (docs/reliability.md).
#include "scene_fixture.h"

#include <doctest/doctest.h>

#include <filesystem>

namespace fs = std::filesystem;
using namespace rodsim::test;

namespace {

CommandResult runScene(const std::string& name, const std::string& scene, const fs::path& out) {
  auto dir = scratchDir(name);
  auto file = writeText(dir / "scene.toml", scene);
  return runRodsim("run " + file.string() + " --quiet --output " + out.string());
}

}  // namespace

TEST_CASE("absurd sizes are refused before anything is allocated or written") {
  auto out = scratchDir("limits") / "out";
  CommandResult r = runScene("limits-nodes", sceneWithLine(12, "nodes = 1000000000000"), out);
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find(":12:9: rod 'beam' (der): 'nodes' must be >= 2 and <= 1e+07") != std::string::npos);
  r = runScene("limits-steps", sceneWithLine(4, "dt = 1e-15"), out);
  CHECK(r.status == 2);
  CHECK(r.output.find("at most 1e9 are allowed") != std::string::npos);
  std::string many_frames = sceneWithLine(4, "dt = 1e-9");
  many_frames.replace(many_frames.find("every = 0.01"), 12, "every = 1e-8");
  r = runScene("limits-frames", many_frames, out);
  CHECK(r.status == 2);
  CHECK(r.output.find("at most 1e6 are allowed") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("an output directory that cannot be written is reported before the run starts") {
  auto dir = scratchDir("unwritable");
  writeText(dir / "a-file", "not a directory");
  auto file = writeText(dir / "scene.toml", kValidScene);
  CommandResult r = runRodsim("run " + file.string() + " --quiet --output " + (dir / "a-file" / "out").string());
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("cannot create the output directory") != std::string::npos);
}

TEST_CASE("on_failure = substep retries a failed step as half steps and counts it") {
  // One Newton iteration per solve cannot reach 1e-6 N on the first 0.01 s step of a beam that
  // starts to fall, but halved steps can; with on_failure = "stop" the same scene fails.
  const std::string solver = "type = \"implicit-euler\"\nmax_iterations = 1\ntolerance = 1e-6\nline_search = false";
  auto out = scratchDir("substep") / "out";
  std::string stop_scene = sceneWithLine(7, solver);
  CommandResult r = runScene("substep-stop", stop_scene, scratchDir("substep-stop") / "out");
  INFO(r.output);
  REQUIRE(r.status == 3);
  std::string substep_scene = sceneWithLine(4, "dt = 0.01\non_failure = \"substep\"\nmax_step_cuts = 12");
  substep_scene = substep_scene.substr(0, substep_scene.find("[solver]")) + "[solver]\n" + solver +
                  substep_scene.substr(substep_scene.find("\n", substep_scene.find("type = \"implicit-euler\"")));
  r = runScene("substep-retry", substep_scene, out);
  CHECK(r.status == 0);
  std::string summary = readText(out / "summary.json");
  CHECK(summary.find("\"status\": \"ok\"") != std::string::npos);
  CHECK(summary.find("\"step_cuts\": 0,") == std::string::npos);
}

TEST_CASE("a solver that commits a NaN or an infinity while reporting success is stopped by the kernel") {
  // The kernel checks every committed state itself (Session::advance, finiteState): the run stops
  // at the step that broke it, with the reason, exit 3. The rows and frames written before it are
  // finite. What is written at the end comes from the committed, broken state: here the NaN is a
  // twist (final.csv has positions only) and the infinity a velocity (the first frame has none yet),
  // so these files stay finite; the final frame of the v-inf case holds the infinity.
  for (const std::string entry : {"q-nan", "v-inf"}) {
    CAPTURE(entry);
    const std::string scene = std::string("[plugins]\npaths = [\"") + BROKEN_STATE_PLUGIN + R"("]
[simulation]
duration = 0.1
dt = 0.01
[solver]
type = "test-broken-state"
at_step = 4
entry = ")" + entry + R"("
[[rod]]
name = "beam"
model = "der"
nodes = 6
radius = 0.01
density = 1000.0
youngs_modulus = 1e6
geometry = { shape = "straight", start = [0, 0, 0], end = [0.5, 0, 0] }
[output]
formats = ["csv", "vtk"]
)";
    const auto out = scratchDir("broken-state-" + entry) / "out";
    const CommandResult r = runScene("broken-state-scene-" + entry, scene, out);
    INFO(r.output);
    CHECK(r.status == 3);
    const std::string summary = readText(out / "summary.json");
    CHECK(summary.find("\"status\": \"failed\"") != std::string::npos);
    CHECK(summary.find("step 4 (t = 0.04 s): the state became NaN or infinite") != std::string::npos);
    for (const char* file : {"timeseries.csv", "final.csv", "vtk/frame_0.vtp"}) {
      CAPTURE(file);
      const std::string text = readText(out / file);
      CHECK(!text.empty());
      CHECK(text.find("nan") == std::string::npos);
      CHECK(text.find("inf") == std::string::npos);
    }
    CHECK(readText(out / "timeseries.csv").find("\n3,0.03,") != std::string::npos);  // the last good step
  }
}
