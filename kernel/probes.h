// Probes: named scalar outputs of a run (timeseries.csv columns), resolved once against the world.
#pragma once

#include <rodsim/kernel/readout.h>
#include <rodsim/kernel/scene.h>
#include <rodsim/kernel/world.h>

#include <rodsim/force.h>

#include <vector>

namespace rodsim::kernel {

// One [[probe]] resolved against the world; evaluation then only reads vectors.
struct Probe {
  const ProbeSpec* spec = nullptr;
  Rod* rod = nullptr;
  int node = -1;
  const Constraint* constraint = nullptr;
  // stretch, internal-force (node: an element), curvature, internal-couple (node: a junction's index
  // among RodStrainReport's junctions): the rod's report and buffers sized once (no allocation per row).
  const RodStrainReport* strains = nullptr;
  mutable RodStrains buffers;
  // contact-force: the contact models' reports, the scene's dt (the committed velocities as
  // ctx.velocity), and scratch reused between rows.
  std::vector<const ContactPairReport*> contact_reports;
  double dt = 0;
  mutable CommittedState committed;
  mutable std::vector<ContactRecord> records;
  // external-force: the scene's forces that are re-evaluated at the committed state, and their sum.
  std::vector<Force*> forces;
  mutable Vec force_sum;

  double value(KernelWorld& w) const;
};

// Every probe of the scene; an out-of-range node is an InputError at the probe's key.
std::vector<Probe> resolveProbes(const Scene& scene, KernelWorld& world);

}  // namespace rodsim::kernel
