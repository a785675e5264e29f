// The time loop: step the solver, probe, write, report progress, stop cleanly on failure.
#include "simulation.h"

#include "output.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <unistd.h>

namespace rodsim::kernel {

namespace {

volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void onInterrupt(int) { g_interrupted = 1; }

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

int runSimulation(const Scene& scene, const TypeRegistry& registry, const RunOptions& options) {
  using Clock = std::chrono::steady_clock;
  // Everything that can reject the input happens before the output directory is touched.
  KernelWorld world(scene, registry);
  std::vector<Probe> probes = resolveProbes(scene, world);
  std::vector<std::string> probe_names;
  for (const auto& p : probes) probe_names.push_back(p.spec->name);

  OutputWriter out(scene, options.output_dir.empty() ? scene.output.dir : options.output_dir, probe_names);
  RunSummary summary;
  out.writeSummary(summary, world);

  const bool progress = options.progress && isatty(STDOUT_FILENO);
  g_interrupted = 0;
  auto previous_handler = std::signal(SIGINT, onInterrupt);

  const long long total_steps = std::max<long long>(1, std::llround(std::ceil(scene.duration / scene.dt - 1e-9)));
  const auto run_start = Clock::now();
  auto last_progress = run_start;
  std::vector<double> probe_values(probes.size());
  auto sample = [&] {
    for (std::size_t i = 0; i < probes.size(); ++i) probe_values[i] = probes[i].value(world);
  };
  sample();
  out.writeRow(0, 0.0, 0, 0.0, world.contactStats(), world.kineticEnergy(), world.elasticEnergy(), probe_values);
  out.writeFrame(world);
  double last_frame_time = 0.0;
  double next_frame = scene.output.every;

  auto fail = [&](std::string reason) {
    summary.status = "failed";
    summary.reason = std::move(reason);
  };

  for (long long step = 1; step <= total_steps; ++step) {
    if (g_interrupted) {
      fail("interrupted by the user (SIGINT)");
      break;
    }
    const double t_end = std::min(scene.duration, step * scene.dt);
    const double dt = t_end - world.time();
    const auto step_start = Clock::now();
    StepReport report;
    try {
      report = world.solver().step(world, dt);
    } catch (const std::exception& e) {
      report.ok = false;
      report.message = e.what();
    }
    const double wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - step_start).count();
    if (report.ok && !(finite(world.q()) && finite(world.v())))
      report = {false, report.iterations, report.residual, "the state became NaN or infinite"};
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
    sample();
    out.writeRow(step, world.time(), report.iterations, wall_ms, contacts, world.kineticEnergy(), world.elasticEnergy(),
                 probe_values);
    if (scene.output.every > 0 && world.time() >= next_frame - 1e-9 * scene.dt) {
      out.writeFrame(world);
      last_frame_time = world.time();
      next_frame += scene.output.every;
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
  std::signal(SIGINT, previous_handler);

  if (summary.status == "running") summary.status = "ok";
  // The last committed state is always written, also after a failure.
  if (world.time() != last_frame_time) out.writeFrame(world);
  out.writeFinal(world);
  summary.wall_time_s = std::chrono::duration<double>(Clock::now() - run_start).count();
  out.writeSummary(summary, world);
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
