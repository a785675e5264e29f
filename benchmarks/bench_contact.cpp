// bench_contact: cost of the imc contact model (plugins/contact_imc) on a contact-heavy scene.
//
// Geometry: a mat of M rods along x (h = 1 mm, N nodes, 4 mm apart) under a mat of M rods along y,
// 2h + delta/2 above: M^2 crossings, all in contact, plus the edges near each crossing as candidates.
//
// Part 1 (kernel, whole step): the lower mat clamped, the upper mat under gravity, implicit Euler
// with imc (mu = 0.3); median wall/CPU ms per step, linear solves per step, and ms per step per
// active contact pair. Loads the der, clamp, gravity, imc and implicit-euler plugins from
// <build>/plugins.
// Part 2 (contact_imc_core against a FakeWorld of spring chains in the same geometry): the broad
// phase (edge boxes + sweep and prune, then the exact distance filter) per step, and the narrow
// phase (energy, force, friction and 12x12 Jacobians of every candidate pair) per Newton
// evaluation, per candidate pair.
//
// It prints no figure of another code: comparisons are runs side by side (benchmarks/README.md).
//
// Usage: bench_contact [--mats M1,M2,...] [--nodes N] [--steps S]
#include <rodsim/testing/fake_world.h>
#include <rodsim/kernel/process_memory.h>
#include "imc_contact.h"
#include <rodsim/kernel/registry.h>
#include <rodsim/kernel/scene.h>
#include <rodsim/kernel/world.h>

#include "bench_timing.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include <time.h>

using namespace rodsim;

