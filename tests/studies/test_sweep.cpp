// rodsim sweep through the executable: the order and naming of the rows, a failing row, resuming
// an interrupted sweep, the Slurm-style --index/--merge path, mpirun, and bad sweep files.
// Every run is a beam of a few steps, so the whole file takes seconds.
#include "csv_table.h"
#include "run_rodsim.h"
#include "scene_fixture.h"

#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <spawn.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <vector>

namespace fs = std::filesystem;
using namespace rodsim::test;

extern char** environ;

namespace {

// The kernel tests' beam (tests/kernel/scene_fixture.h), two steps, probe tip_z.
fs::path writeScene(const fs::path& dir) { return writeText(dir / "beam.toml", kValidScene); }

fs::path writeSweep(const fs::path& dir, const std::string& text) {
  writeScene(dir);
  return writeText(dir / "study.sweep.toml", text);
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// runs.csv without the columns that depend on the machine's clock.
std::vector<std::vector<std::string>> withoutWallClock(const CsvTable& t) {
  return rowsWithout(t, {"wall_time_s", "atpts_ms", "atpts_contact_ms"});
}

const char* kGrid = R"(scene = "beam.toml"

[set]
"simulation.duration" = 0.03

[axes]
"rod.beam.youngs_modulus" = [1e6, 2e6]
rod.beam.radius = [0.01, 0.02, 0.03]
)";

}  // namespace

TEST_CASE("sweep: the first axis varies slowest; row k writes DIR/k with its resolved scene") {
  auto dir = scratchDir("sweep-grid");
  auto sweep = writeSweep(dir, kGrid);
  CommandResult list = runRodsim("sweep " + sweep.string() + " --list");
  INFO(list.output);
  REQUIRE(list.status == 0);
  CHECK(list.output ==
        "index,rod.beam.youngs_modulus,rod.beam.radius\n"
        "0,1e6,0.01\n1,1e6,0.02\n2,1e6,0.03\n3,2e6,0.01\n4,2e6,0.02\n5,2e6,0.03\n");

  const fs::path out = dir / "out";
  CommandResult r = runRodsim("sweep " + sweep.string() + " --jobs 2 --output " + out.string());
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("6 row(s): 6 ok, 0 failed, 0 not run") != std::string::npos);
  CHECK(readText(out / "table.csv") == list.output);
  for (int k = 0; k < 6; ++k) {
    CHECK(fs::exists(out / std::to_string(k) / "summary.json"));
    CHECK(fs::exists(out / std::to_string(k) / "sweep_row.json"));
  }
  // The resolved scene keeps the base scene's lines, with the row's values in place.
  const std::string scene4 = readText(out / "4" / "beam.toml");
  CHECK(scene4.find("youngs_modulus = 2e6\n") != std::string::npos);
  CHECK(scene4.find("radius = 0.02\n") != std::string::npos);
  CHECK(scene4.find("duration = 0.03\n") != std::string::npos);
  CHECK(lines(scene4)[15] == lines(kValidScene)[15]);  // geometry: line 16 as in the base scene

  CsvTable runs = readCsv(out / "runs.csv");
  REQUIRE(runs.rows.size() == 6);
  const std::vector<std::string> head(runs.header.begin(), runs.header.begin() + 4);
  CHECK(head == std::vector<std::string>{"index", "rod.beam.youngs_modulus", "rod.beam.radius", "status"});
  for (const char* column : {"aipts", "aipts_contact", "atpts_ms", "min_gap", "steps_with_contact", "wall_time_s",
                             "tip_z_final", "tip_z_mean", "reason"})
    CHECK_MESSAGE(std::find(runs.header.begin(), runs.header.end(), column) != runs.header.end(), column);
  for (std::size_t k = 0; k < 6; ++k) {
    CHECK(runs.rows[k][runs.col("status")] == "ok");
    CHECK(runs.num(k, "index") == k);
    CHECK(runs.num(k, "steps") == 3);
    CHECK(runs.num(k, "tip_z_final") < 0);  // the beam sags
    CHECK(runs.num(k, "tip_z_mean") > runs.num(k, "tip_z_final"));
  }
  CHECK(runs.rows[4][1] == "2e6");
  CHECK(runs.rows[4][2] == "0.02");
  // Each row's final probe value is the last line of its own timeseries.
  CsvTable ts = readCsv(out / "4" / "timeseries.csv");
  CHECK(runs.rows[4][runs.col("tip_z_final")] == ts.rows.back()[ts.col("tip_z")]);
}

