// Attacks an adversarial user tried on restarts, output directories, signals and hostile input
// (docs/reliability.md); each once broke rodsim and is a regression test here.
#include <rodsim/kernel/run_directory.h>  // fnv1a, the checkpoints' checksum
#include "scene_fixture.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <vector>

#include <unistd.h>

namespace fs = std::filesystem;
using namespace rodsim::test;

namespace {

// Starts `rodsim run` in the background, waits until it writes rows, runs `then` (shell, with
// $pid), and waits for the run: the exit status is the run's.
CommandResult runInterrupted(const fs::path& scene, const fs::path& out, const std::string& then) {
  const std::string o = out.string();
  return runCommand(std::string(RODSIM_EXECUTABLE) + " run " + scene.string() + " --quiet --output " + o +
                    " & pid=$!; while [ ! -s " + o + "/timeseries.csv ] && kill -0 $pid 2>/dev/null; do sleep 0.02; " +
                    "done; sleep 0.1; " + then + "; wait $pid");
}

std::vector<fs::path> checkpoints(const fs::path& out) {
  std::vector<fs::path> files;
  for (const auto& f : fs::directory_iterator(out / "checkpoints"))
    if (f.path().extension() == ".ckpt") files.push_back(f.path());
  std::sort(files.begin(), files.end());
  return files;
}

void keepOnlyCheckpoint(const fs::path& out, const std::string& name) {
  for (const auto& f : checkpoints(out))
    if (f.filename() != name) fs::remove(f);
}

// Rewrites the first number of a checkpoint's data (the step) and gives it a valid checksum, as a
// user who knows the format could: the range checks must catch what the checksum cannot.
void forgeCheckpointStep(const fs::path& file, double step) {
  std::string bytes = readText(file);
  const std::string tag = "\nchecksum ";
  bytes.resize(bytes.size() - (tag.size() + 17));
  const std::size_t data = bytes.find("\n---\n") + 5;
  std::memcpy(bytes.data() + data, &step, sizeof step);
  char checksum[17];
  std::snprintf(checksum, sizeof checksum, "%016llx", static_cast<unsigned long long>(rodsim::kernel::fnv1a(bytes)));
  std::ofstream(file, std::ios::binary) << bytes << tag << checksum << "\n";
}

bool everyRowWhole(const std::string& csv) {
  if (csv.empty() || csv.back() != '\n') return false;
  std::size_t columns = std::string::npos, pos = 0;
  while (pos < csv.size()) {
    const std::size_t end = csv.find('\n', pos);
    const std::size_t n = std::count(csv.begin() + pos, csv.begin() + end, ',');
    if (columns == std::string::npos) columns = n;
    if (n != columns) return false;
    pos = end + 1;
  }
  return true;
}

}  // namespace

TEST_CASE("1: a new run refuses a directory that holds another run; --force replaces it, checkpoints included") {
  auto dir = scratchDir("attack-reused-dir");
  auto file = writeText(dir / "scene.toml", checkpointScene(0.2));
  const fs::path out = dir / "out";
  CommandResult r = runRodsim("run " + file.string() + " --quiet --output " + out.string());
  REQUIRE(r.status == 0);
  REQUIRE(checkpoints(out).size() == 4);  // steps 5, 10, 15, 20

  // Another setup (a shorter run) into the same directory: refused, nothing touched.
  const std::string shorter = "run " + file.string() + " --quiet --set simulation.duration=0.1 --output " + out.string();
  r = runRodsim(shorter);
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("holds the output of another run") != std::string::npos);
  CHECK(r.output.find("--force") != std::string::npos);
  CHECK(checkpoints(out).size() == 4);

  // With --force the old run's files go first: its later checkpoints can no longer be mistaken for
  // this run's, and a restart from this run's own checkpoint finishes this run.
  r = runRodsim(shorter + " --force");
  REQUIRE(r.status == 0);
  REQUIRE(checkpoints(out).size() == 2);  // steps 5 and 10 of the new run only
  fs::copy(out, dir / "resumed", fs::copy_options::recursive);
  keepOnlyCheckpoint(dir / "resumed", "step_000000000005.ckpt");
  r = runRodsim("run --restart " + (dir / "resumed").string() + " --quiet");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(readText(dir / "resumed/final.csv") == readText(out / "final.csv"));
  CHECK(readText(dir / "resumed/summary.json").find("\"steps\": 10,") != std::string::npos);

  // The same setup again replaces its own finished output without --force.
  r = runRodsim(shorter);
  CHECK(r.status == 0);
}

