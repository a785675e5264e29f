#pragma once

#include "checkpoint.h"
#include "scene.h"

#include <string>

namespace rodsim::kernel {

struct RunOptions {
  std::string output_dir;  // --output; empty: the scene's [output] dir
  bool quiet = false;
  bool progress = true;    // live progress line when stdout is a terminal
  std::string scene_text;               // the scene file's text and the --set values: a checkpoint
  std::vector<std::string> overrides;   // records their hash so a restart can refuse a changed scene
  const Checkpoint* restart = nullptr;  // continue from this checkpoint (rodsim run --restart DIR)
  bool replace_output = false;          // --force: a new run replaces another run's files in the directory
};

// Builds the world and everything a run resolves before its first step (components bound, rods,
// nodes and probes looked up), then stops: `rodsim check`. Throws InputError for bad input; writes
// nothing.
void checkScene(const Scene& scene, const TypeRegistry& registry);

// Builds the world, runs the time loop and writes the output. Returns 0 (ok) or 3 (the
// simulation failed; everything up to the failure is written). Throws InputError for bad input
// found while building components (before any file is written).
int runSimulation(const Scene& scene, const TypeRegistry& registry, const RunOptions& options);

}  // namespace rodsim::kernel
