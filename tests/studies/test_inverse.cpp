// rodsim fit and rodsim optimize through the executable (docs/inverse.md): the two calibrations of
// the issue (Young's modulus of a cantilever from its tip motion, a friction coefficient from a rod
// slipping down an incline) recovered within 1 % from synthetic data that rodsim itself makes here,
// starting 50 % off; a small CMA-ES optimization that is deterministic and resumes from its cache;
// and bad fit/optimize files refused with file:line:column, exit 2, nothing written.
#include "csv_table.h"
#include "run_rodsim.h"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace rodsim::test;

namespace {

const fs::path kInverse = fs::path(RODSIM_SOURCE_DIR) / "scenes" / "inverse";

// The "value" of one fitted parameter in fit.json (or optimize.json); numbers at the top level:
// jsonNumber (csv_table.h, libs/run_record's reader).
double fittedValue(const std::string& json, const std::string& name) {
  const rodsim::run_record::JsonValue v = rodsim::run_record::parseJson(json, "fit.json");
  const rodsim::run_record::JsonValue* p = v.find("parameters") ? v.find("parameters")->find(name) : nullptr;
  REQUIRE_MESSAGE(p, json);
  return p->numberOr("value", NAN);
}

// Synthetic measurements: `scene` run with its own (true) values, probe `probe` linearly
// interpolated at n times in [t0, t1] (what scripts/make_inverse_data.py does).
fs::path makeData(const fs::path& dir, const fs::path& scene, const std::string& probe, double t0, double t1, int n) {
  const fs::path run = dir / "truth";
  const auto r = runRodsim("run " + scene.string() + " --output " + run.string() + " --force --quiet");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  const CsvTable t = readCsv(run / "timeseries.csv");
  const int ct = t.col("t"), cp = t.col(probe);
  std::string csv = "t," + probe + "\n";
  std::size_t k = 1;
  for (int i = 0; i < n; ++i) {
    const double at = t0 + (t1 - t0) * i / (n - 1);
    while (k + 1 < t.rows.size() && std::stod(t.rows[k][static_cast<std::size_t>(ct)]) < at) ++k;
    const double ta = std::stod(t.rows[k - 1][static_cast<std::size_t>(ct)]), tb = std::stod(t.rows[k][static_cast<std::size_t>(ct)]);
    const double ya = std::stod(t.rows[k - 1][static_cast<std::size_t>(cp)]), yb = std::stod(t.rows[k][static_cast<std::size_t>(cp)]);
    const double w = tb > ta ? (at - ta) / (tb - ta) : 1.0;
    char line[128];
    std::snprintf(line, sizeof line, "%.10g,%.10g\n", at, (1 - w) * ya + w * yb);
    csv += line;
  }
  return writeText(dir / "measured.csv", csv);
}

}  // namespace

TEST_CASE("rodsim fit recovers the Young's modulus of a cantilever from its tip motion, starting 50 % off") {
  const fs::path dir = scratchDir("inverse_fit_cantilever");
  const fs::path scene = kInverse / "cantilever_drop.toml";  // E = 5e7 Pa
  makeData(dir, scene, "tip_z", 0.02, 0.5, 25);
  writeText(dir / "fit.toml", "scene = \"" + scene.string() + "\"\ndata = \"measured.csv\"\n"
                              "[[parameter]]\nkey = \"rod.beam.youngs_modulus\"\ninitial = 7.5e7\nlower = 1.0e6\nupper = 2.0e8\nlog = true\n");
  const auto r = runRodsim("fit " + (dir / "fit.toml").string() + " --output " + (dir / "out").string() + " --jobs 2");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  const std::string json = readText(dir / "out" / "fit.json");
  const double E = fittedValue(json, "rod.beam.youngs_modulus");
  MESSAGE("E = " << E << " (true 5e7), simulations " << jsonNumber(json, "simulations"));
  CHECK(std::abs(E / 5e7 - 1) < 0.01);
  CHECK(jsonNumber(json, "simulations") > 0);
  CHECK(std::isfinite(jsonNumber(json, "std_error")));
  const CsvTable its = readCsv(dir / "out" / "iterations.csv");
  REQUIRE(its.rows.size() >= 2);
  CHECK(its.num(its.rows.size() - 1, "cost") < 1e-3 * its.num(0, "cost"));
  CHECK(fs::exists(dir / "out" / "fit.csv"));

  SUBCASE("running the fit again reuses every run") {
    const auto again = runRodsim("fit " + (dir / "fit.toml").string() + " --output " + (dir / "out").string() + " --quiet");
    REQUIRE_MESSAGE(again.status == 0, again.output);
    const std::string json2 = readText(dir / "out" / "fit.json");
    CHECK(jsonNumber(json2, "simulations_run") == 0);
    CHECK(fittedValue(json2, "rod.beam.youngs_modulus") == doctest::Approx(E).epsilon(1e-12));
  }
}

