// The independent contact groups of Bertails-Descoubes et al. (2011), Sec. 4.5, and their solves, shared by
// the implicit step (solveLinearized, ac_contact.cpp) and the velocity-level step (solveVelocity,
// ac_velocity_step.cpp): README.md, "Components, groups, frozen frames".
#include "ac_contact.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace rodsim::ac {

// Contacts sharing a unit (a component of A, or a node with its lumped mass) are coupled through W;
// a group is a connected set of the graph whose vertices are the units and whose edges are the
// contacts (Bertails-Descoubes et al. 2011, Sec. 4.5, Fig. 5), and W is block diagonal over the
// groups. Groups are numbered in the order of their first contact and list their contacts in
// increasing order, so they do not depend on the union-find's roots. The last solve's Group objects
// are recycled (spare_groups_): their contact lists keep their capacity, and an explicit step's
// dozens of groups allocate nothing once warm.
void AlartCurnierContact::partitionIntoGroups(int num_units) {
  const int n = static_cast<int>(points_.size());
  union_find_.reset(num_units);
  for (int i = 0; i < n; ++i)
    for (int k = 1; k < ntouched_[i]; ++k) union_find_.unite(touched_[i][0], touched_[i][k]);
  // The first `used` Group objects of groups_ are reused in place (the last solve's), then spares.
  std::size_t used = 0;
  group_of_root_.assign(num_units, -1);
  group_of_.assign(n, 0);
  local_.assign(n, 0);
  for (int i = 0; i < n; ++i) {
    const int root = partition_ ? union_find_.find(touched_[i][0]) : 0;
    if (group_of_root_[root] < 0) {
      group_of_root_[root] = static_cast<int>(used);
      if (used == groups_.size()) {
        if (spare_groups_.empty()) {
          groups_.emplace_back();
        } else {
          groups_.push_back(std::move(spare_groups_.back()));
          spare_groups_.pop_back();
        }
      }
      Group& g = groups_[used++];
      g.contacts.clear();
      g.dofs = g.active = 0;
      g.nu = 0;
      g.unreduced = false;
      g.result = {};
    }
    Group& g = groups_[group_of_root_[root]];
    group_of_[i] = group_of_root_[root];
    local_[i] = static_cast<int>(g.contacts.size());
    g.contacts.push_back(i);
  }
  while (groups_.size() > used) {
    spare_groups_.push_back(std::move(groups_.back()));
    groups_.pop_back();
  }
}

int AlartCurnierContact::solveGroups(const GroupSolve& how) {
  const int n = static_cast<int>(points_.size());
  // Warm start: the impulses of the last solve by contact identity.
  r_.setZero(3 * n);
  u_all_.setZero(3 * n);
  for (int i = 0; i < n; ++i)
    if (const Vec3* r = warmStart(points_[i].key)) r_.segment<3>(3 * i) = *r;
  while (group_solvers_.size() < groups_.size()) group_solvers_.push_back(std::make_unique<Solver>(options_));
  if (group_work_.size() < groups_.size()) group_work_.resize(groups_.size());
  last_ = {};
  last_.converged = true;
  open_.assign(n, 0);
  std::string failed;
  int max_group = 0;
  for (std::size_t gi = 0; gi < groups_.size(); ++gi) {
    Group& g = groups_[gi];
    g.nu = g.dofs > 0 ? 3.0 * g.contacts.size() / g.dofs : 0.0;  // the velocity step counts no DOFs: 0
    const bool ok = solveGroup(static_cast<int>(gi), how);
    for (int i : g.contacts) g.active += r_[3 * i] > 0;
    max_group = std::max(max_group, static_cast<int>(g.contacts.size()));
    last_.iterations += g.result.iterations;
    last_.prox_iterations += g.result.prox_iterations;
    last_.time_s += g.result.time_s;
    if (!ok) {
      last_.converged = false;
      if (failed.empty()) failed = g.result.message;
    }
    // A stop request: the step is abandoned, the other groups need not be solved.
    if (g.result.stopped) break;
    if (!how.velocity && !log_path_.empty()) {
      // One line per implicit group solve (for scripts/plot_ac_convergence.py): t, contacts, dofs,
      // nu, iterations, proximal loops, natural map rel/abs, |f_AC|, ms, converged, active contacts.
      if (FILE* f = std::fopen(log_path_.c_str(), "a")) {
        std::fprintf(f, "%.6g,%d,%d,%.6g,%d,%d,%.3e,%.3e,%.3e,%.4f,%d,%d\n", how.t, int(g.contacts.size()), g.dofs,
                     g.nu, g.result.iterations, g.result.prox_iterations, g.result.residual.rel,
                     g.result.residual.abs, g.result.ac_norm, 1e3 * g.result.time_s, int(g.result.converged),
                     g.active);
        std::fclose(f);
      }
    }
  }
  last_.residual = naturalResidual(qloc_, u_all_, r_, mu_vec_, open_.data());
  last_.ac_norm = 0;
  for (const Group& g : groups_) last_.ac_norm = std::hypot(last_.ac_norm, g.result.ac_norm);
  last_.message = last_.converged ? "converged" : failed;
  return max_group;
}