TEST_CASE("sweep: zip pairs lists of equal length and the grid runs over the groups") {
  auto dir = scratchDir("sweep-zip");
  auto sweep = writeSweep(dir, R"(scene = "beam.toml"
zip = [["rod.beam.radius", "rod.beam.density"]]
[axes]
"rod.beam.youngs_modulus" = [1e6, 2e6]
"rod.beam.radius" = [0.01, 0.02]
"rod.beam.density" = [1000, 2000]
)");
  CommandResult r = runRodsim("sweep " + sweep.string() + " --list");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output ==
        "index,rod.beam.youngs_modulus,rod.beam.radius,rod.beam.density\n"
        "0,1e6,0.01,1000\n1,1e6,0.02,2000\n2,2e6,0.01,1000\n3,2e6,0.02,2000\n");
}

TEST_CASE("sweep: a failing row is recorded with its reason and the others complete") {
  auto dir = scratchDir("sweep-failing");
  // One Newton iteration cannot reach 1e-6 N on the first step (tests/kernel/test_reliability.cpp).
  auto sweep = writeSweep(dir, R"(scene = "beam.toml"
[set]
"solver.tolerance" = 1e-6
"solver.line_search" = false
[axes]
"solver.max_iterations" = [50, 1, 50]
)");
  const fs::path out = dir / "out";
  CommandResult r = runRodsim("sweep " + sweep.string() + " --jobs 1 --output " + out.string());
  INFO(r.output);
  CHECK(r.status == 3);
  CHECK(r.output.find("3 row(s): 2 ok, 1 failed") != std::string::npos);
  CsvTable runs = readCsv(out / "runs.csv");
  REQUIRE(runs.rows.size() == 3);
  CHECK(runs.rows[0][runs.col("status")] == "ok");
  CHECK(runs.rows[1][runs.col("status")] == "failed");
  CHECK(runs.rows[2][runs.col("status")] == "ok");
  CHECK(readText(out / "runs.csv").find("step 1") != std::string::npos);  // the reason, from summary.json
  // Running again runs nothing: a failed row is finished too.
  r = runRodsim("sweep " + sweep.string() + " --output " + out.string());
  CHECK(r.status == 3);
  CHECK(r.output.find("3 finished before, 0 to run") != std::string::npos);
}

TEST_CASE("sweep: after SIGINT mid-sweep, running it again runs only the missing rows") {
  auto dir = scratchDir("sweep-resume");
  auto sweep = writeSweep(dir, R"(scene = "beam.toml"
[set]
"simulation.duration" = 1.0
"simulation.dt" = 0.001
[axes]
"rod.beam.density" = [1000, 1100, 1200, 1300, 1400, 1500, 1600, 1700]
)");
  const fs::path out = dir / "out";
  std::vector<std::string> args{RODSIM_EXECUTABLE, "sweep", sweep.string(), "--jobs", "1", "--quiet", "--output", out.string()};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  REQUIRE(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) == 0);
  // Interrupt once two rows are finished (each takes a few tenths of a second).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!fs::exists(out / "1" / "sweep_row.json") && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 3);

  std::vector<int> finished;
  std::map<int, std::string> records;
  for (int k = 0; k < 8; ++k)
    if (fs::exists(out / std::to_string(k) / "sweep_row.json")) {
      finished.push_back(k);
      records[k] = readText(out / std::to_string(k) / "sweep_row.json");
    }
  INFO("finished before the interrupt: " << finished.size());
  REQUIRE(finished.size() >= 2);
  REQUIRE(finished.size() < 8);
  CsvTable partial = readCsv(out / "runs.csv");
  CHECK(partial.rows[7][partial.col("status")] == "missing");
  // The row that was running wrote a checkpoint as it stopped: it continues from there.
  bool checkpointed = false;
  for (int k = 0; k < 8; ++k)
    checkpointed = checkpointed || (!records.count(k) && fs::exists(out / std::to_string(k) / "checkpoints"));

  CommandResult r = runRodsim("sweep " + sweep.string() + " --jobs 2 --output " + out.string());
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find(std::to_string(finished.size()) + " finished before, " + std::to_string(8 - finished.size()) +
                      " to run") != std::string::npos);
  if (checkpointed) CHECK(r.output.find("continued from its checkpoint") != std::string::npos);
  for (int k : finished) {
    CHECK(readText(out / std::to_string(k) / "sweep_row.json") == records[k]);  // not run again
    CHECK(r.output.find("row " + std::to_string(k) + " (") == std::string::npos);
  }
  CsvTable runs = readCsv(out / "runs.csv");
  REQUIRE(runs.rows.size() == 8);
  for (std::size_t k = 0; k < 8; ++k) CHECK(runs.rows[k][runs.col("status")] == "ok");
}

