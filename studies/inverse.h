// What rodsim fit and rodsim optimize share (docs/inverse.md): the [[parameter]] tables of their
// files (scene keys as --set reaches them, bounds, an element of an array key), the validation of
// the scene at the bounds, and a cache of child runs keyed by their --set values and content, so
// that a point already simulated is never simulated again (central differences revisit points;
// an interrupted optimization replays its candidates and finds them finished).
#pragma once

#include "child_runs.h"
#include "study_ranks.h"
#include <rodsim/kernel/registry.h>

#include <toml++/toml.h>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace rodsim::studies {

struct InverseParameter {
  std::string key;                    // the --set key: rod.beam.youngs_modulus
  std::string where;                  // file:line:column of its [[parameter]] table
  std::string key_where, initial_where, lower_where, upper_where;  // of those values
  std::optional<std::size_t> index;   // an element of an array key; the others stay the scene's
  double initial = 0, lower = 0, upper = 0;
  bool log = false;                   // optimized as log(value)
  std::string name() const;           // key, or key[index]
};

struct InverseFile {
  std::string file;                   // as given
  std::string scene;                  // resolved against the file's folder
  std::string scene_text;
  std::string scene_where;
  std::vector<std::string> fixed;     // [set]: KEY=VALUE for every run
  std::vector<InverseParameter> parameters;
  std::vector<std::string> probes;    // of the scene
  std::vector<std::string> rods;      // of the scene
  double duration = 0;                // simulation.duration with [set]
  toml::table root;                   // the whole file, for the verb's own keys
  std::vector<std::string> lines;

  // "file:line:column" of a node of this file.
  std::string at(const toml::source_region& src) const;
  // Every --set of a run with these parameter values: [set] first, then the parameters (an array
  // key once, with all its chosen elements).
  std::vector<std::string> overrides(const std::vector<double>& values) const;

  std::vector<std::vector<double>> scene_arrays;  // per parameter: the scene's array when it has an index, else empty
};

// Reads scene, [set] and [[parameter]] of a fit or optimize file, refusing top-level keys outside
// `common + own`. Validates the scene with the overrides at each parameter's initial value and at
// its bounds (the others at their initial values). Throws InputError (file:line:column).
InverseFile loadInverseFile(const std::string& file, const kernel::TypeRegistry& registry, const std::vector<std::string>& own,
                            const std::string& verb);

// Plugins named by the scene a fit/optimize file names (before loadInverseFile validates it).
void loadPluginsFor(const std::string& file, kernel::TypeRegistry& registry);

// Typed readers of the verb's own keys, with file:line:column errors.
double requireNumber(const InverseFile& f, const toml::node& n, const std::string& what);

// The timeseries of a finished run: column name -> values; "t" is time.
struct Series {
  std::vector<std::string> names;
  std::vector<std::vector<double>> columns;
  const std::vector<double>* column(const std::string& name) const;
};
Series readTimeseries(const std::filesystem::path& file);
// Linear interpolation of (t, y) at `at` (clamped to the ends).
double interpolate(const std::vector<double>& t, const std::vector<double>& y, double at);

// One simulated point.
struct RunResult {
  bool ok = false;
  std::filesystem::path dir;
  std::string reason;                 // when not ok
  bool cached = false;                // finished by an earlier call or an earlier invocation
};

// Child runs under DIR/runs/<hash of the identity: scene path, --set values and content key>/; a
// run is finished when its inverse_run.json exists (written when the child exits) with the same
// identity and the hashes of the outputs now in its directory.
class RunCache {
 public:
  // `extra`: the part of the study file a cached result depends on beyond the run (see contentKey).
  RunCache(const InverseFile& f, std::filesystem::path dir, std::string executable, int jobs, bool quiet, std::string name,
           const kernel::TypeRegistry& registry, std::string extra = "");
  // Runs the points not finished yet, `jobs` at once (on each rank: see share). `finish` (optional)
  // is called once for each finished run directory of the batch that succeeded, reused ones too,
  // before run returns: what the study writes beside a run (optimize's objective.txt). Returns
  // false when interrupted (SIGINT/SIGTERM).
  bool run(const std::vector<std::vector<double>>& points, std::vector<RunResult>& results,
           const std::function<void(RunResult&)>& finish = {});
  // Under mpirun: the ranks split each batch (rank r runs every size-th run to make; each writes
  // its runs' records, then all read them back), so that every rank gets the same results and
  // drives the same optimizer; every rank calls run with the same points.
  void share(const StudyRanks& ranks) { ranks_ = &ranks; }
  std::size_t simulations() const { return simulations_; }  // children started by this process
  std::size_t reused() const { return reused_; }            // finished by an earlier invocation
  std::size_t distinct() const { return used_.size(); }     // different runs used so far
  std::filesystem::path runDir(const std::vector<double>& point) const;
  // Records the outputs of a finished run again after the study changed them on purpose (optimize
  // writes objective.txt and may delete timeseries.csv).
  void rerecord(const std::filesystem::path& dir) const;

 private:
  std::string identity(const std::vector<double>& point) const;
  void record(const std::filesystem::path& dir, const std::string& identity, const std::string& command, int exit_status,
              double seconds) const;

  const InverseFile& f_;
  std::filesystem::path dir_;
  std::string executable_, name_;
  int jobs_;
  bool quiet_;
  const kernel::TypeRegistry& registry_;
  std::string extra_;
  const StudyRanks* ranks_ = nullptr;
  std::size_t simulations_ = 0, reused_ = 0;
  std::set<std::filesystem::path> used_;
};

// Blocks SIGINT and SIGTERM for the rest of the command: one that arrives between two batches of
// runs (while Ceres or CMA-ES computes) stays pending, and the next batch (runChildren) sees it at
// once, starts nothing and reports the interruption, so the command writes what it has and exits 3
// instead of dying with its output unwritten.
void holdStopSignals();

// A number as --set and TOML take it (always a float: 3 -> 3.0), round-trip exact.
std::string tomlNumber(double v);
// Parses --jobs-style options shared by fit and optimize.
struct InverseOptions {
  std::string file, output;
  int jobs = 0;
  bool quiet = false;
};
InverseOptions parseInverseArgs(const std::vector<std::string>& args, const char* usage, const std::string& verb);

// Runs /usr/bin/python3 SCRIPT ARGS when it has matplotlib; "" or a note why not.
std::string runPlotScript(const std::string& script, const std::vector<std::string>& args);

}  // namespace rodsim::studies
