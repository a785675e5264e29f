// bench_contact_scaling: cost per step and per contact of a contact model as the number of contacts
// grows (issue 24, item 4: within 2x from 100 to 10,000 contacts), on the rod piles of
// scripts/make_rod_pile.py (or any scene).
//
// For each scene: --skip steps to settle (not timed), then --blocks blocks of --steps steps, each
// block timed in process CPU time (the machine is shared: wall time is printed beside it). Per
// scene one line: active contacts (ContactStats::active, mean over the timed steps), free DOFs,
// CPU ms per step (median of the blocks, min-max), CPU us per step per contact (same) and per
// linear solve per contact (the step's figure over its solves: apart from the 4-6 solves a step
// takes), linear solves (implicit Newton iterations) per step, and every report column of the contact model as a
// mean per step (alart-curnier: ac_iterations, factorizations, ...). After the scenes, per contact
// model: cost per contact of the scene with the most contacts over that of the one with the
// fewest, median with its range (max/min and min/max of the block figures).
//
// Usage: bench_contact_scaling [--skip 2] [--blocks 3] [--steps 2] SCENE.toml...
// benchmarks/bench_contact_scaling.sh writes the piles and runs the sweep.
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
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <time.h>

using namespace rodsim;
using rodsim::bench_timing::cpuSeconds;
using rodsim::bench_timing::maxOf;
using rodsim::bench_timing::median;
using rodsim::bench_timing::minOf;