TEST_CASE("1b: a new run does not overwrite an unfinished run that can be restarted") {
  auto dir = scratchDir("attack-unfinished");
  auto file = writeText(dir / "scene.toml", longRunScene());
  CommandResult r = runInterrupted(file, dir / "out", "kill -TERM $pid");
  REQUIRE(r.status == 3);
  r = runRodsim("run " + file.string() + " --quiet --output " + (dir / "out").string());
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("--restart") != std::string::npos);
  CHECK_FALSE(checkpoints(dir / "out").empty());
}

TEST_CASE("2: a checkpoint copied in from another run's directory is refused") {
  auto dir = scratchDir("attack-foreign-checkpoint");
  auto file = writeText(dir / "scene.toml", checkpointScene(0.1));
  auto other = writeText(dir / "other.toml", checkpointScene(0.2));
  REQUIRE(runRodsim("run " + file.string() + " --quiet --output " + (dir / "a").string()).status == 0);
  REQUIRE(runRodsim("run " + other.string() + " --quiet --output " + (dir / "b").string()).status == 0);
  fs::copy_file(dir / "b/checkpoints/step_000000000015.ckpt", dir / "a/checkpoints/step_000000000015.ckpt");
  CommandResult r = runRodsim("run --restart " + (dir / "a").string() + " --quiet");
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("belongs to run") != std::string::npos);
  CHECK(readText(dir / "a/summary.json").find("\"steps\": 10,") != std::string::npos);  // untouched
}

TEST_CASE("3: a damaged or forged checkpoint is refused") {
  auto dir = scratchDir("attack-corrupt-checkpoint");
  auto file = writeText(dir / "scene.toml", checkpointScene(0.2));
  const fs::path out = dir / "out";
  REQUIRE(runRodsim("run " + file.string() + " --quiet --output " + out.string()).status == 0);
  keepOnlyCheckpoint(out, "step_000000000010.ckpt");
  const fs::path ckpt = out / "checkpoints/step_000000000010.ckpt";
  const std::string original = readText(ckpt);

  std::string flipped = original;
  flipped[flipped.size() / 2] ^= 0x10;  // one bit in the state
  std::ofstream(ckpt, std::ios::binary) << flipped;
  CommandResult r = runRodsim("run --restart " + out.string() + " --quiet");
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("checksum mismatch") != std::string::npos);

  for (double step : {1e15, -1e6, 10.5}) {
    std::ofstream(ckpt, std::ios::binary) << original;
    forgeCheckpointStep(ckpt, step);
    r = runRodsim("run --restart " + out.string() + " --quiet");
    INFO(step, r.output);
    CHECK(r.status == 2);
    CHECK(r.output.find("out of range") != std::string::npos);
  }
  std::ofstream(ckpt, std::ios::binary) << original.substr(0, original.size() - 30);  // cut short
  r = runRodsim("run --restart " + out.string() + " --quiet");
  CHECK(r.status == 2);
  CHECK(r.output.find("no checksum") != std::string::npos);
}

TEST_CASE("4: a restart refuses when a file the scene references has changed") {
  auto dir = scratchDir("attack-referenced-file");
  writeText(dir / "points.csv", "x,y,z\n0,0,0\n0.1,0,0\n0.2,0,0\n0.3,0,0\n0.4,0,0\n0.5,0,0\n");
  std::string scene = checkpointScene(0.2);
  scene.replace(scene.find("geometry = {"), scene.find('\n', scene.find("geometry = {")) - scene.find("geometry = {"),
                "geometry = { shape = \"points\", file = \"points.csv\" }");
  auto file = writeText(dir / "scene.toml", scene);
  const fs::path out = dir / "out";
  CommandResult r = runRodsim("run " + file.string() + " --quiet --output " + out.string());
  INFO(r.output);
  REQUIRE(r.status == 0);
  keepOnlyCheckpoint(out, "step_000000000010.ckpt");
  writeText(dir / "points.csv", "x,y,z\n0,0,0\n0.1,0,0\n0.2,0,0\n0.3,0,0\n0.4,0,0\n0.5,0,0.01\n");
  r = runRodsim("run --restart " + out.string() + " --quiet");
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("points.csv") != std::string::npos);
  CHECK(r.output.find("another setup") != std::string::npos);
}

