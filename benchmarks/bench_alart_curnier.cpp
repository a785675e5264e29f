// bench_alart_curnier: seconds per step of the alart-curnier contact model (Bertails-Descoubes et
// al. (2011)) on a dense spaghetti pile, against their 19.1 s per step for 76 spaghetti x 22 nodes
// with about 1800 contacts (Sec. 5.3, Table I), target 0.2 s per step.
//
// Dense-pile stage without simulating the fall: a two-layer mat resting on the plate z = 0 under
// gravity, mu = 0.3, dt = 1 ms, implicit Euler (Newton tolerance 1e-9 N) -- rods/2 DER rods along x
// lying on the plate (one contact per node) and rods/2 along y lying across them (one contact per
// crossing), every contact closed at t = 0 (gap 0). 76 rods x 22 nodes: 38 x 22 + 38 x 38 = 2280
// contacts, nu = 3n/m = 1.03 (the paper's pile: 1800 contacts, nu = 1.08). Rods 2 mm in radius,
// 6 mm apart (2 mm gaps), E = 1e7 Pa, as scenes/contact_ac/spaghetti_plate.toml.
//
// Also times any scene (--scene FILE): runs --skip steps, then times --steps steps, e.g. the random
// pile of scenes/contact_ac/spaghetti_plate.toml once it has landed (--skip 150).
//
// Prints per configuration: median wall and CPU seconds per step (the machine is shared: CPU time is
// the figure to compare), linear solves (implicit Newton iterations) and AC Newton iterations per
// step, contacts, groups, nu, and the ratio 19.1 s / (our s per step).
//
// Usage: bench_alart_curnier [--rods 8,20,40,76] [--nodes 22] [--steps 3] [--scene FILE --skip N]
#include <rodsim/kernel/process_memory.h>
#include <rodsim/kernel/registry.h>
#include <rodsim/kernel/scene.h>
#include <rodsim/kernel/world.h>

#include "bench_timing.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <time.h>

using namespace rodsim;
using rodsim::bench_timing::cpuSeconds;
using rodsim::bench_timing::median;