namespace {


struct Result {
  std::string model, label;
  double contacts = 0;
  std::vector<double> us_per_contact;        // one per block
  std::vector<double> us_per_solve_contact;  // the same per linear solve: apart from the solve count
};

Result bench(const kernel::TypeRegistry& registry, const std::string& path, int skip, int blocks, int steps) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "bench_contact_scaling: cannot read %s\n", path.c_str());
    std::exit(2);
  }
  std::stringstream ss;
  ss << in.rdbuf();
  kernel::Scene scene = kernel::parseScene(ss.str(), path, {}, registry);
  kernel::KernelWorld world(scene, registry);
  const double dt = scene.dt;
  const std::string model = world.numContacts() ? scene.contacts.at(0).type : "none";
  const auto columns = world.reportColumns();
  const int ncc = world.numContactReportColumns();
  std::vector<double> values, sums(static_cast<std::size_t>(ncc), 0.0);
  int free_dofs = 0;
  for (char f : world.fixedMask()) free_dofs += !f;

  Crossing crossing;
  std::string who;
  auto step = [&](int k) {
    world.keepStepStart();  // with the swept check, as the time loop does (rodsim run)
    StepReport rep = world.solver().step(world, dt);
    if (rep.ok && world.rejectCrossedStep(crossing, who))
      rep = {false, rep.iterations, rep.residual, "rods '" + crossing.rod_a + "' and '" + crossing.rod_b + "' crossed"};
    if (!rep.ok) {
      std::fprintf(stderr, "bench_contact_scaling: %s: step %d failed: %s\n", path.c_str(), k, rep.message.c_str());
      std::exit(3);
    }
    return rep;
  };
  int k = 0;
  for (; k < skip; ++k) step(k);
  std::vector<double> cpu_ms, wall_ms, block_solves;
  double solves = 0, contacts = 0;
  for (int b = 0; b < blocks; ++b) {
    double block_cpu = 0, block_wall = 0, block_solve_count = 0;
    for (int s = 0; s < steps; ++s, ++k) {
      const double c0 = cpuSeconds();
      const auto t0 = std::chrono::steady_clock::now();
      const StepReport rep = step(k);
      block_cpu += cpuSeconds() - c0;
      block_wall += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      solves += rep.iterations;
      block_solve_count += rep.iterations;
      contacts += world.contactStats().active;
      world.reportValues(values);
      for (int c = 0; c < ncc; ++c) sums[c] += values[c];
    }
    cpu_ms.push_back(1e3 * block_cpu / steps);
    wall_ms.push_back(1e3 * block_wall / steps);
    block_solves.push_back(block_solve_count);
  }
  const double n = double(blocks) * steps;
  Result r{model, path, contacts / n, {}, {}};
  for (std::size_t b = 0; b < cpu_ms.size(); ++b) {
    r.us_per_contact.push_back(1e3 * cpu_ms[b] / std::max(1.0, r.contacts));
    r.us_per_solve_contact.push_back(r.us_per_contact.back() * steps / std::max(1.0, block_solves[b]));
  }
  std::printf("%-14s %7.0f contacts %7d free DOFs | cpu %9.2f ms/step (%.2f-%.2f) wall %9.2f | %7.2f us/step/contact "
              "(%.2f-%.2f), per solve %.2f (%.2f-%.2f) | %5.2f solves/step |",
              model.c_str(), r.contacts, free_dofs, median(cpu_ms), minOf(cpu_ms), maxOf(cpu_ms), median(wall_ms),
              median(r.us_per_contact), minOf(r.us_per_contact), maxOf(r.us_per_contact),
              median(r.us_per_solve_contact), minOf(r.us_per_solve_contact), maxOf(r.us_per_solve_contact), solves / n);
  for (int c = 0; c < ncc; ++c) {
    std::string name = columns[c];
    if (const auto dot = name.find('.'); dot != std::string::npos) name = name.substr(dot + 1);
    std::printf(" %s %.4g", name.c_str(), sums[c] / n);
  }
  std::printf(" | %s\n", path.c_str());
  std::fflush(stdout);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  rodsim::keepFreedMemoryInProcess();  // as the rodsim command does
  int skip = 2, blocks = 3, steps = 2;
  std::vector<std::string> scenes;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--skip" || a == "--blocks" || a == "--steps") && i + 1 < argc) {
      const int v = std::atoi(argv[++i]);
      (a == "--skip" ? skip : a == "--blocks" ? blocks : steps) = v;
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "usage: bench_contact_scaling [--skip 2] [--blocks 3] [--steps 2] SCENE.toml...\n");
      return 2;
    } else {
      scenes.push_back(a);
    }
  }
  if (scenes.empty() || blocks < 1 || steps < 1 || skip < 0) {
    std::fprintf(stderr, "usage: bench_contact_scaling [--skip 2] [--blocks 3] [--steps 2] SCENE.toml...\n");
    return 2;
  }
  kernel::TypeRegistry registry;
  kernel::loadPlugins(registry, {});
  std::printf("bench_contact_scaling: %d warm-up steps, %d blocks of %d steps; CPU time, median (min-max) over "
              "the blocks\n",
              skip, blocks, steps);
  std::map<std::string, std::vector<Result>> by_model;
  for (const auto& s : scenes) {
    Result r = bench(registry, s, skip, blocks, steps);
    by_model[r.model].push_back(std::move(r));
  }
  for (auto& entry : by_model) {
    auto& rs = entry.second;
    if (rs.size() < 2) continue;
    std::sort(rs.begin(), rs.end(), [](const Result& a, const Result& b) { return a.contacts < b.contacts; });
    const Result &lo = rs.front(), &hi = rs.back();
    std::printf("%s: cost per contact at %.0f / at %.0f contacts = %.2f (%.2f-%.2f); per solve %.2f (%.2f-%.2f)\n",
                entry.first.c_str(), hi.contacts, lo.contacts, median(hi.us_per_contact) / median(lo.us_per_contact),
                minOf(hi.us_per_contact) / maxOf(lo.us_per_contact), maxOf(hi.us_per_contact) / minOf(lo.us_per_contact),
                median(hi.us_per_solve_contact) / median(lo.us_per_solve_contact),
                minOf(hi.us_per_solve_contact) / maxOf(lo.us_per_solve_contact),
                maxOf(hi.us_per_solve_contact) / minOf(lo.us_per_solve_contact));
  }
  return 0;
}
