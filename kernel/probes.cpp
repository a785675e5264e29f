#include "probes.h"

#include <fmt/format.h>

namespace rodsim::kernel {

namespace {

double component(const Vec3& v, const std::string& c) {
  if (c == "x") return v.x();
  if (c == "y") return v.y();
  if (c == "z") return v.z();
  return v.norm();
}

}  // namespace

double Probe::value(KernelWorld& w) const {
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
    Probe probe{&p};
    if (p.type == "constraint-force") {
      for (const auto& c : world.constraints())
        if (c.spec->name == p.constraint) probe.constraint = c.object.get();
    } else {
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
