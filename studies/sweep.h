// rodsim sweep: one base scene, axes over its keys, one child `rodsim run` per row of the table
// the axes span; on one machine (--jobs), under mpirun, or one row per Slurm array task (--index).
// Format, engines and output: docs/sweeps.md.
#pragma once

#include <rodsim/kernel/registry.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace rodsim::studies {

// One value of an axis.
struct AxisValue {
  std::string toml;   // as `--set KEY=VALUE` takes it: 0.1, "ipc", [0, 0, -1]
  std::string shown;  // in runs.csv and --list: the same, strings unquoted
  std::string where;  // sweep.toml:line:column
};

struct Axis {
  std::string key;    // the --set key: contact.friction
  std::string where;  // of the key
  std::vector<AxisValue> values;
};

// One run: the value index of every axis.
struct SweepRow {
  std::size_t index = 0;
  std::vector<std::size_t> pick;  // pick[a]: index into axes[a].values
};

struct Sweep {
  std::string file;                    // as given
  std::string scene;                   // the base scene, resolved against the sweep file's folder
  std::string scene_text;
  std::string scene_where;             // sweep.toml:line:column of `scene`
  std::vector<std::string> fixed;      // [set]: KEY=VALUE for every run
  std::vector<std::string> fixed_where;
  std::vector<Axis> axes;              // in the order of the file
  std::vector<std::vector<std::size_t>> groups;  // zip groups of axes; the grid runs over the groups
  std::vector<SweepRow> rows;          // first group slowest, last fastest
  std::vector<std::string> probes;     // of the base scene: columns <probe>_final, <probe>_mean

  // Every --set of a row: [set] first, then the axes in file order.
  std::vector<std::string> overrides(const SweepRow& row) const;
};

// Reads and expands a sweep file and validates the base scene, every axis value and every row
// (only row `only_row` when given) as `rodsim check` would. Throws InputError (file:line:column)
// before anything is written.
Sweep loadSweep(const std::string& file, const kernel::TypeRegistry& registry, std::optional<std::size_t> only_row = {});

// `rodsim sweep ARGS...` (the arguments after the verb). Returns the exit status: 0 every row ok,
// 3 a row failed or the sweep was interrupted (the others are recorded), 2 bad input (InputError).
int sweepCommand(const std::vector<std::string>& args, const std::string& executable);

}  // namespace rodsim::studies
