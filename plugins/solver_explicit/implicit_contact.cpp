#include "implicit_contact.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace rodsim::explicit_solver {

double ImplicitContactStep::potential(const std::vector<Model>& models, EvalContext ctx, const Vec& q) const {
  ctx.q = &q;
  double phi = 0;
  for (int i : contact_dofs_) {
    const double dx = q[i] - q_pred_[i];
    phi += 0.5 * d_[i] * dx * dx;
  }
  for (const Model& m : models) phi += m.force->energy(ctx);
  return phi;
}

int ImplicitContactStep::activePairs(const std::vector<Model>& models) const {
  int active = 0;
  for (const Model& m : models) active += m.contact->stats().active;
  return active;
}

double ImplicitContactStep::residual(const std::vector<Model>& models, EvalContext ctx, const Vec& q) {
  ctx.q = &q;
  fc_.setZero();
  // The force without contact is already in q_pred (the kicks): the models balance their force
  // against the inertial term alone (IMC Eq. B.5, the IPC barrier stiffness read non_contact).
  for (const Model& m : models) m.force->addForce(ctx, zero_, fc_);
  // (only on the contact DOFs: elsewhere q = q_pred and F_c = 0 throughout, so r stays 0)
  double worst = 0;
  force_scale_ = 0;
  for (int i : contact_dofs_) {
    r_[i] = d_[i] * (q[i] - q_pred_[i]) - fc_[i];
    worst = std::max(worst, std::abs(r_[i]));
    force_scale_ = std::max(force_scale_, std::abs(fc_[i]));
  }
  return std::isfinite(worst) ? worst : INFINITY;
}

namespace {

// Solves the dense s x s system A x = b in place (row-major A, b overwritten by x) by Gaussian
// elimination with partial pivoting. False when A is singular.
bool solveDense(double* A, double* b, int s) {
  for (int k = 0; k < s; ++k) {
    int p = k;
    for (int i = k + 1; i < s; ++i)
      if (std::abs(A[i * s + k]) > std::abs(A[p * s + k])) p = i;
    if (!(std::abs(A[p * s + k]) > 0)) return false;
    if (p != k) {
      for (int j = 0; j < s; ++j) std::swap(A[k * s + j], A[p * s + j]);
      std::swap(b[k], b[p]);
    }
    const double inv = 1.0 / A[k * s + k];
    for (int i = k + 1; i < s; ++i) {
      const double l = A[i * s + k] * inv;
      if (l == 0.0) continue;
      for (int j = k + 1; j < s; ++j) A[i * s + j] -= l * A[k * s + j];
      b[i] -= l * b[k];
    }
  }
  for (int k = s - 1; k >= 0; --k) {
    double x = b[k];
    for (int j = k + 1; j < s; ++j) x -= A[k * s + j] * b[j];
    b[k] = x / A[k * s + k];
  }
  return true;
}

}  // namespace

int ImplicitContactStep::findRoot(int i) {
  while (parent_[i] != i) i = parent_[i] = parent_[parent_[i]];
  return i;
}

