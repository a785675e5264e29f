// Plugins that cannot be used are refused before anything runs, each with its own message.
#include "csv_table.h"
#include "scene_fixture.h"

#include <rodsim/version.h>

#include <doctest/doctest.h>

#include <filesystem>
#include <sstream>
#include <string>

using namespace rodsim::test;

namespace {

CommandResult checkWithPlugin(const std::string& name, const std::string& plugin_path) {
  auto dir = scratchDir("plugin-" + name);
  auto file = writeText(dir / "scene.toml", "[plugins]\npaths = [\"" + plugin_path + "\"]\n" + kValidScene);
  return runRodsim("check " + file.string());
}

}  // namespace

TEST_CASE("a plugin built for another ABI version is refused, naming file, versions and fix") {
  CommandResult r = checkWithPlugin("abi", BAD_ABI_PLUGIN);
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find(BAD_ABI_PLUGIN) != std::string::npos);
  CHECK(r.output.find("ABI version 999") != std::string::npos);
  CHECK(r.output.find("ABI version " + std::to_string(RODSIM_ABI_VERSION)) != std::string::npos);
  CHECK(r.output.find("rebuild the plugin") != std::string::npos);
}

TEST_CASE("a plugin built for the previous ABI version (5, SDK 0.1) is refused") {
  static_assert(RODSIM_ABI_VERSION == 6, "update this test when the ABI version changes");
  CommandResult r = checkWithPlugin("oldabi", OLD_ABI_PLUGIN);
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find(OLD_ABI_PLUGIN) != std::string::npos);
  CHECK(r.output.find("plugin built for rodsim ABI version 5, this rodsim has ABI version 6") != std::string::npos);
  CHECK(r.output.find("rebuild the plugin") != std::string::npos);
}

TEST_CASE("a plugin whose Eigen types are aligned for another instruction set is refused") {
  // Fixed-size Eigen types change size and layout with the alignment (-march=native gives 32 or 64
  // bytes where the generic build has 16): loading such a plugin would crash on its first Eigen member.
  static_assert(EIGEN_MAX_STATIC_ALIGN_BYTES == 16, "this test assumes a generic (SSE2 or NEON) build of rodsim");
  CommandResult r = checkWithPlugin("wide-eigen", WIDE_EIGEN_PLUGIN);
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find(WIDE_EIGEN_PLUGIN) != std::string::npos);
  CHECK(r.output.find("eigen-align 32/32") != std::string::npos);
  CHECK(r.output.find("rebuild the plugin with the same compiler and SDK and the same instruction-set flags") !=
        std::string::npos);
  CHECK(r.output.find("-march=native") != std::string::npos);
  // The kernel's own signature names no alignment: plugins built before this check still load.
  CHECK(std::string(RODSIM_SDK_SIGNATURE).find("eigen-align") == std::string::npos);
}

TEST_CASE("a library without the entry point is refused") {
  CommandResult r = checkWithPlugin("noentry", NO_ENTRY_PLUGIN);
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("not a rodsim plugin") != std::string::npos);
  CHECK(r.output.find("rodsim_plugin_info_v1") != std::string::npos);
}

TEST_CASE("a missing plugin file is refused") {
  CommandResult r = checkWithPlugin("missing", "/nonexistent/rodsim-nothing.so");
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("/nonexistent/rodsim-nothing.so") != std::string::npos);
  CHECK(r.output.find("does not exist") != std::string::npos);
}

TEST_CASE("rodsim plugins lists the search order and the in-tree plugins") {
  CommandResult r = runRodsim("plugins");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("rod der") != std::string::npos);
  CHECK(r.output.find("solver implicit-euler") != std::string::npos);
  CHECK(r.output.find("constraint clamp") != std::string::npos);
  CHECK(r.output.find("force gravity") != std::string::npos);
}

TEST_CASE("rodsim describe prints every parameter of a type") {
  CommandResult r = runRodsim("describe der");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("youngs_modulus") != std::string::npos);
  CHECK(r.output.find("Pa") != std::string::npos);
}

TEST_CASE("the generated parameter reference in docs/ is up to date") {
  CommandResult r = runRodsim("describe --all --markdown");
  CHECK(r.status == 0);
  std::string committed = readText(std::string(RODSIM_SOURCE_DIR) + "/docs/reference/parameters.md");
  // Regenerate with: build/bin/rodsim describe --all --markdown > docs/reference/parameters.md
  CHECK_MESSAGE(r.output == committed, "docs/reference/parameters.md is stale: regenerate it");
}

