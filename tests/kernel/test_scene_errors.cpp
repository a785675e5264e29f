// One test per class of bad scene input: exit status 2, file:line in the message, nothing written.
#include "scene_fixture.h"

#include <doctest/doctest.h>
#include <rodsim/version.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

using namespace rodsim::test;

namespace {

// Runs `rodsim run` on `scene` and checks the error contract; `rodsim check` must find the same
// error (it builds and binds every component as run does, so a bad rod name in a component is
// caught too).
CommandResult expectInputError(const std::string& name, const std::string& scene, const std::string& location,
                               const std::string& fragment) {
  auto dir = scratchDir("bad-" + name);
  auto file = writeText(dir / "scene.toml", scene);
  auto out = dir / "out";
  CommandResult r = runRodsim("run " + file.string() + " --quiet --output " + out.string());
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find(file.string() + ":" + location) != std::string::npos);
  CHECK(r.output.find(fragment) != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));  // no half-written output
  const CommandResult c = runRodsim("check " + file.string());
  INFO(c.output);
  CHECK(c.status == 2);
  CHECK(c.output.find(file.string() + ":" + location) != std::string::npos);
  CHECK(c.output.find(fragment) != std::string::npos);
  return r;
}

}  // namespace

TEST_CASE("the fixture scene is valid") {
  auto dir = scratchDir("valid");
  auto file = writeText(dir / "scene.toml", kValidScene);
  CommandResult r = runRodsim("check " + file.string());
  INFO(r.output);
  CHECK(r.status == 0);
}

TEST_CASE("TOML syntax error") {
  expectInputError("syntax", sceneWithLine(13, "radius = = 0.01"), "13:", "TOML syntax error");
}

TEST_CASE("unknown key, with the closest match") {
  auto r = expectInputError("unknown-key", sceneWithLine(13, "raduis = 0.01"), "13:1", "unknown key 'raduis'");
  CHECK(r.output.find("did you mean 'radius'?") != std::string::npos);
}

TEST_CASE("wrong type") {
  expectInputError("wrong-type", sceneWithLine(12, "nodes = \"eleven\""), "12:9", "'nodes' expects integer, found string");
}

TEST_CASE("out-of-range value") {
  auto r = expectInputError("range", sceneWithLine(13, "radius = -0.01"), "13:10", "'radius' must be > 0, found -0.01");
  CHECK(r.output.find(" m)") != std::string::npos);  // the unit is named
}

TEST_CASE("unknown type, with the valid choices") {
  auto r = expectInputError("unknown-type", sceneWithLine(11, "model = \"dre\""), "11:9", "unknown rod model \"dre\"");
  CHECK(r.output.find("did you mean 'der'?") != std::string::npos);
  // and how a plugin of one's own is found
  CHECK(r.output.find("[plugins] paths") != std::string::npos);
  CHECK(r.output.find("RODSIM_PLUGIN_PATH") != std::string::npos);
}

TEST_CASE("unknown rod name in a component") {
  auto r = expectInputError("unknown-rod", sceneWithLine(24, "rod = \"bean\""), "24:7", "bean");
  CHECK(r.output.find("beam") != std::string::npos);
}

TEST_CASE("unknown rod name in a probe") {
  auto r = expectInputError("unknown-rod-probe", sceneWithLine(33, "rod = \"bean\""), "33:7", "unknown rod \"bean\"");
  CHECK(r.output.find("did you mean 'beam'?") != std::string::npos);
}

TEST_CASE("missing required key") {
  expectInputError("missing", sceneWithLine(15, ""), "9:1", "missing required key 'youngs_modulus'");
}

TEST_CASE("unknown section") {
  expectInputError("section", sceneWithLine(18, "[[forces]]"), "18:", "unknown section 'forces'");
}

TEST_CASE("node index out of range") {
  expectInputError("node-range", sceneWithLine(25, "nodes = [0, 11]"), "25:", "node");
}

TEST_CASE("--set values are validated and located") {
  auto dir = scratchDir("set");
  auto file = writeText(dir / "scene.toml", kValidScene);
  CommandResult r = runRodsim("check " + file.string() + " --set rod.beam.radius=-1");
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("<--set rod.beam.radius>") != std::string::npos);
  r = runRodsim("check " + file.string() + " --set rod.bean.radius=1");
  CHECK(r.status == 2);
  CHECK(r.output.find("did you mean 'beam'?") != std::string::npos);
  r = runRodsim("check " + file.string() + " --set rod.beam.youngs_modulus=2e6 --set solver.type=static");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("solver static") != std::string::npos);
}

