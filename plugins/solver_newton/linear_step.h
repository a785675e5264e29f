// The linear step of a Newton iteration: assemble J = M/dt^2 + K (or K) from the stiffness
// triplets, factorize it (the linear solver chosen by `linear_solver`; Levenberg shifts when it is
// singular), and solve J_ff dq_f = -R_f on the free DOFs; or hand the system, in global layout, to
// the scene's impulse contact, which solves it together with its contact impulses.
// README.md: "Linear solvers", "Levenberg shift", "Impulse contacts", "Sparse assembly".
#pragma once

#include "newton_options.h"
#include "sparse_assembly.h"

#include <rodsim/capabilities.h>
#include <rodsim/component.h>

#include <string>
#include <vector>

namespace rodsim::newton {

// Which rods a static solve leaves free to move rigidly (for error messages); "" when every rod
// is held at two nodes or more (or at one node and a twist).
std::string describeUnconstrained(World& world);

// The terms of the Jacobian besides the stiffness: diag(mass) * mass_scale (M/dt^2 of the
// implicit Euler residual), or none (mass = nullptr) in a quasi-static solve.
struct InertiaTerm {
  const Vec* mass = nullptr;
  double mass_scale = 0;
};

class LinearStep {
 public:
  explicit LinearStep(const NewtonOptions& options);

  // Lays the matrix out for the fixed DOFs of this time step: the free DOFs only, or (when an
  // impulse contact solves the system) every global DOF with identity rows and columns for the
  // fixed ones. Sizes the work vectors (allocates only when the size changed).
  void prepare(const std::vector<char>& fixed, bool global_layout);

  // The split first evaluation of a solve (NewtonCore::evaluate): assembles and factorizes J
  // before the step-constant forces are added; the next solve() starts from this factorization.
  void prefactorize(const StiffnessSink& K, const InertiaTerm& inertia);
  // A new Newton solve: no factorization is pending.
  void dropPrefactorization() { prefactored_ = false; }

  // The Newton step for the residual R (all DOFs): dq (global; 0 on fixed DOFs) from
  // J_ff dq_f = -R_f, with Levenberg shifts of the diagonal while the factorization fails, the
  // solution is not finite or not accurate, or (energy descent check) not a descent direction.
  // dphi0 = phi'(0) = R_f . (J dq_f) with the unshifted J. `solves` counts the linear solves.
  // On failure (singular even when shifted), `why` says so and `singular` is set.
  bool solve(World& world, const StiffnessSink& K, const InertiaTerm& inertia, const Vec& R, Vec& dq,
             double& dphi0, std::string& why, bool& singular, int& solves);

  // The same system in global layout (prepare with global_layout), b = -R (0 on fixed DOFs),
  // solved by the impulse contact `impulse` (named `name` in messages): A dq = b + r with its
  // contact impulses r. ctx is handed to the contact (its ctx.q must be the current iterate).
  bool solveWithImpulses(const std::vector<char>& fixed, const StiffnessSink& K, const InertiaTerm& inertia,
                         const Vec& R, LinearizedImpulseContact& impulse, const std::string& name,
                         const EvalContext& ctx, Vec& dq, double& dphi0, std::string& why, int& solves);

  // J dq of the last solve. With an impulse contact, -(R - r) on the free rows: its norm is the
  // residual including the contact impulses.
  const Vec& jacobianTimesStep() const { return Jx_; }
  const SparseAssembler& assembler() const { return assembler_; }
  // Set by the static solver: a Levenberg shift is also applied when the Newton step is not a
  // descent direction of the energy (R . dq >= 0), i.e. when K is indefinite along dq.
  void setEnergyDescentCheck(bool on) { energy_check_ = on; }

 private:
  // J into the assembler (true when its pattern changed: the solver must analyse it again).
  bool assemble(const StiffnessSink& K, const InertiaTerm& inertia);
  // Assembles J unless prefactorize() did, and b = -R (0 on fixed DOFs). Returns whether
  // prefactorize() had assembled it; `rebuilt` whether the pattern changed.
  bool setUp(const std::vector<char>& fixed, const StiffnessSink& K, const InertiaTerm& inertia, const Vec& R,
             bool& rebuilt);
  bool symmetricJacobian() const;
  // Factorizes the assembled J, whose symmetry is `symmetric`: straight from the assembler's band
  // when it holds one and the solver takes it (the band LDLT), else from matrix().
  bool factorize(bool symmetric);

  NewtonOptions opt_;
  LinearSolver linear_;
  SparseAssembler assembler_;
  bool energy_check_ = false;
  bool prefactored_ = false, prefactored_ok_ = false;  // prefactorize() ran; its factorization succeeded
  Vec b_, x_, Jx_;  // matrix-sized: right-hand side, solution, J x
};

}  // namespace rodsim::newton