TEST_CASE("5: SIGTERM followed at once by SIGUSR1 still stops the run") {
  auto dir = scratchDir("attack-signals");
  auto file = writeText(dir / "scene.toml", longRunScene());
  CommandResult r = runInterrupted(file, dir / "out", "kill -TERM $pid; kill -USR1 $pid");
  INFO(r.output);
  CHECK(r.status == 3);
  CHECK(readText(dir / "out/summary.json").find("interrupted by SIGTERM") != std::string::npos);
}

TEST_CASE("6: a full disk ends the run with a final summary and whole CSV rows") {
  auto dir = scratchDir("attack-full-disk");
  const fs::path disk = dir / "disk";
  fs::create_directories(disk);
  if (runCommand("mount -t tmpfs -o size=256k tmpfs " + disk.string()).status != 0) {
    MESSAGE("skipped: cannot mount a small tmpfs here (needs root in a mount namespace)");
    return;
  }
  std::string scene = sceneWithLine(28, "every = 0.0");
  scene.replace(scene.find("duration = 0.02"), 15, "duration = 100.0");  // 10,000 rows: far more than 256 KiB
  auto file = writeText(dir / "scene.toml", scene);
  CommandResult r = runRodsim("run " + file.string() + " --quiet --output " + (disk / "out").string());
  const std::string summary = readText(disk / "out/summary.json");
  const std::string timeseries = readText(disk / "out/timeseries.csv");
  const std::string final_csv = readText(disk / "out/final.csv");
  runCommand("umount " + disk.string());
  INFO(r.output);
  CHECK(r.status == 3);
  CHECK(summary.find("\"status\": \"failed\"") != std::string::npos);
  CHECK(summary.find("No space left on device") != std::string::npos);
  CHECK(everyRowWhole(timeseries));
  CHECK(everyRowWhole(final_csv));
  CHECK(std::count(final_csv.begin(), final_csv.end(), '\n') == 12);  // header + 11 nodes
}

TEST_CASE("7: an existing output directory the user cannot write is refused before the run") {
  auto dir = scratchDir("attack-unwritable");
  auto file = writeText(dir / "scene.toml", kValidScene);
  fs::create_directories(dir / "out");
  fs::permissions(dir / "out", fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                                   fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  // root writes anywhere: run as nobody then (the build tree is world-readable).
  std::string as_user;
  if (geteuid() == 0) {
    if (runCommand("setpriv --reuid=65534 --regid=65534 --clear-groups true").status != 0) {
      MESSAGE("skipped: running as root without setpriv");
      return;
    }
    as_user = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  }
  CommandResult r = runCommand(as_user + RODSIM_EXECUTABLE + " run " + file.string() + " --quiet --output " +
                               (dir / "out").string());
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("cannot write into the output directory") != std::string::npos);
  CHECK(r.output.find("Permission denied") != std::string::npos);
}

TEST_CASE("8: deeply nested TOML is refused with its location, not a stack overflow") {
  auto dir = scratchDir("attack-deep-toml");
  std::string header = "[a";
  for (int i = 0; i < 50000; ++i) header += ".a";
  auto file = writeText(dir / "deep_header.toml", std::string(kValidScene) + header + "]\nx = 1\n");
  CommandResult r = runRodsim("check " + file.string());
  INFO(r.output.substr(0, 400));
  CHECK(r.status == 2);
  CHECK(r.output.find("deep_header.toml:37:1:") != std::string::npos);  // the key under the header
  CHECK(r.output.find("levels deep; at most 64 are accepted") != std::string::npos);

  file = writeText(dir / "deep_array.toml", std::string(kValidScene) + "x = " + std::string(100000, '[') + "\n");
  r = runRodsim("check " + file.string());
  CHECK(r.status == 2);
  CHECK(r.output.find("levels deep") != std::string::npos);

  std::string key = "simulation";
  for (int i = 0; i < 10000; ++i) key += ".a";  // one argument stays below the kernel's 128 KiB
  file = writeText(dir / "scene.toml", kValidScene);
  r = runRodsim("check " + file.string() + " --set " + key + "=1");
  CHECK(r.status == 2);
  CHECK(r.output.find("key segments") != std::string::npos);
  r = runRodsim("check " + file.string() + " --set simulation.x=" + std::string(20000, '['));
  CHECK(r.status == 2);
  CHECK(r.output.find("levels deep") != std::string::npos);
}

