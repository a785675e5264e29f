// `rodsim check` takes the scene's first step on the bound world, writing nothing (issue 39): what
// `run` would stop at in its first step is refused up front (exit 2, the step's message at the
// [solver] table), e.g. an explicit dt above the rods' stability limit, which the explicit solvers
// estimate at their first step.
#include "scene_fixture.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

using namespace rodsim::test;

namespace {

// The fixture scene (a clamped DER beam, 11 nodes, 0.5 m, r = 1 cm, E = 1 MPa) under position-verlet,
// writing into `out`. Its stability limit is about 1.6 ms (omega_max h <= 2); the fixture's dt is 10 ms.
std::string explicitScene(const std::filesystem::path& out) {
  std::string s = sceneWithLine(7, "type = \"position-verlet\"");
  s.replace(s.find("[output]\n"), 9, "[output]\ndir = \"" + out.string() + "\"\n");
  return s;
}

}  // namespace

TEST_CASE("check refuses an explicit dt above the stability limit, as run would at its first step") {
  auto dir = scratchDir("check-first-step");
  const auto out = dir / "out";
  auto file = writeText(dir / "scene.toml", explicitScene(out));
  const CommandResult c = runRodsim("check " + file.string());
  INFO(c.output);
  CHECK(c.status == 2);
  CHECK(c.output.find(file.string() + ":6:1: solver 'position-verlet' (position-verlet): the first step (t = 0 to 0.01 s) "
                      "fails, where `rodsim run` would stop") != std::string::npos);
  CHECK(c.output.find("dt = 0.01 s exceeds the explicit stability limit, estimated at 0.00159 s") != std::string::npos);
  CHECK(c.output.find("use dt <= 0.00142 s (simulation.dt)") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));  // nothing written
  // run stops at that step (exit 3), with the same reason
  const CommandResult r = runRodsim("run " + file.string());
  INFO(r.output);
  CHECK(r.status == 3);
  CHECK(r.output.find("failed: step 1 (t = 0.01 s): position-verlet: dt = 0.01 s exceeds the explicit stability limit, "
                      "estimated at 0.00159 s") != std::string::npos);

  // Below the limit, or with the limit turned into a warning, or with the step halved until it
  // passes (on_failure = "substep", as run would): ok, and still nothing written.
  std::filesystem::remove_all(out);
  for (const std::string sets : {" --set simulation.dt=1e-3", " --set solver.stability=warn",
                                 " --set simulation.on_failure=substep"}) {
    CAPTURE(sets);
    const CommandResult ok = runRodsim("check " + file.string() + sets);
    INFO(ok.output);
    CHECK(ok.status == 0);
    CHECK(ok.output.find(": ok (1 rod(s)") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(out));
  }
}

TEST_CASE("check's first step leaves an implicit scene's check as it was: ok, nothing written") {
  auto dir = scratchDir("check-first-step-implicit");
  std::string scene = kValidScene;
  scene.replace(scene.find("[output]\n"), 9, "[output]\ndir = \"" + (dir / "out").string() + "\"\n");
  auto file = writeText(dir / "scene.toml", scene);
  const CommandResult c = runRodsim("check " + file.string());
  INFO(c.output);
  CHECK(c.status == 0);
  CHECK_FALSE(std::filesystem::exists(dir / "out"));
}