TEST_CASE("rodsim fit recovers the Young's modulus from a final shape (final.csv format)") {
  const fs::path dir = scratchDir("inverse_fit_shape");
  const fs::path scene = kInverse / "cantilever_drop.toml";  // E = 5e7 Pa
  const auto truth = runRodsim("run " + scene.string() + " --output " + (dir / "truth").string() + " --force --quiet");
  REQUIRE_MESSAGE(truth.status == 0, truth.output);
  fs::copy_file(dir / "truth" / "final.csv", dir / "shape.csv");
  writeText(dir / "fit.toml", "scene = \"" + scene.string() + "\"\ndata = \"shape.csv\"\n"
                              "[[parameter]]\nkey = \"rod.beam.youngs_modulus\"\ninitial = 2.5e7\nlower = 1.0e6\nupper = 2.0e8\nlog = true\n");
  const auto r = runRodsim("fit " + (dir / "fit.toml").string() + " --output " + (dir / "out").string() + " --jobs 2 --quiet");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  const std::string json = readText(dir / "out" / "fit.json");
  const double E = fittedValue(json, "rod.beam.youngs_modulus");
  MESSAGE("E from the final shape = " << E << " (true 5e7, start 2.5e7), simulations " << jsonNumber(json, "simulations"));
  CHECK(std::abs(E / 5e7 - 1) < 0.01);
  CHECK(jsonNumber(json, "residuals") == 3 * 21);
}

TEST_CASE("rodsim fit recovers a kinetic friction coefficient from a rod slipping down an incline, starting 50 % off") {
  const fs::path dir = scratchDir("inverse_fit_incline");
  const fs::path scene = kInverse / "incline_slip.toml";  // kinetic_friction[2] = 0.2
  makeData(dir, scene, "vy", 0.05, 0.5, 10);
  writeText(dir / "fit.toml", "scene = \"" + scene.string() + "\"\ndata = \"measured.csv\"\n"
                              "[[parameter]]\nkey = \"force.ground.kinetic_friction\"\nindex = 2\ninitial = 0.1\nlower = 0.01\nupper = 0.35\n");
  const auto r = runRodsim("fit " + (dir / "fit.toml").string() + " --output " + (dir / "out").string() + " --jobs 2 --quiet");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  const std::string json = readText(dir / "out" / "fit.json");
  const double mu = fittedValue(json, "force.ground.kinetic_friction[2]");
  MESSAGE("mu_k = " << mu << " (true 0.2), simulations " << jsonNumber(json, "simulations"));
  CHECK(std::abs(mu / 0.2 - 1) < 0.01);
  CHECK(jsonNumber(json, "simulations") > 0);
}