TEST_CASE("9: names that would write outside the output directory or break a CSV are refused") {
  auto dir = scratchDir("attack-names");
  for (const std::string name : {"../escaped", "/tmp/escaped", "..", "a\\\\b"}) {
    auto file = writeText(dir / "scene.toml", sceneWithLine(2, "[simulation]\nname = \"" + name + "\""));
    CommandResult r = runRodsim("run " + file.string() + " --quiet --output " + (dir / "out").string());
    INFO(name, r.output);
    CHECK(r.status == 2);
    CHECK(r.output.find("scene.toml:3:8: simulation: the name") != std::string::npos);
  }
  CHECK_FALSE(fs::exists(dir / "escaped.pvd"));
  CHECK_FALSE(fs::exists(dir / "out"));
  auto file = writeText(dir / "scene.toml", sceneWithLine(31, "name = \"tip,z\""));
  CommandResult r = runRodsim("check " + file.string());
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("scene.toml:31:8: probe: the name \"tip,z\" cannot be used") != std::string::npos);
}

TEST_CASE("10: a period shorter than the time step is refused by check") {
  auto dir = scratchDir("attack-period");
  auto file = writeText(dir / "scene.toml", sceneWithLine(28, "every = 0.01\ncheckpoint_every = 1e-300"));
  CommandResult r = runRodsim("check " + file.string());
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("scene.toml:29:20: [output]: 'checkpoint_every' must be 0 (off) or at least the time step") !=
        std::string::npos);
}

TEST_CASE("11: an integer too large for the parameter is refused, not wrapped") {
  auto dir = scratchDir("attack-integers");
  for (const std::string value : {"2147483648", "4294967297", "-2147483649"}) {
    auto file = writeText(dir / "scene.toml", sceneWithLine(7, "type = \"implicit-euler\"\nmax_iterations = " + value));
    CommandResult r = runRodsim("check " + file.string());
    INFO(value, r.output);
    CHECK(r.status == 2);
    CHECK(r.output.find("scene.toml:8:18:") != std::string::npos);
    CHECK(r.output.find("must be") != std::string::npos);
  }
}

TEST_CASE("12: a second run into a directory another run is writing is refused, naming the holder") {
  auto dir = scratchDir("attack-concurrent");
  auto file = writeText(dir / "scene.toml", longRunScene());
  const std::string second = std::string(RODSIM_EXECUTABLE) + " run " + file.string() + " --quiet --output " +
                             (dir / "out").string() + " > " + (dir / "second.txt").string() + " 2>&1; echo $? >> " +
                             (dir / "second.txt").string();
  CommandResult r = runInterrupted(file, dir / "out", second + "; kill -TERM $pid");
  CHECK(r.status == 3);  // the first run, stopped by the test
  const std::string output = readText(dir / "second.txt");
  INFO(output);
  CHECK(output.find("is in use by another run (rodsim process ") != std::string::npos);
  CHECK(output.find("\n2\n") != std::string::npos);
  CHECK(readText(dir / "out/summary.json").find("interrupted by SIGTERM") != std::string::npos);
}