TEST_CASE("sweep: --index runs one row (a Slurm array task), --merge writes runs.csv, same as one sweep") {
  auto dir = scratchDir("sweep-index");
  auto sweep = writeSweep(dir, kGrid);
  const fs::path serial = dir / "serial", array = dir / "array";
  REQUIRE(runRodsim("sweep " + sweep.string() + " --quiet --output " + serial.string()).status == 0);
  CommandResult r = runRodsim("sweep " + sweep.string() + " --merge --output " + array.string());
  CHECK(r.status == 2);  // nothing run yet
  CHECK(r.output.find("nothing to merge") != std::string::npos);
  for (int k = 5; k >= 2; --k) {
    r = runRodsim("sweep " + sweep.string() + " --quiet --index " + std::to_string(k) + " --output " + array.string());
    INFO(r.output);
    REQUIRE(r.status == 0);
  }
  r = runRodsim("sweep " + sweep.string() + " --merge --output " + array.string());
  CHECK(r.status == 3);  // rows 0 and 1 not run yet
  CHECK(r.output.find("4 ok, 0 failed, 2 not run") != std::string::npos);
  for (int k = 1; k >= 0; --k)
    REQUIRE(runRodsim("sweep " + sweep.string() + " --quiet --index " + std::to_string(k) + " --output " + array.string()).status == 0);
  r = runRodsim("sweep " + sweep.string() + " --index 6 --output " + array.string());
  CHECK(r.status == 2);
  CHECK(r.output.find("--index 6: the sweep") != std::string::npos);
  REQUIRE(runRodsim("sweep " + sweep.string() + " --merge --output " + array.string()).status == 0);
  CHECK(withoutWallClock(readCsv(array / "runs.csv")) == withoutWallClock(readCsv(serial / "runs.csv")));
}

TEST_CASE("sweep: mpirun -np 2 gives the runs.csv of a serial sweep") {
  if (runCommand("command -v mpirun").status != 0) {
    MESSAGE("skipped: mpirun not found (Debian: openmpi-bin)");
    return;
  }
#ifndef RODSIM_SWEEP_MPI
  MESSAGE("skipped: rodsim was configured without MPI");
  return;
#endif
  auto dir = scratchDir("sweep-mpi");
  auto sweep = writeSweep(dir, kGrid);
  const fs::path serial = dir / "serial", ranks = dir / "mpi";
  REQUIRE(runRodsim("sweep " + sweep.string() + " --jobs 1 --quiet --output " + serial.string()).status == 0);
  // Open MPI refuses root unless told (containers, CI).
  std::string env = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1";
#ifdef RODSIM_SANITIZED
  // Open MPI does not free what MPI_Init allocates (3000 blocks, 120 kB per rank, mostly in MCA
  // components it has unloaded by exit, so LeakSanitizer sees no module to suppress by name): the
  // ranks run without leak detection; every other sanitizer check stays on, and the sweep's own
  // code is leak-checked by the other test cases.
  env += " ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0";
#endif
  CommandResult r = runCommand(env + " mpirun -np 2 --oversubscribe " + std::string(RODSIM_EXECUTABLE) + " sweep " +
                               sweep.string() + " --output " + ranks.string());
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("on 2 MPI ranks") != std::string::npos);
  CHECK(withoutWallClock(readCsv(ranks / "runs.csv")) == withoutWallClock(readCsv(serial / "runs.csv")));
}

TEST_CASE("sweep: every shipped sweep file validates (base scene, every value, every row)") {
  int sweeps = 0;
  for (const auto& entry : fs::recursive_directory_iterator(std::string(RODSIM_SOURCE_DIR) + "/scenes")) {
    if (entry.path().extension() != ".toml" || entry.path().stem().extension() != ".sweep") continue;
    ++sweeps;
    CommandResult r = runRodsim("sweep " + entry.path().string() + " --list");
    INFO(entry.path().string() << "\n" << r.output);
    CHECK(r.status == 0);
    CHECK(lines(r.output).size() >= 3);  // a header and rows
  }
  CHECK(sweeps >= 4);
}

