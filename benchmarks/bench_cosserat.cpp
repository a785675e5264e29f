// bench_cosserat: CPU cost per element-step of an explicit Cosserat scene's solver step, by default
// PyElastica 0.3.3's Timoshenko cantilever parameter for parameter (benchmarks/scenes/
// pyelastica_timoshenko.toml: 100 elements, dt = 2.1e-3 s; other sizes with --set, as
// benchmarks/bench_vs_pyelastica.sh does).
//
// It builds the scene through the kernel API (plugins from <build>/plugins), takes 100 warm-up
// steps (the first one estimates the stability limit), then times `world.solver().step(world, dt)`
// in blocks and prints the median CPU ns per element-step with the spread of the blocks, and the
// number of heap allocations during the timed steps (counted by a replaced operator new; must be 0).
// It prints no ratio: a ratio to a peer is measured side by side with it, in one session
// (benchmarks/bench_vs_pyelastica.sh), never against a figure from another day.
//
// Usage: bench_cosserat [--steps S] [--blocks B] [--scene FILE] [--set KEY=VALUE]...
#include <rodsim/kernel/process_memory.h>
#include <rodsim/kernel/registry.h>
#include <rodsim/kernel/scene.h>
#include <rodsim/kernel/world.h>

#include "bench_timing.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include <time.h>

#include "allocation_counter.h"  // g_allocations

using namespace rodsim;
using namespace rodsim::kernel;

namespace {

double cpuNs() { return 1e9 * bench_timing::cpuSeconds(); }

// Times `blocks` blocks of `steps` steps of the world's solver after 100 warm-up steps: ns per
// element-step of each block (sorted) and the heap allocations during the timed steps.
struct Timing {
  std::vector<double> ns;  // sorted
  long allocations = 0;
  double median() const { return ns[ns.size() / 2]; }
};
Timing timeSteps(KernelWorld& world, double dt, int steps, int blocks, int elements) {
  Solver& solver = world.solver();
  for (int k = 0; k < 100; ++k)
    if (!solver.step(world, dt).ok) throw std::runtime_error("warm-up step failed");
  Timing t;
  t.ns.reserve(blocks);
  const long alloc0 = g_allocations.load();
  for (int b = 0; b < blocks; ++b) {
    const double c0 = cpuNs();
    for (int k = 0; k < steps; ++k)
      if (!solver.step(world, dt).ok) throw std::runtime_error("step failed at t = " + std::to_string(world.time()));
    t.ns.push_back((cpuNs() - c0) / (double(steps) * elements));
  }
  t.allocations = g_allocations.load() - alloc0;
  std::sort(t.ns.begin(), t.ns.end());
  return t;
}

// The scene's own solver and dt; ns per element-step over all rods.
int timeScene(TypeRegistry& registry, const std::string& file, const std::vector<std::string>& overrides, int steps,
              int blocks) {
  Scene scene = loadScene(file, overrides, registry);
  KernelWorld world(scene, registry);
  int elements = 0;
  for (int r = 0; r < world.numRods(); ++r) elements += world.rod(r).numEdges();
  const Timing t = timeSteps(world, scene.dt, steps, blocks, elements);
  std::printf("%s: %d elements, dt = %g s, %d x %d steps (to t = %.4g s)\n", file.c_str(), elements, scene.dt, blocks,
              steps, world.time());
  std::printf("  %.1f ns per element-step (median of %zu blocks; min %.1f, max %.1f), %.2f us per step\n", t.median(),
              t.ns.size(), t.ns.front(), t.ns.back(), t.median() * elements * 1e-3);
  std::printf("  heap allocations during the timed steps: %ld\n", t.allocations);
  return t.allocations == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  rodsim::keepFreedMemoryInProcess();  // as the rodsim command does
  int steps = 20000, blocks = 7;
  std::string scene_file = RODSIM_BENCH_SCENES "/pyelastica_timoshenko.toml";
  std::vector<std::string> overrides;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--steps") steps = std::max(1, std::atoi(argv[i + 1]));
    else if (a == "--blocks") blocks = std::max(1, std::atoi(argv[i + 1]));
    else if (a == "--scene") scene_file = argv[i + 1];
    else if (a == "--set") overrides.emplace_back(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: bench_cosserat [--steps S] [--blocks B] [--scene FILE] [--set KEY=VALUE]...\n");
      return 2;
    }
  }
  try {
    TypeRegistry registry;
    loadPlugins(registry, {});
    std::printf("%s\n", bench_timing::machine().c_str());
    return timeScene(registry, scene_file, overrides, steps, blocks);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_cosserat: %s\n", e.what());
    return 1;
  }
}