TEST_CASE("13: a --set value with a newline survives a checkpoint and restart") {
  auto dir = scratchDir("attack-set-newline");
  auto file = writeText(dir / "scene.toml", checkpointScene(0.2));
  const fs::path out = dir / "out";
  CommandResult r = runCommand(std::string(RODSIM_EXECUTABLE) + " run " + file.string() + " --quiet --output " +
                               out.string() + " --set \"$(printf 'rod.beam.radius=0.012\\n ')\"");
  INFO(r.output);
  REQUIRE(r.status == 0);
  fs::copy(out, dir / "resumed", fs::copy_options::recursive);
  keepOnlyCheckpoint(dir / "resumed", "step_000000000010.ckpt");
  r = runRodsim("run --restart " + (dir / "resumed").string() + " --quiet");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(readText(dir / "resumed/final.csv") == readText(out / "final.csv"));
}

TEST_CASE("14: two runs of a scene differ only in the wall-clock columns (wall_ms and every *_ms)") {
  auto dir = scratchDir("attack-rerun-columns");
  std::string scene = kValidScene;
  scene.insert(scene.find("[output]"), "[[force]]\ntype = \"rss\"\nname = \"fluid\"\nviscosity = 1.0\n\n");
  auto file = writeText(dir / "scene.toml", scene);
  CommandResult a = runRodsim("run " + file.string() + " --quiet --output " + (dir / "a").string());
  INFO(a.output);
  REQUIRE(a.status == 0);
  REQUIRE(runRodsim("run " + file.string() + " --quiet --output " + (dir / "b").string()).status == 0);
  const std::string rows_a = readText(dir / "a/timeseries.csv");
  CHECK(rows_a.substr(0, rows_a.find('\n')).find("fluid.solve_ms") != std::string::npos);
  CHECK(withoutWallClock(rows_a) == withoutWallClock(readText(dir / "b/timeseries.csv")));
  CHECK(withoutWallClock(rows_a).find("_ms") == std::string::npos);
  CHECK(readText(dir / "a/final.csv") == readText(dir / "b/final.csv"));
}

// ---- third round (issue 43): links, unbounded reads, defaults, overflow, plugin paths, forged
// checkpoints, deep study files.

namespace {

// Rewrites the checkpoint's first position value (q[0]) and gives the file a valid checksum: the
// load must refuse a non-finite state that the checksum cannot catch.
void forgeCheckpointFirstPosition(const fs::path& file, double value) {
  std::string bytes = readText(file);
  const std::string tag = "\nchecksum ";
  bytes.resize(bytes.size() - (tag.size() + 17));
  std::size_t pos = bytes.find("\n---\n") + 5 + 13 * sizeof(double);  // the 13 counters
  for (int skip = 0; skip < 2; ++skip) {                                   // frame_times, report_sums
    double n = 0;
    std::memcpy(&n, bytes.data() + pos, sizeof n);
    pos += (1 + static_cast<std::size_t>(n)) * sizeof(double);
  }
  std::memcpy(bytes.data() + pos + sizeof(double), &value, sizeof value);  // after q's length
  char checksum[17];
  std::snprintf(checksum, sizeof checksum, "%016llx", static_cast<unsigned long long>(rodsim::kernel::fnv1a(bytes)));
  std::ofstream(file, std::ios::binary) << bytes << tag << checksum << "\n";
}

// rodsim with a time limit: a read that never ends fails the test instead of hanging it.
CommandResult runRodsimWithin(int seconds, const std::string& args) {
  return runCommand("timeout " + std::to_string(seconds) + " " + RODSIM_EXECUTABLE + " " + args);
}

}  // namespace