TEST_CASE("bad command lines exit with status 2") {
  CHECK(runRodsim("").status == 2);
  CHECK(runRodsim("runn x.toml").status == 2);
  CHECK(runRodsim("run").status == 2);
  CHECK(runRodsim("run /nonexistent/scene.toml").status == 2);
  CHECK(runRodsim("describe no-such-type").status == 2);
  CHECK(runRodsim("run x.toml --bogus").status == 2);
}

TEST_CASE("--help after any command prints the usage and exits 0") {
  for (const char* args : {"--help", "compare --help", "run -h", "describe --help"}) {
    const auto r = runRodsim(args);
    CHECK_MESSAGE(r.status == 0, args);
    CHECK(r.output.find("rodsim compare SCENE.toml") != std::string::npos);
  }
}

TEST_CASE("--version and -V print the project version of CMakeLists.txt and the SDK version, exit 0") {
  std::ifstream in(std::string(RODSIM_SOURCE_DIR) + "/CMakeLists.txt");
  std::stringstream text;
  text << in.rdbuf();
  std::smatch m;
  const std::string cmake = text.str();
  REQUIRE(std::regex_search(cmake, m, std::regex(R"(project\(rodsim VERSION ([0-9.]+))")));
  const std::string expected = "rodsim " + m[1].str() + " (SDK " + RODSIM_SDK_VERSION + ")\n";
  for (const char* args : {"--version", "-V"}) {
    const auto r = runRodsim(args);
    CHECK_MESSAGE(r.status == 0, args);
    CHECK(r.output == expected);
  }
}

TEST_CASE("a solver refuses a contact model it cannot drive, naming both (composition)") {
  // kValidScene's implicit-euler with a contact model that offers no coupling (a test plugin): every
  // in-tree contact model couples to every in-tree solver. The [plugins] table adds two lines in front.
  const std::string scene = std::string("[plugins]\npaths = [\"") + INERT_CONTACT_PLUGIN + "\"]\n" + kValidScene + R"(
[[contact]]
name = "touch"
type = "test-inert-contact"
)";
  auto r = expectInputError("solver-contact", scene, "8:1", "solver 'implicit-euler' (implicit-euler) cannot work with contact 'touch' (test-inert-contact)");
  CHECK(r.output.find("contact-force or contact-linearized-impulse") != std::string::npos);
}

TEST_CASE("Newton refuses two impulse contact models (one would be ignored)") {
  const std::string scene = std::string(kValidScene) + R"(
[[contact]]
name = "a"
type = "alart-curnier"

[[contact]]
name = "b"
type = "alart-curnier"
)";
  auto r = expectInputError("two-impulse", scene, "6:1", "contacts 'a' and 'b' both solve contact impulses");
}

TEST_CASE("components that walk a rod's edges as an open chain refuse a closed rod (composition)") {
  // A cosserat ring (closed = true) with spring-dashpot self-contact: the contact model would miss
  // the element that closes the ring. Refused when it binds, naming the ring (line 17: [[contact]]).
  const std::string scene = R"([simulation]
duration = 0.01
dt = 1e-5

[solver]
type = "position-verlet"

[[rod]]
name = "ring"
model = "cosserat"
closed = true
nodes = 24
radius = 0.01
density = 1000.0
youngs_modulus = 1e6
geometry = { shape = "circle", circle_radius = 0.2 }
[[contact]]
name = "self"
type = "spring-dashpot"
)";
  expectInputError("closed-contact", scene, "17:1",
                   "rod 'ring' is closed into a ring: the spring-dashpot contact model treats a rod as an open chain");
}

TEST_CASE("--set swapping a component's type drops the file's keys the new type does not declare, with a note") {
  // Issue 42: `--set contact.type=ipc` on a scene written for imc (delta, slip_tolerance) or
  // `--set solver.type=implicit-euler` on an explicit scene (velocity_forces) ran into "unknown key".
  const std::string knot = std::string(RODSIM_SOURCE_DIR) + "/scenes/knots/trefoil.toml";
  CommandResult r = runRodsim("check " + knot + " --set contact.type=ipc");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("note: contact 'ipc' (ipc): key 'delta' (") != std::string::npos);
  CHECK(r.output.find("key 'slip_tolerance'") != std::string::npos);
  // --quiet: no notes
  r = runRodsim("check " + knot + " --set contact.type=ipc --quiet");
  CHECK(r.status == 0);
  CHECK(r.output.find("note:") == std::string::npos);
  // the same type again: the file's keys are still checked (a typo stays an error)
  r = runRodsim("check " + knot + " --set contact.type=imc --set contact.delta=2e-5");
  CHECK(r.status == 0);
  CHECK(r.output.find("note:") == std::string::npos);
  // a key given by --set itself that the new type does not declare is an error, with its --set
  r = runRodsim("check " + knot + " --set contact.type=ipc --set contact.bogus=1");
  CHECK(r.status == 2);
  CHECK(r.output.find("unknown key 'bogus'") != std::string::npos);
}
