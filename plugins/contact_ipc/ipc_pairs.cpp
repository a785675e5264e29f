// ContactPairReport of ipc (SDK 1.8): the candidates whose barrier is active (or whose lagged friction
// acts) at a configuration, with the forces addForce applies there (the barrier's -kappa dB/dx and the
// lagged friction potential's -dD/dx), for output between steps. Evaluated into locals: candidates,
// kappa and statistics stay as they are.
#include "ipc_contact.h"

namespace rodsim::ipc {

namespace {

// The index of the node of `rod` whose x DOF is `x` (-1 if none).
int nodeOf(const Rod& rod, int x) {
  for (int i = 0; i < rod.numNodes(); ++i)
    if (rod.globalPositionDof(i) == x) return i;
  return -1;
}

}  // namespace

void IpcContact::contactPairs(const EvalContext& ctx, std::vector<ContactRecord>& out) const {
  const Vec& q = *ctx.q;
  const bool fric = mu_ > 0 && !ctx.quasi_static && ctx.q_start && ctx.dt > 0;
  const double eps_u = eps_v_ * ctx.dt;
  PairBarrier pb;
  NodeFriction<4> pf;
  NodeFriction<1> nf;
  Vec3 p0, p1, q0, q1;
  Vec12 dx;
  for (const Candidate& c : cand_) {
    pairNodes(q, c, p0, p1, q0, q1);
    pairBarrier(p0, p1, q0, q1, pairReach(c), c.d_hat, c.eps_x, 1, pb);
    const bool rubbing = fric && c.lag.lambda_unit > 0;
    if (!pb.active && !rubbing) continue;
    const EdgeRef &A = edges_[c.a], &B = edges_[c.b];
    ContactRecord r;
    const Rod &ra = *rods_bound_[std::size_t(A.rod)], &rb = *rods_bound_[std::size_t(B.rod)];
    r.rod_a = ra.name();
    r.rod_b = rb.name();
    r.edge_a = nodeOf(ra, A.x0);
    r.edge_b = nodeOf(rb, B.x0);
    r.gap = pb.gap - c.offset;  // the true gap, as stats()
    Vec12 Fn = Vec12::Zero(), Ff = Vec12::Zero();
    if (pb.active) Fn = -kappa_ * pb.grad;
    if (rubbing) {
      const double w[4] = {1 - c.lag.s, c.lag.s, -(1 - c.lag.t), -c.lag.t};
      pairDisplacement(ctx, c, dx);
      frictionPotential<4>(w, dx, c.lag.n, mu_ * kappa_ * c.lag.lambda_unit, eps_u, 1, pf);
      Ff = -pf.grad;
    }
    r.normal_force = Fn.segment<3>(0) + Fn.segment<3>(3);
    r.friction_force = Ff.segment<3>(0) + Ff.segment<3>(3);
    if (r.normal_force.norm() > 0) r.normal = r.normal_force.normalized();
    const int xs[4] = {A.x0, A.x1, B.x0, B.x1};
    for (int k = 0; k < 4; ++k) {
      r.node_dofs[k] = xs[k];
      r.node_forces[k] = Fn.segment<3>(3 * k) + Ff.segment<3>(3 * k);
    }
    out.push_back(std::move(r));
  }
  for (const ObstacleCandidate& c : obstacle_cand_) {
    Vec3 n;
    const double gap = c.obstacle->signedDistance(node(q, c.x), &n) - c.reach;
    const bool rubbing = fric && c.lambda_unit > 0;
    if (!(gap < c.d_hat) && !rubbing) continue;
    ContactRecord r;
    for (const Rod* rod : rods_bound_) {
      const int i = nodeOf(*rod, c.x);
      if (i < 0) continue;
      r.rod_a = rod->name();
      r.edge_a = i;
    }
    r.rod_b = c.obstacle->name;
    r.obstacle = true;
    r.gap = gap - c.offset;
    r.normal = n;
    if (gap < c.d_hat) r.normal_force = -kappa_ * barrier(gap, c.d_hat).d1 * n;
    if (rubbing) {
      const double w[1] = {1.0};
      frictionPotential<1>(w, obstacleSlide(ctx, c), c.n_lag, mu_ * kappa_ * c.lambda_unit, eps_u, 1, nf);
      r.friction_force = -nf.grad;
    }
    r.node_dofs[0] = c.x;
    r.node_forces[0] = r.normal_force + r.friction_force;
    out.push_back(std::move(r));
  }
}

}  // namespace rodsim::ipc
