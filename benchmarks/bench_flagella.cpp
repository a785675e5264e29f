// Flagella bundling (Tong et al. (2023), Table 1): CPU milliseconds and Newton iterations (linear solves) per
// step through the kernel, on the scenes of scenes/flagella/. The fluid columns are the rss force's
// own report of each step (wall ms of its assembly and solve, GMRES iterations). It prints no ratio:
// a ratio to the authors' code is measured with both codes run side by side in one session
// (benchmarks/README.md: the peers' code in RODSIM_PEERS_DIR; docs/flagella.md, section 3).
//
//   bench_flagella                      # M = 2 in contact (m2_close), M = 3, 5, 10 before contact
//   bench_flagella --steps 100 --scene scenes/flagella/m5.toml --warmup 10
//   bench_flagella --scene scenes/flagella/m2_close_authors_code.toml --set contact.type=ipc
//       --set contact.d_hat=1e-5 --set force.fluid.threads=2 --clock wall
//
// CPU time per step by default, medians over the timed steps, so that other processes on a shared
// machine disturb the figures less; `--clock wall` for runs that use both cores (the rss force's
// `threads`, default 1), where CPU time adds up the threads. `--set` as for `rodsim run`.
#include <rodsim/kernel/process_memory.h>
#include <rodsim/kernel/registry.h>
#include <rodsim/kernel/scene.h>
#include <rodsim/kernel/world.h>

#include "bench_timing.h"

#include <rodsim/rod.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include <time.h>

using namespace rodsim;
using namespace rodsim::kernel;

