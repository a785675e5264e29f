// The time loop: step the solver, probe, write, report progress, stop cleanly on failure.
//
// Session::Impl is the run; runSimulation (the CLI) and the Python module drive it. Its parts, in
// the order of a run:
//   Impl()            everything that can reject the input (world, probes, restart identity), before
//                     any file is written; then the output directory (fresh or continued)
//   begin()           step 0 (the initial state's row and frame), at the first step() or finish()
//   step()            one step: advance() -> record() -> writeOutputs() -> progress
//   advance()         one solver step, halved on failure when the scene asks for it (on_failure)
//   record()          the summary's counters and the timeseries row of the step
//   writeOutputs()    the VTK frame and the checkpoint() when they are due
//   finish()          the last frame, final.csv, summary.json and the exit status, whatever ended the
//                     steps (the end, a failed step, a signal, a full disk, an exception from a plugin)
#include <rodsim/kernel/simulation.h>

#include <rodsim/kernel/checkpoint.h>
#include <rodsim/kernel/output.h>
#include "probes.h"
#include <rodsim/kernel/run_directory.h>

#include <fmt/format.h>

#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <unistd.h>

namespace rodsim::kernel {

namespace {

using Clock = std::chrono::steady_clock;

// Requests from signals, acted on between steps. A stop (SIGINT, SIGTERM) is never overwritten by a
// later checkpoint request (SIGUSR1): each has its own flag. A second stop while the first waits for
// the step to end takes the signal's default action (the process ends at once, like kill -9: the
// last checkpoint stays restartable).
volatile std::sig_atomic_t g_stop_signal = 0;
volatile std::sig_atomic_t g_checkpoint_requested = 0;
extern "C" void onSignal(int sig) {
  if (sig == SIGUSR1) {
    g_checkpoint_requested = 1;
  } else if (g_stop_signal == 0) {
    g_stop_signal = sig;
  } else {
    std::signal(sig, SIG_DFL);
    std::raise(sig);
  }
}

// Every entry of the state (q and v, one size) finite, in one pass run after every step. For each
// entry (bits & exponent) + the exponent's lowest bit carries into bit 63 exactly when the exponent
// is all ones (NaN, +-inf); the entries' results are OR-ed. Integer AND, ADD and OR, each lane on
// its own: the loop runs at the speed of its loads. (The sum of x * 0 it replaces was one chain of
// dependent floating-point additions, 7 % of a 100-element Cosserat run; Eigen's allFinite tests
// entry by entry.) Compiled for AVX-512 and AVX2 as well, as the plugins' hot loops.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
bool finiteState(const double* __restrict q, const double* __restrict v, Eigen::Index n) {
  constexpr std::uint64_t kExponent = 0x7ff0000000000000ull, kExponentLsb = 0x0010000000000000ull;
  std::uint64_t bad = 0;
  for (Eigen::Index i = 0; i < n; ++i)
    bad |= ((std::bit_cast<std::uint64_t>(q[i]) & kExponent) + kExponentLsb) |
           ((std::bit_cast<std::uint64_t>(v[i]) & kExponent) + kExponentLsb);
  return (bad >> 63) == 0;
}

// A state whose energies overflowed: the run stops (exit 3) with the reason.
class StateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A finite state can still overflow what is computed from it (a speed of 1e200 m/s is finite, its
// kinetic energy is not): such energies would be written as empty cells, a run that looks fine.
// Checked where the energies are computed anyway (every timeseries row), so it costs no step time.
void checkEnergies(long long step, double t, double kinetic, double elastic) {
  if (std::isfinite(kinetic) && std::isfinite(elastic)) return;
  throw StateError(fmt::format("step {} (t = {:.6g} s): the {} energy is {} (the state overflows double precision: "
                               "a speed or a deformation far too large); the run stops rather than write it",
                               step, t, std::isfinite(kinetic) ? "elastic" : "kinetic",
                               std::isfinite(kinetic) ? elastic : kinetic));
}

// The first multiple of `period` after t (infinity for period 0). Computed, not stepped to: the
// scene guarantees period >= dt, and a computed value cannot loop.
double nextMultiple(double t, double period) {
  if (!(period > 0)) return std::numeric_limits<double>::infinity();
  return (std::floor(t / period + 1e-9) + 1) * period;
}

std::string formatDuration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  if (s < 60) return fmt::format("{:.0f}s", s);
  if (s < 3600) return fmt::format("{:.0f}m{:02.0f}s", std::floor(s / 60), std::fmod(s, 60));
  return fmt::format("{:.0f}h{:02.0f}m", std::floor(s / 3600), std::fmod(s / 60, 60));
}

// Why a step the swept check rejected failed (run's advance() and check's dry step).
std::string crossingMessage(const Crossing& c, const std::string& who, double t_start, double h) {
  const double t_cross = t_start + c.time_fraction * h;
  const std::string what =
      c.edge_b >= 0 ? fmt::format("rods '{}' (edge {}) and '{}' (edge {}) passed through each other", c.rod_a, c.edge_a,
                                  c.rod_b, c.edge_b)
                    : fmt::format("rod '{}' (node {}) passed through obstacle '{}'", c.rod_a, c.edge_a, c.rod_b);
  return fmt::format("{} at t = {:.6g} s ({:.3g} of the step of {:.3g} s), unseen by the discrete contact detection "
                     "of {}; use a smaller dt or on_failure = \"substep\"",
                     what, t_cross, c.time_fraction, h, who);
}

// SIGINT, SIGTERM and SIGUSR1 go to onSignal while a run lives; the previous handlers come back after.
class SignalScope {
 public:
  SignalScope() {
    g_stop_signal = 0;
    g_checkpoint_requested = 0;
    previous_int_ = std::signal(SIGINT, onSignal);
    previous_term_ = std::signal(SIGTERM, onSignal);
    previous_usr1_ = std::signal(SIGUSR1, onSignal);
  }
  ~SignalScope() {
    std::signal(SIGINT, previous_int_);
    std::signal(SIGTERM, previous_term_);
    std::signal(SIGUSR1, previous_usr1_);
  }
  SignalScope(const SignalScope&) = delete;
  SignalScope& operator=(const SignalScope&) = delete;