TEST_CASE("rodsim optimize: CMA-ES improves on its start, is deterministic and resumes from its runs") {
  const fs::path dir = scratchDir("inverse_optimize");
  // The cantilever's lowest tip position over 0.1 s: a stiffer beam sags less (maximize min tip_z).
  const std::string opt = "scene = \"" + (kInverse / "cantilever_drop.toml").string() +
                          "\"\ngoal = \"maximize\"\nseed = 3\ngenerations = 3\npopulation = 5\nsigma = 0.3\n"
                          "[set]\n\"simulation.duration\" = 0.1\n"
                          "[objective]\nprobe = \"tip_z\"\nstatistic = \"min\"\n"
                          "[[parameter]]\nkey = \"rod.beam.youngs_modulus\"\ninitial = 2e7\nlower = 1e7\nupper = 1e8\n";
  writeText(dir / "opt.toml", opt);
  const auto r = runRodsim("optimize " + (dir / "opt.toml").string() + " --output " + (dir / "a").string() + " --jobs 2 --quiet");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  const std::string json = readText(dir / "a" / "optimize.json");
  CHECK(jsonNumber(json, "best_objective") > jsonNumber(json, "initial_objective"));
  CHECK(jsonNumber(json, "generations") == 3);
  // Every candidate pagmo evaluated came from the generation's batch (the dry run found them all).
  CHECK(jsonNumber(json, "unbatched_evaluations") == 0);
  const CsvTable table = readCsv(dir / "a" / "generations.csv");
  CHECK(table.rows.size() == 4);  // generation 0 (the start) and 3

  SUBCASE("the same seed gives the same generations in another directory") {
    const auto b = runRodsim("optimize " + (dir / "opt.toml").string() + " --output " + (dir / "b").string() + " --jobs 1 --quiet");
    REQUIRE_MESSAGE(b.status == 0, b.output);
    const CsvTable ta = readCsv(dir / "a" / "generations.csv"), tb = readCsv(dir / "b" / "generations.csv");
    REQUIRE(ta.rows.size() == tb.rows.size());
    for (std::size_t i = 0; i < ta.rows.size(); ++i) {
      CHECK(ta.rows[i][static_cast<std::size_t>(ta.col("best"))] == tb.rows[i][static_cast<std::size_t>(tb.col("best"))]);
      CHECK(ta.rows[i][static_cast<std::size_t>(ta.col("rod.beam.youngs_modulus"))] ==
            tb.rows[i][static_cast<std::size_t>(tb.col("rod.beam.youngs_modulus"))]);
    }
  }
  SUBCASE("an interrupted optimization resumes: rerunning replays the candidates from the finished runs") {
    // Lose half the runs, as an interruption would leave them.
    std::size_t removed = 0, total = 0;
    for (const auto& e : fs::directory_iterator(dir / "a" / "runs"))
      if (++total % 2 == 0) fs::remove(e.path() / "inverse_run.json"), ++removed;
    const auto again = runRodsim("optimize " + (dir / "opt.toml").string() + " --output " + (dir / "a").string() + " --quiet");
    REQUIRE_MESSAGE(again.status == 0, again.output);
    const std::string json2 = readText(dir / "a" / "optimize.json");
    CHECK(jsonNumber(json2, "simulations_run") == static_cast<double>(removed));
    CHECK(jsonNumber(json2, "simulations_reused") == static_cast<double>(total - removed));
    // The same generations, every column but the wall time (on a slow machine, under the sanitizers,
    // a generation's wall_s was 0.9 s in one run and 1.0 s in the other).
    const CsvTable after = readCsv(dir / "a" / "generations.csv");
    REQUIRE(after.header == table.header);
    REQUIRE(table.col("wall_s") >= 0);
    CHECK(rowsWithout(after, {"wall_s"}) == rowsWithout(table, {"wall_s"}));
    CHECK(jsonNumber(json2, "best_objective") == jsonNumber(json, "best_objective"));
  }
}

namespace {

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto p = text.find(from);
  REQUIRE_MESSAGE(p != std::string::npos, from);
  return text.replace(p, from.size(), to);
}

}  // namespace

