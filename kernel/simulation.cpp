// The time loop: step the solver, probe, write, report progress, stop cleanly on failure.
#include "simulation.h"

#include "checkpoint.h"
#include "output.h"

#include <fmt/format.h>

#include <chrono>
#include <functional>
#include <cmath>
#include <filesystem>
#include <memory>
#include <csignal>
#include <unistd.h>

namespace rodsim::kernel {

namespace {

// The last of SIGINT, SIGTERM, SIGUSR1 received; the time loop acts on it between steps.
volatile std::sig_atomic_t g_signal = 0;
extern "C" void onSignal(int sig) { g_signal = sig; }

double component(const Vec3& v, const std::string& c) {
  if (c == "x") return v.x();
  if (c == "y") return v.y();
  if (c == "z") return v.z();
  return v.norm();
}

// Probes are resolved once against the world; evaluation then only reads vectors.
struct Probe {
  const ProbeSpec* spec;
  Rod* rod = nullptr;
  int node = -1;
  const Constraint* constraint = nullptr;

  double value(KernelWorld& w) const {
    if (spec->type == "constraint-force") {
      Vec3 f = Vec3::Zero();
      for (int d : constraint->positionDofs()) f += w.residual().segment<3>(d);
      return component(f, spec->component);
    }
    if (spec->type == "kinetic-energy") {  // translational, of the rod's nodes (e.g. E_T of the Cosserat seed, Fig. 14)
      const int k0 = spec->component == "norm" ? 0 : spec->component == "x" ? 0 : spec->component == "y" ? 1 : 2;
      const int k1 = spec->component == "norm" ? 3 : k0 + 1;
      double E = 0;
      for (int i = 0; i < rod->numNodes(); ++i) {
        const int d = rod->globalPositionDof(i);
        for (int k = k0; k < k1; ++k) E += 0.5 * w.mass()[d + k] * w.v()[d + k] * w.v()[d + k];
      }
      return E;
    }
    const int d = rod->globalPositionDof(node);
    if (spec->type == "node-position") return component(w.q().segment<3>(d), spec->component);
    if (spec->type == "node-velocity") return component(w.v().segment<3>(d), spec->component);
    // end-to-end
    const Vec3 e = w.q().segment<3>(rod->globalPositionDof(rod->numNodes() - 1)) - w.q().segment<3>(rod->globalPositionDof(0));
    return component(e, spec->component);
  }
};

std::vector<Probe> resolveProbes(const Scene& scene, KernelWorld& world) {
  std::vector<Probe> out;
  for (const auto& p : scene.probes) {
    Probe probe{&p};
    if (p.type == "constraint-force") {
      for (const auto& c : world.constraints())
        if (c.spec->name == p.constraint) probe.constraint = c.object.get();
    } else {
      probe.rod = world.findRod(p.rod);
      probe.node = probe.rod->resolveNode(p.node);
      if (probe.node < 0)
        throw InputError(fmt::format("{}: probe '{}': node {} is out of range for rod '{}' with {} nodes",
                                     p.keys.count("node") ? p.keys.at("node").text : p.where.text, p.name, p.node, p.rod,
                                     probe.rod->numNodes()));
    }
    out.push_back(probe);
  }
  return out;
}

bool finite(const Vec& v) { return v.allFinite(); }

std::string formatDuration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  if (s < 60) return fmt::format("{:.0f}s", s);
  if (s < 3600) return fmt::format("{:.0f}m{:02.0f}s", std::floor(s / 60), std::fmod(s, 60));
  return fmt::format("{:.0f}h{:02.0f}m", std::floor(s / 3600), std::fmod(s / 60, 60));
}

}  // namespace

void checkScene(const Scene& scene, const TypeRegistry& registry) {
  KernelWorld world(scene, registry);
  resolveProbes(scene, world);
}

