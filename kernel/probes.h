// Probes: named scalar outputs of a run (timeseries.csv columns), resolved once against the world.
#pragma once

#include <rodsim/kernel/scene.h>
#include <rodsim/kernel/world.h>

#include <vector>

namespace rodsim::kernel {

// One [[probe]] resolved against the world; evaluation then only reads vectors.
struct Probe {
  const ProbeSpec* spec;
  Rod* rod = nullptr;
  int node = -1;
  const Constraint* constraint = nullptr;

  double value(KernelWorld& w) const;
};

// Every probe of the scene; an out-of-range node is an InputError at the probe's key.
std::vector<Probe> resolveProbes(const Scene& scene, KernelWorld& world);

}  // namespace rodsim::kernel
