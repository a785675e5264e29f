// The force contacts of an explicit step, solved implicitly with the lumped mass (README.md,
// "Contact"): the kicks move the rods without contact, and before the last drift (length a h) the
// contact forces are found at the END of the step,
//
//   M (v_{n+1} - v_free) = h F_c(q_{n+1}, v_{n+1}),   q_{n+1} = q_c + a h v_{n+1},
//
// q_c the configuration before the last drift, v_free the velocity after the last kick. In the
// end-of-step positions this is one backward-Euler step of the contact subsystem,
//
//   r(q) = M / (a h^2) (q - q_pred) - F_c(q) = 0,   q_pred = q_c + a h v_free (the step without contact),
//
// the incremental potential of IPC (IMC and IPC seed, Sec. 3 and the IPC comparison) with the mass
// a M and the step a h, solved by Newton with the models' own K = -dF/dq. A penalty or barrier of
// any stiffness is then stable at the dt the rods need: the contact no longer bounds the step, and
// backward Euler dissipates (it never gains energy). Contact forces act on node positions only, so
// rotation DOFs end where the drift put them. The models see ctx.q = q, ctx.q_start = q_c, ctx.dt =
// a h, ctx.v_start = v_free: ctx.velocity(i) is the end-of-step velocity v_{n+1}, and the models'
// friction Jacobians (slope / ctx.dt) are exact for it.
#pragma once

#include <rodsim/capabilities.h>

#include <Eigen/SparseCore>
#include <Eigen/SparseLU>

#include <string>
#include <vector>

namespace rodsim::explicit_solver {

class ImplicitContactStep {
 public:
  struct Model {
    Contact* contact;
    ForceContact* force;
  };
  struct Result {
    bool ok = true;
    int iterations = 0;  // Newton iterations (linear solves)
    std::string message;
  };

  // max_iterations: Newton iterations before the step fails; x_tol (m): converged when the residual
  // is below D x_tol on every DOF, or a Newton update that decreased it moved no DOF by more.
  void configure(int max_iterations, double x_tol) {
    max_iterations_ = max_iterations;
    x_tol_ = x_tol;
  }

  // q: on entry q_pred, the end of the step without contact (constraints applied at t_end); on
  // return q_{n+1}. v: on entry v_free; on return v_{n+1} = v_free + (q_{n+1} - q_pred) / (a h).
  // q_c: the configuration before the last drift. q_committed: the start of the step (contact free:
  // a barrier's Newton starts on the way from it to q_pred). `contact_force` receives F_c(q_{n+1})
  // (for the constraints' reactions).
  Result solve(World& world, const std::vector<Model>& models, double t_end, double h, double a, const Vec& q_c,
               const Vec& q_committed, Vec& q, Vec& v, Vec& contact_force);

 private:
  // F_c(q) into fc_ and r = D (q - q_pred) - F_c on free DOFs (D = M / a h^2); returns max |r_i| / D_i
  // (m: how far the inertia alone would move DOF i to balance r_i; converged below x_tol).
  double residual(World& world, const std::vector<Model>& models, EvalContext ctx, const Vec& q);
  // dq = -(D + K_c)^{-1} r on the free DOFs (K_c at ctx); false if the factorization fails.
  bool newtonDirection(World& world, const std::vector<Model>& models, const EvalContext& ctx);
  int activePairs(const std::vector<Model>& models) const;

  int max_iterations_ = 50;
  double x_tol_ = 1e-9;
  // work arrays, sized at the first call (no allocation once warm, except the sparse factorization
  // of the contact DOFs' block)
  Vec q_pred_, d_, r_, fc_, dq_, q_trial_, zero_;
  std::vector<char> position_dof_;  // 1 on the rods' node positions (the DOFs contact forces act on)
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
