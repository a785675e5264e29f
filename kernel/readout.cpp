#include <rodsim/kernel/readout.h>

#include <rodsim/kernel/scene.h>

#include <algorithm>

namespace rodsim::kernel {

Reaction constraintReaction(KernelWorld& world, const Constraint& constraint) {
  Reaction r;
  const Vec& res = world.residual();
  const Vec& q = world.q();
  const std::vector<int>& pos = constraint.positionDofs();
  for (int d : pos) r.point += q.segment<3>(d);
  r.nodes = static_cast<int>(pos.size());
  if (r.nodes > 0) r.point /= r.nodes;
  for (int d : pos) {
    const Vec3 f = res.segment<3>(d);
    r.force += f;
    r.torque += (q.segment<3>(d) - r.point).cross(f);
  }
  // The frame DOFs the constraint holds, edge by edge (a sorted copy of its DOFs to look them up).
  std::vector<int> held = constraint.dofs();
  std::sort(held.begin(), held.end());
  auto isHeld = [&](int d) { return std::binary_search(held.begin(), held.end(), d); };
  for (int i = 0; i < world.numRods(); ++i) {
    Rod& rod = world.rod(i);
    const int off = rod.dofOffset();
    if (held.empty() || held.back() < off || held.front() >= off + rod.numDofs()) continue;
    const RodStrainReport* report = rod.as<RodStrainReport>();
    for (int e = 0; e < rod.numEdges(); ++e) {
      const std::vector<int> frame = rod.frameDofs(e);
      double g[3] = {0, 0, 0};
      bool any = false;
      for (std::size_t k = 0; k < frame.size() && k < 3; ++k)
        if (isHeld(off + frame[k])) {
          g[k] = res[off + frame[k]];
          any = true;
        }
      if (!any) continue;
      ++r.frames;
      if (report) {
        r.torque += report->frameTorque(e, g);
      } else if (rod.twistDof(e) >= 0 && isHeld(off + rod.twistDof(e))) {
        Vec3 t, m1, m2;
        rod.materialFrame(e, t, m1, m2);
        r.torque += res[off + rod.twistDof(e)] * t;
      }
    }
  }
  return r;
}

const RodStrainReport& strainReport(const Rod& rod, const std::string& what) {
  if (const RodStrainReport* s = rod.as<RodStrainReport>()) return *s;
  throw InputError(what + ": rod '" + rod.name() + "' (its model) does not report strains and internal loads "
                   "(capability rod-strain-report, SDK 1.7)");
}

void readRodStrains(const RodStrainReport& report, RodStrains& out) {
  const int ne = report.numStrainElements(), nj = report.numJunctions();
  out.stretch.resize(std::size_t(ne));
  out.shear.resize(3 * std::size_t(ne));
  out.force.resize(3 * std::size_t(ne));
  out.curvature.resize(3 * std::size_t(nj));
  out.couple.resize(3 * std::size_t(nj));
  out.junction_nodes.resize(std::size_t(nj));
  report.reportElements(out.stretch.data(), out.shear.data(), out.force.data());
  report.reportJunctions(out.curvature.data(), out.couple.data());
  for (int k = 0; k < nj; ++k) out.junction_nodes[std::size_t(k)] = report.junctionNode(k);
  out.shearable = report.shearable();
}

const EvalContext& CommittedState::at(KernelWorld& world, double dt) {
  q_start_ = world.q() - dt * world.v();
  ctx_ = EvalContext{};
  ctx_.t = world.time();
  ctx_.dt = dt;
  ctx_.q = &world.q();
  ctx_.q_start = &q_start_;
  ctx_.v_start = &world.v();
  return ctx_;
}

}  // namespace rodsim::kernel