namespace {

constexpr double kPaperSecondsPerStep = 19.1, kTarget = 0.2;

std::string mat(int rods, int nodes, const std::string& scheme) {
  const double r = 0.002, s = 3 * r;  // parallel neighbours 2 mm apart: beyond the contact reach
  const int n1 = rods / 2, n2 = rods - n1;
  const double L = std::max(0.1, (std::max(n1, n2) + 2) * s);
  std::ostringstream o;
  o << "[simulation]\nname = \"bench_ac\"\nduration = 1.0\ndt = 1e-3\n\n[solver]\ntype = \"implicit-euler\"\n"
    << "tolerance = 1e-9\nscheme = \"" << scheme << "\"\n"
    << (scheme == "linearized" ? "predictor = \"position\"\n\n" : "\n");
  auto rod = [&](const std::string& name, double x0, double y0, double x1, double y1, double z) {
    o << "[[rod]]\nname = \"" << name << "\"\nmodel = \"der\"\nnodes = " << nodes << "\nradius = " << r
      << "\ndensity = 1000.0\nyoungs_modulus = 1e7\npoisson_ratio = 0.5\ngeometry = { shape = \"straight\", start = ["
      << x0 << ", " << y0 << ", " << z << "], end = [" << x1 << ", " << y1 << ", " << z << "] }\n\n";
  };
  for (int i = 0; i < n1; ++i) {
    const double y = (i - 0.5 * (n1 - 1)) * s;
    rod("low" + std::to_string(i), -0.5 * L, y, 0.5 * L, y, r);
  }
  for (int j = 0; j < n2; ++j) {
    const double x = (j - 0.5 * (n2 - 1)) * s + 0.3 * s;  // crossings off the bottom rods' nodes
    rod("up" + std::to_string(j), x, -0.5 * L, x, 0.5 * L, 3 * r);
  }
  o << "[[force]]\ntype = \"gravity\"\ng = [0, 0, -9.81]\n\n[[obstacle]]\nname = \"plate\"\nshape = \"plane\"\n"
    << "origin = [0, 0, 0]\nnormal = [0, 0, 1]\n\n[[contact]]\ntype = \"alart-curnier\"\nfriction = 0.3\n";
  return o.str();
}

void bench(const kernel::TypeRegistry& registry, const std::string& text, const std::string& label, int skip,
           int steps) {
  kernel::Scene scene = kernel::parseScene(text, label, {}, registry);
  kernel::KernelWorld world(scene, registry);
  const double dt = scene.dt;
  const auto columns = world.reportColumns();
  auto col = [&](const std::vector<double>& v, const char* name) {
    for (std::size_t i = 0; i < columns.size(); ++i)
      if (columns[i] == std::string("alart-curnier.") + name) return v[i];
    return 0.0;
  };
  std::vector<double> wall, cpu, values;
  Crossing crossing;
  std::string crossing_who;
  double solves = 0, ac_its = 0, contacts = 0, groups = 0, nu = 0, contact_ms = 0, lus = 0, gmres = 0;
  for (int k = 0; k < skip + steps; ++k) {
    const double c0 = cpuSeconds();
    const auto t0 = std::chrono::steady_clock::now();
    world.keepStepStart();  // with the swept check, as the time loop does (rodsim run)
    StepReport rep = world.solver().step(world, dt);
    if (rep.ok && world.rejectCrossedStep(crossing, crossing_who))
      rep = {false, rep.iterations, rep.residual, "rods '" + crossing.rod_a + "' and '" + crossing.rod_b + "' crossed"};
    if (!rep.ok) {
      std::fprintf(stderr, "bench_alart_curnier: %s: step %d failed: %s\n", label.c_str(), k, rep.message.c_str());
      std::exit(3);
    }
    if (k < skip) continue;
    wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    cpu.push_back(cpuSeconds() - c0);
    world.reportValues(values);
    solves += rep.iterations;
    ac_its += col(values, "ac_iterations");
    contacts += col(values, "contacts");
    groups += col(values, "groups");
    nu += col(values, "nu");
    contact_ms += col(values, "solve_ms");
    lus += col(values, "factorizations");
    gmres += col(values, "gmres_iterations");
  }
  const double s_cpu = median(cpu);
  double wall_sum = 0;
  for (double w : wall) wall_sum += w;
  std::printf(
      "%-28s %6.0f contacts, nu %.2f, %4.1f groups | %8.3f s/step cpu (wall %8.3f), contact model %3.0f%% | "
      "%4.1f solves, %5.1f AC iterations (%4.1f factorizations, %5.1f GMRES) per step | paper 19.1 s / ours = %6.1f "
      "(target 0.2 s: %s)\n",
      label.c_str(), contacts / steps, nu / steps, groups / steps, s_cpu, median(wall),
      100.0 * contact_ms / 1e3 / std::max(1e-12, wall_sum), solves / steps, ac_its / steps, lus / steps, gmres / steps,
      kPaperSecondsPerStep / s_cpu, s_cpu <= kTarget ? "met" : "not met");
}

}  // namespace

int main(int argc, char** argv) {
  rodsim::keepFreedMemoryInProcess();  // as the rodsim command does
  std::vector<int> rods{8, 20, 40, 76};
  int nodes = 22, steps = 3, skip = 2;
  std::string scene_file;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--rods") {
      rods.clear();
      std::stringstream ss(argv[i + 1]);
      for (std::string it; std::getline(ss, it, ',');) rods.push_back(std::atoi(it.c_str()));
    } else if (a == "--nodes") nodes = std::atoi(argv[i + 1]);
    else if (a == "--steps") steps = std::atoi(argv[i + 1]);
    else if (a == "--skip") skip = std::atoi(argv[i + 1]);
    else if (a == "--scene") scene_file = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: bench_alart_curnier [--rods 8,20,40,76] [--nodes 22] [--steps 3] [--scene FILE --skip N]\n");
      return 2;
    }
  }
  kernel::TypeRegistry registry;
  kernel::loadPlugins(registry, {});
  std::printf(
      "bench_alart_curnier: alart-curnier, mu = 0.3, dt = 1 ms; Bertails-Descoubes et al. (2011): 76 x 22 "
      "spaghetti, ~1800 contacts, 19.1 s/step (2.1 GHz Core 2 Duo, 2011); target 0.2 s/step\n");
  if (!scene_file.empty()) {
    std::ifstream in(scene_file);
    std::stringstream ss;
    ss << in.rdbuf();
    bench(registry, ss.str(), scene_file, skip, steps);
    return 0;
  }
  for (const char* scheme : {"nonlinear", "linearized"})
    for (int n : rods)
      bench(registry, mat(n, nodes, scheme), "mat " + std::to_string(n) + " x " + std::to_string(nodes) + " " + scheme,
            skip, steps);
  return 0;
}