// Issue 43: the cache was keyed by the scene's path and the --set values, so an edited scene, a
// changed objective or edited outputs were reused without a word.
TEST_CASE("rodsim fit and optimize key their cached runs by content: an edited scene, a changed objective, edited outputs run again") {
  const fs::path dir = scratchDir("inverse_cache_content");
  const std::string scene_text = readText(kInverse / "cantilever_drop.toml");
  const fs::path scene = writeText(dir / "beam.toml", scene_text);
  makeData(dir, scene, "tip_z", 0.02, 0.5, 25);
  writeText(dir / "fit.toml", "scene = \"beam.toml\"\ndata = \"measured.csv\"\n"
                              "[[parameter]]\nkey = \"rod.beam.youngs_modulus\"\ninitial = 7.5e7\nlower = 1.0e6\nupper = 2.0e8\nlog = true\n");
  const std::string fit = "fit " + (dir / "fit.toml").string() + " --output " + (dir / "fit").string() + " --jobs 2 --quiet";
  auto r = runRodsim(fit);
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK(std::abs(fittedValue(readText(dir / "fit" / "fit.json"), "rod.beam.youngs_modulus") / 5e7 - 1) < 0.01);

  SUBCASE("fit: the scene edited (density x3): no run is reused, the fit moves with it") {
    writeText(scene, replaced(scene_text, "density = 1000.0", "density = 3000.0"));
    r = runRodsim(fit);
    REQUIRE_MESSAGE(r.status == 0, r.output);
    const std::string json = readText(dir / "fit" / "fit.json");
    CHECK(jsonNumber(json, "simulations_reused") == 0);
    // Sag and frequency depend on E / rho only: the same motion needs three times the modulus.
    CHECK(std::abs(fittedValue(json, "rod.beam.youngs_modulus") / 1.5e8 - 1) < 0.01);
  }
  SUBCASE("optimize: edited objective.txt files and a changed statistic are not reused") {
    const std::string opt = "scene = \"beam.toml\"\ngoal = \"maximize\"\nseed = 3\ngenerations = 2\npopulation = 5\nsigma = 0.3\n"
                            "[set]\n\"simulation.duration\" = 0.1\n"
                            "[objective]\nprobe = \"tip_z\"\nstatistic = \"min\"\n"
                            "[[parameter]]\nkey = \"rod.beam.youngs_modulus\"\ninitial = 2e7\nlower = 1e7\nupper = 1e8\n";
    writeText(dir / "opt.toml", opt);
    const std::string cmd = "optimize " + (dir / "opt.toml").string() + " --output " + (dir / "opt").string() + " --jobs 2";
    r = runRodsim(cmd + " --quiet");
    REQUIRE_MESSAGE(r.status == 0, r.output);
    const std::string first = readText(dir / "opt" / "optimize.json");
    std::size_t edited = 0;
    for (const auto& e : fs::directory_iterator(dir / "opt" / "runs"))
      if (fs::exists(e.path() / "objective.txt")) writeText(e.path() / "objective.txt", "-1e9\n"), ++edited;
    REQUIRE(edited > 0);
    r = runRodsim(cmd);
    REQUIRE_MESSAGE(r.status == 0, r.output);
    CHECK(r.output.find("changed since it was recorded: running it again") != std::string::npos);
    std::string json = readText(dir / "opt" / "optimize.json");
    CHECK(jsonNumber(json, "simulations_reused") == 0);
    CHECK(jsonNumber(json, "best_objective") == jsonNumber(first, "best_objective"));
    CHECK(jsonNumber(json, "best_objective") > -1);

    writeText(dir / "opt.toml", replaced(opt, "statistic = \"min\"", "statistic = \"final\""));
    r = runRodsim(cmd + " --quiet");
    REQUIRE_MESSAGE(r.status == 0, r.output);
    json = readText(dir / "opt" / "optimize.json");
    CHECK(jsonNumber(json, "simulations_reused") == 0);
    CHECK(json.find("\"statistic\": \"final\"") != std::string::npos);
  }
}