namespace {

// The implicit step's polish: the relative natural map mixes velocities and impulses; a few more
// Newton steps (quadratic near the solution) bring r to round-off so that the force r/dt the
// implicit solver sees is exact to its own (absolute, N) tolerance. One step at a time, while each
// gains at least 10x (beyond that the residual is at its round-off floor); a step that does not
// lower the residual is undone.
void polishToRoundOff(Solver& solver, Vec& r, Result& result, const Options& options) {
  Options polish = options;
  polish.tolerance = 1e-15;
  polish.max_iterations = 1;
  polish.proximal = false;
  polish.rho_retries = false;
  polish.refactorize = false;  // an unreduced system polishes with the factorization it has
  solver.options() = polish;   // same problem: W (or A and G), q and rho stay
  for (int k = 0; k < 4; ++k) {
    Vec r_keep = r;
    const Result more = solver.solve(r);
    result.iterations += more.iterations;
    if (!(more.residual.abs <= result.residual.abs)) {
      r = r_keep;
      break;
    }
    const bool gained = more.residual.abs <= 0.1 * result.residual.abs;
    result.residual = more.residual;
    result.ac_norm = more.ac_norm;
    if (!gained || more.converged) break;
  }
  solver.options() = options;
}

}  // namespace

// The group's local problem u_g = W_g r_g + q_g (Bertails-Descoubes et al. 2011, Eq. 8), contacts
// renumbered 0..n_g-1.
bool AlartCurnierContact::solveGroup(int gi, const GroupSolve& how) {
  Group& g = groups_[gi];
  const int ng = static_cast<int>(g.contacts.size());
  auto& [qg, mug, rg] = group_work_[gi];
  qg.resize(3 * ng);
  mug.resize(ng);
  rg.resize(3 * ng);
  for (int a = 0; a < ng; ++a) {
    const int i = g.contacts[a];
    qg.segment<3>(3 * a) = qloc_.segment<3>(3 * i);
    mug[a] = mu_vec_[i];
    rg.segment<3>(3 * a) = r_.segment<3>(3 * i);
  }
  if (how.velocity) {
    // A group whose contacts all start from r = 0 with u_N = q_N >= 0 (open at the predicted gap,
    // or separating at v_free: most candidates of a rope at rest) is solved by r = 0, u = q: the
    // natural map and f_AC are exactly zero there, the solver would stop at iteration 0 and the
    // polish find every contact exact. Its problem is not set up.
    bool open = true;
    for (int a = 0; a < ng && open; ++a) open = rg.segment<3>(3 * a).isZero(0) && qg[3 * a] >= 0;
    if (open) {
      // Their natural maps are exactly 0 where q_T is finite (r - u = -q in the polar cone): left
      // out of the step's residual (solveGroups).
      for (int a = 0; a < ng; ++a) open_[g.contacts[a]] = std::isfinite(qg[3 * a + 1]) && std::isfinite(qg[3 * a + 2]);
      g.result = {};
      g.result.converged = true;
      g.result.message = "converged";
      for (int a = 0; a < ng; ++a) u_all_.segment<3>(3 * g.contacts[a]) = qg.segment<3>(3 * a);  // r_ stays 0
      return true;
    }
  }
  Solver& solver = *group_solvers_[gi];
  const int factorizations0 = solver.factorizations(), gmres0 = solver.gmresIterations();
  solver.options() = how.options;
  if (g.unreduced)
    setUnreducedProblem(g, solver, qg, mug, how.dt);
  else
    solver.setProblem(group_w_[gi], qg, mug);  // W's entries, without an intermediate matrix
  g.result = solver.solve(rg);
  if (g.result.converged) {
    if (how.velocity) {
      // The relative natural map the solver stops on scales by max(|q|, |u|, |r|): here a velocity
      // (a rope node sliding at 0.3 m/s; an open candidate's gap / drift, up to ~100 m/s) against
      // ~1e-9 N s per step on a resting rope node, so a group can pass it with a contact's impulse
      // wrong by more than itself (rope_over_bar.toml, DER, dt = 9.1e-6 s: a warm start accepted at
      // iteration 0 with r_N = 1.9e-11 N s on a rope node leaving the floor at 5.6e-6 m/s, a pull on
      // a separating contact). Newton steps polish each converged group until every contact is on
      // Coulomb's law in its own units (Solver::polishContacts): worst contact over 0.4 s of that
      // scene 9.0e-6 -> 1.0e-10 (DER), 1.3e-5 -> 5.5e-14 (Cosserat); nearly all groups already are
      // (one pass over them).
      solver.polishContacts(rg, g.result, how.options.tolerance);
    } else {
      polishToRoundOff(solver, rg, g.result, how.options);
    }
  }
  // u = W rg + qg: solve() and polishContacts() leave the solver's velocity at rg; the implicit
  // polish may have stepped back to an earlier r, so there it is recomputed.
  const Vec& u = how.velocity ? solver.velocity() : (u_group_ = solver.velocityAt(rg));
  step_.factorizations += solver.factorizations() - factorizations0;
  step_.gmres_iterations += solver.gmresIterations() - gmres0;
  for (int a = 0; a < ng; ++a) {
    const int i = g.contacts[a];
    r_.segment<3>(3 * i) = rg.segment<3>(3 * a);
    u_all_.segment<3>(3 * i) = u.segment<3>(3 * a);
  }
  return g.result.converged;
}

}  // namespace rodsim::ac
