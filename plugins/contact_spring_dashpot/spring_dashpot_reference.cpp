// The readable forms of SpringDashpotContact::addForce and addStiffness: Eq. 37 and its Jacobian
// pair by pair over the whole candidate list, through geometry::segmentNormal. addForce and
// addStiffness (spring_dashpot.cpp with pair_kernel.cpp: the near list, vectorized closest points)
// compute bitwise the same; the tests compare them (tests/plugins/contact_spring_dashpot). Not called
// at run time.
#include "spring_dashpot.h"

#include <rodsim/geometry/segment_normal.h>

#include <algorithm>

namespace rodsim::spring_dashpot {

using geometry::SegmentNormal;

// Eq. 37: the force on element i is H(eps) [-k eps - gamma (v_i - v_j) . n] n with n from i to j;
// (v_i - v_j) . n = -dD/dt, so the generalized force on the 12 node coordinates is
// f_n dD/dx with f_n = k eps - gamma dD/dt (dD/dx_k = w_k n, rodsim/geometry/segment_normal.h): the
// spring is -dE/dx of E = k eps^2 / 2, the dashpot dissipates -gamma (dD/dt)^2 <= 0.
void SpringDashpotContact::addForceReference(const EvalContext& ctx, const Vec& /*non_contact*/, Vec& f) {
  const Vec& q = *ctx.q;
  maybeRefresh(q);
  const bool damp = dashpotOn(ctx);
  stats_ = {};
  SegmentNormal sn;
  // Pairs not in the list are at d >= r_a + r_b here (maybeRefresh): clearance >= (r_a + r_b)/2.
  double clearance = r_min_;
  for (const auto& ab : cand_) {
    const EdgeRef &A = edges_[ab.first], &B = edges_[ab.second];
    pairNormal(q, A, B, sn);
    const double eps = A.radius + B.radius - sn.D;  // Eq. 37's overlap (Eq. 36: d_min)
    stats_.min_gap = std::min(stats_.min_gap, -eps);
    clearance = std::min(clearance, sn.D - 0.5 * (A.radius + B.radius));
    if (!(eps > 0)) continue;  // H(eps)
    ++stats_.active;
    double fn = k_ * eps;
    if (damp) fn -= gamma_ * normalVelocity(ctx, A, B, sn);
    const Vec3 F = fn * sn.n;
    f.segment<3>(A.x0) += sn.w[0] * F;
    f.segment<3>(A.x1) += sn.w[1] * F;
    f.segment<3>(B.x0) += sn.w[2] * F;
    f.segment<3>(B.x1) += sn.w[3] * F;
  }
  // Friction of the pairs in contact (friction.h), after all normal forces, in candidate order.
  if (frictionOn(ctx))
    for (const auto& ab : cand_) addPairFriction(ctx, edges_[ab.first], edges_[ab.second], &f, nullptr);
  if (!obstacles_.empty()) addObstacleForces(ctx, f, clearance);
  clearance_eval_ = clearance;
  keepEvaluationNodes(q);
}

// F = f_n g with g = dD/dx, f_n = k (R - D) - gamma g . v and v = (q - q_start)/dt, so
// dF/dq = -g (k g + gamma (H v + g/dt))^T + f_n H and K = -dF/dq =
// (k + gamma/dt) g g^T + gamma g (H v)^T - f_n H (H = d2D/dx2, segmentDistanceHessian). Not symmetric with
// damping (the implicit solvers then factorize with LU); the explicit solvers bound their step
// with its Gershgorin row sums.
void SpringDashpotContact::addStiffnessReference(const EvalContext& ctx, StiffnessSink& K) {
  const Vec& q = *ctx.q;
  maybeRefresh(q);
  const bool damp = dashpotOn(ctx);
  const double vd = damp ? ctx.velocityDerivative() : 0.0;
  SegmentNormal sn;
  PairTerms p;
  geometry::Mat12 block, hess;
  for (const auto& ab : cand_) {
    const EdgeRef &A = edges_[ab.first], &B = edges_[ab.second];
    pairNormal(q, A, B, sn);
    const double eps = A.radius + B.radius - sn.D;
    if (!(eps > 0)) continue;
    pairTerms(ctx, damp, A, B, sn, eps, p);
    block.noalias() = (k_ + gamma_ * vd) * p.g * p.g.transpose();
    // The distance's curvature (closed form, rodsim/geometry/segment_normal.h); none where the centre
    // lines meet (D = 0: no Hessian).
    if (sn.D > 1e-12 * (A.radius + B.radius)) {
      geometry::segmentDistanceHessian(node(q, A.x0), node(q, A.x1), node(q, B.x0), node(q, B.x1), sn, hess);
      if (damp) block.noalias() += gamma_ * p.g * (hess * p.v).transpose();
      block.noalias() -= p.fn * hess;
    }
    // Only the nodes the pair's distance depends on (pairTerms: why the others have no entries).
    for (int l = 0; l < 4; ++l) {
      if (!p.on[l]) continue;
      for (int k = 0; k < 4; ++k) {
        if (!p.on[k]) continue;
        for (int c = 0; c < 3; ++c)
          for (int r = 0; r < 3; ++r) K.add(p.dofs[3 * k + r], p.dofs[3 * l + c], block(3 * k + r, 3 * l + c));
      }
    }
  }
  if (frictionOn(ctx))
    for (const auto& ab : cand_) addPairFriction(ctx, edges_[ab.first], edges_[ab.second], nullptr, &K);
  if (!obstacles_.empty()) addObstacleStiffness(ctx, K);
}

}  // namespace rodsim::spring_dashpot