// (D + K_c) dq = -r. K_c touches the DOFs of the nodes in contact only: every other free DOF has the
// diagonal D alone (dq = -r / D). The contact DOFs fall apart into independent groups (a node on a
// plane: 3 DOFs; the nodes of rod-rod pairs that share nodes: a few nodes), each solved densely; a
// group larger than kDenseLimit DOFs (a coil of self contacts) sends the whole block to a sparse LU
// (K_c is not symmetric with friction).
bool ImplicitContactStep::newtonDirection(World& world, const std::vector<Model>& models, const EvalContext& ctx) {
  constexpr int kDenseLimit = 48;
  const auto& fixed = world.fixedMask();
  k_.clear();
  // every model, also without a pair in contact: a lagged friction (ipc) acts on pairs that left
  // the barrier's band. The models' structural zeros (blocks of candidates outside the band, kept
  // for a constant sparsity pattern) are skipped: they would join groups that do not interact.
  for (const Model& m : models) m.force->addStiffness(ctx, k_);
  for (int i : block_dofs_) compact_[i] = -1;
  block_dofs_.clear();
  parent_.clear();
  for (const auto& e : k_.entries()) {
    const int i = int(e.row()), j = int(e.col());
    if (fixed[i] || fixed[j] || e.value() == 0.0) continue;
    for (int dof : {i, j})
      if (compact_[dof] < 0) {
        compact_[dof] = static_cast<int>(block_dofs_.size());
        block_dofs_.push_back(dof);
        parent_.push_back(compact_[dof]);
      }
    const int a = findRoot(compact_[i]), b = findRoot(compact_[j]);
    if (a != b) parent_[a] = b;
  }
  for (int i : contact_dofs_) dq_[i] = -r_[i] / d_[i];
  const int m = static_cast<int>(block_dofs_.size());
  if (m == 0) return true;

  // The groups (the roots of the union-find): group_of_[c] is c's group, local_[c] its index in the
  // group, group_size_ the groups' sizes.
  group_of_.assign(m, -1);
  local_.resize(m);
  group_start_.clear();
  group_size_.clear();
  int largest = 0;
  for (int c = 0; c < m; ++c) {
    const int root = findRoot(c);
    if (group_of_[root] < 0) {
      group_of_[root] = static_cast<int>(group_size_.size());
      group_size_.push_back(0);
    }
    group_of_[c] = group_of_[root];
    local_[c] = group_size_[group_of_[c]]++;
    largest = std::max(largest, group_size_[group_of_[c]]);
  }
  if (largest <= kDenseLimit) {
    std::size_t total = 0;
    for (int size : group_size_) {
      group_start_.push_back(static_cast<int>(total));
      total += std::size_t(size) * std::size_t(size);
    }
    dense_.assign(total, 0.0);
    rhs_.resize(m);
    // right-hand sides in group order: rhs_[offset of the group's first member + local index]
    group_rhs_.resize(group_size_.size());
    int offset = 0;
    for (std::size_t g = 0; g < group_size_.size(); ++g) {
      group_rhs_[g] = offset;
      offset += group_size_[g];
    }
    for (int c = 0; c < m; ++c) {
      const int g = group_of_[c], s = group_size_[g];
      dense_[group_start_[g] + std::size_t(local_[c]) * s + local_[c]] += d_[block_dofs_[c]];
      rhs_[group_rhs_[g] + local_[c]] = -r_[block_dofs_[c]];
    }
    for (const auto& e : k_.entries()) {
      const int i = int(e.row()), j = int(e.col());
      if (fixed[i] || fixed[j] || e.value() == 0.0) continue;
      const int ci = compact_[i], cj = compact_[j], g = group_of_[ci], s = group_size_[g];
      dense_[group_start_[g] + std::size_t(local_[ci]) * s + local_[cj]] += e.value();
    }
    for (std::size_t g = 0; g < group_size_.size(); ++g)
      if (!solveDense(dense_.data() + group_start_[g], rhs_.data() + group_rhs_[g], group_size_[g])) return false;
    for (int c = 0; c < m; ++c) dq_[block_dofs_[c]] = rhs_[group_rhs_[group_of_[c]] + local_[c]];
    return rhs_.allFinite();
  }

  triplets_.clear();
  for (int c = 0; c < m; ++c) triplets_.emplace_back(c, c, d_[block_dofs_[c]]);
  for (const auto& e : k_.entries()) {
    const int i = int(e.row()), j = int(e.col());
    if (fixed[i] || fixed[j] || e.value() == 0.0) continue;
    triplets_.emplace_back(compact_[i], compact_[j], e.value());
  }
  a_.resize(m, m);
  a_.setFromTriplets(triplets_.begin(), triplets_.end());
  lu_.analyzePattern(a_);
  lu_.factorize(a_);
  if (lu_.info() != Eigen::Success) return false;
  rhs_.resize(m);
  for (int c = 0; c < m; ++c) rhs_[c] = -r_[block_dofs_[c]];
  sol_ = lu_.solve(rhs_);
  for (int c = 0; c < m; ++c) dq_[block_dofs_[c]] = sol_[c];
  return sol_.allFinite();
}

