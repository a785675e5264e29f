// The force contacts of an explicit step, solved implicitly with the lumped mass (README.md,
// "Contact"). The step's kicks and drifts move the rods without contact to q_pred, v_free; then the
// contact force, taken as constant over the step and evaluated at its END, is added as the scheme
// itself would add a constant force (every consistent splitting scheme integrates a constant
// acceleration exactly: dq = h^2/2 M^-1 F, dv = h M^-1 F):
//
//   q_{n+1} = q_pred + h^2/2 M^-1 F_c(q_{n+1}, v_{n+1}),   v_{n+1} = v_free + h M^-1 F_c(q_{n+1}, v_{n+1})
//   <=>  r(q) = 2 M / h^2 (q - q_pred) - F_c(q) = 0,   v_{n+1} = v_free + 2 (q_{n+1} - q_pred) / h,
//
// one backward-Euler step of the contact subsystem with step h/2 (the incremental potential of the
// IMC and IPC papers), solved by Newton with the models' own K = -dF/dq. A penalty or barrier of any
// stiffness is then stable at the dt the rods need (the contact no longer bounds the step), and
// backward Euler dissipates: it never gains energy. The models see ctx.dt = h/2, ctx.q_start = q_pred
// - h/2 v_free, ctx.v_start = v_free, so that ctx.velocity(i) = (q - q_start) / ctx.dt is v_{n+1} and
// their friction Jacobians (slope / ctx.dt) are exact. Contact forces act on node positions only:
// rotation DOFs end where the drifts put them.
#pragma once

#include <rodsim/capabilities.h>

#include <Eigen/SparseCore>
#include <Eigen/SparseLU>

#include <string>
#include <vector>

namespace rodsim::explicit_solver {

class ImplicitContactStep {
 public:
  // A force contact model: the component (its statistics) and its ForceContact capability.
  struct Model {
    Contact* contact;
    ForceContact* force;
  };
  struct Result {
    bool ok = true;
    int iterations = 0;  // Newton iterations (linear solves)
    std::string message;
  };

  // max_iterations: Newton iterations before the step fails; converged when no free DOF's residual
  // exceeds rel_tol times the largest contact force (plus the residual's round-off: D times a few
  // ulps of the positions, length_scale (m) standing in for positions near 0).
  // `world`: where stop requests are read (its StopRequests capability, SDK 1.6, if it offers one).
  void configure(World& world, int max_iterations, double rel_tol, double length_scale) {
    stops_ = worldCapability<StopRequests>(world);
    max_iterations_ = max_iterations;
    rel_tol_ = rel_tol;
    length_scale_ = length_scale;
  }

  // q: on entry q_pred, the end of the step without contact (constraints applied at t_end); on
  // return q_{n+1}. v: on entry v_free; on return v_{n+1}. q_committed: the start of the step (free
  // of contact: a barrier's Newton starts on the way from it). `contact_force` receives F_c(q_{n+1})
  // (for the constraints' reactions).
  Result solve(World& world, const std::vector<Model>& models, double t_end, double h, const Vec& q_committed,
               Vec& q, Vec& v, Vec& contact_force);

  // The contact forces of the last step, where the next one starts (checkpoints: a restart must start
  // every step where the uninterrupted run did, to continue bit for bit).
  void saveState(std::vector<double>& out) const { out.insert(out.end(), warm_force_.begin(), warm_force_.end()); }
  void loadState(const std::vector<double>& in) { warm_force_ = Eigen::Map<const Vec>(in.data(), Eigen::Index(in.size())); }

 private:
  // F_c(q) into fc_ and r = D (q - q_pred) - F_c on free DOFs (D = 2 M / h^2); returns max |r_i| (N)
  // and sets force_scale_ = max |F_c,i|.
  double residual(const std::vector<Model>& models, EvalContext ctx, const Vec& q);
  // dq = -(D + K_c)^{-1} r on the free DOFs (K_c at ctx); false if the factorization fails.
  bool newtonDirection(World& world, const std::vector<Model>& models, const EvalContext& ctx);
  int activePairs(const std::vector<Model>& models) const;
  // The incremental potential 1/2 (q - q_pred)^T D (q - q_pred) + the contact energies (J): r is its
  // gradient but for friction.
  double potential(const std::vector<Model>& models, EvalContext ctx, const Vec& q) const;

  int max_iterations_ = 50;
  const StopRequests* stops_ = nullptr;  // the World's, found once (null: an older kernel)
  double rel_tol_ = 1e-6, length_scale_ = 1e-3;
  double force_scale_ = 0, force_floor_ = 0, v_roundoff_ = 0;
  double tolerance() const { return rel_tol_ * force_scale_ + force_floor_; }
  // work arrays, sized at the first call (no allocation once warm, except the sparse factorization
  // of the contact DOFs' block)
  Vec warm_force_;  // F_c of the last step (empty before the first)
  Vec step_;  // a trial move, for the continuous collision detection
  Vec q_pred_, q_start_, d_, r_, fc_, dq_, q_trial_, zero_;
  std::vector<int> contact_dofs_;   // the free node positions: the DOFs contact forces act on
  double last_h_ = 0;               // the step d_ = 2 M / h^2 was computed for
  std::vector<int> compact_;        // DOF -> index in the contact block, -1 elsewhere
  std::vector<int> block_dofs_;     // the free DOFs K_c touches
  // independent groups of the contact block (union-find over K_c's entries) and their dense systems
  int findRoot(int i);
  std::vector<int> parent_, group_of_, local_, group_start_, group_size_, group_rhs_;
  std::vector<double> dense_;
  StiffnessSink k_;
  std::vector<Eigen::Triplet<double>> triplets_;
  Eigen::SparseMatrix<double> a_;
  Eigen::SparseLU<Eigen::SparseMatrix<double>> lu_;
  Eigen::VectorXd rhs_, sol_;
};

}  // namespace rodsim::explicit_solver