 private:
  void (*previous_int_)(int) = nullptr;
  void (*previous_term_)(int) = nullptr;
  void (*previous_usr1_)(int) = nullptr;
};

// Session::Impl::advance, and `rodsim check`'s first step (summary null: nothing counted): the
// solver's step, the finiteness and swept checks, and the halvings of on_failure = "substep".
StepReport advanceChecked(KernelWorld& world, const Scene& scene, double h, int depth, RunSummary* summary) {
  const double t_start = world.time();
  world.keepStepStart();  // the start state, to undo a step the swept check rejects (the solver committed it)
  StepReport report;
  bool crossed = false;
  try {
    report = world.solver().step(world, h);
  } catch (const std::exception& e) {
    report.ok = false;
    report.message = e.what();
  }
  if (report.ok) {
    const double* q = world.q().data();
    const double* v = world.v().data();
    std::atomic<bool> finite{true};  // blocks of the state over the run's threads, their verdicts ANDed
    parallelForBlocks(&world, static_cast<int>(world.q().size()), 16384, [&](int b, int e) {
      if (!finiteState(q + b, v + b, e - b)) finite.store(false, std::memory_order_relaxed);
    });
    if (!finite.load(std::memory_order_relaxed))
      report = {false, report.iterations, report.residual, "the state became NaN or infinite"};
  }
  if (report.ok && world.hasSweptChecks()) {
    Crossing crossing;
    std::string who;
    try {
      crossed = world.rejectCrossedStep(crossing, who);  // restores the start state
    } catch (const std::exception& e) {
      report = {false, report.iterations, report.residual, e.what()};
    }
    if (crossed) report = {false, report.iterations, report.residual, crossingMessage(crossing, who, t_start, h)};
  }
  // A step the solver abandoned on a stop request (StopRequests) is not cut: the run stops.
  if (report.ok || !scene.substep_on_failure || depth >= scene.max_step_cuts || world.stopRequested()) {
    if (!report.ok && scene.substep_on_failure) report.message += fmt::format(" (after {} halvings of the step)", depth);
    return report;
  }
  if (summary) {
    ++summary->step_cuts;
    if (crossed) ++summary->steps_cut_for_crossing;
  }
  StepReport first = advanceChecked(world, scene, 0.5 * h, depth + 1, summary);
  if (!first.ok) return first;
  StepReport second = advanceChecked(world, scene, 0.5 * h, depth + 1, summary);
  second.iterations += first.iterations + report.iterations;
  return second;
}

}  // namespace

class Session::Impl {
 public:
  Impl(const Scene& scene, const TypeRegistry& registry, const RunOptions& options);
  bool step();
  void interrupt(const std::string& why);
  void requestCheckpoint() { checkpoint_requested_ = true; }
  int finish();
  bool finished() const { return finished_; }
  KernelWorld& world() { return world_; }
  const Scene& scene() const { return scene_; }
  const RunSummary& summary() const { return summary_; }
  std::string summaryJson() const {
    RunSummary s = summary_;
    s.wall_time_s = elapsed();
    return out_->summaryText(s, world_);
  }
  long long stepsDone() const { return next_step_ - 1; }
  long long totalSteps() const { return total_steps_; }
  const std::string& outputDir() const { return out_->dir(); }