namespace {

double cpuMs() { return 1e3 * bench_timing::cpuSeconds(); }

bool g_wall = false;  // --clock wall

double nowMs() {
  if (!g_wall) return cpuMs();
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return 1e3 * double(ts.tv_sec) + 1e-6 * double(ts.tv_nsec);
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Case {
  std::string scene;
  std::vector<std::string> sets;
  int warmup, steps;
};

struct Row {
  int M = 0, contact_steps = 0, steps = 0;
  double aipts_contact = 0, aipts = 0, ms_contact = 0, ms = 0;
  double rss_assembly_ms = 0, rss_solve_ms = 0, rss_iterations = 0;  // the fluid's share
};

// The fluid's share of a step, as the rss force itself reports it (its timeseries.csv columns
// "<name>.assembly_ms", ".solve_ms", ".gmres_iterations", wall clock): nothing is recomputed
// between the timed steps, so the caches see what they see in a real run.
class FluidShare {
 public:
  explicit FluidShare(const KernelWorld& w) : world_(w) {
    const std::vector<std::string> cols = w.reportColumns();
    auto find = [&](const std::string& suffix) {
      for (std::size_t i = 0; i < cols.size(); ++i)
        if (cols[i].size() > suffix.size() && cols[i].compare(cols[i].size() - suffix.size(), suffix.size(), suffix) == 0)
          return static_cast<int>(i);
      return -1;
    };
    assembly_ = find(".assembly_ms");
    solve_ = find(".solve_ms");
    iterations_ = find(".gmres_iterations");
  }
  void read(double& assembly_ms, double& solve_ms, int& iterations) {
    values_.clear();
    world_.reportValues(values_);
    assembly_ms = assembly_ >= 0 ? values_[assembly_] : 0.0;
    solve_ms = solve_ >= 0 ? values_[solve_] : 0.0;
    iterations = iterations_ >= 0 ? static_cast<int>(values_[iterations_]) : 0;
  }

 private:
  const KernelWorld& world_;
  int assembly_ = -1, solve_ = -1, iterations_ = -1;
  std::vector<double> values_;
};

Row run(const TypeRegistry& registry, const Case& c) {
  Scene scene = loadScene(c.scene, c.sets, registry);
  KernelWorld world(scene, registry);
  Solver& solver = world.solver();
  const double dt = scene.dt;
  Row row;
  row.M = world.numRods();
  std::vector<double> all_ms, contact_ms, assembly_ms, solve_ms;
  long long its = 0, contact_its = 0, rss_its = 0;
  FluidShare fluid(world);
  Crossing crossing;
  std::string crossing_who;
  for (int k = 0; k < c.warmup + c.steps; ++k) {
    const double c0 = nowMs();
    world.keepStepStart();  // with the swept check of imc, as the time loop does (rodsim run)
    const StepReport r = solver.step(world, dt);
    if (r.ok && world.rejectCrossedStep(crossing, crossing_who)) {
      std::fprintf(stderr, "bench_flagella: %s: step %d: %s and %s crossed\n", c.scene.c_str(), k + 1,
                   crossing.rod_a.c_str(), crossing.rod_b.c_str());
      std::exit(3);
    }
    const double ms = nowMs() - c0;
    if (!r.ok) {
      std::fprintf(stderr, "bench_flagella: %s: step %d failed: %s\n", c.scene.c_str(), k + 1, r.message.c_str());
      std::exit(3);
    }
    double a_ms = 0, s_ms = 0;
    int rss_it = 0;
    fluid.read(a_ms, s_ms, rss_it);
    if (k < c.warmup) continue;
    assembly_ms.push_back(a_ms);
    solve_ms.push_back(s_ms);
    rss_its += rss_it;
    all_ms.push_back(ms);
    its += r.iterations;
    if (world.contactStats().active > 0) {
      contact_ms.push_back(ms);
      contact_its += r.iterations;
    }
  }
  row.steps = c.steps;
  row.contact_steps = static_cast<int>(contact_ms.size());
  row.ms = median(all_ms);
  row.aipts = double(its) / c.steps;
  row.ms_contact = median(contact_ms);
  row.aipts_contact = contact_ms.empty() ? 0 : double(contact_its) / contact_ms.size();
  row.rss_assembly_ms = median(assembly_ms);
  row.rss_solve_ms = median(solve_ms);
  row.rss_iterations = double(rss_its) / c.steps;
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  rodsim::keepFreedMemoryInProcess();  // as the rodsim command does
  try {
    std::vector<Case> cases = {
        {"scenes/flagella/m2_close.toml", {}, 50, 450},  // contact from step 54
        {"scenes/flagella/m3.toml", {}, 5, 40},
        {"scenes/flagella/m5.toml", {}, 5, 30},
        {"scenes/flagella/m10.toml", {}, 5, 20},
    };
    std::vector<std::string> sets;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
        return argv[++i];
      };
      if (a == "--scene") cases = {{value(), {}, 5, 20}};
      else if (a == "--set") sets.push_back(value());
      else if (a == "--clock") {
        const std::string v = value();
        if (v != "wall" && v != "cpu") throw std::runtime_error("--clock wall|cpu, not '" + v + "'");
        g_wall = v == "wall";
      } else if (a == "--steps") {
        const int n = std::max(1, std::atoi(value().c_str()));
        for (auto& c : cases) c.steps = n;
      } else if (a == "--warmup") {
        const int n = std::max(0, std::atoi(value().c_str()));
        for (auto& c : cases) c.warmup = n;
      }
      else if (a == "--help" || a == "-h") {
        std::printf("usage: bench_flagella [--scene FILE] [--set KEY=VALUE]... [--steps S] [--warmup W] [--clock cpu|wall]\n"
                    "                      (run from the repository root)\n");
        return 0;
      } else throw std::runtime_error("unknown argument '" + a + "' (try --help)");
    }
    for (auto& c : cases) c.sets = sets;
    TypeRegistry registry;
    loadPlugins(registry, {});
    std::printf("%s\n", bench_timing::machine().c_str());
    std::printf("%-30s %3s %5s %6s %8s %7s %10s %9s %9s %7s\n", "scene", "M", "steps", "AIPTS", "ms/step", "contact",
                "ms/contact", "rss asm", "rss solve", "gmres");
    for (const Case& c : cases) {
      const Row r = run(registry, c);
      std::printf("%-30s %3d %5d %6.2f %8.2f %7d %10.2f %9.2f %9.2f %7.1f\n", c.scene.c_str(), r.M, r.steps,
                  r.contact_steps ? r.aipts_contact : r.aipts, r.ms, r.contact_steps, r.ms_contact, r.rss_assembly_ms,
                  r.rss_solve_ms, r.rss_iterations);
      std::fflush(stdout);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_flagella: %s\n", e.what());
    return 2;
  }
}