TEST_CASE("sweep: a bad sweep file is refused with file:line:column, exit 2, nothing run") {
  auto dir = scratchDir("sweep-bad");
  writeScene(dir);
  const fs::path out = dir / "out";
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"scene = \"beam.toml\"\nmode = 1\n[axes]\n\"rod.beam.radius\" = [0.01]\n",
       "bad.sweep.toml:2:1: unknown key 'mode' in a sweep file (valid: scene, axes, zip, set)"},
      {"scene = 3\n[axes]\n\"rod.beam.radius\" = [0.01]\n",
       "bad.sweep.toml:1:9: 'scene' expects a string (a path relative to the sweep file), found integer 3"},
      {"scene = \"nowhere.toml\"\n[axes]\n\"rod.beam.radius\" = [0.01]\n", "bad.sweep.toml:1:9: scene 'nowhere.toml': cannot open"},
      {"scene = \"beam.toml\"\n[axes]\n\"rod.beam.radius\" = 0.01\n",
       "bad.sweep.toml:3:21: axis 'rod.beam.radius' expects an array of values, found number 0.01"},
      {"scene = \"beam.toml\"\n[axes]\n\"rod.beam.youngs_modulus\" = [1e6, \"stiff\"]\n",
       "bad.sweep.toml:3:35: axis 'rod.beam.youngs_modulus' = \"stiff\": <--set rod.beam.youngs_modulus>: rod 'beam' (der): "
       "'youngs_modulus' expects number, found string \"stiff\""},
      {"scene = \"beam.toml\"\n[axes]\n\"rod.beam.youngs_modlus\" = [1e6]\n",
       "bad.sweep.toml:3:29: axis 'rod.beam.youngs_modlus' = 1e6: "},
      {"scene = \"beam.toml\"\n[axes]\n\"rod.bam.radius\" = [0.01]\n",
       "bad.sweep.toml:3:21: axis 'rod.bam.radius' = 0.01: --set rod.bam.radius: no [[rod]] named 'bam' (valid: beam; did you "
       "mean 'beam'?)"},
      {"scene = \"beam.toml\"\nzip = true\n[axes]\n\"rod.beam.radius\" = [0.01, 0.02]\n\"rod.beam.density\" = [1, 2, 3]\n",
       "bad.sweep.toml:2:7: zip: the zipped axes need lists of equal length: 'rod.beam.radius' has 2 (bad.sweep.toml:4:1), "
       "'rod.beam.density' has 3 (bad.sweep.toml:5:1)"},
      {"scene = \"beam.toml\"\nzip = [[\"rod.beam.radus\"]]\n[axes]\n\"rod.beam.radius\" = [0.01]\n",
       "bad.sweep.toml:2:9: zip: 'rod.beam.radus' is not an axis (axes: rod.beam.radius; did you mean 'rod.beam.radius'?)"},
      {"scene = \"beam.toml\"\n[axes]\n\"rod.beam.nodes\" = [11, 3]\n\"constraint.root.nodes\" = [[0, 1], [0, 5]]\n",
       "bad.sweep.toml:2:1: row 3 (rod.beam.nodes = 3, constraint.root.nodes = [0, 5]): <--set constraint.root.nodes>: "
       "constraint 'root' (clamp): 'nodes': node 5 is out of range for rod 'beam' with 3 nodes"},
      {"scene = \"beam.toml\"\n[axes]\n\"rod.beam.radius\" = [0.01\n", "bad.sweep.toml:3:"},
  };
  for (const Case& c : cases) {
    auto file = writeText(dir / "bad.sweep.toml", c.text);
    CommandResult r = runCommand("cd " + dir.string() + " && " + RODSIM_EXECUTABLE + " sweep bad.sweep.toml --output " + out.string());
    INFO(std::string(c.text));
    INFO(r.output);
    CHECK(r.status == 2);
    CHECK(r.output.find(c.message) != std::string::npos);
    CHECK_FALSE(fs::exists(out));
  }
}

// ---------------------------------------------------------------- issue 43

namespace {

// `rodsim sweep ARGS` started in the background; its pid.
pid_t startSweep(std::vector<std::string> args) {
  args.insert(args.begin(), {RODSIM_EXECUTABLE, "sweep"});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  REQUIRE(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) == 0);
  return pid;
}

bool waitFor(const std::function<bool()>& ready, int seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (!ready()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// A process that is gone or a zombie (nobody reaps an orphan in some containers).
bool ended(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const auto paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
}

const char* kSlowRows = R"(scene = "beam.toml"
[set]
"simulation.duration" = 200.0
"simulation.dt" = 0.001
[axes]
"rod.beam.density" = [1000, 1100]
)";

}  // namespace