namespace {

// A bad file: exit 2, the message names file:line:column, nothing is written.
void expectRefused(const std::string& verb, const fs::path& dir, const std::string& text, const std::string& where,
                   const std::string& message) {
  const fs::path file = writeText(dir / (verb + ".toml"), text);
  const fs::path out = dir / "out";
  fs::remove_all(out);
  const auto r = runRodsim(verb + " " + file.string() + " --output " + out.string());
  CHECK_MESSAGE(r.status == 2, r.output);
  CHECK_MESSAGE(r.output.find(where) != std::string::npos, r.output);
  CHECK_MESSAGE(r.output.find(message) != std::string::npos, r.output);
  CHECK_MESSAGE(!fs::exists(out), r.output);
}

}  // namespace

TEST_CASE("bad fit and optimize files: file:line:column, exit 2, nothing written") {
  const fs::path dir = scratchDir("inverse_errors");
  const std::string scene = (kInverse / "cantilever_drop.toml").string();
  writeText(dir / "measured.csv", "t,tip_z\n0.1,-0.05\n0.2,-0.2\n");
  writeText(dir / "wrong_column.csv", "t,tip_x\n0.1,-0.05\n");
  writeText(dir / "not_a_number.csv", "t,tip_z\n0.1,abc\n");
  const std::string head = "scene = \"" + scene + "\"\ndata = \"measured.csv\"\n";
  const std::string param = "[[parameter]]\nkey = \"rod.beam.youngs_modulus\"\ninitial = 5e7\nlower = 1e6\nupper = 1e8\n";
  const std::string fit = (dir / "fit.toml").string();
  expectRefused("fit", dir, head + "tolerance = 3\n" + param, fit + ":3:1", "unknown key 'tolerance'");
  expectRefused("fit", dir, head + "[[parameter]]\nkey = \"rod.beam.youngs_modulus\"\ninitial = 5e7\nlower = 1e8\nupper = 1e6\n",
                fit + ":6:9", "lower (100000000) must be below upper");
  expectRefused("fit", dir, head + "[[parameter]]\nkey = \"rod.beam.youngs_modulus\"\ninitial = 5e9\nlower = 1e6\nupper = 1e8\n",
                fit + ":5:11", "outside [lower, upper]");
  expectRefused("fit", dir, head + "[[parameter]]\nkey = \"rod.beam.youngs_modulus\"\ninitial = \"big\"\nlower = 1e6\nupper = 1e8\n",
                fit + ":5:11", "'initial' expects a number");
  expectRefused("fit", dir, head + "[[parameter]]\nkey = \"rod.beam.young_modulus\"\ninitial = 5e7\nlower = 1e6\nupper = 1e8\n",
                fit + ":4:7", "unknown key 'young_modulus'");
  expectRefused("fit", dir, head + "[[parameter]]\nkey = \"rod.beam.youngs_modulus\"\ninitial = 5e7\nlower = -1e6\nupper = 1e8\n",
                fit + ":6:9", "parameter 'rod.beam.youngs_modulus' = -1000000.0");
  expectRefused("fit", dir, "scene = \"" + scene + "\"\ndata = \"missing.csv\"\n" + param, fit + ":2:8", "cannot open");
  expectRefused("fit", dir, "scene = \"" + scene + "\"\ndata = \"wrong_column.csv\"\n" + param, "wrong_column.csv:1:3",
                "column 'tip_x' is not a probe");
  expectRefused("fit", dir, "scene = \"" + scene + "\"\ndata = \"not_a_number.csv\"\n" + param, "not_a_number.csv:2:5",
                "'abc' is not a finite number");
  writeText(dir / "bad_shape.csv", "rod,node,x,y,z\nbeam,0,0,0,0\nbar,1,0,0,0\n");
  expectRefused("fit", dir, "scene = \"" + scene + "\"\ndata = \"bad_shape.csv\"\n" + param, "bad_shape.csv:3:1",
                "'bar' is not a rod of the scene");
  expectRefused("fit", dir, "scene = \"nowhere.toml\"\ndata = \"measured.csv\"\n" + param, fit + ":1:9", "cannot open");
  // Issue 43: the data file is bounded before it is read: a regular file (/dev/zero was read until
  // memory ran out) of at most 64 MiB, lines of at most 1 MiB.
  expectRefused("fit", dir, "scene = \"" + scene + "\"\ndata = \"/dev/zero\"\n" + param, "/dev/zero",
                "not a regular file (a device, FIFO or directory); the fit data file must be a file");
  writeText(dir / "huge.csv", "t,tip_z\n0.1,-0.05\n");
  fs::resize_file(dir / "huge.csv", (std::uintmax_t(64) << 20) + 1);  // sparse
  expectRefused("fit", dir, "scene = \"" + scene + "\"\ndata = \"huge.csv\"\n" + param, "huge.csv", "larger than 64 MiB");
  writeText(dir / "long_line.csv", "t,tip_z\n0.1," + std::string(std::size_t(1) << 21, '1') + "\n");
  expectRefused("fit", dir, "scene = \"" + scene + "\"\ndata = \"long_line.csv\"\n" + param, "long_line.csv:2:",
                "a line longer than 1048576 bytes");
  expectRefused("fit", dir, head + "[[parameter]]\nkey = \"rod.beam.youngs_modulus\"\nindex = 1\ninitial = 5e7\nlower = 1e6\nupper = 1e8\n",
                fit + ":4:7", "does not write 'rod.beam.youngs_modulus' as an array");

  const std::string opt = (dir / "optimize.toml").string();
  const std::string ohead = "scene = \"" + scene + "\"\ngoal = \"maximize\"\n";
  expectRefused("optimize", dir, ohead + "[objective]\nprobe = \"tip_y\"\n" + param, opt + ":4:9", "unknown probe 'tip_y'");
  expectRefused("optimize", dir, ohead + "[objective]\nprobe = \"tip_z\"\nstatistic = \"median\"\n" + param, opt + ":5:13",
                "'statistic' expects one of");
  expectRefused("optimize", dir, ohead + "population = 3\n[objective]\nprobe = \"tip_z\"\n" + param, opt + ":3:14",
                "'population' expects a whole number from 5");
  expectRefused("optimize", dir, "scene = \"" + scene + "\"\ngoal = \"fastest\"\n[objective]\nprobe = \"tip_z\"\n" + param, opt + ":2:8",
                "'goal' expects");
  expectRefused("optimize", dir, ohead + "[objective]\nprobe = \"tip_z\"\nwindow = [0.4, 0.9]\n" + param, opt + ":5:10",
                "'window' [0.4, 0.9] must satisfy");
}

