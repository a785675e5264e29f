// The velocity-level (Moreau-Jean) contact step of `alart-curnier` for explicit solvers
// (VelocityImpulseContact, SDK 1.1); README.md, "Explicit solvers: the velocity-level step".
//
// The contact problem of Bertails-Descoubes et al. (Eqs. 1-2 and the local problem of Eq. 8) with the lumped mass M
// in place of the implicit step's A = M/dt^2 + K: without contact the step would end with the
// velocities v_free; contact impulses P (N s, frame (n, t1, t2) per contact) make them
//     v = v_free + M^-1 H^T P,
// so the local problem is u = W P + q_loc with the Delassus operator W = H M^-1 H^T (3x3 blocks,
// nonzero between contacts that share a node: no factorization of the rod system) and
//     q_loc = H v_free - frame v_surface,   normal row + max(gap(q), 0) / drift
// (the "predicted gap": positions keep moving for `drift` seconds at v after the configuration q
// where contacts are detected, so for an open contact the normal row u_N + gap/drift >= 0 is
// gap(q) + drift u_N >= 0, the end-of-step gap linearized at q; a contact closed at q gets u_N >= 0,
// Moreau's velocity Signorini). Signorini on that and exact Coulomb on u_T (their Eqs. 1-2)
// are solved by the same nonsmooth Newton (Eqs. 3-4, Goldstein-Price line search, Algorithms 1-2).
// The steps the implicit one has too are its own functions: the groups (partitionIntoGroups, with
// the nodes as units), W's entries per group (assembleLumpedDelassus beside assembleDelassus) and the
// group solves (solveGroups); this file builds what differs, q_loc and dv = M^-1 H^T P.
#include "ac_contact.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace rodsim::ac {

bool AlartCurnierContact::solveVelocity(const VelocityContactProblem& pb, Vec& dv) {
  const auto t_start = std::chrono::steady_clock::now();
  failure_.clear();
  const Vec& q = *pb.q;
  const Vec& vfree = *pb.v_free;
  const Vec& M = *pb.mass;
  const std::vector<char>& fixed = *pb.fixed;
  const double dt = pb.dt, drift = pb.drift;
  const int N = static_cast<int>(q.size());
  if (!(dt > 0)) return fail(fmt::format("the velocity-level contact step needs a time step; dt = {}", dt));
  if (!(drift >= 0)) return fail(fmt::format("the velocity-level contact step needs drift >= 0; drift = {}", drift));
  dv.setZero(N);

  // Contacts at q, frames re-evaluated (one contact solve per explicit step: nothing to freeze).
  frozen_valid_ = false;
  buildPoints(q);
  // Contacts whose nodes are all prescribed take no impulse.
  {
    std::size_t k = 0;
    for (std::size_t i = 0; i < points_.size(); ++i) {
      const ContactPoint& p = points_[i];
      bool free_dof = false;
      for (int j = 0; j < p.nodes; ++j)
        for (int c = 0; c < 3; ++c) free_dof = free_dof || !fixed[p.dof[j] + c];
      if (free_dof) points_[k++] = p;
    }
    points_.resize(k);
  }
  const int n = static_cast<int>(points_.size());
  ++step_.solves;
  stats_ = {};
  if (n == 0) {
    recordNoContacts(t_start);
    return true;
  }

  // Contacts sharing a node are coupled through W (the lumped mass couples nothing else): the
  // groups of the paper's Sec. 4.5 with the nodes as units (numbered by their x DOF; prescribed nodes too).
  touched_.resize(n);
  ntouched_.resize(n);
  for (int i = 0; i < n; ++i) {
    touched_[i] = points_[i].dof;
    ntouched_[i] = points_[i].nodes;
  }
  partitionIntoGroups(N);

  // q_loc: the contact-frame velocities at v_free relative to the surface, and the predicted gap.
  qloc_.setZero(3 * n);
  mu_vec_.setConstant(n, mu_);
  for (int i = 0; i < n; ++i) {
    const ContactPoint& p = points_[i];
    Vec3 vel = Vec3::Zero();
    for (int j = 0; j < p.nodes; ++j) vel += p.weight[j] * vfree.segment<3>(p.dof[j]);
    const Vec3 u = p.frame * (vel - p.surface_velocity);
    qloc_.segment<3>(3 * i) = u;
    // Predicted gap for contacts still open at q (they close exactly at the end of the step and
    // never penetrate from a positive gap); plain velocity Signorini (u_N >= 0) for contacts already
    // closed at q: a correction velocity -gap/drift would stay in v (the step has no separate
    // position correction) and return the impact velocity as a bounce. The overlap then stays what
    // the last drift before the impact made it, at most drift x the approach speed, and does not
    // grow while the contact holds (u_N >= 0).
    if (drift > 0 && p.gap > 0) qloc_[3 * i] += p.gap / drift;
    // Newton restitution c: u_N^+ >= -c u_N^- for a contact that closes within the step.
    if (restitution_ > 0 && u[0] < 0 && p.gap + drift * u[0] <= 0) qloc_[3 * i] += restitution_ * u[0];
  }

  assembleLumpedDelassus(M, fixed);
  // One Alart-Curnier problem per group, warm-started by contact identity. Solves of one contact
  // take a microsecond: timed as a whole (step_.solve_ms), not one by one; groups of up to 8
  // contacts factorize J by a dense LU.
  GroupSolve how;
  how.velocity = true;
  how.t = pb.t;
  how.dt = dt;
  how.options = options_;
  how.options.timed = false;
  how.options.dense_rows = 24;
  const int max_group = solveGroups(how);

  // dv = M^-1 H^T P on the free DOFs of the contacts' nodes (positions only: H has no column on a
  // rotation or twist DOF).
  auto minv = [&](int d) { return fixed[d] ? 0.0 : 1.0 / M[d]; };
  for (int i = 0; i < n; ++i) {
    const ContactPoint& p = points_[i];
    const Vec3 P = p.frame.transpose() * r_.segment<3>(3 * i);
    for (int j = 0; j < p.nodes; ++j)
      for (int c = 0; c < 3; ++c) dv[p.dof[j] + c] += minv(p.dof[j] + c) * p.weight[j] * P[c];
  }

  // Bookkeeping. min_gap: the end-of-step gap predicted at q, gap(q) + drift u_N with u_N at the
  // corrected velocities (the gap at q itself when drift = 0).
  storeWarmStarts();
  int free_dofs = 0;
  for (char f : fixed) free_dofs += !f;
  nu_ = free_dofs > 0 ? 3.0 * n / free_dofs : 0.0;
  for (int i = 0; i < n; ++i) {
    if (r_[3 * i] > 0) ++stats_.active;
    const ContactPoint& p = points_[i];
    Vec3 vel = Vec3::Zero();
    for (int j = 0; j < p.nodes; ++j) vel += p.weight[j] * (vfree.segment<3>(p.dof[j]) + dv.segment<3>(p.dof[j]));
    const double end_gap = p.true_gap + drift * p.frame.row(0).dot(vel - p.surface_velocity);
    stats_.min_gap = std::min(stats_.min_gap, end_gap);
  }
  recordSolve(max_group, t_start);
  if (std::getenv("RODSIM_AC_DEBUG"))
    std::fprintf(stderr, "ac-velocity: n=%d groups=%d it=%d rel=%.2e abs=%.2e |dv|=%.3e min_gap=%.3e\n", n,
                 int(groups_.size()), last_.iterations, last_.residual.rel, last_.residual.abs, dv.norm(),
                 stats_.min_gap);
  return last_.converged || failNotConverged("velocity-level contact solve");
}

}  // namespace rodsim::ac
