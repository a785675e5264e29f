#pragma once

#include <rodsim/kernel/checkpoint.h>
#include <rodsim/kernel/output.h>
#include <rodsim/kernel/scene.h>

#include <memory>
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

// `rodsim check`: checkScene, then one dry step of the bound world, as `run` takes its first step
// (the solver's step, the finiteness and swept checks, the halvings of on_failure = "substep"), with
// nothing written. A first step that fails is bad input (InputError at the scene's [solver] table,
// with the step's message): what `run` would stop at in its first step, such as an explicit dt above
// the rods' stability limit, is refused before anything runs. Costs one step.
void checkSceneAndFirstStep(const Scene& scene, const TypeRegistry& registry);

// One run, driven a step at a time: the CLI (runSimulation) and the Python module share this one
// code path, so a run from Python writes what `rodsim run` writes, bit for bit.
//   Session()   builds the world and everything that can reject the input (InputError), before any
//               file is written; then opens the output directory (locked until the process ends)
//   step()      one time step with its timeseries row, frame and checkpoint when due; false once no
//               step follows: the scene's end, or a failure (status "failed", reason in summary())
//   finish()    the last frame, final.csv and summary.json; returns 0 (ok) or 3 (failed). Every way
//               out goes through it; the destructor calls it when the owner did not.
// The Session installs no signal handlers: the CLI's loop turns SIGINT/SIGTERM into interrupt() and
// SIGUSR1 into requestCheckpoint(); a Python interpreter keeps its own Ctrl-C.
// `scene` and `registry` must outlive the Session.
class Session {
 public:
  Session(const Scene& scene, const TypeRegistry& registry, const RunOptions& options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  bool step();
  // Stops the run before its end: a checkpoint of the last step, then status "failed" with `why`
  // and how to continue. The next finish() writes the rest.
  void interrupt(const std::string& why);
  void requestCheckpoint();  // at the end of the next step
  int finish();              // idempotent
  bool finished() const;

  KernelWorld& world();
  const Scene& scene() const;
  const RunSummary& summary() const;
  std::string summaryJson() const;  // summary.json's text for the state now
  long long stepsDone() const;      // steps committed (the timeseries' last step number)
  long long totalSteps() const;
  const std::string& outputDir() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Builds the world, runs the time loop and writes the output. Returns 0 (ok) or 3 (the
// simulation failed; everything up to the failure is written). Throws InputError for bad input
// found while building components (before any file is written). SIGINT and SIGTERM stop the run
// between steps with a checkpoint, SIGUSR1 writes one; the previous handlers come back after.
int runSimulation(const Scene& scene, const TypeRegistry& registry, const RunOptions& options);

}  // namespace rodsim::kernel
