// No silent tunnelling (issue 26), end to end through the rodsim command:
//  - scenes/contact/bullet.toml: a short rod at 20 m/s across a beam clamped at both ends, dt = 1 ms
//    (one step moves it five times the contact distance). With imc and alart-curnier and
//    on_failure = "substep", the swept check cuts the steps in which the rods would pass through
//    each other (steps_cut_for_crossing > 0) and the contact then stops the bullet: smallest gap over
//    the run >= -1 % of the radius, the bullet still above the beam at the end. With on_failure =
//    "stop": exit 3, and the reason names both rods. ipc bounds its own steps (its CCD): no cut.
//  - scenes/contact/spinning_arm.toml: a rod prescribed to spin at 200 rad/s sweeps across a free rod
//    (the crossing happens along an arc between two steps): the same, and the free rod is knocked
//    away rather than passed through.
#include "csv_table.h"
#include "run_rodsim.h"

#include <doctest/doctest.h>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

using namespace rodsim::test;

namespace {

constexpr double kRadius = 0.002;  // every rod of both scenes


std::map<std::string, std::vector<Eigen::Vector3d>> finalNodes(const std::filesystem::path& dir) {
  const CsvTable t = readCsv(dir / "final.csv");
  std::map<std::string, std::vector<Eigen::Vector3d>> nodes;
  for (std::size_t i = 0; i < t.rows.size(); ++i)
    nodes[t.rows[i][t.col("rod")]].emplace_back(t.num(i, "x"), t.num(i, "y"), t.num(i, "z"));
  return nodes;
}

struct Run {
  CommandResult result;
  std::filesystem::path dir;
  std::string summary;
};

Run run(const std::string& scene, const std::string& contact, const std::string& on_failure) {
  Run r;
  r.dir = scratchDir("tunnelling_" + scene + "_" + contact + "_" + on_failure);
  r.result = runRodsim("run scenes/contact/" + scene + ".toml --quiet --output " + r.dir.string() +
                       " --set contact.type=" + contact + " --set simulation.on_failure=" + on_failure);
  r.summary = readText(r.dir / "summary.json");
  return r;
}

}  // namespace

TEST_CASE("bullet: imc and alart-curnier cut the steps the rod would tunnel through, or stop naming both rods") {
  for (const std::string contact : {"imc", "alart-curnier"}) {
    CAPTURE(contact);
    {
      const Run r = run("bullet", contact, "substep");
      INFO(r.result.output << r.summary);
      REQUIRE(r.result.status == 0);
      CHECK(jsonNumber(r.summary, "steps_cut_for_crossing") > 0);
      CHECK(jsonNumber(r.summary, "steps_with_contact") > 0);
      CHECK(jsonNumber(r.summary, "min_gap") >= -0.01 * kRadius);
      // The bullet (along y, across the beam's middle) ends above the beam: its middle node above
      // the beam's middle node by at least the contact distance less 1 % of r.
      const auto nodes = finalNodes(r.dir);
      const double dz = nodes.at("bullet")[2].z() - nodes.at("beam")[10].z();
      CHECK(dz >= 2 * kRadius - 0.01 * kRadius);
    }
    {
      const Run r = run("bullet", contact, "stop");
      INFO(r.result.output << r.summary);
      CHECK(r.result.status == 3);
      CHECK(r.summary.find("passed through each other") != std::string::npos);
      CHECK(r.summary.find("'beam'") != std::string::npos);
      CHECK(r.summary.find("'bullet'") != std::string::npos);
    }
  }
}

TEST_CASE("bullet: ipc keeps its own guarantee (its CCD bounds the steps; no swept check, no cut)") {
  const Run r = run("bullet", "ipc", "stop");
  INFO(r.result.output << r.summary);
  REQUIRE(r.result.status == 0);
  CHECK(jsonNumber(r.summary, "steps_cut_for_crossing") == 0);
  CHECK(jsonNumber(r.summary, "min_gap") > 0);
  const auto nodes = finalNodes(r.dir);
  CHECK(nodes.at("bullet")[2].z() - nodes.at("beam")[10].z() >= 2 * kRadius);
}

TEST_CASE("spinning arm: a crossing along an arc between two steps is caught the same way") {
  for (const std::string contact : {"imc", "alart-curnier"}) {
    CAPTURE(contact);
    {
      const Run r = run("spinning_arm", contact, "substep");
      INFO(r.result.output << r.summary);
      REQUIRE(r.result.status == 0);
      CHECK(jsonNumber(r.summary, "steps_cut_for_crossing") > 0);
      CHECK(jsonNumber(r.summary, "min_gap") >= -0.01 * kRadius);
      // Knocked away by the arm (passed through, it would still stand at x = 0, y = 0.09).
      const auto nodes = finalNodes(r.dir);
      CHECK(nodes.at("target")[2].x() < -0.02);
    }
    {
      const Run r = run("spinning_arm", contact, "stop");
      INFO(r.result.output << r.summary);
      CHECK(r.result.status == 3);
      CHECK(r.summary.find("passed through each other") != std::string::npos);
      CHECK(r.summary.find("'arm'") != std::string::npos);
      CHECK(r.summary.find("'target'") != std::string::npos);
    }
  }
}
