// `rodsim compare` through the executable, and the IPC minimum-gap guarantee on the knot and the
// flagella (runs of a contact model different from the scene's go through compare's key rules).
#include "csv_table.h"
#include "run_rodsim.h"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>

namespace fs = std::filesystem;
using namespace rodsim::test;

namespace {

const std::string kSource = RODSIM_SOURCE_DIR;

// Every step of an ipc run keeps a positive gap; returns the number of steps with active contacts.
int checkPositiveGaps(const fs::path& timeseries, double* smallest) {
  CsvTable ts = readCsv(timeseries);
  REQUIRE(ts.rows.size() > 2);
  const int gap = ts.col("min_gap"), contacts = ts.col("contacts");
  int with_contact = 0;
  *smallest = INFINITY;
  for (std::size_t i = 1; i < ts.rows.size(); ++i) {
    const auto& row = ts.rows[i];
    if (std::stod(row.at(contacts)) > 0) ++with_contact;
    if (static_cast<int>(row.size()) <= gap || row[gap].empty()) continue;  // no candidate pair
    const double g = std::stod(row[gap]);
    *smallest = std::min(*smallest, g);
    INFO("step " << row[0] << " t = " << row[1]);
    REQUIRE(g > 0);
  }
  return with_contact;
}

}  // namespace

TEST_CASE("compare runs a scene per contact model and writes the table and e(t)") {
  auto dir = scratchDir("compare-crossing");
  // The scene is imc's: its delta is dropped for ipc; ipc gets a d_hat as small as imc's delta and
  // a time step of its own (half the scene's 0.1 s).
  CommandResult r = runRodsim("compare " + kSource + "/scenes/contact/rod_on_crossing_rod.toml --contact imc,ipc "
                              "--contact-set ipc:d_hat=1e-5 --set-for ipc:simulation.dt=0.05 --jobs 2 --output " + dir.string());
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("ipc run: dropped [[contact]] key(s) ipc does not declare: delta (") != std::string::npos);

  for (const char* model : {"imc", "ipc"}) {
    CHECK(fs::exists(dir / model / "summary.json"));
    CHECK(fs::exists(dir / model / "final.csv"));
    CHECK(fs::exists(dir / model / "rod_on_crossing_rod.toml"));
  }
  // The scene copy keeps line numbers: the dropped key is commented out, not removed.
  const std::string copy = readText(dir / "ipc" / "rod_on_crossing_rod.toml");
  const std::string original = readText(kSource + "/scenes/contact/rod_on_crossing_rod.toml");
  CHECK(copy.find("# delta = 1e-5  # dropped by rodsim compare") != std::string::npos);
  CHECK(copy.find("type = \"ipc\"") != std::string::npos);
  CHECK(std::count(copy.begin(), copy.end(), '\n') == std::count(original.begin(), original.end(), '\n') + 3);

  CsvTable table = readCsv(dir / "table.csv");
  REQUIRE(table.rows.size() == 2);
  CHECK(table.rows[0][table.col("model")] == "imc");
  CHECK(table.rows[1][table.col("model")] == "ipc");
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(table.rows[i][table.col("status")] == "ok");
    CHECK(table.num(i, "M") == 2);
    CHECK(table.num(i, "steps") == (i == 0 ? 10 : 20));  // --set-for ipc:simulation.dt=0.05
    CHECK(table.num(i, "contact_steps") >= 1);
    CHECK(table.num(i, "aipts") >= 1);
    CHECK(table.num(i, "aipts") < 50);
    CHECK(table.num(i, "total_iterations") >= table.num(i, "contact_steps"));
    CHECK(table.num(i, "run_time_s") > 0);
  }
  CHECK(table.num(0, "run_time_ratio") == doctest::Approx(1.0));
  CHECK(table.num(1, "min_gap") > 0);  // ipc never lets the rods touch
  CHECK(readText(dir / "table.md").find("| imc | 2 |") != std::string::npos);

  // e(t): both models bring the upper rod to rest on the lower one, imc within delta of contact,
  // ipc within d_hat: the rest shapes differ by at most delta + d_hat at the contact, less
  // elsewhere, so the node-averaged difference over the radius h = 2 mm is below (delta + d_hat) / h.
  CsvTable diff = readCsv(dir / "difference.csv");
  REQUIRE(diff.header == std::vector<std::string>{"t", "imc_vs_ipc"});
  REQUIRE(diff.rows.size() == 2);  // output.every = 0: the initial and the final frame
  CHECK(diff.num(0, "imc_vs_ipc") == 0.0);
  CHECK(diff.num(1, "t") == doctest::Approx(1.0));
  const double e = diff.num(1, "imc_vs_ipc");
  CHECK(e > 0);
  CHECK(e < (1e-5 + 1e-5) / 2e-3);
  CHECK(fs::exists(dir / "commands.txt"));
}

