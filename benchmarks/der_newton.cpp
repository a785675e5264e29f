// bench_der_newton: cost of implicit Euler + Newton on a DER cantilever as the rod is refined.
//
// For each N (default 100, 300, 1000, 3000, 10000, 100000 nodes) it builds, through the kernel API, a
// straight DER cantilever of N nodes 5 mm apart with the material of the IMC flagella (radius 1 mm,
// E = 3 MPa, nu = 0.5, 1000 kg/m^3): clamp on nodes 0 and 1, gravity, implicit-euler, dt = 1 ms.
// The edge length is fixed, so the rod gets longer (0.5 m ... 500 m) and every node sees the same
// local physics and conditioning at every N: the growth of the cost with N is the solver's.
// It takes a few warm-up steps (the first one analyses the sparsity pattern), then times
// `world.solver().step(world, dt)` over the following steps and prints:
//
//   ms/step        median wall time per step (cpu ms: median process CPU time per step)
//   it/step        Newton iterations (= linear solves) per step, from StepReport::iterations
//   us/it          CPU time per Newton iteration (assembly + factorisation + solve + line search)
//   ns/it/DOF      us/it divided by the number of DOFs (4N - 1 for DER)
//   ratio          ns/it/DOF relative to the first N: ~1 means cost linear in N
//
// It prints no ratio against another code: those come from runs side by side (benchmarks/README.md).
//
// Usage: bench_der_newton [--steps S] [--warmup W] [--sizes N1,N2,...] [--dt DT] [--tolerance TOL]
// Not a test: run it by hand from the build tree (it finds the plugins in <build>/plugins).
#include <rodsim/kernel/process_memory.h>
#include <rodsim/kernel/registry.h>
#include <rodsim/kernel/scene.h>
#include <rodsim/kernel/world.h>

#include "bench_timing.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

#include <time.h>

using namespace rodsim;
using namespace rodsim::kernel;

namespace {

struct Options {
  std::vector<int> sizes{100, 300, 1000, 3000, 10000, 100000};  // issue 24: flat per DOF to 100,000
  int steps = 20;   // timed steps per N
  int warmup = 2;   // untimed steps per N
  double dt = 1e-3;  // s
  double tolerance = 1e-8;  // N, the solver's default
};

constexpr double kEdge = 0.005;  // m, edge length at every N (about the flagella's)

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// CPU time of this process (all threads, should a library spawn any), ms. Unlike wall time it is
// not inflated while other processes hold the cores, so the derived figures use it.
double cpuMs() { return 1e3 * bench_timing::cpuSeconds(); }

// Medians over the timed steps, so that a step slowed down by another process does not skew them.
struct Result {
  int nodes = 0, dofs = 0;
  std::vector<double> wall_ms, cpu_ms;  // per timed step
  std::vector<int> iterations;          // per timed step
  double msPerStep() const { return median(wall_ms); }
  double cpuMsPerStep() const { return median(cpu_ms); }
  double itPerStep() const {
    double sum = 0;
    for (int i : iterations) sum += i;
    return sum / double(iterations.size());
  }
  double usPerIt() const {
    std::vector<double> per;
    for (std::size_t k = 0; k < cpu_ms.size(); ++k) per.push_back(1e3 * cpu_ms[k] / std::max(iterations[k], 1));
    return median(per);
  }
  double nsPerItDof() const { return 1e3 * usPerIt() / dofs; }
};

// The benchmark scene: a rod of flagellum material (EI = 2.4e-6 N m^2, weight 1.5e-4 N per node)
// starting to sag under its own weight from rest; during the timed steps it falls a few mm.
std::string cantilever(int nodes, const Options& opt) {
  std::ostringstream s;
  s << "[simulation]\n"
    << "name = \"bench_der_newton_" << nodes << "\"\n"
    << "duration = 1.0\n"
    << "dt = " << opt.dt << "\n\n"
    << "[solver]\n"
    << "type = \"implicit-euler\"\n"
    << "tolerance = " << opt.tolerance << "\n\n"
    << "[[rod]]\n"
    << "name = \"beam\"\n"
    << "model = \"der\"\n"
    << "nodes = " << nodes << "\n"
    << "radius = 0.001\n"
    << "density = 1000.0\n"
    << "youngs_modulus = 3e6\n"
    << "poisson_ratio = 0.5\n"
    << "geometry = { shape = \"straight\", start = [0, 0, 0], end = [" << kEdge * (nodes - 1) << ", 0, 0] }\n\n"
    << "[[force]]\n"
    << "type = \"gravity\"\n"
    << "g = [0, 0, -9.81]\n\n"
    << "[[constraint]]\n"
    << "name = \"root\"\n"
    << "type = \"clamp\"\n"
    << "rod = \"beam\"\n"
    << "nodes = [0, 1]\n";
  return s.str();
}

Result run(const TypeRegistry& registry, int nodes, const Options& opt) {
  using Clock = std::chrono::steady_clock;
  const std::string name = "bench_der_newton_" + std::to_string(nodes) + ".toml";
  Scene scene = parseScene(cantilever(nodes, opt), name, {}, registry);
  KernelWorld world(scene, registry);
  Solver& solver = world.solver();
  auto step = [&](int k) {
    StepReport r = solver.step(world, opt.dt);
    if (!r.ok) {
      std::fprintf(stderr, "bench_der_newton: N = %d, step %d failed: %s\n", nodes, k, r.message.c_str());
      std::exit(3);
    }
    return r;
  };
  for (int k = 0; k < opt.warmup; ++k) step(k + 1);
  Result res;
  res.nodes = nodes;
  res.dofs = world.numDofs();
  for (int k = 0; k < opt.steps; ++k) {
    const double c0 = cpuMs();
    const auto t0 = Clock::now();
    StepReport r = step(opt.warmup + k + 1);
    res.wall_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    res.cpu_ms.push_back(cpuMs() - c0);
    res.iterations.push_back(r.iterations);
  }
  return res;
}

std::vector<int> parseSizes(const std::string& text) {
  std::vector<int> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    const int n = std::atoi(item.c_str());
    if (n < 3) throw std::runtime_error("--sizes: every N must be an integer >= 3, got '" + item + "'");
    out.push_back(n);
  }
  if (out.empty()) throw std::runtime_error("--sizes: empty list");
  return out;
}

