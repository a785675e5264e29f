// The readable form of SpringDashpotContact::addForce: Eq. 37 pair by pair through
// geometry::segmentNormal. addForce (spring_dashpot.cpp with pair_kernel.cpp) computes bitwise the
// same; the tests compare the two (tests/plugins/contact_spring_dashpot). Not called at run time.
#include "spring_dashpot.h"

#include <algorithm>

namespace rodsim::spring_dashpot {

using geometry::SegmentNormal;

// sum_k w_k n . v_k with v = (q - q_start)/dt (EvalContext::velocity), one division per pair.
double SpringDashpotContact::normalVelocity(const EvalContext& ctx, const EdgeRef& A, const EdgeRef& B,
                                            const SegmentNormal& sn) const {
  const int xs[4] = {A.x0, A.x1, B.x0, B.x1};
  const Vec& q = *ctx.q;
  const Vec& q0 = *ctx.q_start;
  Vec3 dx = Vec3::Zero();
  for (int k = 0; k < 4; ++k) dx += sn.w[k] * (q.segment<3>(xs[k]) - q0.segment<3>(xs[k]));
  return sn.n.dot(dx) / ctx.dt;
}

// Eq. 37: the force on element i is H(eps) [-k eps - gamma (v_i - v_j) . n] n with n from i to j;
// (v_i - v_j) . n = -dD/dt, so the generalized force on the 12 node coordinates is
// f_n dD/dx with f_n = k eps - gamma dD/dt (dD/dx_k = w_k n, rodsim/geometry/segment_normal.h): the
// spring is -dE/dx of E = k eps^2 / 2, the dashpot dissipates -gamma (dD/dt)^2 <= 0.
void SpringDashpotContact::addForceReference(const EvalContext& ctx, const Vec& /*non_contact*/, Vec& f) {
  const Vec& q = *ctx.q;
  maybeRefresh(q);
  const bool damp = gamma_ > 0 && !ctx.quasi_static && ctx.q_start && ctx.dt > 0;
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
  clearance_eval_ = clearance;
  keepEvaluationNodes(q);
}

}  // namespace rodsim::spring_dashpot