TEST_CASE("15: a link planted in the output directory is never written through (refused, also with --force and --restart)") {
  auto dir = scratchDir("attack-links");
  auto file = writeText(dir / "scene.toml", checkpointScene(0.2));
  const fs::path out = dir / "out", victim = dir / "victim.txt";
  writeText(victim, "precious\n");
  const std::string run = "run " + file.string() + " --quiet --output " + out.string();
  fs::create_directories(out);
  for (const std::string name : {".rodsim.lock", ".rodsim.reserve", "timeseries.csv", "summary.json", "final.csv"}) {
    for (const std::string force : {"", " --force"}) {
      fs::create_symlink(victim, out / name);
      CommandResult r = runRodsim(run + force);
      INFO(name, force, r.output);
      CHECK(r.status == 2);
      CHECK(r.output.find((out / name).string() + " is a symbolic link") != std::string::npos);
      CHECK(readText(victim) == "precious\n");
      CHECK(fs::is_symlink(fs::symlink_status(out / name)));  // refused, not replaced
      fs::remove(out / name);
    }
  }
  // A dangling link: the run must not create its target.
  fs::create_symlink(dir / "elsewhere.csv", out / "timeseries.csv");
  CommandResult r = runRodsim(run + " --force");
  CHECK(r.status == 2);
  CHECK_FALSE(fs::exists(dir / "elsewhere.csv"));
  fs::remove(out / "timeseries.csv");

  // A finished run, then links planted before --restart: at the reserve, at the rows, in vtk/.
  REQUIRE(runRodsim(run).status == 0);
  keepOnlyCheckpoint(out, "step_000000000010.ckpt");
  for (const std::string name : {".rodsim.reserve", "timeseries.csv", "vtk/frame_3.vtp", "checkpoints/x.ckpt.tmp"}) {
    const fs::path link = out / name;
    fs::path saved = dir / "saved";
    if (fs::exists(link)) fs::rename(link, saved);
    fs::create_symlink(victim, link);
    r = runRodsim("run --restart " + out.string() + " --quiet");
    INFO(name, r.output);
    CHECK(r.status == 2);
    CHECK(r.output.find(link.string() + " is a symbolic link") != std::string::npos);
    CHECK(readText(victim) == "precious\n");
    fs::remove(link);
    if (fs::exists(saved)) fs::rename(saved, link);
  }
  r = runRodsim("run --restart " + out.string() + " --quiet");  // the links gone, it continues
  INFO(r.output);
  CHECK(r.status == 0);
}

TEST_CASE("16: a scene or checkpoint that is not a regular file, or too large, is refused at once") {
  auto dir = scratchDir("attack-unbounded-read");
  for (const std::string verb : {"check", "run"})
    for (const std::string device : {"/dev/zero", "/dev/urandom"}) {
      CommandResult r = runRodsimWithin(20, verb + " " + device + " --output " + (dir / "out").string());
      INFO(verb, device, r.output);
      CHECK(r.status == 2);
      CHECK(r.output.find(device + ": not a regular file") != std::string::npos);
    }
  // Study files, and a sweep whose scene is a device.
  for (const std::string verb : {"sweep", "fit", "optimize"}) {
    CommandResult r = runRodsimWithin(20, verb + " /dev/zero --output " + (dir / "out").string());
    INFO(verb, r.output);
    CHECK(r.status == 2);
  }
  auto sweep = writeText(dir / "sweep.toml", "scene = \"/dev/urandom\"\n[axes]\n\"rod.beam.radius\" = [0.01, 0.02]\n");
  CommandResult sweep_run = runRodsimWithin(20, "sweep " + sweep.string() + " --output " + (dir / "out").string());
  INFO(sweep_run.output);
  CHECK(sweep_run.status == 2);
  CHECK(sweep_run.output.find("/dev/urandom: not a regular file") != std::string::npos);
  REQUIRE(runCommand("mkfifo " + (dir / "fifo.toml").string()).status == 0);
  CommandResult r = runRodsimWithin(20, "check " + (dir / "fifo.toml").string());
  CHECK(r.status == 2);
  CHECK(r.output.find("not a regular file") != std::string::npos);
  // A sparse file of 17 MiB: refused by its size, with the limit, before it is read.
  writeText(dir / "huge.toml", kValidScene);
  fs::resize_file(dir / "huge.toml", 17u << 20);
  r = runRodsimWithin(20, "check " + (dir / "huge.toml").string());
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("huge.toml: larger than 16 MiB") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "out"));

  // The newest checkpoint replaced by /dev/zero.
  auto file = writeText(dir / "scene.toml", checkpointScene(0.1));
  const fs::path out = dir / "ckpt";
  REQUIRE(runRodsim("run " + file.string() + " --quiet --output " + out.string()).status == 0);
  fs::create_symlink("/dev/zero", out / "checkpoints/step_000000000099.ckpt");
  r = runRodsimWithin(20, "run --restart " + out.string() + " --quiet");
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("step_000000000099.ckpt: not a regular file") != std::string::npos);
}