namespace {

double cpuMs() { return 1e3 * bench_timing::cpuSeconds(); }
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

constexpr double kH = 1e-3, kDelta = 1e-5, kSpacing = 4e-3;

std::string mat(int M, int N) {
  const double len = kSpacing * (M + 1), z = 2 * kH + 0.5 * kDelta;
  std::ostringstream s;
  s << "[simulation]\nname = \"bench_contact\"\nduration = 1.0\ndt = 1e-3\n\n[solver]\ntype = \"implicit-euler\"\n"
    << "tolerance = 1e-9\n\n";
  for (int layer = 0; layer < 2; ++layer)
    for (int i = 0; i < M; ++i) {
      const double c = kSpacing * (i + 1) + 0.37 * kSpacing * layer;
      s << "[[rod]]\nname = \"" << (layer ? "up" : "low") << i << "\"\nmodel = \"der\"\nnodes = " << N
        << "\nradius = " << kH << "\ndensity = 1000.0\nyoungs_modulus = 1e7\npoisson_ratio = 0.5\n";
      if (layer == 0)
        s << "geometry = { shape = \"straight\", start = [0, " << c << ", 0], end = [" << len << ", " << c << ", 0] }\n\n";
      else
        s << "geometry = { shape = \"straight\", start = [" << c << ", 0, " << z << "], end = [" << c << ", " << len
          << ", " << z << "] }\n\n";
      if (layer == 0) {
        s << "[[constraint]]\nname = \"fix_low" << i << "\"\ntype = \"clamp\"\nrod = \"low" << i << "\"\nnodes = [";
        for (int n = 0; n < N; ++n) s << (n ? ", " : "") << n;
        s << "]\n\n";
      }
    }
  s << "[[force]]\ntype = \"gravity\"\ng = [0, 0, -9.81]\n\n[[contact]]\ntype = \"imc\"\nfriction = 0.3\ndelta = " << kDelta
    << "\n";
  return s.str();
}

void kernelPart(const kernel::TypeRegistry& registry, int M, int N, int steps) {
  kernel::Scene scene = kernel::parseScene(mat(M, N), "bench_contact.toml", {}, registry);
  kernel::KernelWorld world(scene, registry);
  std::vector<double> wall, cpu;
  double its = 0, active = 0;
  for (int k = 0; k < steps + 2; ++k) {
    const double c0 = cpuMs();
    const auto t0 = std::chrono::steady_clock::now();
    StepReport r = world.solver().step(world, 1e-3);
    if (!r.ok) {
      std::fprintf(stderr, "bench_contact: step failed: %s\n", r.message.c_str());
      std::exit(3);
    }
    if (k < 2) continue;  // warm-up (pattern analysis)
    wall.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    cpu.push_back(cpuMs() - c0);
    its += r.iterations;
    active += world.contactStats().active;
  }
  const double a = active / steps, ms = median(cpu);
  std::printf("  kernel  M = %2d (2 x %2d rods x %d nodes): %7.3f ms/step (cpu; wall %7.3f), %.2f solves/step, "
              "%5.0f active pairs, %6.2f us/step/pair, %6.3f us/step/element\n",
              M, M, N, ms, median(wall), its / steps, a, 1e3 * ms / std::max(a, 1.0),
              1e3 * ms / (2.0 * M * (N - 1)));
}

void corePart(int M, int N, int steps) {
  using namespace rodsim::testing;
  FakeWorld w;
  const double len = kSpacing * (M + 1), z = 2 * kH + 0.5 * kDelta;
  for (int layer = 0; layer < 2; ++layer)
    for (int i = 0; i < M; ++i) {
      const double c = kSpacing * (i + 1) + 0.37 * kSpacing * layer;
      SpringChain::Options o;
      o.radius = kH;
      o.points = layer ? line(N, Vec3(c, 0, z), Vec3(c, len, z)) : line(N, Vec3(0, c, 0), Vec3(len, c, 0));
      w.addRod<SpringChain>((layer ? "up" : "low") + std::to_string(i), o);
    }
  auto& c = w.addContact<imc::ImcContact>(
      makeParams(imc::ImcContact::schema(), {{"friction", 0.3}, {"delta", kDelta}, {"stiffness", 1.0}}));
  w.finalize();
  Vec q = w.q(), v0 = Vec::Zero(q.size()), f = Vec::Zero(q.size());
  EvalContext ctx;
  ctx.dt = 1e-3;
  ctx.q = &q;
  ctx.q_start = &w.q();
  ctx.v_start = &v0;
  StiffnessSink K;
  for (int k = 0; k < steps; ++k) {
    w.beginStep(1e-3);
    for (int it = 0; it < 3; ++it) {  // three Newton evaluations per step
      f.setZero();
      K.clear();
      c.addForce(ctx, Vec(Vec::Zero(f.size())), f);
      c.addStiffness(ctx, K);
    }
  }
  const auto& t = c.timing();
  std::printf("  core    M = %2d: %5d edges, %6d broad pairs -> %5d candidates, %5d active | broad %7.2f us/step "
              "(%5.3f us/edge), filter %7.2f us/step, narrow %8.2f us/evaluation = %6.3f us/candidate pair\n",
              M, c.numEdges(), c.numBroadPairs(), c.numCandidates(), c.stats().active, 1e6 * t.broad_s / t.builds,
              1e6 * t.broad_s / t.builds / c.numEdges(), 1e6 * t.filter_s / t.builds, 1e6 * t.narrow_s / t.evaluations,
              1e6 * t.narrow_s / double(t.pair_evaluations));
}

}  // namespace

int main(int argc, char** argv) {
  rodsim::keepFreedMemoryInProcess();  // as the rodsim command does
  std::vector<int> mats{1, 4, 10, 20};
  int N = 21, steps = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--mats") {
      mats.clear();
      std::stringstream ss(argv[i + 1]);
      for (std::string it; std::getline(ss, it, ',');) mats.push_back(std::atoi(it.c_str()));
    } else if (a == "--nodes") N = std::atoi(argv[i + 1]);
    else if (a == "--steps") steps = std::atoi(argv[i + 1]);
  }
  std::printf("bench_contact: imc on a two-layer rod mat (M^2 crossings), h = 1 mm, dt = 1 ms, mu = 0.3\n");
  kernel::TypeRegistry registry;
  kernel::loadPlugins(registry, {});
  for (int M : mats) {
    kernelPart(registry, M, N, steps);
    corePart(M, N, steps);
  }
  return 0;
}