TEST_CASE("compare refuses bad input with exit status 2 before writing anything") {
  auto dir = scratchDir("compare-bad");
  const std::string scene = kSource + "/scenes/contact/rod_on_crossing_rod.toml";
  const fs::path out = dir / "out";
  SUBCASE("unknown model") {
    CommandResult r = runRodsim("compare " + scene + " --contact imc,ipx --output " + out.string());
    CHECK(r.status == 2);
    CHECK(r.output.find("unknown contact model 'ipx'") != std::string::npos);
    CHECK(r.output.find("did you mean 'ipc'") != std::string::npos);
  }
  SUBCASE("a key one model does not know, given to all") {
    CommandResult r = runRodsim("compare " + scene + " --contact imc,ipc --set contact.d_hat=1e-5 --output " + out.string());
    CHECK(r.status == 2);
    CHECK(r.output.find("unknown key 'd_hat'") != std::string::npos);
    CHECK(r.output.find("in the 'imc' run of rodsim compare") != std::string::npos);
    CHECK(r.output.find("--contact-set") != std::string::npos);
  }
  SUBCASE("--contact-set for a model not compared") {
    CommandResult r = runRodsim("compare " + scene + " --contact imc,ipc --contact-set alart-curnier:rho=1 --output " + out.string());
    CHECK(r.status == 2);
  }
  SUBCASE("--set-for: a model not compared, no '=', or the contact type") {
    for (const char* bad : {"alart-curnier:simulation.dt=0.01", "ipc:simulation.dt", "imc:contact.type=ipc"}) {
      CommandResult r = runRodsim("compare " + scene + " --contact imc,ipc --set-for " + bad + " --output " + out.string());
      CHECK(r.status == 2);
      CHECK(r.output.find("--set-for") != std::string::npos);
    }
  }
  SUBCASE("a scene error names the file and line") {
    auto file = writeText(dir / "bad.toml", readText(scene) + "\n[[force]]\ntype = \"gravity\"\ngg = 1\n");
    CommandResult r = runRodsim("compare " + file.string() + " --contact imc,ipc --output " + out.string());
    CHECK(r.status == 2);
    CHECK(r.output.find("bad.toml:") != std::string::npos);
    CHECK(r.output.find("unknown key 'gg'") != std::string::npos);
  }
  SUBCASE("missing --contact") {
    CommandResult r = runRodsim("compare " + scene);
    CHECK(r.status == 2);
  }
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("ipc keeps a positive gap at every step: trefoil knot, first second of the pull") {
  auto dir = scratchDir("ipc-gap-trefoil");
  CommandResult r = runRodsim("compare " + kSource + "/scenes/knots/trefoil.toml --contact ipc --quiet "
                              "--set simulation.duration=1.0 --set output.every=0.5 --output " + dir.string());
  INFO(r.output);
  REQUIRE(r.status == 0);
  double smallest = 0;
  const int contact_steps = checkPositiveGaps(dir / "ipc" / "timeseries.csv", &smallest);
  MESSAGE("trefoil, ipc: " << contact_steps << " of 1000 steps in contact, smallest gap " << smallest << " m");
  CHECK(contact_steps > 500);  // the strands of the knot touch from the start
}

TEST_CASE("ipc keeps a positive gap at every step: two flagella, through the first contacts") {
  // d_hat = the paper's delta (1e-5 m): the helices start 33 um apart (no barrier force yet) and
  // come within d_hat at t = 0.054 s, so the run goes through the approach and the first contacts.
  auto dir = scratchDir("ipc-gap-flagella");
  CommandResult r = runRodsim("compare " + kSource + "/scenes/flagella/m2_close.toml --contact ipc --quiet "
                              "--contact-set ipc:d_hat=1e-5 --set simulation.duration=0.4 --set output.every=0.2 "
                              "--output " + dir.string());
  INFO(r.output);
  REQUIRE(r.status == 0);
  double smallest = 0;
  const int contact_steps = checkPositiveGaps(dir / "ipc" / "timeseries.csv", &smallest);
  MESSAGE("flagella M = 2, ipc: " << contact_steps << " of 400 steps in contact, smallest gap " << smallest << " m");
  CsvTable ts = readCsv(dir / "ipc" / "timeseries.csv");
  std::size_t first = 1;
  while (first < ts.rows.size() && ts.num(first, "contacts") == 0) ++first;
  CHECK(ts.num(first, "t") > 0.02);  // separated at the start (first contact at t = 0.054 s)
  CHECK(ts.num(first, "t") < 0.2);
  CHECK(contact_steps > 150);
}