TEST_CASE("sweep: cached rows are keyed by content: an edited scene or output runs its rows again, a garbage record is named") {
  auto dir = scratchDir("sweep-content");
  auto sweep = writeSweep(dir, R"(scene = "beam.toml"
[axes]
"rod.beam.density" = [1000, 2000]
)");
  const fs::path out = dir / "out";
  const std::string cmd = "sweep " + sweep.string() + " --jobs 2 --output " + out.string();
  REQUIRE(runRodsim(cmd + " --quiet").status == 0);
  const std::string tip = readCsv(out / "runs.csv").rows[0][static_cast<std::size_t>(readCsv(out / "runs.csv").col("tip_z_final"))];

  // The base scene edited between two invocations (the beam twice as long): both rows run again
  // with it, runs.csv holds only the new scene's results.
  std::string scene = readText(dir / "beam.toml");
  scene.replace(scene.find("end = [0.5, 0, 0]"), 17, "end = [1.0, 0, 0]");
  writeText(dir / "beam.toml", scene);
  CommandResult r = runRodsim(cmd);
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("row 0 runs again: its scene, a file the scene references, or rodsim changed since it ran") != std::string::npos);
  CHECK(r.output.find("0 finished before, 2 to run") != std::string::npos);
  CHECK(readText(out / "0" / "beam.toml").find("end = [1.0, 0, 0]") != std::string::npos);
  CsvTable runs = readCsv(out / "runs.csv");
  CHECK(runs.rows[0][static_cast<std::size_t>(runs.col("tip_z_final"))] != tip);

  // An edited output of a finished row: that row runs again, the other is reused.
  writeText(out / "1" / "timeseries.csv", readText(out / "1" / "timeseries.csv") + "9,9,9\n");
  r = runRodsim(cmd);
  CHECK(r.status == 0);
  CHECK(r.output.find("row 1 runs again: its output files were changed since it ran") != std::string::npos);
  CHECK(r.output.find("1 finished before, 1 to run") != std::string::npos);

  // Garbage in a row record: named as a corrupt record, not as a changed sweep file.
  writeText(out / "0" / "sweep_row.json", "\x01\x02 not json {{{");
  r = runRodsim(cmd);
  CHECK(r.status == 2);
  CHECK(r.output.find((out / "0" / "sweep_row.json").string() + ": corrupt row record") != std::string::npos);
  CHECK(r.output.find("the sweep file changed") == std::string::npos);
}

TEST_CASE("sweep: a second sweep into the same output directory is refused (exit 2) while the first runs") {
  auto dir = scratchDir("sweep-lock");
  auto sweep = writeSweep(dir, kSlowRows);
  const fs::path out = dir / "out";
  const pid_t first = startSweep({sweep.string(), "--jobs", "1", "--quiet", "--output", out.string()});
  REQUIRE(waitFor([&] { return fs::exists(out / "0" / "timeseries.csv"); }, 60));
  CommandResult r = runRodsim("sweep " + sweep.string() + " --jobs 1 --output " + out.string());
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("is in use by another rodsim sweep (rodsim sweep process " + std::to_string(first) + ")") != std::string::npos);
  r = runRodsim("sweep " + sweep.string() + " --index 1 --output " + out.string());  // an array task too
  CHECK(r.status == 2);
  CHECK_FALSE(fs::exists(out / "1" / "sweep_row.json"));
  kill(first, SIGINT);
  int status = 0;
  waitpid(first, &status, 0);
  CHECK(WIFEXITED(status));
}

TEST_CASE("sweep: the driver killed with SIGKILL takes its running rows down (parent-death signal)") {
  auto dir = scratchDir("sweep-orphans");
  auto sweep = writeSweep(dir, kSlowRows);
  const fs::path out = dir / "out";
  const pid_t driver = startSweep({sweep.string(), "--jobs", "2", "--quiet", "--output", out.string()});
  REQUIRE(waitFor([&] { return fs::exists(out / "0" / "timeseries.csv") && fs::exists(out / "1" / "timeseries.csv"); }, 60));
  // The children's pids, from the kernel's run-directory lock ("rodsim process N").
  std::vector<pid_t> children;
  for (const char* row : {"0", "1"}) {
    const std::string holder = readText(out / row / ".rodsim.lock");
    REQUIRE(holder.rfind("rodsim process ", 0) == 0);
    children.push_back(static_cast<pid_t>(std::stol(holder.substr(15))));
  }
  kill(driver, SIGKILL);
  waitpid(driver, nullptr, 0);
  for (pid_t child : children) {
    const bool gone = waitFor([&] { return ended(child); }, 30);
    if (!gone) kill(child, SIGKILL);  // do not leave it running
    CHECK_MESSAGE(gone, "row child " << child << " still runs after its sweep was killed");
  }
  // Each stopped as on SIGTERM (a checkpoint, not recorded as finished): the next sweep continues them.
  for (const char* row : {"0", "1"}) {
    CHECK(readText(out / row / "summary.json").find("interrupted by SIGTERM") != std::string::npos);
    CHECK_FALSE(fs::exists(out / row / "sweep_row.json"));
  }
}
