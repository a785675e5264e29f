// ContactPairReport of imc (SDK 1.8): the candidate pairs and node-obstacle candidates active at a
// configuration, with the forces addForce applies there (Eqs. 9-13 for the contact force, Eqs. 14-21
// for friction), for output between steps. The same evaluations as addForce, into locals: nothing the
// next step reads (candidates, stiffness, statistics) changes.
#include "imc_contact.h"

#include "friction.h"
#include "imc_energy.h"

namespace rodsim::imc {

void ImcContact::contactPairs(const EvalContext& ctx, std::vector<ContactRecord>& out) const {
  const Vec& q = *ctx.q;
  const bool fric = mu_ > 0 && !ctx.quasi_static;
  PairEvaluation pe;
  FrictionResult fr;
  Vec12 v;
  for (const Pair& p : cand_) {
    const EdgeRef &A = edges_[p.a], &B = edges_[p.b];
    evaluatePair(node(q, A.x0), node(q, A.x1), node(q, B.x0), node(q, B.x1), 0.5 * (A.radius + B.radius), delta_, k_,
                 1, pe);
    if (!pe.e.active) continue;
    ContactRecord r;
    r.rod_a = rod_names_bound_[std::size_t(A.rod)];
    r.rod_b = rod_names_bound_[std::size_t(B.rod)];
    r.edge_a = A.index;
    r.edge_b = B.index;
    r.gap = pe.gap;
    const Vec3 fn = pe.force.segment<3>(0) + pe.force.segment<3>(3);  // the contact force on edge a
    r.normal_force = fn;
    if (fn.norm() > 0) r.normal = fn.normalized();
    Vec12 total = pe.force;
    if (fric) {
      pairVelocity(ctx, A, B, v);
      pairFriction(pe.force, v, mu_, K2_, false, fr);
      total += fr.force;
      r.friction_force = fr.force.segment<3>(0) + fr.force.segment<3>(3);
    }
    const int xs[4] = {A.x0, A.x1, B.x0, B.x1};
    for (int k = 0; k < 4; ++k) {
      r.node_dofs[k] = xs[k];
      r.node_forces[k] = total.segment<3>(3 * k);
    }
    out.push_back(std::move(r));
  }
  for (const auto& c : obstacle_cand_) {
    Vec3 n;
    const double d = c.obstacle->signedDistance(node(q, c.x), &n);
    const PenaltyValue e = imcEnergy(d / c.radius, 1.0, delta_ / c.radius);
    if (!e.active) continue;
    ContactRecord r;
    // The rod and node of DOF c.x.
    for (int i = 0; i < world_->numRods(); ++i) {
      Rod& rod = world_->rod(i);
      if (c.x < rod.dofOffset() || c.x >= rod.dofOffset() + rod.numDofs()) continue;
      r.rod_a = rod.name();
      for (int j = 0; j < rod.numNodes(); ++j)
        if (rod.globalPositionDof(j) == c.x) r.edge_a = j;
    }
    r.rod_b = c.obstacle->name;
    r.obstacle = true;
    r.gap = d - c.radius;
    r.normal = n;
    const double fn = -k_ / c.radius * e.d1;
    r.normal_force = fn * n;
    if (fric) {
      Vec3 f, vel;
      for (int i = 0; i < 3; ++i) vel[i] = ctx.velocity(c.x + i);
      nodeFriction(fn, n, vel - c.obstacle->surfaceVelocity(node(q, c.x) - d * n), mu_, K2_, f, nullptr, nullptr);
      r.friction_force = f;
    }
    r.node_dofs[0] = c.x;
    r.node_forces[0] = r.normal_force + r.friction_force;
    out.push_back(std::move(r));
  }
}

}  // namespace rodsim::imc