ImplicitContactStep::Result ImplicitContactStep::solve(World& world, const std::vector<Model>& models, double t_end,
                                                       double h, const Vec& q_committed, Vec& q, Vec& v,
                                                       Vec& contact_force) {
  Result result;
  const int n = static_cast<int>(q.size());
  const Vec& M = world.mass();
  const auto& fixed = world.fixedMask();
  if (d_.size() != n) {
    d_.resize(n);
    r_.setZero(n);
    fc_.setZero(n);
    dq_.setZero(n);
    q_trial_.setZero(n);
    zero_.setZero(n);
    // the DOFs contact forces act on: the free node positions
    contact_dofs_.clear();
    for (int r = 0; r < world.numRods(); ++r) {
      const Rod& rod = world.rod(r);
      for (int node = 0; node < rod.numNodes(); ++node)
        for (int c = 0; c < 3; ++c)
          if (const int i = rod.dofOffset() + rod.positionDof(node) + c; !fixed[i]) contact_dofs_.push_back(i);
    }
    d_.setZero(n);
    last_h_ = 0;
    compact_.assign(n, -1);
    block_dofs_.clear();
  }
  if (h != last_h_) {
    last_h_ = h;
    for (int i : contact_dofs_) d_[i] = 2 * M[i] / (h * h);
  }
  double d_max = 0, q_max = 0;
  for (int i : contact_dofs_) {
    d_max = std::max(d_max, d_[i]);
    q_max = std::max(q_max, std::abs(q[i]));
  }
  // the residual's round-off: D times a few ulps of the positions
  force_floor_ = 1e-14 * d_max * (q_max + length_scale_);
  v_roundoff_ = 1e-14 * (q_max + length_scale_) / h;
  q_pred_ = q;
  // the virtual start of the contact step: velocity(q) = (q - q_start) / (h/2) = v_free + 2 (q - q_pred) / h
  q_start_ = q_pred_ - 0.5 * h * v;

  EvalContext ctx;
  ctx.t = t_end;
  ctx.dt = 0.5 * h;
  ctx.q = &q;
  ctx.q_start = &q_start_;
  ctx.v_start = &v;  // v_free until the end

  // Newton starts at q_start on the node positions (the rotation DOFs, which no contact force
  // reaches, are at q_pred already): there the models' first evaluation of the step sees the
  // momentum the contact has to stop, M v_free / (h/2), and scales its stiffness by it (IMC Eq. B.5;
  // the IPC barrier stiffness); at q_pred that residual is zero but for round-off. A barrier (ipc) is
  // infinite at contact, so Newton must start contact free: the committed state is, q_start may not
  // be, so the start is pulled back on the way from the committed state where continuous collision
  // detection asks (to 0.8 of the first contact).
  for (int i : contact_dofs_) q[i] = q_start_[i];
  step_ = q - q_committed;
  const double reach = world.maxStepFraction(q_committed, step_);
  if (reach < 1.0)
    for (int i : contact_dofs_) q[i] = q_committed[i] + 0.8 * reach * (q_start_[i] - q_committed[i]);

  double rnorm = residual(models, ctx, q);
  auto failed = [&](const std::string& why) {
    std::ostringstream msg;
    msg.precision(3);
    msg << "implicit contact step at t = " << t_end << " s " << why << " (" << activePairs(models)
        << " pairs active, residual " << rnorm << " N, tolerance " << tolerance() << " N, after " << result.iterations
        << " Newton iterations)";
    result.ok = false;
    result.message = msg.str();
    q = q_pred_;
    return result;
  };
  if (!std::isfinite(rnorm)) return failed("started from a configuration where the contact force is not finite");
  // After a step with contact forces, where they would put the rods, q_pred + h^2/2 M^-1 F_c of that
  // step, is a better start when its residual is lower (a resting contact then converges in about one
  // iteration). Only as a start: the models' stiffness was set at q_start above (started there, IMC's
  // k = s max|F| would follow the last step's force and grow from step to step).
  const bool warm = warm_force_.size() == n && warm_force_.cwiseAbs().maxCoeff() > 0;
  if (warm) {
    q_trial_ = q;
    for (int i : contact_dofs_) q_trial_[i] = q_pred_[i] + warm_force_[i] / d_[i];  // h^2/2 M^-1 F
    step_ = q_trial_ - q;
    if (world.maxStepFraction(q, step_) >= 1.0) {
      const double r_warm = residual(models, ctx, q_trial_);
      if (r_warm < rnorm) {
        q.swap(q_trial_);
        rnorm = r_warm;
      } else {
        rnorm = residual(models, ctx, q);  // r_ and fc_ at q again
      }
    }
  }
  // Nothing in contact at the start: most steps of a run end at q_pred without a Newton iteration.
  if (activePairs(models) == 0 && (step_ = q_pred_ - q, world.maxStepFraction(q, step_) >= 1.0)) {
    q_trial_ = q_pred_;
    const double r_pred = residual(models, ctx, q_trial_);
    if (std::isfinite(r_pred)) {
      q.swap(q_trial_);
      rnorm = r_pred;
    }
  }
  bool converged = rnorm <= tolerance();
  while (!converged) {
    if (result.iterations >= max_iterations_) return failed("did not converge");
    if (stops_ && stops_->stopRequested()) return failed("stopped on request");  // SDK 1.6, before each factorization
    ++result.iterations;
    if (!newtonDirection(world, models, ctx)) return failed("could not factorize D + K_c (singular contact block)");
    // Continuous collision detection bounds a barrier's step (0.9 of the way to the first contact).
    double alpha = world.maxStepFraction(q, dq_);
    if (alpha < 1.0) alpha *= 0.9;
    // Backtracking with a sufficient decrease: the regularized friction and the barrier make
    // Newton's full step overshoot far from the solution, and a pair at the edge of its force band
    // can make it cycle between two states of equal residual; near the solution the full step is
    // taken. If no fraction decreases (a kink of the friction law), the first step is taken anyway
    // and the iteration cap decides.
    const double alpha0 = alpha;
    auto trial = [&](double fraction) {
      for (int i = 0; i < n; ++i) q_trial_[i] = q[i] + fraction * dq_[i];
      return residual(models, ctx, q_trial_);
    };
    // A fraction is accepted when it decreases the residual enough (friction is not the gradient of
    // anything), or, from a configuration where no contact has stiffness, the incremental potential: a
    // barrier between q and q_pred is then invisible to the linearization, the full step enters it
    // and raises the residual, while the potential, minimal inside the barrier's band, falls.
    const bool unseen = block_dofs_.empty();  // no contact stiffness at q: the linearization sees no contact
    double r_trial = INFINITY, phi = NAN;
    bool decreased = false;
    for (int halving = 0; halving < 30 && !decreased; ++halving) {
      r_trial = trial(alpha);
      decreased = r_trial <= (1 - 0.1 * alpha) * rnorm;
      if (!decreased && unseen && std::isfinite(r_trial)) {
        if (std::isnan(phi)) phi = potential(models, ctx, q);
        decreased = potential(models, ctx, q_trial_) < phi;
      }
      if (!decreased) alpha *= 0.5;
    }
    if (!decreased) r_trial = trial(alpha = alpha0);
    if (!std::isfinite(r_trial)) return failed("found no step with a finite contact force");
    const double step = alpha * dq_.cwiseAbs().maxCoeff();
    q.swap(q_trial_);
    rnorm = r_trial;
    // (or a decreasing update too small to change any velocity by more than round-off)
    converged = rnorm <= tolerance() || (decreased && 2 * step / h <= v_roundoff_);
  }
  // fc_ holds F_c at the accepted q (the last residual evaluated there).
  contact_force = fc_;
  warm_force_ = fc_;
  for (int i : contact_dofs_) v[i] += 2 * (q[i] - q_pred_[i]) / h;
  return result;
}

}  // namespace rodsim::explicit_solver