TEST_CASE("17: a time step above the default frame interval, without [output], is valid") {
  auto dir = scratchDir("attack-default-every");
  std::string scene = kValidScene;
  scene.replace(scene.find("duration = 0.02"), 15, "duration = 1.0");
  scene.replace(scene.find("dt = 0.01"), 9, "dt = 0.25");
  scene.erase(scene.find("[output]"), std::string("[output]\nevery = 0.01\n").size());
  auto file = writeText(dir / "scene.toml", scene);
  CommandResult r = runRodsim("check " + file.string());
  INFO(r.output);
  CHECK(r.status == 0);
  r = runRodsim("run " + file.string() + " --quiet --output " + (dir / "out").string());
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(fs::exists(dir / "out/vtk/frame_4.vtp"));  // a frame every dt: t = 0, 0.25, ..., 1
  CHECK_FALSE(fs::exists(dir / "out/vtk/frame_5.vtp"));
  // An explicit interval below dt is still refused, with its location.
  r = runRodsim("check " + file.string() + " --set output.checkpoint_every=0.1");
  CHECK(r.status == 2);
  CHECK(r.output.find("<--set output.checkpoint_every>: [output]: 'checkpoint_every' must be 0") != std::string::npos);
}

TEST_CASE("18: a state whose energy overflows stops the run (exit 3), no empty energy cell") {
  auto dir = scratchDir("attack-overflow");
  auto file = writeText(dir / "scene.toml", kValidScene);
  const std::string set = " --set 'rod.beam.initial_velocity=[0, 0, 1e200]'";
  CommandResult r = runRodsim("run " + file.string() + " --quiet --output " + (dir / "out").string() + set);
  INFO(r.output);
  CHECK(r.status == 3);
  const std::string summary = readText(dir / "out/summary.json");
  CHECK(summary.find("\"status\": \"failed\"") != std::string::npos);
  CHECK(summary.find("the kinetic energy is inf") != std::string::npos);
  const std::string rows = readText(dir / "out/timeseries.csv");
  CHECK(rows.find(",,0") == std::string::npos);  // no row with an empty kinetic_energy
  CHECK(rows.find("nan") == std::string::npos);
  CHECK(readText(dir / "out/final.csv").find("nan") == std::string::npos);
  r = runRodsim("check " + file.string() + set);  // check finds what run stops on
  CHECK(r.status == 2);
  CHECK(r.output.find("the kinetic energy is inf") != std::string::npos);
}

TEST_CASE("19: --set plugins.paths is honoured") {
  auto dir = scratchDir("attack-set-plugin-paths");
  auto file = writeText(dir / "scene.toml", kValidScene);
  CommandResult r = runRodsim("check " + file.string() + " --set 'plugins.paths=[\"nowhere/rodsim-x.so\"]'");
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find((dir / "nowhere/rodsim-x.so").string() + "' (from the scene's [plugins] paths) does not exist") !=
        std::string::npos);
}

TEST_CASE("20: a forged checkpoint with a valid checksum and a NaN or an infinity in the state is refused") {
  auto dir = scratchDir("attack-nan-checkpoint");
  auto file = writeText(dir / "scene.toml", checkpointScene(0.2));
  const fs::path out = dir / "out";
  REQUIRE(runRodsim("run " + file.string() + " --quiet --output " + out.string()).status == 0);
  keepOnlyCheckpoint(out, "step_000000000010.ckpt");
  const fs::path ckpt = out / "checkpoints/step_000000000010.ckpt";
  const std::string original = readText(ckpt);
  const std::string final_csv = readText(out / "final.csv");
  for (double value : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    std::ofstream(ckpt, std::ios::binary) << original;
    forgeCheckpointFirstPosition(ckpt, value);
    CommandResult r = runRodsim("run --restart " + out.string() + " --quiet");
    INFO(value, r.output);
    CHECK(r.status == 2);
    CHECK(r.output.find("holds a NaN or an infinity") != std::string::npos);
    CHECK(readText(out / "final.csv") == final_csv);  // nothing written
  }
  std::ofstream(ckpt, std::ios::binary) << original;  // the forger's helper itself is sound:
  forgeCheckpointFirstPosition(ckpt, 0.0);           // q[0] is the clamped root, 0 already
  CommandResult r = runRodsim("run --restart " + out.string() + " --quiet");
  INFO(r.output);
  CHECK(r.status == 0);
}

