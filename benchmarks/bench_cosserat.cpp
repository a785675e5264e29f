// bench_cosserat: cost per element-step of the cosserat rod with position-verlet on the Timoshenko
// cantilever of the Cosserat seed (Fig. 5 settings, 100 elements, dt = 1e-4 s, tip load, damping),
// against PyElastica 0.3.3's 0.35 us per element-step on the same case (/work/shared/anchors.md).
//
// It builds the scene through the kernel API (plugins from <build>/plugins), takes warm-up steps
// (the first one estimates the stability limit), then times `world.solver().step(world, dt)` in
// blocks and prints the median CPU ns per element-step, the ratio to PyElastica, and the number of
// heap allocations during the timed steps (counted by a replaced operator new; must be 0).
//
// With --scene FILE it times that scene instead (its solver, dt and forces; elements: all rods'),
// e.g. scenes/snake.toml against PyElastica's continuum snake with an anisotropic friction plane,
// 880 ns per element-step (anchors.md; --reference NS sets the figure compared with).
//
// PyElastica's figures were measured on a slower machine than some that run this: --speedup F (how
// many times faster this machine is than that one, e.g. 1.56 on the machine of November 25, 2026:
// benchmarks/README.md) divides the reference by F, so the ratio printed is like for like.
//
// Usage: bench_cosserat [--steps S] [--blocks B] [--elements N] [--scene FILE] [--reference NS] [--speedup F]
#include "registry.h"
#include "scene.h"
#include "world.h"

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

double cpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return 1e9 * double(ts.tv_sec) + double(ts.tv_nsec);
}

std::string timoshenko(int elements, double dt) {
  std::ostringstream s;
  s << "[simulation]\nduration = 1000.0\ndt = " << dt << "\n"
    << "[solver]\ntype = \"position-verlet\"\n"
    << "[[rod]]\nname = \"beam\"\nmodel = \"cosserat\"\nnodes = " << elements + 1
    << "\nradius = 0.25\ndensity = 5000.0\nyoungs_modulus = 1e6\nshear_modulus = 1e4\n"
    << "geometry = { shape = \"straight\", start = [0, 0, 0], end = [3, 0, 0] }\nrest_shape = \"straight\"\n"
    << "[[force]]\nname = \"tip\"\ntype = \"point-load\"\nrod = \"beam\"\nnode = -1\nforce = [0, 0, -15.0]\n"
    << "[[force]]\nname = \"friction\"\ntype = \"damping\"\ncoefficient = 0.1\n"
    << "[[constraint]]\nname = \"root\"\ntype = \"cosserat-clamp\"\nrod = \"beam\"\nnodes = [0]\nelements = [0]\n";
  return s.str();
}

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

// The common report lines: ns per element-step, and the ratio to `reference` ns (calibrated by the
// machine speed-up when one is given).
void report(const Timing& t, int elements, const char* what, double reference, double speedup) {
  const double ns = t.median();
  std::printf("  %.1f ns per element-step (median of %zu blocks; min %.1f, max %.1f), %.2f us per step\n", ns,
              t.ns.size(), t.ns.front(), t.ns.back(), ns * elements * 1e-3);
  if (speedup != 1.0)
    std::printf("  %s: %.0f ns per element-step / %.2f (machine speed-up) = %.0f ns -> %.1fx faster (target >= 10x)\n",
                what, reference, speedup, reference / speedup, reference / speedup / ns);
  else
    std::printf("  %s: %.0f ns per element-step -> %.1fx faster (target >= 10x; on a machine faster than the "
                "reference's, give --speedup)\n",
                what, reference, reference / ns);
  std::printf("  heap allocations during the timed steps: %ld\n", t.allocations);
}

// --scene mode: the scene's own solver and dt; ns per element-step over all rods.
int timeScene(TypeRegistry& registry, const std::string& file, int steps, int blocks, double reference,
              double speedup) {
  Scene scene = loadScene(file, {}, registry);
  KernelWorld world(scene, registry);
  int elements = 0;
  for (int r = 0; r < world.numRods(); ++r) elements += world.rod(r).numEdges();
  const Timing t = timeSteps(world, scene.dt, steps, blocks, elements);
  std::printf("%s: %d elements, dt = %g s, %d x %d steps (to t = %.2f s)\n", file.c_str(), elements, scene.dt, blocks,
              steps, world.time());
  report(t, elements, "reference", reference, speedup);
  return t.allocations == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 20000, blocks = 7, elements = 100;
  std::string scene_file;
  double reference = 0, speedup = 1.0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--steps") steps = std::max(1, std::atoi(argv[i + 1]));
    else if (a == "--blocks") blocks = std::max(1, std::atoi(argv[i + 1]));
    else if (a == "--elements") elements = std::max(2, std::atoi(argv[i + 1]));
    else if (a == "--scene") scene_file = argv[i + 1];
    else if (a == "--reference") reference = std::atof(argv[i + 1]);
    else if (a == "--speedup") speedup = std::atof(argv[i + 1]) > 0 ? std::atof(argv[i + 1]) : 1.0;
    else {
      std::fprintf(stderr, "usage: bench_cosserat [--steps S] [--blocks B] [--elements N] [--scene FILE] "
                           "[--reference NS] [--speedup F]\n");
      return 2;
    }
  }
  try {
    TypeRegistry registry;
    loadPlugins(registry, {});
    if (!scene_file.empty())
      return timeScene(registry, scene_file, steps, blocks, reference > 0 ? reference : 880.0, speedup);
    const double dt = 1e-4;
    Scene scene = parseScene(timoshenko(elements, dt), "bench_cosserat.toml", {}, registry);
    KernelWorld world(scene, registry);
    const Timing t = timeSteps(world, dt, steps, blocks, elements);
    std::printf("cosserat + position-verlet, Timoshenko cantilever, %d elements, dt = %g s, %d x %d steps\n", elements,
                dt, blocks, steps);
    report(t, elements, "PyElastica 0.3.3", 350.0, speedup);
    std::printf("  tip deflection after %.2f s: %.6f m\n", world.time(),
                world.q()[world.rod(0).globalPositionDof(elements) + 2]);
    return t.allocations == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_cosserat: %s\n", e.what());
    return 1;
  }
}
