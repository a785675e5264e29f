// A scene given as text (rodsim::kernel::SceneText, the Python module's Simulation("<TOML>") and
// Simulation(dict)): messages name its origin with line and column as a file's name the file, its
// relative paths resolve against the base directory it names, and its size has a file's bound.
#include <rodsim/kernel/scene.h>

#include <doctest/doctest.h>

#include <string>

using namespace rodsim::kernel;

namespace {

std::string errorOf(const SceneText& source) {
  try {
    TypeRegistry registry;
    parseScene(source, {}, registry);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("scene text: errors name the origin, line and column") {
  const std::string syntax = errorOf({"[simulation]\nduration = 1.0\ndt = = 0.1\n", "<string>", "/tmp", "scene"});
  CHECK(syntax.rfind("<string>:3:", 0) == 0);
  CHECK(syntax.find("TOML syntax error") != std::string::npos);
  const std::string range = errorOf({"[simulation]\nduration = 1.0\ndt = -0.1\n", "<string>", "/tmp", "scene"});
  INFO(range);
  CHECK(range.rfind("<string>:3:6:", 0) == 0);
  CHECK(range.find("'dt'") != std::string::npos);
  // A --set value is still located as such.
  TypeRegistry registry;
  try {
    parseScene(SceneText{"[simulation]\nduration = 1.0\ndt = 0.1\n", "<string>", "/tmp", "scene"}, {"simulation.dt=-1"},
               registry);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).rfind("<--set simulation.dt>", 0) == 0);
  }
}

TEST_CASE("scene text: relative plugin paths resolve against its base directory") {
  const SceneText source{"[plugins]\npaths = [\"lib\", \"/abs/p\"]\n", "<string>", "/some/where", "scene"};
  const auto paths = readPluginPaths(source);
  REQUIRE(paths.size() == 2);
  CHECK(paths[0] == "/some/where/lib");
  CHECK(paths[1] == "/abs/p");
  CHECK(readPluginPaths(source, {"plugins.paths=[\"x/../y\"]"}) == std::vector<std::string>{"/some/where/y"});
}

TEST_CASE("scene text: at most kMaxSceneBytes, as a scene file") {
  const std::string big(kMaxSceneBytes + 1, '#');
  const std::string e = errorOf({big, "<dict>", "/tmp", "scene"});
  CHECK(e.rfind("<dict>: the scene text holds", 0) == 0);
}
