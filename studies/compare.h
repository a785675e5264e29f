// rodsim compare: one scene, several contact models, side by side (docs/scene-format.md, "compare").
// The studies layer: commands that run many simulations (compare; the sweeps and inverse problems
// build here) on top of the kernel, as child `rodsim run` processes.
#pragma once

#include <rodsim/kernel/registry.h>

#include <string>
#include <vector>

namespace rodsim::studies {

struct CompareOptions {
  std::string scene;                       // the scene file
  std::vector<std::string> models;         // --contact imc,ipc,...
  std::vector<std::string> sets;           // --set KEY=VALUE, for every run
  std::vector<std::string> contact_sets;   // --contact-set MODEL:KEY=VALUE, a [[contact]] key, that model's run only
  std::vector<std::string> sets_for;       // --set-for MODEL:KEY=VALUE, any scene key (e.g. simulation.dt), that model's run only
  std::string output;                      // --output DIR; default out/<simulation.name>-compare
  int jobs = 2;                            // runs at once
  bool quiet = false;
};

// "imc, ipc" -> {"imc", "ipc"} (empty items are kept: runCompare reports them).
std::vector<std::string> splitModelList(const std::string& list);

// Prepares one run per model (its [[contact]] tables switched to the model, keys the model does not
// declare dropped), validates all of them, then runs them as child processes `rodsim run` of
// `executable` and writes table.csv, table.md, difference.csv and the plots. Bad input throws
// InputError before anything is written. Returns 0, or 3 when a run failed (the rest is written).
int runCompare(const CompareOptions& options, const kernel::TypeRegistry& registry, const std::string& executable);

}  // namespace rodsim::studies
