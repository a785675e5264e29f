// ContactPairReport of spring-dashpot (SDK 1.8): the element pairs and node-obstacle contacts in
// contact at a configuration with the forces addForceReference applies there (Eq. 37's normal force
// f_n = k eps - gamma dD/dt along the closest points' normal, spread on the four nodes by the
// closest-point weights; friction.h's friction; nodeObstacle for the obstacles), for output between
// steps. Candidates, statistics and the swept check's state are left as they are.
#include "friction.h"
#include "spring_dashpot.h"

namespace rodsim::spring_dashpot {

void SpringDashpotContact::contactPairs(const EvalContext& ctx, std::vector<ContactRecord>& out) const {
  const Vec& q = *ctx.q;
  const bool damp = dashpotOn(ctx);
  const ContactLaw lw = law(ctx);
  geometry::SegmentNormal sn;
  for (const auto& ab : cand_) {
    const EdgeRef &A = edges_[ab.first], &B = edges_[ab.second];
    pairNormal(q, A, B, sn);
    const double rsum = A.radius + B.radius;
    const double eps = rsum - sn.D;
    if (!(eps > 0)) continue;
    double fn = k_ * eps;
    if (damp) fn -= gamma_ * normalVelocity(ctx, A, B, sn);
    ContactRecord r;
    r.rod_a = rods_[std::size_t(A.rod)]->name();
    r.rod_b = rods_[std::size_t(B.rod)]->name();
    r.edge_a = A.index;
    r.edge_b = B.index;
    r.gap = -eps;
    const int xs[4] = {A.x0, A.x1, B.x0, B.x1};
    for (int k = 0; k < 4; ++k) {
      r.node_dofs[k] = xs[k];
      r.node_forces[k] = sn.w[k] * fn * sn.n;
    }
    r.normal_force = r.node_forces[0] + r.node_forces[1];
    // From b to a: the direction a is pushed by a positive normal force.
    const double wa = sn.w[0] + sn.w[1];
    if (wa != 0.0) r.normal = (wa > 0 ? 1.0 : -1.0) * sn.n;
    if (frictionOn(ctx) && sn.D > 1e-12 * rsum) {
      Vec3 x[4];
      geometry::Vec12 u, F;
      for (int k = 0; k < 4; ++k) {
        x[k] = node(q, xs[k]);
        u.segment<3>(3 * k) = x[k] - ctx.q_start->segment<3>(xs[k]);
      }
      if (pairFriction(x, u, ctx.dt, sn, rsum, lw, F, nullptr)) {
        for (int k = 0; k < 4; ++k) r.node_forces[k] += F.segment<3>(3 * k);
        r.friction_force = F.segment<3>(0) + F.segment<3>(3);
      }
    }
    out.push_back(std::move(r));
  }
  const bool moving = (lw.gamma > 0 || lw.mu > 0);
  Vec3 F, u;
  for (std::size_t i = 0; i < node_dofs_.size(); ++i) {
    const int x = node_dofs_[i];
    const Vec3 xi = node(q, x);
    if (moving) u = xi - ctx.q_start->segment<3>(x);
    for (const Obstacle* o : obstacles_) {
      const double gap = nodeObstacle(*o, xi, node_radius_[i], moving ? &u : nullptr, ctx.dt, lw, F, nullptr);
      if (!(gap < 0)) continue;
      ContactRecord r;
      r.rod_a = rods_[std::size_t(node_rod_[i])]->name();
      r.edge_a = node_index_[i];
      r.rod_b = o->name;
      r.obstacle = true;
      r.gap = gap;
      Vec3 n;
      o->signedDistance(xi, &n);
      r.normal = n;
      r.normal_force = F.dot(n) * n;  // nodeObstacle's force: normal (spring and dashpot) plus friction
      r.friction_force = F - r.normal_force;
      r.node_dofs[0] = x;
      r.node_forces[0] = F;
      out.push_back(std::move(r));
    }
  }
}

}  // namespace rodsim::spring_dashpot
