// bench_plectoneme: cost per step of rodsim on PyElastica's 150-element self-contacting plectoneme
// (scenes/cosserat/plectoneme_pyelastica.toml: cosserat + position-verlet + spring-dashpot, the
// self-contact of Gazzola et al. (2018), Eqs. 36-37). It prints no ratio: the ratio to PyElastica is
// measured with both run side by side (benchmarks/pyelastica_plectoneme.sh, benchmarks/README.md).
//
// It steps the world as `rodsim run` does (keepStepStart, the solver's step, the swept check of the
// contact model), in two phases: from t = 0 (the straight rod being twisted: no contact yet) and,
// after advancing untimed to t = --advance seconds, in the coiled plectoneme (contacts active). Each
// phase: 200 warm-up steps, then --blocks blocks of --steps steps timed by process CPU time; it prints
// the median us per step (and per element-step), the active contact pairs and the smallest gap at the
// end, and the heap allocations during the timed steps (must be 0).
//
// --restart DIR starts the coiled phase from the newest checkpoint of a run of the same scene instead
// of advancing (e.g. `rodsim run scenes/cosserat/plectoneme_pyelastica.toml --set simulation.duration=25
// --set output.checkpoint_every=25 --output DIR`; benchmarks/README.md).
//
// Usage: bench_plectoneme [--scene FILE] [--steps S] [--blocks B] [--advance T] [--phase start|coiled|both]
//                         [--restart DIR] [--set KEY=VALUE]...
#include <rodsim/kernel/process_memory.h>
#include <rodsim/kernel/checkpoint.h>
#include <rodsim/kernel/registry.h>
#include <rodsim/kernel/scene.h>
#include <rodsim/kernel/world.h>

#include "bench_timing.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include <time.h>

#include "allocation_counter.h"  // g_allocations

using namespace rodsim;
using namespace rodsim::kernel;

namespace {

double cpuUs() { return 1e6 * bench_timing::cpuSeconds(); }

Crossing g_crossing;
std::string g_who;

void step(KernelWorld& world, double dt) {
  world.keepStepStart();
  const StepReport r = world.solver().step(world, dt);
  if (!r.ok) {
    std::fprintf(stderr, "bench_plectoneme: step failed at t = %g s: %s\n", world.time(), r.message.c_str());
    std::exit(3);
  }
  if (world.rejectCrossedStep(g_crossing, g_who)) {
    std::fprintf(stderr, "bench_plectoneme: crossing at t = %g s (%s)\n", world.time(), g_who.c_str());
    std::exit(3);
  }
}

void phase(KernelWorld& world, double dt, int steps, int blocks, int elements, const char* name) {
  for (int k = 0; k < 200; ++k) step(world, dt);
  std::vector<double> us;
  us.reserve(blocks);
  const double t0 = world.time();
  const long alloc0 = g_allocations.load();
  for (int b = 0; b < blocks; ++b) {
    const double c0 = cpuUs();
    for (int k = 0; k < steps; ++k) step(world, dt);
    us.push_back((cpuUs() - c0) / steps);
  }
  const long allocations = g_allocations.load() - alloc0;
  std::sort(us.begin(), us.end());
  const double med = us[us.size() / 2];
  int active = 0;
  double gap = INFINITY;
  for (int c = 0; c < world.numContacts(); ++c) {
    active += world.contact(c).stats().active;
    gap = std::min(gap, world.contact(c).stats().min_gap);
  }
  std::printf("%s (t = %.2f-%.2f s): %.2f us per step (median of %d blocks of %d; min %.2f, max %.2f), "
              "%.1f ns per element-step; %d pairs in contact, min gap %.3g m; heap allocations: %ld\n",
              name, t0, world.time(), med, blocks, steps, us.front(), us.back(), 1e3 * med / elements, active, gap,
              allocations);
}

}  // namespace

int main(int argc, char** argv) {
  rodsim::keepFreedMemoryInProcess();  // as the rodsim command does
  std::string scene_file = "scenes/cosserat/plectoneme_pyelastica.toml", which = "both", restart;
  int steps = 5000, blocks = 5;
  double advance = 20.0;
  std::vector<std::string> sets;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--scene") scene_file = argv[i + 1];
    else if (a == "--steps") steps = std::max(1, std::atoi(argv[i + 1]));
    else if (a == "--blocks") blocks = std::max(1, std::atoi(argv[i + 1]));
    else if (a == "--advance") advance = std::atof(argv[i + 1]);
    else if (a == "--phase") which = argv[i + 1];
    else if (a == "--set") sets.emplace_back(argv[i + 1]);
    else if (a == "--restart") restart = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: bench_plectoneme [--scene FILE] [--steps S] [--blocks B] [--advance T] "
                           "[--phase start|coiled|both] [--restart DIR] [--set KEY=VALUE]...\n");
      return 2;
    }
  }
  try {
    TypeRegistry registry;
    loadPlugins(registry, {});
    Scene scene = loadScene(scene_file, sets, registry);
    KernelWorld world(scene, registry);
    int elements = 0;
    for (int r = 0; r < world.numRods(); ++r) elements += world.rod(r).numEdges();
    const double dt = scene.dt;
    std::printf("%s: %d elements, dt = %.6g s\n", scene_file.c_str(), elements, dt);
    if (which == "start" || which == "both") phase(world, dt, steps, blocks, elements, "start (straight, twisting)");
    if (which == "coiled" || which == "both") {
      if (!restart.empty()) {
        const Checkpoint c = readLatestCheckpoint(restart);
        if (c.q.size() != world.q().size()) throw std::runtime_error("--restart: the checkpoint is of another scene");
        world.restore(c.t, c.q, c.v, c.residual, c.states);
        std::printf("restarted from %s at t = %.2f s\n", restart.c_str(), world.time());
      } else {
        const double c0 = cpuUs();
        while (world.time() < advance - 0.5 * dt) step(world, dt);
        std::printf("advanced to t = %.2f s in %.1f s CPU\n", world.time(), 1e-6 * (cpuUs() - c0));
      }
      phase(world, dt, steps, blocks, elements, "coiled (plectoneme)");
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_plectoneme: %s\n", e.what());
    return 1;
  }
}