int runSimulation(const Scene& scene, const TypeRegistry& registry, const RunOptions& options) {
  using Clock = std::chrono::steady_clock;
  // Everything that can reject the input happens before the output directory is touched.
  KernelWorld world(scene, registry);
  std::vector<Probe> probes = resolveProbes(scene, world);
  // timeseries.csv: probes, then the contact models' and forces' own columns.
  std::vector<std::string> probe_names;
  for (const auto& p : probes) probe_names.push_back(p.spec->name);
  const std::vector<std::string> report_columns = world.reportColumns();
  probe_names.insert(probe_names.end(), report_columns.begin(), report_columns.end());

  const std::string out_dir = options.output_dir.empty() ? scene.output.dir : options.output_dir;
  const std::string identity = checkpointIdentity(world, registry, options.scene_text, options.overrides);
  RunSummary summary;
  long long first_step = 1;
  double last_frame_time = 0.0, next_frame = scene.output.every;
  std::unique_ptr<OutputWriter> writer;
  if (options.restart) {
    const Checkpoint& c = *options.restart;
    if (c.identity != identity)
      throw InputError(fmt::format("--restart {}: the checkpoint was written by another setup and cannot be continued "
                                   "bit for bit.\ncheckpoint:\n{}this run:\n{}",
                                   out_dir, c.identity, identity));
    world.restore(c.t, c.q, c.v, c.residual, c.states);
    summary = c.summary;
    first_step = c.step + 1;
    last_frame_time = c.last_frame_time;
    next_frame = c.next_frame;
    writer = std::make_unique<OutputWriter>(scene, out_dir, c.step, c.frame_times);
  } else {
    writer = std::make_unique<OutputWriter>(scene, out_dir, probe_names);
  }
  OutputWriter& out = *writer;
  summary.status = "running";
  summary.reason.clear();
  out.writeSummary(summary, world);

  const bool progress = options.progress && isatty(STDOUT_FILENO);
  g_signal = 0;
  auto previous_int = std::signal(SIGINT, onSignal);
  auto previous_term = std::signal(SIGTERM, onSignal);
  auto previous_usr1 = std::signal(SIGUSR1, onSignal);

  const long long total_steps = std::max<long long>(1, std::llround(std::ceil(scene.duration / scene.dt - 1e-9)));
  const auto run_start = Clock::now();
  const double wall_before = summary.wall_time_s;  // of the interrupted part, on restart
  auto last_progress = run_start, last_checkpoint_wall = run_start;
  double next_checkpoint = scene.output.checkpoint_every > 0
                               ? (std::floor(world.time() / scene.output.checkpoint_every + 1e-9) + 1) * scene.output.checkpoint_every
                               : std::numeric_limits<double>::infinity();
  std::vector<double> probe_values(probes.size()), report_values;
  summary.report_sums.resize(report_columns.size(), 0.0);
  auto sample = [&] {
    probe_values.resize(probes.size());
    for (std::size_t i = 0; i < probes.size(); ++i) probe_values[i] = probes[i].value(world);
    world.reportValues(report_values);
    probe_values.insert(probe_values.end(), report_values.begin(), report_values.end());
  };
  if (!options.restart) {
    sample();
    // Step 0 is the initial state: its min_gap is the deepest initial overlap a contact allowed
    // (allow_initial_overlap = true), and the summary's min_gap includes it. Without one it stays
    // what the contacts report before their first evaluation (nothing: an empty cell).
    ContactStats initial = world.contactStats();
    initial.min_gap = std::min(initial.min_gap, world.initialOverlapGap());
    summary.min_gap = std::min(summary.min_gap, initial.min_gap);
    out.writeRow(0, 0.0, 0, 0.0, initial, world.kineticEnergy(), world.elasticEnergy(), probe_values);
    out.writeFrame(world);
  }
  auto checkpoint = [&](long long step) {
    Checkpoint c;
    c.identity = identity;
    c.scene_file = std::filesystem::absolute(scene.file).string();
    c.overrides = options.overrides;
    c.step = step;
    c.t = world.time();
    c.next_frame = next_frame;
    c.last_frame_time = last_frame_time;
    c.frame_times = out.frameTimes();
    c.summary = summary;
    c.summary.wall_time_s = wall_before + std::chrono::duration<double>(Clock::now() - run_start).count();
    c.q = world.q();
    c.v = world.v();
    c.residual = world.residual();
    c.states = world.saveStates();
    writeCheckpoint(out.dir(), c, scene.output.checkpoint_keep);
    last_checkpoint_wall = Clock::now();
  };

  // One solver step; with on_failure = "substep" a failed step is retried as two half steps
  // (recursively). The solvers commit nothing when they fail, so a retry starts from the same state.
  std::function<StepReport(KernelWorld&, double, int)> advance = [&](KernelWorld& w, double h, int depth) {
    StepReport report;
    try {
      report = w.solver().step(w, h);
    } catch (const std::exception& e) {
      report.ok = false;
      report.message = e.what();
    }
    if (report.ok && !(finite(w.q()) && finite(w.v())))
      report = {false, report.iterations, report.residual, "the state became NaN or infinite"};
    if (report.ok || !scene.substep_on_failure || depth >= scene.max_step_cuts) {
      if (!report.ok && scene.substep_on_failure)
        report.message += fmt::format(" (after {} halvings of the step)", depth);
      return report;
    }
    ++summary.step_cuts;
    StepReport first = advance(w, 0.5 * h, depth + 1);
    if (!first.ok) return first;
    StepReport second = advance(w, 0.5 * h, depth + 1);
    second.iterations += first.iterations + report.iterations;
    return second;
  };

  auto fail = [&](std::string reason) {
    summary.status = "failed";
    summary.reason = std::move(reason);
  };

  for (long long step = first_step; step <= total_steps; ++step) {
    if (g_signal == SIGINT || g_signal == SIGTERM) {
      const char* name = g_signal == SIGINT ? "SIGINT" : "SIGTERM";
      try {
        checkpoint(step - 1);
        fail(fmt::format("interrupted by {} at t = {:.6g} s; a checkpoint was written: continue with "
                         "`rodsim run --restart {}`", name, world.time(), out.dir()));
      } catch (const OutputError& e) {
        fail(fmt::format("interrupted by {}; the checkpoint could not be written: {}", name, e.what()));
      }
      break;
    }
    const double t_end = std::min(scene.duration, step * scene.dt);
    const double dt = t_end - world.time();
    const auto step_start = Clock::now();
    const StepReport report = advance(world, dt, 0);
    const double wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - step_start).count();
    if (!report.ok) {
      fail(fmt::format("step {} (t = {:.6g} s): {}", step, t_end, report.message));
      break;
    }
    const ContactStats contacts = world.contactStats();
    summary.steps = step;
    summary.sim_time = world.time();
    summary.newton_iterations += report.iterations;
    if (contacts.active > 0) {
      summary.steps_with_contact += 1;
      summary.contact_iterations += report.iterations;
      summary.contact_wall_ms += wall_ms;
    }
    summary.min_gap = std::min(summary.min_gap, contacts.min_gap);
    try {
      sample();
      for (std::size_t i = 0; i < report_values.size(); ++i)
        if (std::isfinite(report_values[i])) summary.report_sums[i] += report_values[i];
      out.writeRow(step, world.time(), report.iterations, wall_ms, contacts, world.kineticEnergy(),
                   world.elasticEnergy(), probe_values);
      if (scene.output.every > 0 && world.time() >= next_frame - 1e-9 * scene.dt) {
        out.writeFrame(world);
        last_frame_time = world.time();
        next_frame += scene.output.every;
      }
      const bool wall_due = scene.output.checkpoint_wall > 0 &&
                            std::chrono::duration<double>(Clock::now() - last_checkpoint_wall).count() >= scene.output.checkpoint_wall;
      if (world.time() >= next_checkpoint - 1e-9 * scene.dt || wall_due || g_signal == SIGUSR1) {
        if (g_signal == SIGUSR1) g_signal = 0;
        checkpoint(step);
        while (next_checkpoint <= world.time() + 1e-9 * scene.dt) next_checkpoint += scene.output.checkpoint_every;
      }
    } catch (const OutputError& e) {
      fail(fmt::format("step {} (t = {:.6g} s): {}", step, t_end, e.what()));
      break;
    }
    if (progress) {
      const auto now = Clock::now();
      if (now - last_progress > std::chrono::milliseconds(200) || step == total_steps) {
        last_progress = now;
        const double wall = std::chrono::duration<double>(now - run_start).count();
        const double rate = step / std::max(wall, 1e-9);
        std::printf("\r  t = %.4g / %.4g s  %3.0f%%  %.1f steps/s  %.2f it/step  %s left   ", world.time(),
                    scene.duration, 100.0 * step / total_steps, rate,
                    double(summary.newton_iterations) / double(step), formatDuration((total_steps - step) / rate).c_str());
        std::fflush(stdout);
      }
    }
  }
  if (progress) std::printf("\n");
  std::signal(SIGINT, previous_int);
  std::signal(SIGTERM, previous_term);
  std::signal(SIGUSR1, previous_usr1);

  if (summary.status == "running") summary.status = "ok";
  // The last committed state is always written, also after a failure.
  try {
    if (world.time() != last_frame_time) out.writeFrame(world);
    out.writeFinal(world);
  } catch (const OutputError& e) {
    if (summary.status == "ok") fail(e.what());
  }
  summary.wall_time_s = wall_before + std::chrono::duration<double>(Clock::now() - run_start).count();
  try {
    out.writeSummary(summary, world);
  } catch (const OutputError& e) {
    std::fprintf(stderr, "rodsim: %s\n", e.what());
    if (summary.status == "ok") fail(e.what());
  }
  if (!options.quiet) {
    if (summary.status == "ok")
      std::printf("rodsim: '%s' done: %lld steps, %.3g s simulated, %.2f s wall, %.2f iterations/step -> %s\n",
                  scene.name.c_str(), summary.steps, summary.sim_time, summary.wall_time_s,
                  summary.steps ? double(summary.newton_iterations) / summary.steps : 0.0, out.dir().c_str());
    else
      std::fprintf(stderr, "rodsim: '%s' failed: %s (output up to the failure is in %s)\n", scene.name.c_str(),
                   summary.reason.c_str(), out.dir().c_str());
  }
  return summary.status == "ok" ? 0 : 3;
}

}  // namespace rodsim::kernel
