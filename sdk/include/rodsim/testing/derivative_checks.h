// Finite-difference checks of a component's derivatives, for plugin tests in tree and out of tree
// (installed with the SDK: <rodsim/testing/derivative_checks.h>). Each check returns relative errors:
//   force      |F + dE/dq| / |dE/dq|   the force against central differences of its energy
//   stiffness  |K + dF/dq| / |dF/dq|   the stiffness K = -dF/dq against central differences of F
//   symmetry   |K - K^T| / |K|         (0 for a conservative term)
// With central differences of step h the truncation error is O(h^2) and the round-off O(eps / h):
// h ~ 1e-6 of the configuration's scale gives about 1e-6, so 1e-5 is a sound tolerance for smooth terms.
#pragma once

#include <rodsim/capabilities.h>
#include <rodsim/force.h>
#include <rodsim/testing/finite_differences.h>

#include <Eigen/Core>

#include <cmath>
#include <limits>

namespace rodsim::testing {

struct DerivativeErrors {
  double force = std::numeric_limits<double>::quiet_NaN();  // NaN: no energy to compare with
  double stiffness = 0;
  double symmetry = 0;
};

// The dense matrix of a StiffnessSink's entries (n x n, global indexing).
inline Eigen::MatrixXd denseStiffness(const StiffnessSink& K, int n) {
  Eigen::MatrixXd D = Eigen::MatrixXd::Zero(n, n);
  for (const auto& e : K.entries()) D(e.row(), e.col()) += e.value();
  return D;
}

namespace detail {
// force(q) -> F (global), stiffness(q, K), energy(q) -> J (or NaN when the term has none).
template <class ForceAt, class StiffnessAt, class EnergyAt>
DerivativeErrors check(ForceAt force, StiffnessAt stiffness, EnergyAt energy, const Vec& q, double h) {
  DerivativeErrors out;
  const int n = static_cast<int>(q.size());
  const Vec F = force(q);
  const double E0 = energy(q);
  if (std::isfinite(E0)) out.force = relErr(F, -fdGradient(energy, q, h));
  StiffnessSink sink;
  stiffness(q, sink);
  const Eigen::MatrixXd K = denseStiffness(sink, n);
  out.stiffness = relErr(K, -fdJacobian(force, q, h));
  const double nk = K.norm();
  out.symmetry = nk > 0 ? (K - K.transpose()).norm() / nk : 0.0;
  return out;
}
}  // namespace detail

// A Force bound to a world, at global configuration q (ctx gives t, dt, q_start, v_start; its q is
// replaced). `conservative`: compare the force with -d(potentialEnergy)/dq too.
inline DerivativeErrors checkForce(Force& f, EvalContext ctx, const Vec& q, double h, bool conservative = true) {
  auto force = [&](const Vec& x) {
    ctx.q = &x;
    Vec F = Vec::Zero(x.size());
    f.addForce(ctx, F);
    return F;
  };
  auto stiffness = [&](const Vec& x, StiffnessSink& K) {
    ctx.q = &x;
    f.addStiffness(ctx, K);
  };
  auto energy = [&](const Vec& x) {
    ctx.q = &x;
    return conservative ? f.potentialEnergy(ctx) : std::numeric_limits<double>::quiet_NaN();
  };
  return detail::check(force, stiffness, energy, q, h);
}

// A contact model that offers ForceContact (imc, ipc), bound to a world, at global configuration q,
// with no other force (its stiffness scaling, if adaptive, sees zero).
inline DerivativeErrors checkContact(ForceContact& c, EvalContext ctx, const Vec& q, double h) {
  const Vec none = Vec::Zero(q.size());
  auto force = [&](const Vec& x) {
    ctx.q = &x;
    Vec F = Vec::Zero(x.size());
    c.addForce(ctx, none, F);
    return F;
  };
  auto stiffness = [&](const Vec& x, StiffnessSink& K) {
    ctx.q = &x;
    c.addStiffness(ctx, K);
  };
  auto energy = [&](const Vec& x) {
    ctx.q = &x;
    return c.energy(ctx);
  };
  return detail::check(force, stiffness, energy, q, h);
}

// A rod's elastic force against its energy, and (if it offers RodStiffness) its Hessian against its
// force, at its local configuration q_local (the rod's dofOffset() must be 0 for the dense check).
inline DerivativeErrors checkRod(Rod& rod, const Vec& q_local, double h) {
  auto force = [&](const Vec& x) {
    rod.setConfiguration(x);
    Vec F = Vec::Zero(x.size());
    rod.addElasticForce(F);
    return F;
  };
  auto stiffness = [&](const Vec& x, StiffnessSink& K) {
    rod.setConfiguration(x);
    if (auto* s = rod.as<RodStiffness>()) s->addStiffness(K);
  };
  auto energy = [&](const Vec& x) {
    rod.setConfiguration(x);
    return rod.elasticEnergy();
  };
  DerivativeErrors out = detail::check(force, stiffness, energy, q_local, h);
  if (!rod.as<RodStiffness>()) out.stiffness = out.symmetry = std::numeric_limits<double>::quiet_NaN();
  rod.setConfiguration(q_local);
  return out;
}

}  // namespace rodsim::testing