namespace {

// mpirun -np 2 with the environment the project's tests give it (as test_sweep's mpirun case).
CommandResult runUnderMpirun(const std::string& args) {
  // Open MPI refuses root unless told (containers, CI).
  std::string env = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1";
#ifdef RODSIM_SANITIZED
  // Open MPI does not free what MPI_Init allocates (see test_sweep.cpp): the ranks run without
  // leak detection.
  env += " ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0";
#endif
  return runCommand(env + " mpirun -np 2 --oversubscribe " + std::string(RODSIM_EXECUTABLE) + " " + args);
}

// A result file's lines without the wall-clock ones, the output directory written as DIR.
std::vector<std::string> resultLines(const fs::path& file, const fs::path& dir) {
  std::vector<std::string> out;
  std::istringstream in(readText(file));
  for (std::string line; std::getline(in, line);) {
    if (line.find("\"wall_time_s\"") != std::string::npos) continue;
    for (std::size_t p; (p = line.find(dir.string())) != std::string::npos;) line.replace(p, dir.string().size(), "DIR");
    out.push_back(line);
  }
  return out;
}

bool mpiAvailable() {
  if (runCommand("command -v mpirun").status != 0) {
    MESSAGE("skipped: mpirun not found (Debian: openmpi-bin)");
    return false;
  }
#ifndef RODSIM_SWEEP_MPI
  MESSAGE("skipped: rodsim was configured without MPI");
  return false;
#endif
  return true;
}

}  // namespace

