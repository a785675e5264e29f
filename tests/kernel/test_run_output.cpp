// What a run writes, per the contract; reproducibility; failure handling.
#include "scene_fixture.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

namespace fs = std::filesystem;
using namespace rodsim::test;


TEST_CASE("a run writes summary.json, timeseries.csv, final.csv and a ParaView series") {
  auto dir = scratchDir("run");
  auto file = writeText(dir / "scene.toml", kValidScene);
  CommandResult r = runRodsim("run " + file.string() + " --quiet --output " + (dir / "out").string());
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.empty());  // --quiet
  std::string summary = readText(dir / "out/summary.json");
  for (const char* key : {"\"name\"", "\"scene\"", "\"status\": \"ok\"", "\"reason\"", "\"steps\": 2", "\"sim_time\"",
                          "\"wall_time_s\"", "\"newton_iterations\"", "\"aipts\"", "\"steps_with_contact\"",
                          "\"aipts_contact\"", "\"atpts_ms\"", "\"atpts_contact_ms\"", "\"min_gap\"", "\"plugins\"",
                          "\"version\""})
    CHECK_MESSAGE(summary.find(key) != std::string::npos, key);
  std::string ts = readText(dir / "out/timeseries.csv");
  CHECK(ts.rfind("step,t,iterations,wall_ms,contacts,min_gap,kinetic_energy,elastic_energy,tip_z\n", 0) == 0);
  CHECK(std::count(ts.begin(), ts.end(), '\n') == 4);  // header + t = 0 + 2 steps
  std::string final_csv = readText(dir / "out/final.csv");
  CHECK(final_csv.rfind("rod,node,x,y,z\n", 0) == 0);
  CHECK(std::count(final_csv.begin(), final_csv.end(), '\n') == 12);
  CHECK(fs::exists(dir / "out/vtk/scene.pvd"));
  CHECK(fs::exists(dir / "out/vtk/frame_2.vtp"));
  std::string vtp = readText(dir / "out/vtk/frame_2.vtp");
  CHECK(vtp.find("Name=\"radius\"") != std::string::npos);
  CHECK(vtp.find("Name=\"velocity\"") != std::string::npos);
}

TEST_CASE("two runs of the same scene write identical files") {
  auto dir = scratchDir("determinism");
  auto file = writeText(dir / "scene.toml", kValidScene);
  for (const char* out : {"a", "b"}) {
    CommandResult r = runRodsim("run " + file.string() + " --quiet --output " + (dir / out).string());
    REQUIRE(r.status == 0);
  }
  CHECK(readText(dir / "a/final.csv") == readText(dir / "b/final.csv"));
  CHECK(readText(dir / "a/vtk/scene.pvd") == readText(dir / "b/vtk/scene.pvd"));
  for (int k = 0; k <= 2; ++k) {
    std::string f = "vtk/frame_" + std::to_string(k) + ".vtp";
    CHECK(readText(dir / "a" / f) == readText(dir / "b" / f));
  }
  // wall_ms is the one column that measures the machine, not the physics.
  CHECK(withoutWallClock(readText(dir / "a/timeseries.csv")) == withoutWallClock(readText(dir / "b/timeseries.csv")));
}

TEST_CASE("a diverging run stops with status 3, a reason, and keeps what it wrote") {
  auto dir = scratchDir("diverge");
  // One Newton iteration cannot converge a large step: the solver gives up.
  std::string scene = sceneWithLine(7, "type = \"implicit-euler\"\nmax_iterations = 1\ntolerance = 1e-30");
  auto file = writeText(dir / "scene.toml", scene);
  CommandResult r = runRodsim("run " + file.string() + " --quiet --output " + (dir / "out").string());
  INFO(r.output);
  CHECK(r.status == 3);
  std::string summary = readText(dir / "out/summary.json");
  CHECK(summary.find("\"status\": \"failed\"") != std::string::npos);
  CHECK(summary.find("step 1") != std::string::npos);
  CHECK(fs::exists(dir / "out/final.csv"));
  CHECK(fs::exists(dir / "out/vtk/frame_0.vtp"));
  CHECK(readText(dir / "out/timeseries.csv").find("nan") == std::string::npos);
}