TEST_CASE("21: deeply nested sweep, fit and optimize files and compare scenes are refused, not a stack overflow") {
  auto dir = scratchDir("attack-deep-studies");
  std::string header = "[a";
  for (int i = 0; i < 50000; ++i) header += ".a";
  auto file = writeText(dir / "deep.toml", "scene = \"scene.toml\"\n" + header + "]\nx = 1\n");
  writeText(dir / "scene.toml", kValidScene);
  for (const std::string verb : {"sweep", "fit", "optimize"}) {
    CommandResult r = runRodsim(verb + " " + file.string() + " --output " + (dir / verb).string());
    INFO(verb, r.output.substr(0, 400));
    CHECK(r.status == 2);
    CHECK(r.output.find("deep.toml:3:1: tables and arrays nested") != std::string::npos);
    CHECK_FALSE(fs::exists(dir / verb));
  }
  file = writeText(dir / "deep_scene.toml", std::string(kValidScene) + header + "]\nx = 1\n");
  CommandResult r = runRodsim("compare " + file.string() + " --contact imc,ipc --output " + (dir / "compare").string());
  INFO(r.output.substr(0, 400));
  CHECK(r.status == 2);
  CHECK(r.output.find("deep_scene.toml:37:1: tables and arrays nested") != std::string::npos);
}

TEST_CASE("22: SIGTERM during a step that would run for hours stops the run within seconds (issue 43)") {
  // A step that never ends on its own: a 2000-node rod whose Newton solve cannot reach its tolerance
  // (1e-300 N, no relative criterion) and may take a million iterations. The woven mat of issue 43 (step 2
  // past 590 s, SIGTERM ignored for 8 minutes) was such a step. The Newton solver sees the stop request
  // (SDK 1.6 StopRequests) before its next linear solve and abandons the step; the kernel then stops as
  // between steps: exit 3, a checkpoint of the last committed step (step 0), summary.json saying why.
  auto dir = scratchDir("attack-stop-in-step");
  std::string scene = sceneWithLine(7, "type = \"implicit-euler\"\ntolerance = 1e-300\nrelative_tolerance = 0\n"
                                       "max_iterations = 1000000");
  scene.replace(scene.find("nodes = 11"), 10, "nodes = 2000");
  auto file = writeText(dir / "scene.toml", scene);
  const std::string out = (dir / "out").string();
  // Wait until the run has opened its output (summary.json "running"), let it enter step 1, then
  // SIGTERM and time how long it takes to end. `timeout` turns a regression into a failure, not a hang.
  CommandResult r = runCommand("timeout -s KILL 120 " + std::string(RODSIM_EXECUTABLE) + " run " + file.string() +
                               " --quiet --output " + out + " & pid=$!; while [ ! -s " + out +
                               "/summary.json ] && kill -0 $pid 2>/dev/null; do sleep 0.02; done; sleep 1; "
                               "t0=$(date +%s%N); kill -TERM $pid; wait $pid; s=$?; "
                               "echo \"stop_ms=$(( ($(date +%s%N) - t0) / 1000000 ))\"; exit $s");
  INFO(r.output);
  CHECK(r.status == 3);
  const std::size_t at = r.output.find("stop_ms=");
  REQUIRE(at != std::string::npos);
  const long stop_ms = std::stol(r.output.substr(at + 8));
  CHECK(stop_ms < 5000);
  const std::string summary = readText(dir / "out/summary.json");
  INFO(summary);
  CHECK(summary.find("\"status\": \"failed\"") != std::string::npos);
  CHECK(summary.find("interrupted by SIGTERM") != std::string::npos);
  CHECK(summary.find("step 1 was abandoned") != std::string::npos);
  CHECK(summary.find("stopped on request") != std::string::npos);
  CHECK(summary.find("\"steps\": 0") != std::string::npos);
  CHECK(fs::exists(dir / "out/checkpoints/step_000000000000.ckpt"));
  CHECK(everyRowWhole(readText(dir / "out/timeseries.csv")));
}