TEST_CASE("the generated compatibility table in docs/ is up to date") {
  CommandResult r = runRodsim("describe --compatibility");
  CHECK(r.status == 0);
  std::string committed = readText(std::string(RODSIM_SOURCE_DIR) + "/docs/reference/compatibility.md");
  // Regenerate with: build/bin/rodsim describe --compatibility > docs/reference/compatibility.md
  CHECK_MESSAGE(r.output == committed, "docs/reference/compatibility.md is stale: regenerate it");
}

TEST_CASE("describe shows what a type provides and requires") {
  CommandResult r = runRodsim("describe implicit-euler");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("requires of every rod: rod-stiffness") != std::string::npos);
  r = runRodsim("describe ipc");
  CHECK(r.output.find("provides: contact-force, contact-step-bound") != std::string::npos);
}

TEST_CASE("every shipped scene passes rodsim check") {
  // Scenes are documentation that runs: a schema change that breaks one (a renamed key, a new
  // range) must fail here, not in the hands of the next user. check builds and binds every
  // component without writing anything, so this costs a second or two for all of them.
  namespace fs = std::filesystem;
  int scenes = 0;
  for (const auto& entry : fs::recursive_directory_iterator(std::string(RODSIM_SOURCE_DIR) + "/scenes")) {
    if (entry.path().extension() != ".toml") continue;
    // Study files (a.sweep.toml, b.fit.toml, c.optimize.toml): tests/studies.
    const auto kind = entry.path().stem().extension();
    if (kind == ".sweep" || kind == ".fit" || kind == ".optimize") continue;
    ++scenes;
    CommandResult r = runRodsim("check " + entry.path().string());
    INFO(entry.path().string() << "\n" << r.output);
    CHECK(r.status == 0);
  }
  CHECK(scenes >= 40);
}

TEST_CASE("a plugin built against SDK 1.0 loads and works after SDK 1.1 added a capability interface") {
  // A DER rod lying on the plugin's floor (stiffness k) under gravity, implicit-euler: the floor must
  // be driven (ForceContact, a 1.0 capability) and hold each node at depth m g / k.
  auto dir = scratchDir("plugin-sdk10");
  const double k = 1e3, rho = 1000, r = 0.01, L = 0.5, g = 9.81;
  const int nodes = 11;
  auto file = writeText(dir / "scene.toml", std::string("[plugins]\npaths = [\"") + SDK10_PLUGIN + R"("]
[simulation]
duration = 2.0
dt = 0.01
[solver]
type = "implicit-euler"
[[rod]]
name = "beam"
model = "der"
nodes = 11
radius = 0.01
density = 1000.0
youngs_modulus = 1e6
geometry = { shape = "straight", start = [0, 0, 0], end = [0.5, 0, 0] }
[[force]]
type = "gravity"
[[force]]
type = "damping"
coefficient = 0.5
[[contact]]
type = "sdk10-floor"
stiffness = 1000.0
)");
  CommandResult r1 = runRodsim("run " + file.string() + " --quiet --output " + (dir / "out").string());
  INFO(r1.output);
  REQUIRE(r1.status == 0);
  // Interior nodes carry m = rho pi r^2 L / (nodes - 1); at rest they sink by m g / k.
  const double m = rho * 3.141592653589793 * r * r * L / (nodes - 1);
  const CsvTable final_csv = readCsv(dir / "out" / "final.csv");
  for (std::size_t i = 0; i < final_csv.rows.size(); ++i) {
    const double z = final_csv.num(i, "z");
    const double node = final_csv.num(i, "node");
    if (node > 0 && node < nodes - 1) CHECK(z == doctest::Approx(-m * g / k).epsilon(0.05));
  }
  CHECK(final_csv.rows.size() == static_cast<std::size_t>(nodes));
}

TEST_CASE("a plugin built for a newer SDK minor version is refused") {
  CommandResult r = checkWithPlugin("futureminor", FUTURE_MINOR_PLUGIN);
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("built against SDK 1.99, newer than this rodsim's SDK " RODSIM_SDK_VERSION) != std::string::npos);
}
