#include "linear_step.h"

#include <rodsim/rod.h>

#include <cmath>
#include <utility>

namespace rodsim::newton {

std::string describeUnconstrained(World& world) {
  const auto& fixed = world.fixedMask();
  std::string out;
  for (int r = 0; r < world.numRods(); ++r) {
    Rod& rod = world.rod(r);
    int fixed_nodes = 0, last_fixed = -1;
    for (int n = 0; n < rod.numNodes(); ++n) {
      const int g = rod.globalPositionDof(n);
      if (fixed[g] && fixed[g + 1] && fixed[g + 2]) {
        ++fixed_nodes;
        last_fixed = n;
      }
    }
    bool twist_fixed = false;
    for (int e = 0; e < rod.numEdges(); ++e)
      if (rod.twistDof(e) >= 0 && fixed[rod.dofOffset() + rod.twistDof(e)]) twist_fixed = true;
    std::string what;
    if (fixed_nodes == 0)
      what = "no node of rod '" + rod.name() +
             "' is held: its rigid-body translation and rotation are unconstrained";
    else if (fixed_nodes == 1 && !twist_fixed)
      what = "rod '" + rod.name() + "' is held at node " + std::to_string(last_fixed) +
             " only: its rigid rotation about that node is unconstrained";
    if (!what.empty()) out += (out.empty() ? "" : "; ") + what;
  }
  return out;
}

LinearStep::LinearStep(const NewtonOptions& options)
    : opt_(options), linear_(LinearSolver::parse(options.linear_solver)) {}

void LinearStep::prepare(const std::vector<char>& fixed, bool global_layout) {
  assembler_.setFixed(fixed, global_layout ? SparseAssembler::Layout::GlobalIdentity : SparseAssembler::Layout::Free);
  const int m = assembler_.size();
  if (b_.size() != m) {
    b_.setZero(m);
    x_.setZero(m);
    Jx_.setZero(m);
  }
}

bool LinearStep::assemble(const StiffnessSink& K, const InertiaTerm& inertia) {
  return assembler_.assemble(K.entries(), inertia.mass, inertia.mass_scale);
}

// `auto` factorizes with LDLT while the assembled matrix is symmetric.
bool LinearStep::symmetricJacobian() const {
  return linear_.kind() == LinearSolver::Kind::Auto && assembler_.isSymmetric();
}

bool LinearStep::factorize(bool symmetric) {
  if (assembler_.banded() && linear_.takesBand(symmetric))
    return linear_.factorizeBand(assembler_.band(), assembler_.size());  // the band as assembled
  return linear_.factorize(assembler_.matrix(), symmetric);
}

void LinearStep::prefactorize(const StiffnessSink& K, const InertiaTerm& inertia) {
  if (assemble(K, inertia)) linear_.analyzePattern(assembler_.matrix());
  prefactored_ok_ = factorize(symmetricJacobian());
  prefactored_ = true;
}

bool LinearStep::setUp(const std::vector<char>& fixed, const StiffnessSink& K, const InertiaTerm& inertia,
                       const Vec& R, bool& rebuilt) {
  const bool prefactored = std::exchange(prefactored_, false);
  rebuilt = !prefactored && assemble(K, inertia);
  const auto& map = assembler_.globalOf();
  const int m = assembler_.size();
  for (int i = 0; i < m; ++i) b_[i] = fixed[map[i]] ? 0.0 : -R[map[i]];
  return prefactored;
}

bool LinearStep::solveWithImpulses(const std::vector<char>& fixed, const StiffnessSink& K,
                                   const InertiaTerm& inertia, const Vec& R, LinearizedImpulseContact& impulse,
                                   const std::string& name, const EvalContext& ctx, Vec& dq, double& dphi0,
                                   std::string& why, int& solves) {
  bool rebuilt = false;
  setUp(fixed, K, inertia, R, rebuilt);  // the contact analyses the pattern itself
  const SpMat& A = assembler_.matrix();
  // Global layout: matrix index == global DOF. The contact model solves A dq = b + impulses.
  LinearizedSystem sys;
  sys.A = &A;
  sys.b = &b_;
  sys.fixed = &fixed;
  sys.ctx = &ctx;
  dq.setZero();
  ++solves;
  if (!impulse.solveLinearized(sys, dq)) {
    why = "impulse contact '" + name + "' did not solve the linearized system";
    const std::string reason = impulse.failureReason();
    if (!reason.empty()) why += " (" + reason + ")";
    return false;
  }
  for (int g = 0; g < dq.size(); ++g)
    if (fixed[g]) dq[g] = 0.0;
  if (!dq.allFinite()) {
    why = "impulse contact '" + name + "' returned a non-finite step";
    return false;
  }
  Jx_.noalias() = A * dq;
  const int m = assembler_.size();
  dphi0 = 0;
  for (int g = 0; g < m; ++g)
    if (!fixed[g]) dphi0 += R[g] * Jx_[g];
  return true;
}

bool LinearStep::solve(World& world, const StiffnessSink& K, const InertiaTerm& inertia, const Vec& R, Vec& dq,
                       double& dphi0, std::string& why, bool& singular, int& solves) {
  bool rebuilt = false;
  const bool prefactored = setUp(world.fixedMask(), K, inertia, R, rebuilt);
  if (rebuilt) linear_.analyzePattern(assembler_.matrix());
  // The Levenberg shift below only moves the diagonal: the symmetry is that of the first attempt.
  const bool symmetric = symmetricJacobian();
  double mu = 0, base = -1;
  bool ok = false;
  for (int attempt = 0; attempt <= opt_.levenberg_retries && !ok; ++attempt) {
    if (attempt > 0 && stopRequested(world)) {  // SDK 1.6: no further factorization after a stop request
      why = "stopped on request";
      return false;
    }
    if (attempt > 0) {
      if (base < 0) {
        base = assembler_.meanAbsDiagonal();
        if (!(base > 0) || !std::isfinite(base)) base = 1.0;
      }
      const double target = base * opt_.levenberg_shift * std::pow(100.0, attempt - 1);
      assembler_.shiftDiagonal(target - mu);
      mu = target;
    }
    // The first attempt of a prefactorized Jacobian takes prefactorize()'s factorization.
    if (!(attempt == 0 && prefactored ? prefactored_ok_ : factorize(symmetric))) continue;
    ++solves;
    if (!linear_.solve(b_, x_)) continue;
    assembler_.multiply(x_, Jx_);
    // Normwise backward error: tiny for a backward-stable factorization even when J is badly
    // conditioned (stiff rods), large only for garbage from a (numerically) singular one.
    const double scale = assembler_.frobeniusNorm() * x_.norm() + b_.norm();
    if (!((Jx_ - b_).norm() <= 1e-8 * scale + 1e-300)) continue;
    // Static solver: a Newton step along which the energy grows means K is indefinite there.
    if (energy_check_ && attempt < opt_.levenberg_retries && !(b_.dot(x_) > 0)) continue;
    ok = true;
  }
  if (!ok) {
    singular = true;
    std::string free_rods = describeUnconstrained(world);
    if (free_rods.empty())
      free_rods = "every rod is held at two nodes or more: a mechanism, or a DOF without "
                  "stiffness (and without mass in a static solve)";
    why = "singular Jacobian (still singular with a Levenberg shift of " + formatNumber(mu) +
          "); unconstrained: " + free_rods;
    return false;
  }
  // phi'(0) = R_f . (J dq_f) with the unshifted Jacobian.
  if (mu != 0) Jx_ -= mu * x_;
  dphi0 = -b_.dot(Jx_);
  const auto& map = assembler_.globalOf();
  const int m = assembler_.size();
  dq.setZero();
  for (int i = 0; i < m; ++i) dq[map[i]] = x_[i];
  return true;
}

}  // namespace rodsim::newton
