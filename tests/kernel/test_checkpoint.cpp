// Checkpoint and restart: a continued run writes what an uninterrupted one writes, bit for bit.
#include "csv_table.h"
#include "scene_fixture.h"

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <thread>

namespace fs = std::filesystem;
using namespace rodsim::test;

namespace {

void expectSameOutput(const fs::path& a, const fs::path& b) {
  CHECK(readText(a / "final.csv") == readText(b / "final.csv"));
  CHECK(withoutWallClock(readText(a / "timeseries.csv")) == withoutWallClock(readText(b / "timeseries.csv")));
  CHECK(readText(a / "vtk/scene.pvd") == readText(b / "vtk/scene.pvd"));
  for (const auto& f : fs::directory_iterator(a / "vtk"))
    CHECK_MESSAGE(readText(f.path()) == readText(b / "vtk" / f.path().filename()), f.path().filename().string());
}

}  // namespace

TEST_CASE("restart from a mid-run checkpoint continues bit for bit") {
  auto dir = scratchDir("checkpoint-restart");
  auto file = writeText(dir / "scene.toml", checkpointScene(0.2));
  CommandResult r = runRodsim("run " + file.string() + " --quiet --output " + (dir / "full").string());
  INFO(r.output);
  REQUIRE(r.status == 0);
  REQUIRE(fs::exists(dir / "full/checkpoints/step_000000000010.ckpt"));
  // Pretend the run stopped at step 10: keep only that checkpoint, in a copy of the output.
  fs::copy(dir / "full", dir / "resumed", fs::copy_options::recursive);
  for (const auto& f : fs::directory_iterator(dir / "resumed/checkpoints"))
    if (f.path().filename() != "step_000000000010.ckpt") fs::remove(f.path());
  r = runRodsim("run --restart " + (dir / "resumed").string() + " --quiet");
  INFO(r.output);
  REQUIRE(r.status == 0);
  expectSameOutput(dir / "full", dir / "resumed");
  CHECK(readText(dir / "resumed/summary.json").find("\"steps\": 20") != std::string::npos);
}

TEST_CASE("a restart keeps the row schedule of a sparse timeseries (timeseries_every)") {
  auto dir = scratchDir("checkpoint-sparse-rows");
  std::string scene = checkpointScene(0.2);  // dt = 0.01: 20 steps, checkpoints at steps 5, 10, 15, 20
  scene.replace(scene.find("checkpoint_every"), 0, "timeseries_every = 0.03\n");
  auto file = writeText(dir / "scene.toml", scene);
  CommandResult r = runRodsim("run " + file.string() + " --quiet --output " + (dir / "full").string());
  INFO(r.output);
  REQUIRE(r.status == 0);
  const auto rows = readNumericCsv(dir / "full/timeseries.csv");
  std::vector<double> steps;
  for (const auto& row : rows) steps.push_back(row[0]);
  CHECK(steps == std::vector<double>{0, 3, 6, 9, 12, 15, 18, 20});  // every third step and the last
  CHECK(readText(dir / "full/summary.json").find("\"steps\": 20") != std::string::npos);
  // From a checkpoint between rows (step 10) and from the one of the last step (step 20).
  for (const char* keep : {"step_000000000010.ckpt", "step_000000000020.ckpt"}) {
    const fs::path resumed = dir / (std::string("resumed_") + keep);
    fs::copy(dir / "full", resumed, fs::copy_options::recursive);
    for (const auto& f : fs::directory_iterator(resumed / "checkpoints"))
      if (f.path().filename() != keep) fs::remove(f.path());
    r = runRodsim("run --restart " + resumed.string() + " --quiet");
    INFO(keep, r.output);
    REQUIRE(r.status == 0);
    expectSameOutput(dir / "full", resumed);
  }
}

TEST_CASE("SIGTERM writes a checkpoint and stops cleanly; the restart finishes the run identically") {
  auto dir = scratchDir("checkpoint-sigterm");
  auto file = writeText(dir / "scene.toml", longRunScene());  // still going when the signal arrives
  // Uninterrupted reference.
  CommandResult r = runRodsim("run " + file.string() + " --quiet --output " + (dir / "full").string());
  REQUIRE(r.status == 0);
  // Interrupted run: SIGTERM once the run has written its first rows (polling, not a fixed sleep:
  // a fixed delay was longer than the whole run once the DER rod got faster).
  const std::string cut = (dir / "cut").string();
  const std::string cmd = std::string(RODSIM_EXECUTABLE) + " run " + file.string() + " --quiet --output " + cut +
                          " & pid=$!; while [ ! -s " + cut + "/timeseries.csv ] && kill -0 $pid 2>/dev/null; do sleep 0.02; done;" +
                          " sleep 0.1;" +
                          " kill -TERM $pid; wait $pid";
  r = runCommand(cmd);
  INFO(r.output);
  REQUIRE(r.status == 3);
  std::string summary = readText(dir / "cut/summary.json");
  CHECK(summary.find("interrupted by SIGTERM") != std::string::npos);
  CHECK(summary.find("--restart") != std::string::npos);
  REQUIRE_FALSE(fs::is_empty(dir / "cut/checkpoints"));
  r = runRodsim("run --restart " + (dir / "cut").string() + " --quiet");
  INFO(r.output);
  REQUIRE(r.status == 0);
  expectSameOutput(dir / "full", dir / "cut");
}

TEST_CASE("a restart with a changed scene is refused") {
  auto dir = scratchDir("checkpoint-changed");
  std::string scene = sceneWithLine(28, "every = 0.01\ncheckpoint_every = 0.01");
  auto file = writeText(dir / "scene.toml", scene);
  REQUIRE(runRodsim("run " + file.string() + " --quiet --output " + (dir / "out").string()).status == 0);
  scene.replace(scene.find("youngs_modulus = 1e6"), 20, "youngs_modulus = 2e6");
  writeText(file, scene);
  CommandResult r = runRodsim("run --restart " + (dir / "out").string() + " --quiet");
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("written by another setup") != std::string::npos);
  CHECK(runRodsim("run --restart " + (dir / "nothing").string()).status == 2);
}

TEST_CASE("a Cosserat rod restarts bit for bit (its committed frames are in the checkpoint)") {
  auto dir = scratchDir("checkpoint-cosserat");
  const std::string sets = " --set simulation.duration=0.2 --set rod.beam.nodes=17 --set output.every=0.05"
                           " --set output.checkpoint_every=0.1 --set output.checkpoint_keep=10";
  CommandResult r = runRodsim("run scenes/validation/cosserat_timoshenko.toml --quiet --output " +
                              (dir / "full").string() + sets);
  INFO(r.output);
  REQUIRE(r.status == 0);
  fs::copy(dir / "full", dir / "resumed", fs::copy_options::recursive);
  for (const auto& f : fs::directory_iterator(dir / "resumed/checkpoints"))
    if (f.path().filename() != "step_000000000100.ckpt") fs::remove(f.path());
  REQUIRE(fs::exists(dir / "resumed/checkpoints/step_000000000100.ckpt"));
  r = runRodsim("run --restart " + (dir / "resumed").string() + " --quiet");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(readText(dir / "full/final.csv") == readText(dir / "resumed/final.csv"));
  CHECK(withoutWallClock(readText(dir / "full/timeseries.csv")) == withoutWallClock(readText(dir / "resumed/timeseries.csv")));
}
