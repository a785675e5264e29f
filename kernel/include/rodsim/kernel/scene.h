// Scene files: TOML -> validated component descriptions (see docs/scene-format.md).
#pragma once

#include <rodsim/kernel/registry.h>

#include <rodsim/obstacle.h>
#include <rodsim/params.h>

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace rodsim::kernel {

// Bad input: scene, command line or plugin. The message already names file:line:column.
// main() prints it and exits with status 2 before anything runs or is written.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Where a value came from: "scene.toml:14:9" or "<--set contact.delta>".
struct Location {
  std::string text;
};

// One validated [[rod]], [[force]], ... table.
struct ComponentSpec {
  std::string section;  // "rod", "force", "constraint", "contact", "solver"
  std::string type;     // registered type ("der", "gravity", ...)
  std::string name;     // scene name, defaults to the type
  Params params;
  Location where;                        // the table itself
  std::map<std::string, Location> keys;  // every given key
  // Location of a key for an error, falling back to the table.
  const Location& at(const std::string& key) const;
};

struct OutputSpec {
  std::string dir;
  double every = 0.01;
  bool vtk = true, csv = true;
  bool vtk_binary = true;  // vtk_format = "binary" (appended, zlib) | "ascii"
  double checkpoint_every = 0, checkpoint_wall = 0;
  int checkpoint_keep = 3;
  // Simulated time between timeseries.csv rows; 0: every step; < 0 (not given): every step up to
  // kAutoRows steps, then a row every max(10, ceil(steps / kAutoRows)) steps (rowStride).
  double timeseries_every = -1;
  static constexpr long long kAutoRows = 10000;
  // Steps between rows for a run of `total_steps` steps of `dt`.
  long long rowStride(long long total_steps, double dt) const;
};

struct ProbeSpec {
  std::string name, type, rod, constraint, component;
  long long node = -1;
  Location where;
  std::map<std::string, Location> keys;
};

struct ObstacleSpec {
  Obstacle obstacle;
  Location where;
};

struct Scene {
  std::string file;  // as given
  std::string name;
  double duration = 0, dt = 0;
  long long seed = 0;
  bool substep_on_failure = false;
  int max_step_cuts = 4;
  // Threads the run may use ([simulation] threads; 0: every hardware thread). Results do not depend on it.
  int threads = 1;
  std::vector<std::string> plugin_paths;  // absolute
  ComponentSpec solver;
  std::vector<ComponentSpec> rods, forces, constraints, contacts;
  std::vector<ObstacleSpec> obstacles;
  OutputSpec output;
  std::vector<ProbeSpec> probes;
  std::vector<std::string> referenced_files;  // absolute: what path parameters name (a restart checks their content)
  // What loading did that the user should hear of: keys of the scene file dropped because a --set
  // gave their component another type or model, which does not declare them.
  std::vector<std::string> notes;
};

// Kernel-owned sections, declared like components so that `describe` and the reference cover them.
Schema simulationSchema();
Schema outputSchema();
Schema probeSchema();
Schema obstacleSchema();

// A scene given as TOML text rather than as a file (the Python module: rodsim.Simulation("<TOML>")
// and Simulation(dict)). `origin` names it in messages ("<string>:3:9: ..."); relative paths in it
// ([plugins] paths, file parameters) resolve against `base_dir`, where a file's resolve against its
// folder; a scene without [simulation] name is named `default_name`, where a file's takes its stem.
struct SceneText {
  std::string text, origin, base_dir, default_name;
};

// Reads only [plugins] paths (absolute), so plugins can be loaded before validation; `overrides`
// (--set values) apply as in loadScene, so --set plugins.paths=[...] loads what it names.
std::vector<std::string> readPluginPaths(const std::string& file, const std::vector<std::string>& overrides = {});
std::vector<std::string> readPluginPaths(const SceneText& source, const std::vector<std::string>& overrides = {});

// Parses `file`, applies `--set KEY=VALUE` overrides and validates every table against the
// schemas in `registry`. Throws InputError.
Scene loadScene(const std::string& file, const std::vector<std::string>& overrides,
                const TypeRegistry& registry);

// Same, from text (tests). `file` names the source in messages and anchors relative paths.
Scene parseScene(std::string_view text, const std::string& file,
                 const std::vector<std::string>& overrides, const TypeRegistry& registry);

// Same, from a SceneText (at most kMaxSceneBytes, as a file). Scene::file is its origin.
Scene parseScene(const SceneText& source, const std::vector<std::string>& overrides, const TypeRegistry& registry);

// The text of a scene file (InputError if it cannot be read, is not a regular file or holds more
// than kMaxSceneBytes).
std::string readSceneText(const std::string& file);
inline constexpr std::uintmax_t kMaxSceneBytes = 16u << 20;

// The bytes of a file a user names (scene, study file, checkpoint), bounded before they are read:
// InputError ("FILE: ...", naming `what`) unless it is a regular file of at most `max_bytes`.
std::string readUserFile(const std::string& file, std::uintmax_t max_bytes, const std::string& what);

// TOML++ recurses: refuses (InputError "FILE:LINE:COLUMN: ...") text nested deeper than
// kMaxTomlDepth before it is parsed. Every parse of a user's TOML calls it first.
void checkTomlDepth(std::string_view text, const std::string& file);

// "did you mean 'x'?" helper: the closest candidate by edit distance, or "".
std::string closestMatch(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace rodsim::kernel