// Issue 42: fit and optimize run their batches on the sweep's engines; under mpirun the ranks
// share each batch and the result is the serial run's.
TEST_CASE("rodsim fit under mpirun -np 2 gives the fit.json of a serial fit") {
  if (!mpiAvailable()) return;
  const fs::path dir = scratchDir("inverse_fit_mpi");
  const fs::path scene = kInverse / "cantilever_drop.toml";  // E = 5e7 Pa
  makeData(dir, scene, "tip_z", 0.02, 0.5, 25);
  writeText(dir / "fit.toml", "scene = \"" + scene.string() + "\"\ndata = \"measured.csv\"\n"
                              "[[parameter]]\nkey = \"rod.beam.youngs_modulus\"\ninitial = 7.5e7\nlower = 1.0e6\nupper = 2.0e8\nlog = true\n");
  const fs::path serial = dir / "serial", ranks = dir / "mpi";
  const auto s = runRodsim("fit " + (dir / "fit.toml").string() + " --output " + serial.string() + " --jobs 2 --quiet");
  REQUIRE_MESSAGE(s.status == 0, s.output);
  const auto r = runUnderMpirun("fit " + (dir / "fit.toml").string() + " --output " + ranks.string());
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("2 MPI ranks x 1 job(s)") != std::string::npos);
  CHECK(resultLines(ranks / "fit.json", ranks) == resultLines(serial / "fit.json", serial));
  CHECK(rowsWithout(readCsv(ranks / "iterations.csv"), {"wall_s"}) == rowsWithout(readCsv(serial / "iterations.csv"), {"wall_s"}));
  CHECK(readText(ranks / "fit.csv") == readText(serial / "fit.csv"));
}

TEST_CASE("rodsim optimize under mpirun -np 2 gives the optimize.json of a serial optimization") {
  if (!mpiAvailable()) return;
  const fs::path dir = scratchDir("inverse_optimize_mpi");
  // The small optimization of the CMA-ES case above, two generations.
  writeText(dir / "opt.toml", "scene = \"" + (kInverse / "cantilever_drop.toml").string() +
                                  "\"\ngoal = \"maximize\"\nseed = 3\ngenerations = 2\npopulation = 5\nsigma = 0.3\n"
                                  "[set]\n\"simulation.duration\" = 0.1\n"
                                  "[objective]\nprobe = \"tip_z\"\nstatistic = \"min\"\n"
                                  "[[parameter]]\nkey = \"rod.beam.youngs_modulus\"\ninitial = 2e7\nlower = 1e7\nupper = 1e8\n");
  const fs::path serial = dir / "serial", ranks = dir / "mpi";
  const auto s = runRodsim("optimize " + (dir / "opt.toml").string() + " --output " + serial.string() + " --jobs 2 --quiet");
  REQUIRE_MESSAGE(s.status == 0, s.output);
  const auto r = runUnderMpirun("optimize " + (dir / "opt.toml").string() + " --output " + ranks.string());
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("2 MPI ranks x 1 job(s)") != std::string::npos);
  CHECK(resultLines(ranks / "optimize.json", ranks) == resultLines(serial / "optimize.json", serial));
  CHECK(rowsWithout(readCsv(ranks / "generations.csv"), {"wall_s"}) == rowsWithout(readCsv(serial / "generations.csv"), {"wall_s"}));
}
