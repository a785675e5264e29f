// Crash consistency: a run killed with SIGKILL at any moment (mid-step, mid-checkpoint, mid-write of
// a frame or of timeseries.csv) either restarts to exactly the output of an uninterrupted run, or the
// restart refuses with a reason. Never a different result, never exit 0 with mixed files.
#include "scene_fixture.h"

#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <random>
#include <thread>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace rodsim::test;

namespace {

using Clock = std::chrono::steady_clock;

// Starts `rodsim run SCENE --output OUT` without a shell (the pid is rodsim's own).
pid_t startRun(const fs::path& scene, const fs::path& out) {
  const pid_t pid = fork();
  if (pid == 0) {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO);
    dup2(null, STDERR_FILENO);
    execl(RODSIM_EXECUTABLE, RODSIM_EXECUTABLE, "run", scene.c_str(), "--quiet", "--output", out.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

int waitExit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

}  // namespace

TEST_CASE("SIGKILL at 50 random moments: --restart gives the uninterrupted output or refuses with a reason") {
  auto dir = scratchDir("crash-consistency");
  // A checkpoint and a VTK frame every step, so that most kills land in the middle of a write.
  std::string scene = sceneWithLine(28, "every = 0.01\ncheckpoint_every = 0.01\ncheckpoint_keep = 2");
  scene.replace(scene.find("duration = 0.02"), 15, "duration = 1.0");
  auto file = writeText(dir / "scene.toml", scene);

  const auto start = Clock::now();
  REQUIRE(waitExit(startRun(file, dir / "reference")) == 0);
  const double run_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const std::string reference_final = readText(dir / "reference/final.csv");
  const std::string reference_rows = withoutWallClock(readText(dir / "reference/timeseries.csv"));
  const std::string reference_pvd = readText(dir / "reference/vtk/scene.pvd");

  std::mt19937 random(20261127);  // fixed: a failure reproduces
  std::uniform_real_distribution<double> moment(0.0, run_seconds);
  int restarted = 0, refused = 0;
  for (int k = 0; k < 50; ++k) {
    const fs::path out = dir / ("killed_" + std::to_string(k));
    const double delay = moment(random);
    const pid_t pid = startRun(file, out);
    std::this_thread::sleep_for(std::chrono::duration<double>(delay));
    kill(pid, SIGKILL);
    waitExit(pid);
    const CommandResult r = runRodsim("run --restart " + out.string() + " --quiet");
    INFO("kill ", k, " after ", delay, " s: ", r.output);
    if (r.status == 0) {
      ++restarted;
      CHECK(readText(out / "final.csv") == reference_final);
      CHECK(withoutWallClock(readText(out / "timeseries.csv")) == reference_rows);
      CHECK(readText(out / "vtk/scene.pvd") == reference_pvd);
    } else {
      ++refused;
      CHECK(r.status == 2);
      CHECK(r.output.find("rodsim: error: ") != std::string::npos);
    }
    fs::remove_all(out);
  }
  MESSAGE(restarted << " kills restarted to the reference output, " << refused << " refused (run of "
                    << run_seconds << " s)");
  CHECK(restarted > 0);
}
