// Plugins that cannot be used are refused before anything runs, each with its own message.
#include "scene_fixture.h"

#include <rodsim/version.h>

#include <doctest/doctest.h>

#include <filesystem>
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
    ++scenes;
    CommandResult r = runRodsim("check " + entry.path().string());
    INFO(entry.path().string() << "\n" << r.output);
    CHECK(r.status == 0);
  }
  CHECK(scenes >= 40);
}