Options parseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--steps") o.steps = std::max(1, std::atoi(value().c_str()));
    else if (a == "--warmup") o.warmup = std::max(0, std::atoi(value().c_str()));
    else if (a == "--sizes") o.sizes = parseSizes(value());
    else if (a == "--dt") o.dt = std::atof(value().c_str());
    else if (a == "--tolerance") o.tolerance = std::atof(value().c_str());
    else if (a == "--help" || a == "-h") {
      std::printf("usage: bench_der_newton [--steps S] [--warmup W] [--sizes N1,N2,...] [--dt DT] [--tolerance TOL]\n");
      std::exit(0);
    } else throw std::runtime_error("unknown argument '" + a + "' (try --help)");
  }
  if (!(o.dt > 0)) throw std::runtime_error("--dt must be > 0");
  if (!(o.tolerance > 0)) throw std::runtime_error("--tolerance must be > 0");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  rodsim::keepFreedMemoryInProcess();  // as the rodsim command does
  try {
    Options opt = parseArgs(argc, argv);
    std::sort(opt.sizes.begin(), opt.sizes.end());
    TypeRegistry registry;
    loadPlugins(registry, {});
    for (const char* t : {"der"})
      if (!registry.find(ComponentKind::Rod, t)) throw std::runtime_error(std::string("rod model '") + t + "' not loaded");
    for (const char* t : {"gravity"})
      if (!registry.find(ComponentKind::Force, t)) throw std::runtime_error(std::string("force '") + t + "' not loaded");
    if (!registry.find(ComponentKind::Constraint, "clamp")) throw std::runtime_error("constraint 'clamp' not loaded");
    if (!registry.find(ComponentKind::Solver, "implicit-euler")) throw std::runtime_error("solver 'implicit-euler' not loaded");

    std::printf("DER cantilever, edges 5 mm (L = 5 mm x (N - 1)), r = 1 mm, E = 3 MPa, gravity, clamp on nodes 0-1, implicit-euler "
                "(Newton tolerance %g N, other options default), dt = %g s\n",
                opt.tolerance, opt.dt);
    std::printf("%d warm-up step(s) then %d timed step(s) per N; single thread\n\n", opt.warmup, opt.steps);
    std::printf("%8s %8s %10s %10s %8s %10s %10s %8s\n", "N", "DOFs", "ms/step", "cpu ms", "it/step", "us/it",
                "ns/it/DOF", "ratio");
    std::vector<Result> results;
    for (int n : opt.sizes) {
      results.push_back(run(registry, n, opt));
      const Result& r = results.back();
      std::printf("%8d %8d %10.3f %10.3f %8.2f %10.1f %10.1f %8.2f\n", r.nodes, r.dofs, r.msPerStep(),
                  r.cpuMsPerStep(), r.itPerStep(), r.usPerIt(), r.nsPerItDof(),
                  r.nsPerItDof() / results.front().nsPerItDof());
      std::fflush(stdout);
    }
    std::printf("\nms/step, cpu ms: median wall and process CPU time per step; it/step: mean linear solves per step;\n"
                "us/it: median over steps of CPU time / iterations; ns/it/DOF = us/it / DOFs;\n"
                "ratio: ns/it/DOF relative to N = %d (1.0 = cost per Newton iteration linear in the DOF count)\n",
                results.front().nodes);

    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_der_newton: %s\n", e.what());
    return 2;
  }
}