 private:
  void begin();
  StepReport advance(double h, int depth);
  bool record(long long step, const StepReport& report, double wall_ms, Clock::time_point now);
  bool writeOutputs(long long step, Clock::time_point now);
  void checkpoint(long long step);
  void showProgress(long long step);
  void sample();
  void fail(std::string reason) {
    summary_.status = "failed";
    summary_.reason = std::move(reason);
  }
  // Wall time of the run: the interrupted part's (on restart) plus the time spent inside step(),
  // begin() and finish(), so that a Python program pausing between steps does not count.
  double elapsed() const { return wall_before_ + wall_in_steps_; }

  const Scene& scene_;
  const RunOptions options_;  // a copy: the Python module builds its options in a temporary
  KernelWorld world_;
  std::vector<Probe> probes_;
  std::vector<std::string> report_columns_;
  std::string identity_;
  RunSummary summary_;
  long long first_step_ = 1, total_steps_ = 1, next_step_ = 1;
  long long row_stride_ = 1;  // steps between timeseries rows (OutputSpec::rowStride)
  bool started_ = false, finished_ = false, checkpoint_requested_ = false;
  std::string stopped_in_step_;  // the solver's message when a step was abandoned on a stop request
  double last_frame_time_ = 0.0, next_frame_ = 0.0, next_checkpoint_ = 0.0;
  std::unique_ptr<RunDirectory> directory_;
  std::unique_ptr<OutputWriter> out_;
  bool progress_ = false;
  Clock::time_point run_start_, last_progress_, last_checkpoint_wall_;
  double wall_before_ = 0;  // of the interrupted part, on restart
  double wall_in_steps_ = 0;
  std::vector<double> probe_values_, report_values_;
};

Session::Impl::Impl(const Scene& scene, const TypeRegistry& registry, const RunOptions& options)
    : scene_(scene), options_(options), world_(scene, registry), next_frame_(scene.output.every) {
  // Everything that can reject the input happens before the output directory is touched.
  probes_ = resolveProbes(scene, world_);
  // timeseries.csv: probes, then the contact models' and forces' own columns.
  std::vector<std::string> columns;
  for (const auto& p : probes_) columns.push_back(p.spec->name);
  report_columns_ = world_.reportColumns();
  columns.insert(columns.end(), report_columns_.begin(), report_columns_.end());

  const std::string out_dir = options.output_dir.empty() ? scene.output.dir : options.output_dir;
  identity_ = checkpointIdentity(world_, registry, options.scene_text, options.overrides, scene.referenced_files);
  const std::string identity_hash = fmt::format("{:016x}", fnv1a(identity_));
  total_steps_ = std::max<long long>(1, std::llround(std::ceil(scene.duration / scene.dt - 1e-9)));
  row_stride_ = scene.output.rowStride(total_steps_, scene.dt);
  directory_ = std::make_unique<RunDirectory>(out_dir);  // locked from here until finish()
  if (options.restart) {
    const Checkpoint& c = *options.restart;
    if (c.identity != identity_)
      throw InputError(fmt::format("--restart {}: the checkpoint was written by another setup and cannot be continued "
                                   "bit for bit.\ncheckpoint:\n{}this run:\n{}",
                                   out_dir, c.identity, identity_));
    const double t_expected = std::min(scene.duration, double(c.step) * scene.dt);
    if (c.step > total_steps_ || !(std::abs(c.t - t_expected) <= 1e-6 * scene.dt))
      throw InputError(fmt::format("--restart {}: the checkpoint's step {} at t = {} does not fit this scene ({} steps "
                                   "of {} s)",
                                   out_dir, c.step, c.t, total_steps_, scene.dt));
    world_.restore(c.t, c.q, c.v, c.residual, c.states);
    summary_ = c.summary;
    first_step_ = c.step + 1;
    last_frame_time_ = c.last_frame_time;
    next_frame_ = c.next_frame;
    // Rows of steps 0, stride, 2 stride, ... up to the checkpoint's step, and of the last step.
    const long long last_row = c.step == total_steps_ ? c.step : c.step - c.step % row_stride_;
    const long long rows = c.step / row_stride_ + 1 + (last_row % row_stride_ != 0 ? 1 : 0);
    out_ = std::make_unique<OutputWriter>(scene, out_dir, rows, last_row, c.frame_times);
    summary_.report_rows = rows - 1;
  } else {
    summary_.run_id = directory_->startNewRun(identity_hash, options.replace_output);
    out_ = std::make_unique<OutputWriter>(scene, out_dir, columns);
  }
  // Room for the files a run writes last, kept free while it runs: summary.json and final.csv
  // reach the disk even when the run filled it.
  directory_->reserveSpace(64 * 1024 + 400 * std::uintmax_t(world_.q().size()));
  summary_.identity = identity_hash;
  summary_.status = "running";
  summary_.reason.clear();
  out_->writeSummary(summary_, world_);
  progress_ = options.progress && isatty(STDOUT_FILENO);
  wall_before_ = summary_.wall_time_s;
  next_checkpoint_ = nextMultiple(world_.time(), scene.output.checkpoint_every);
  next_step_ = first_step_;
  probe_values_.resize(probes_.size());
  summary_.report_sums.resize(report_columns_.size(), 0.0);
  run_start_ = last_progress_ = last_checkpoint_wall_ = Clock::now();
}

// The probes' values, then the contact models' and forces' own report values, into probe_values_.
void Session::Impl::sample() {
  probe_values_.resize(probes_.size());
  for (std::size_t i = 0; i < probes_.size(); ++i) probe_values_[i] = probes_[i].value(world_);
  world_.reportValues(report_values_);
  probe_values_.insert(probe_values_.end(), report_values_.begin(), report_values_.end());
}

// Step 0, the initial state (a restart continues after its checkpoint's step instead).
void Session::Impl::begin() {
  started_ = true;
  if (options_.restart) return;
  sample();
  // Step 0 is the initial state: its min_gap is the deepest initial overlap a contact allowed
  // (allow_initial_overlap = true), and the summary's min_gap includes it. Without one it stays
  // what the contacts report before their first evaluation (nothing: an empty cell).
  ContactStats initial = world_.contactStats();
  initial.min_gap = std::min(initial.min_gap, world_.initialOverlapGap());
  summary_.min_gap = std::min(summary_.min_gap, initial.min_gap);
  const double kinetic = world_.kineticEnergy(), elastic = world_.elasticEnergy();
  checkEnergies(0, world_.time(), kinetic, elastic);
  out_->writeRow(0, 0.0, 0, 0.0, initial, kinetic, elastic, probe_values_, Clock::now());
  out_->writeFrame(world_);
}

bool Session::Impl::step() {
  if (finished_ || summary_.status != "running" || next_step_ > total_steps_) return false;
  // Two clock reads per step where nothing is written (about 20 ns each here, 2 % of a 50-element
  // Cosserat step): the start, and the end of the solver step, which also ends the call when no row,
  // frame or checkpoint followed (the bookkeeping in between is a few comparisons).
  const auto call_start = Clock::now();
  auto call_end = call_start;
  bool call_end_known = false;  // call_end is the end of the call (nothing was written after the step)
  const long long step = next_step_;
  const double t_end = std::min(scene_.duration, step * scene_.dt);
  try {
    const bool was_started = started_;
    if (!started_) begin();
    const auto step_start = was_started ? call_start : Clock::now();
    const StepReport report = advance(t_end - world_.time(), 0);
    call_end = Clock::now();
    const double wall_ms = std::chrono::duration<double, std::milli>(call_end - step_start).count();
    if (!report.ok && world_.stopRequested()) {
      // Abandoned on a stop request (the solver checks StopRequests between its linear solves):
      // nothing of this step was committed; the caller's interrupt() ends the run as it does
      // between steps (a checkpoint of the last committed step, everything written so far kept).
      stopped_in_step_ = report.message;
    } else if (!report.ok) {
      fail(fmt::format("step {} (t = {:.6g} s): {}", step, t_end, report.message));
    } else {
      ++next_step_;  // committed: a failure while writing it still counts it
      try {
        const bool wrote = record(step, report, wall_ms, call_end);
        call_end_known = !(writeOutputs(step, call_end) || wrote || progress_);
      } catch (const OutputError& e) {
        fail(fmt::format("step {} (t = {:.6g} s): {}", step, t_end, e.what()));
      }
      showProgress(step);
    }
  } catch (const OutputError& e) {
    fail(e.what());
  } catch (const StateError& e) {  // from record() or begin(): names its step
    fail(e.what());
  } catch (const std::exception& e) {
    fail(fmt::format("internal error at t = {:.6g} s: {}", world_.time(), e.what()));
  }
  if (!call_end_known) call_end = Clock::now();
  wall_in_steps_ += std::chrono::duration<double>(call_end - call_start).count();
  return summary_.status == "running" && next_step_ <= total_steps_;
}

void Session::Impl::interrupt(const std::string& why) {
  if (finished_ || summary_.status != "running") return;
  try {
    if (!started_) begin();
    checkpoint(next_step_ - 1);
    const std::string during =
        stopped_in_step_.empty()
            ? std::string()
            : fmt::format(" (step {} was abandoned: {})", next_step_, stopped_in_step_);
    fail(fmt::format("{} at t = {:.6g} s{}; a checkpoint was written: continue with `rodsim run --restart {}`", why,
                     world_.time(), during, out_->dir()));
  } catch (const OutputError& e) {
    fail(fmt::format("{}; the checkpoint could not be written: {}", why, e.what()));
  } catch (const std::exception& e) {
    fail(fmt::format("{}; internal error while writing the checkpoint: {}", why, e.what()));
  }
}

// One solver step; with on_failure = "substep" a failed step is retried as two half steps
// (recursively). The solvers commit nothing when they fail, so a retry starts from the same state.
// A step the solver accepted is then checked by every contact offering SweptContactCheck (rods
// passing through each other between the step's ends, which discrete contact detection cannot
// see): a crossing undoes the step (the start state kept here) and fails it like a solver failure.
StepReport Session::Impl::advance(double h, int depth) { return advanceChecked(world_, scene_, h, depth, &summary_); }

// Every step goes into the summary's counts; a timeseries row (energies, probes, report columns:
// the costly part of a small explicit step) is written every row_stride_ steps and at the last
// step, and the summary's report means are over those rows. A row shows its own step's
// iterations, wall time and contacts. Returns whether it wrote a row.
bool Session::Impl::record(long long step, const StepReport& report, double wall_ms, Clock::time_point now) {
  const ContactStats contacts = world_.contactStats();
  summary_.steps = step;
  summary_.sim_time = world_.time();
  summary_.newton_iterations += report.iterations;
  if (contacts.active > 0) {
    summary_.steps_with_contact += 1;
    summary_.contact_iterations += report.iterations;
    summary_.contact_wall_ms += wall_ms;
  }
  summary_.min_gap = std::min(summary_.min_gap, contacts.min_gap);
  if (step % row_stride_ != 0 && step != total_steps_) return false;
  const double kinetic = world_.kineticEnergy(), elastic = world_.elasticEnergy();
  checkEnergies(step, world_.time(), kinetic, elastic);
  sample();
  ++summary_.report_rows;
  for (std::size_t i = 0; i < report_values_.size(); ++i)
    if (std::isfinite(report_values_[i])) summary_.report_sums[i] += report_values_[i];
  out_->writeRow(step, world_.time(), report.iterations, wall_ms, contacts, kinetic, elastic, probe_values_, now);
  return true;
}

// Frames and checkpoints due after this step; `now`: the end of the step. Returns whether it wrote one.
bool Session::Impl::writeOutputs(long long step, Clock::time_point now) {
  bool wrote = false;
  if (scene_.output.every > 0 && world_.time() >= next_frame_ - 1e-9 * scene_.dt) {
    out_->writeFrame(world_);
    last_frame_time_ = world_.time();
    next_frame_ += scene_.output.every;
    wrote = true;
  }
  const bool wall_due = scene_.output.checkpoint_wall > 0 &&
                        std::chrono::duration<double>(now - last_checkpoint_wall_).count() >= scene_.output.checkpoint_wall;
  if (world_.time() >= next_checkpoint_ - 1e-9 * scene_.dt || wall_due || checkpoint_requested_) {
    checkpoint_requested_ = false;
    checkpoint(step);
    next_checkpoint_ = nextMultiple(world_.time(), scene_.output.checkpoint_every);
    wrote = true;
  }
  return wrote;
}

void Session::Impl::checkpoint(long long step) {
  out_->flushRows();  // a restart keeps the rows up to this step: they must be in the file first
  Checkpoint c;
  c.identity = identity_;
  c.run_id = summary_.run_id;
  c.scene_file = std::filesystem::absolute(scene_.file).string();
  c.overrides = options_.overrides;
  c.step = step;
  c.t = world_.time();
  c.next_frame = next_frame_;
  c.last_frame_time = last_frame_time_;
  c.frame_times = out_->frameTimes();
  c.summary = summary_;
  c.summary.wall_time_s = elapsed();
  c.q = world_.q();
  c.v = world_.v();
  c.residual = world_.residual();
  c.states = world_.saveStates();
  writeCheckpoint(out_->dir(), c, scene_.output.checkpoint_keep);
  last_checkpoint_wall_ = Clock::now();
}

void Session::Impl::showProgress(long long step) {
  if (!progress_) return;
  const auto now = Clock::now();
  if (now - last_progress_ <= std::chrono::milliseconds(200) && step != total_steps_) return;
  last_progress_ = now;
  const double wall = std::chrono::duration<double>(now - run_start_).count();
  const double rate = step / std::max(wall, 1e-9);
  std::printf("\r  t = %.4g / %.4g s  %3.0f%%  %.1f steps/s  %.2f it/step  %s left   ", world_.time(), scene_.duration,
              100.0 * step / total_steps_, rate, double(summary_.newton_iterations) / double(step),
              formatDuration((total_steps_ - step) / rate).c_str());
  std::fflush(stdout);
}

// The last committed state is always written, also after a failure; then summary.json.
int Session::Impl::finish() {
  if (finished_) return summary_.status == "ok" ? 0 : 3;
  finished_ = true;
  const auto call_start = Clock::now();
  if (!started_) {
    try {
      begin();
    } catch (const OutputError& e) {
      fail(e.what());
    } catch (const StateError& e) {
      fail(e.what());
    } catch (const std::exception& e) {
      fail(fmt::format("internal error at t = {:.6g} s: {}", world_.time(), e.what()));
    }
  }
  if (progress_) std::printf("\n");
  // Stopped before the scene's end without a failure: the owner (a Python program) ended it early.
  if (summary_.status == "running" && next_step_ <= total_steps_)
    fail(fmt::format("stopped by its caller at t = {:.6g} s, before the scene's end at {:.6g} s", world_.time(),
                     scene_.duration));
  if (summary_.status == "running") summary_.status = "ok";
  directory_->releaseSpace();  // the room kept for the last files
  try {
    out_->flushRows();
  } catch (const OutputError& e) {
    if (summary_.status == "ok") fail(e.what());
  }
  try {
    if (world_.time() != last_frame_time_) out_->writeFrame(world_);
    out_->writeFinal(world_);
  } catch (const OutputError& e) {
    if (summary_.status == "ok") fail(e.what());
  }
  wall_in_steps_ += std::chrono::duration<double>(Clock::now() - call_start).count();
  summary_.wall_time_s = elapsed();
  try {
    out_->writeSummary(summary_, world_);
  } catch (const OutputError& e) {
    std::fprintf(stderr, "rodsim: %s\n", e.what());
    if (summary_.status == "ok") fail(e.what());
  }
  if (!options_.quiet) {
    if (summary_.status == "ok")
      std::printf("rodsim: '%s' done: %lld steps, %.3g s simulated, %.2f s wall, %.2f iterations/step -> %s\n",
                  scene_.name.c_str(), summary_.steps, summary_.sim_time, summary_.wall_time_s,
                  summary_.steps ? double(summary_.newton_iterations) / summary_.steps : 0.0, out_->dir().c_str());
    else
      std::fprintf(stderr, "rodsim: '%s' failed: %s (output up to the failure is in %s)\n", scene_.name.c_str(),
                   summary_.reason.c_str(), out_->dir().c_str());
  }
  directory_.reset();  // nothing more is written: another run (of the same Python program) may use the directory
  return summary_.status == "ok" ? 0 : 3;
}

Session::Session(const Scene& scene, const TypeRegistry& registry, const RunOptions& options)
    : impl_(std::make_unique<Impl>(scene, registry, options)) {}
Session::~Session() {
  if (!impl_->finished()) impl_->finish();  // finish() reports its own failures; it does not throw
}
bool Session::step() { return impl_->step(); }
void Session::interrupt(const std::string& why) { impl_->interrupt(why); }
void Session::requestCheckpoint() { impl_->requestCheckpoint(); }
int Session::finish() { return impl_->finish(); }
bool Session::finished() const { return impl_->finished(); }
KernelWorld& Session::world() { return impl_->world(); }
const Scene& Session::scene() const { return impl_->scene(); }
const RunSummary& Session::summary() const { return impl_->summary(); }
std::string Session::summaryJson() const { return impl_->summaryJson(); }
long long Session::stepsDone() const { return impl_->stepsDone(); }
long long Session::totalSteps() const { return impl_->totalSteps(); }
const std::string& Session::outputDir() const { return impl_->outputDir(); }

void checkScene(const Scene& scene, const TypeRegistry& registry) {
  KernelWorld world(scene, registry);
  resolveProbes(scene, world);
}

void checkSceneAndFirstStep(const Scene& scene, const TypeRegistry& registry) {
  KernelWorld world(scene, registry);
  resolveProbes(scene, world);
  const double h = std::min(scene.duration, scene.dt);
  StepReport report;
  try {
    checkEnergies(0, 0.0, world.kineticEnergy(), world.elasticEnergy());
    report = advanceChecked(world, scene, h, 0, nullptr);
    if (report.ok) checkEnergies(1, world.time(), world.kineticEnergy(), world.elasticEnergy());
  } catch (const StateError& e) {  // what `run` stops on, found here
    report = {false, 0, 0.0, e.what()};
  }
  if (!report.ok)
    throw InputError(fmt::format("{}: solver '{}' ({}): the first step (t = 0 to {:.6g} s) fails, where `rodsim run` "
                                 "would stop: {}",
                                 scene.solver.where.text, scene.solver.name, scene.solver.type, h, report.message));
}

// The CLI's run: the Session's steps with the process's signals turned into requests between steps.
int runSimulation(const Scene& scene, const TypeRegistry& registry, const RunOptions& options) {
  // The handlers first: a stop that arrives while the Session creates its output directory (a sweep
  // killed just then sends its rows SIGTERM) is then a request like any other, answered with a
  // summary and a checkpoint, not the default action that ends the process with nothing written.
  const SignalScope signals;
  Session session(scene, registry, options);
  // Solvers see a stop request during a step (StopRequests) and abandon it: step() then returns
  // true with nothing committed, and the request is acted on here as between steps.
  session.world().watchStopFlag(&g_stop_signal);
  do {
    if (g_stop_signal != 0) {
      session.interrupt(fmt::format("interrupted by {}", g_stop_signal == SIGINT ? "SIGINT" : "SIGTERM"));
      break;
    }
    if (g_checkpoint_requested != 0) {
      g_checkpoint_requested = 0;
      session.requestCheckpoint();
    }
  } while (session.step());
  return session.finish();
}

}  // namespace rodsim::kernel
