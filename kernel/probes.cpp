#include "probes.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace rodsim::kernel {

namespace {

double component(const Vec3& v, const std::string& c) {
  if (c == "x") return v.x();
  if (c == "y") return v.y();
  if (c == "z") return v.z();
  return v.norm();
}

// The component of a vector in a rod's material frame: x, y, z are the d1, d2, d3 components.
double materialComponent(const double* v, const std::string& c) {
  if (c == "x") return v[0];
  if (c == "y") return v[1];
  if (c == "z") return v[2];
  return std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
}

bool isElementProbe(const std::string& type) { return type == "stretch" || type == "internal-force"; }
bool isJunctionProbe(const std::string& type) { return type == "curvature" || type == "internal-couple"; }

}  // namespace

double Probe::value(KernelWorld& w) const {
  if (spec->type == "constraint-torque") return component(constraintReaction(w, *constraint).torque, spec->component);
  if (isElementProbe(spec->type)) {
    strains->reportElements(buffers.stretch.data(), nullptr, buffers.force.data());
    if (spec->type == "stretch") return buffers.stretch[std::size_t(node)];
    return component(Vec3(buffers.force[3 * std::size_t(node)], buffers.force[3 * std::size_t(node) + 1],
                          buffers.force[3 * std::size_t(node) + 2]),
                     spec->component);
  }
  if (isJunctionProbe(spec->type)) {
    strains->reportJunctions(buffers.curvature.data(), buffers.couple.data());
    const auto& v = spec->type == "curvature" ? buffers.curvature : buffers.couple;
    return materialComponent(v.data() + 3 * std::size_t(node), spec->component);
  }
  if (spec->type == "external-force") {
    // At the committed state with the committed velocities (q_start = q - dt v); as the Python module's
    // Rod.external_forces.
    const EvalContext& ctx = committed.at(w, dt);
    force_sum.setZero(w.numDofs());
    for (Force* f : forces) f->addForce(ctx, force_sum);
    return component(force_sum.segment<3>(rod->globalPositionDof(node)), spec->component);
  }
  if (spec->type == "contact-force") {
    const EvalContext& ctx = committed.at(w, dt);
    records.clear();
    for (const ContactPairReport* r : contact_reports) r->contactPairs(ctx, records);
    const int x = rod->globalPositionDof(node);
    Vec3 f = Vec3::Zero();
    for (const ContactRecord& c : records)
      for (int k = 0; k < 4; ++k)
        if (c.node_dofs[k] == x) f += c.node_forces[k];
    return component(f, spec->component);
  }
  if (spec->type == "constraint-force") {
    Vec3 f = Vec3::Zero();
    for (int d : constraint->positionDofs()) f += w.residual().segment<3>(d);
    return component(f, spec->component);
  }
  // translational, of the rod's nodes (e.g. E_T of Gazzola et al. (2018), Fig. 14)
  if (spec->type == "kinetic-energy") {
    const int k0 = spec->component == "norm" ? 0 : spec->component == "x" ? 0 : spec->component == "y" ? 1 : 2;
    const int k1 = spec->component == "norm" ? 3 : k0 + 1;
    double E = 0;
    for (int i = 0; i < rod->numNodes(); ++i) {
      const int d = rod->globalPositionDof(i);
      for (int k = k0; k < k1; ++k) E += 0.5 * w.mass()[d + k] * w.v()[d + k] * w.v()[d + k];
    }
    return E;
  }
  // mass-weighted node positions: the snake's forward motion (Gazzola et al. (2018), Fig. 10)
  if (spec->type == "center-of-mass") {
    Vec3 x = Vec3::Zero();
    double m = 0;
    for (int i = 0; i < rod->numNodes(); ++i) {
      const int d = rod->globalPositionDof(i);
      x += w.mass()[d] * w.q().segment<3>(d);
      m += w.mass()[d];
    }
    return component(m > 0 ? Vec3(x / m) : x, spec->component);
  }
  const int d = rod->globalPositionDof(node);
  if (spec->type == "node-position") return component(w.q().segment<3>(d), spec->component);
  if (spec->type == "node-velocity") return component(w.v().segment<3>(d), spec->component);
  // end-to-end
  const Vec3 e = w.q().segment<3>(rod->globalPositionDof(rod->numNodes() - 1)) - w.q().segment<3>(rod->globalPositionDof(0));
  return component(e, spec->component);
}

std::vector<Probe> resolveProbes(const Scene& scene, KernelWorld& world) {
  std::vector<Probe> out;
  for (const auto& p : scene.probes) {
    Probe probe;
    probe.spec = &p;
    if (p.type == "constraint-force" || p.type == "constraint-torque") {
      for (const auto& c : world.constraints())
        if (c.spec->name == p.constraint) probe.constraint = c.object.get();
    } else if (isElementProbe(p.type) || isJunctionProbe(p.type)) {
      probe.rod = world.findRod(p.rod);
      const std::string where = p.keys.count("node") ? p.keys.at("node").text : p.where.text;
      const std::string what = fmt::format("{}: probe '{}' ({})", where, p.name, p.type);
      probe.strains = &strainReport(*probe.rod, what);
      readRodStrains(*probe.strains, probe.buffers);  // sizes the buffers once
      if (isElementProbe(p.type)) {
        const long long n = probe.strains->numStrainElements();
        const long long i = p.node < 0 ? n + p.node : p.node;
        if (i < 0 || i >= n)
          throw InputError(fmt::format("{}: element {} is out of range for rod '{}' with {} elements (node counts "
                                       "elements for this probe; negative counts from the end)",
                                       what, p.node, p.rod, n));
        probe.node = static_cast<int>(i);
      } else {
        // node names a rod node; the probe reads the junction at that node.
        const int node = probe.rod->resolveNode(p.node);
        const auto& nodes = probe.buffers.junction_nodes;
        const auto it = std::find(nodes.begin(), nodes.end(), node);
        if (node < 0 || it == nodes.end())
          throw InputError(fmt::format("{}: node {} of rod '{}' has no curvature: the rod's model measures it at "
                                       "nodes {} to {} (between two elements)",
                                       what, p.node, p.rod, nodes.empty() ? 0 : nodes.front(),
                                       nodes.empty() ? -1 : nodes.back()));
        probe.node = static_cast<int>(it - nodes.begin());
      }
    } else {
      if (p.type == "external-force") {
        probe.dt = scene.dt;
        for (const auto& [spec, component] : world.components())
          if (spec->section == "force")
            if (auto* f = dynamic_cast<Force*>(component); f && !f->constantInStep()) probe.forces.push_back(f);
      }
      if (p.type == "contact-force") {
        probe.dt = scene.dt;
        for (int i = 0; i < world.numContacts(); ++i) {
          const auto* report = world.contact(i).as<ContactPairReport>();
          if (!report)
            throw InputError(fmt::format("{}: probe '{}' (contact-force): contact '{}' does not report its contacts and "
                                         "their forces (capability contact-pair-report, SDK 1.8)",
                                         p.where.text, p.name, world.contact(i).name()));
          probe.contact_reports.push_back(report);
        }
      }
      probe.rod = world.findRod(p.rod);
      probe.node = probe.rod->resolveNode(p.node);
      if (probe.node < 0)
        throw InputError(fmt::format("{}: probe '{}': node {} is out of range for rod '{}' with {} nodes",
                                     p.keys.count("node") ? p.keys.at("node").text : p.where.text, p.name, p.node, p.rod,
                                     probe.rod->numNodes()));
    }
    out.push_back(probe);
  }
  return out;
}

}  // namespace rodsim::kernel
