// The velocity-level (Moreau-Jean) contact step of `alart-curnier` for explicit solvers
// (VelocityImpulseContact, SDK 1.1); README.md, "Explicit solvers: the velocity-level step".
//
// The contact problem of seed 003 (Eqs. 1-2 and the local problem of Eq. 8) with the lumped mass M
// in place of the implicit step's A = M/dt^2 + K: without contact the step would end with the
// velocities v_free; contact impulses P (N s, frame (n, t1, t2) per contact) make them
//     v = v_free + M^-1 H^T P,
// so the local problem is u = W P + q_loc with the Delassus operator W = H M^-1 H^T (3x3 blocks,
// nonzero between contacts that share a node: no factorization of the rod system) and
//     q_loc = H v_free - frame v_surface,   normal row + max(gap(q), 0) / drift
// (the "predicted gap": positions keep moving for `drift` seconds at v after the configuration q
// where contacts are detected, so for an open contact the normal row u_N + gap/drift >= 0 is
// gap(q) + drift u_N >= 0, the end-of-step gap linearized at q; a contact closed at q gets u_N >= 0,
// Moreau's velocity Signorini). Signorini on that and exact Coulomb on u_T (seed Eqs. 1-2)
// are solved by the same nonsmooth Newton (Eqs. 3-4, Goldstein-Price line search, Algorithms 1-2).
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
  auto minv = [&](int d) { return fixed[d] ? 0.0 : 1.0 / M[d]; };

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
    groups_.clear();
    last_ = {};
    last_.converged = true;
    nu_ = 0;
    step_.contacts = step_.groups = step_.max_group = 0;
    step_.ac_norm = step_.nu = step_.rel = step_.abs = 0;
    step_.solve_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_start).count();
    return true;
  }

  // Node incidences (x DOF, contact, node slot), sorted by DOF: contacts sharing a node are coupled
  // through W (the lumped mass couples nothing else), and they form the independent groups of seed
  // Sec. 4.5 (union-find).
  vel_nodes_.clear();
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < points_[i].nodes; ++j) vel_nodes_.push_back({points_[i].dof[j], i, j});
  std::sort(vel_nodes_.begin(), vel_nodes_.end());
  vel_parent_.resize(n);
  for (int i = 0; i < n; ++i) vel_parent_[i] = i;
  auto find = [&](int x) {
    while (vel_parent_[x] != x) x = vel_parent_[x] = vel_parent_[vel_parent_[x]];
    return x;
  };
  for (std::size_t k = 1; k < vel_nodes_.size(); ++k)
    if (vel_nodes_[k][0] == vel_nodes_[k - 1][0]) {
      const int a = find(vel_nodes_[k][1]), b = find(vel_nodes_[k - 1][1]);
      if (a != b) vel_parent_[std::max(a, b)] = std::min(a, b);
    }
  groupContacts(n, n, [&](int i) { return partition_ ? find(i) : 0; });

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

  // W = H M^-1 H^T: block (a, b) += w_a w_b F_a diag(M^-1 of the node) F_b^T for every node the two
  // contacts share (fixed DOFs: M^-1 = 0).
  // (One triplet list per group, kept with their capacity between steps: W's entries are the
  // problem's only sizeable input, and setProblem takes them without an intermediate matrix.)
  if (vel_trip_.size() < groups_.size()) vel_trip_.resize(groups_.size());
  for (std::size_t gi = 0; gi < groups_.size(); ++gi) vel_trip_[gi].clear();
  for (std::size_t k0 = 0; k0 < vel_nodes_.size();) {
    std::size_t k1 = k0;
    while (k1 < vel_nodes_.size() && vel_nodes_[k1][0] == vel_nodes_[k0][0]) ++k1;
    const int d = vel_nodes_[k0][0];
    const Vec3 mi(minv(d), minv(d + 1), minv(d + 2));
    if (mi.squaredNorm() > 0)
      for (std::size_t a = k0; a < k1; ++a)
        for (std::size_t b = k0; b < k1; ++b) {
          const int ia = vel_nodes_[a][1], ib = vel_nodes_[b][1];
          const ContactPoint &pa = points_[ia], &pb2 = points_[ib];
          const Mat3 w = pa.weight[vel_nodes_[a][2]] * pb2.weight[vel_nodes_[b][2]] * pa.frame * mi.asDiagonal() *
                         pb2.frame.transpose();
          auto& t = vel_trip_[group_of_[ia]];
          for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c)
              if (w(r, c) != 0) t.emplace_back(3 * local_[ia] + r, 3 * local_[ib] + c, w(r, c));
        }
    k0 = k1;
  }

  // Warm start by contact identity, then one Alart-Curnier problem per group.
  r_.setZero(3 * n);
  u_all_.setZero(3 * n);
  for (int i = 0; i < n; ++i)
    if (const Vec3* r = warmStart(points_[i].key)) r_.segment<3>(3 * i) = *r;
  while (group_solvers_.size() < groups_.size()) group_solvers_.push_back(std::make_unique<Solver>(options_));
  // A group's q, mu and r (by group index, sizes mostly as in the last step: no reallocation).
  if (vel_work_.size() < groups_.size()) vel_work_.resize(groups_.size());
  // Solves of one contact take a microsecond: timed as a whole (step_.solve_ms), not one by one.
  Options options = options_;
  options.timed = false;
  options.dense_rows = 24;  // groups of up to 8 contacts
  last_ = {};
  last_.converged = true;
  vel_zero_.assign(n, 0);
  std::string failed;
  int max_group = 0;
  for (std::size_t gi = 0; gi < groups_.size(); ++gi) {
    Group& g = groups_[gi];
    const int ng = static_cast<int>(g.contacts.size());
    auto& [qg, mug, rg] = vel_work_[gi];
    qg.resize(3 * ng);
    mug.resize(ng);
    rg.resize(3 * ng);
    for (int a = 0; a < ng; ++a) {
      const int i = g.contacts[a];
      qg.segment<3>(3 * a) = qloc_.segment<3>(3 * i);
      mug[a] = mu_vec_[i];
      rg.segment<3>(3 * a) = r_.segment<3>(3 * i);
    }
    // A group whose contacts all start from r = 0 with u_N = q_N >= 0 (open at the predicted gap,
    // or separating at v_free: most candidates of a rope at rest) is solved by r = 0, u = q: the
    // natural map and f_AC are exactly zero there, the solver would stop at iteration 0 and the
    // polish find every contact exact. Its problem is not set up.
    bool open = true;
    for (int a = 0; a < ng && open; ++a) open = rg.segment<3>(3 * a).isZero(0) && qg[3 * a] >= 0;
    if (open) {
      // Their natural maps are exactly 0 where q_T is finite (r - u = -q in the polar cone): left out
      // of the step's residual below.
      for (int a = 0; a < ng; ++a)
        vel_zero_[g.contacts[a]] = std::isfinite(qg[3 * a + 1]) && std::isfinite(qg[3 * a + 2]);
      g.result = {};
      g.result.converged = true;
      g.result.message = "converged";
      for (int a = 0; a < ng; ++a) u_all_.segment<3>(3 * g.contacts[a]) = qg.segment<3>(3 * a);  // r_ stays 0
      max_group = std::max(max_group, ng);
      continue;
    }
    Solver& solver = *group_solvers_[gi];
    solver.options() = options;
    solver.setProblem(vel_trip_[gi], qg, mug);
    g.result = solver.solve(rg);
    // The relative natural map the solver stops on scales by max(|q|, |u|, |r|): here a velocity (a
    // rope node sliding at 0.3 m/s; an open candidate's gap / drift, up to ~100 m/s) against ~1e-9 N s
    // per step on a resting rope node, so a group can pass it with a contact's impulse wrong by more
    // than itself (rope_over_bar.toml, DER, dt = 9.1e-6 s: a warm start accepted at iteration 0 with
    // r_N = 1.9e-11 N s on a rope node leaving the floor at 5.6e-6 m/s, a pull on a separating
    // contact). Newton steps polish each converged group until every contact is on Coulomb's law in
    // its own units (Solver::polishContacts): worst contact over 0.4 s of that scene 9.0e-6 -> 1.0e-10
    // (DER), 1.3e-5 -> 5.5e-14 (Cosserat); nearly all groups already are (one pass over them).
    if (g.result.converged) solver.polishContacts(rg, g.result, options_.tolerance);
    const Vec& u = solver.velocity();  // W rg + qg: solve() and polishContacts() leave it at rg
    for (int a = 0; a < ng; ++a) {
      const int i = g.contacts[a];
      r_.segment<3>(3 * i) = rg.segment<3>(3 * a);
      u_all_.segment<3>(3 * i) = u.segment<3>(3 * a);
      g.active += rg[3 * a] > 0;
    }
    g.dofs = 0;
    g.nu = 0;
    max_group = std::max(max_group, ng);
    last_.iterations += g.result.iterations;
    last_.prox_iterations += g.result.prox_iterations;
    last_.time_s += g.result.time_s;
    if (!g.result.converged) {
      last_.converged = false;
      if (failed.empty()) failed = g.result.message;
    }
  }
  last_.residual = naturalResidual(qloc_, u_all_, r_, mu_vec_, vel_zero_.data());
  last_.ac_norm = 0;
  for (const Group& g : groups_) last_.ac_norm = std::hypot(last_.ac_norm, g.result.ac_norm);
  last_.message = last_.converged ? "converged" : failed;

  // dv = M^-1 H^T P on the free DOFs of the contacts' nodes (positions only: H has no column on a
  // rotation or twist DOF).
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
