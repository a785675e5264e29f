// rodsim::krylov::Gmres on a small nonsymmetric system (1D convection-diffusion, Péclet number of
// order one per cell: far from symmetric), against a dense LU.
#include <rodsim/krylov/gmres.h>

#include <doctest/doctest.h>

#include <Eigen/LU>

namespace {

using rodsim::Vec;
using rodsim::krylov::Gmres;

struct Problem {
  Eigen::MatrixXd A;
  Vec b, x_exact;
};

// -u'' + c u' = f on n interior points, centred differences: tridiagonal, unsymmetric.
Problem convectionDiffusion(int n, double peclet) {
  Problem p;
  p.A = Eigen::MatrixXd::Zero(n, n);
  for (int i = 0; i < n; ++i) {
    p.A(i, i) = 2.0;
    if (i > 0) p.A(i, i - 1) = -1.0 - 0.5 * peclet;
    if (i + 1 < n) p.A(i, i + 1) = -1.0 + 0.5 * peclet;
  }
  p.b = Vec::LinSpaced(n, -1.0, 2.0).array().sin();
  p.x_exact = p.A.partialPivLu().solve(p.b);
  return p;
}

auto applyOf(const Eigen::MatrixXd& M) {
  return [&M](const double* in, double* out) {
    Eigen::Map<Vec>(out, M.rows()).noalias() = M * Eigen::Map<const Vec>(in, M.cols());
  };
}

}  // namespace

TEST_CASE("gmres: unpreconditioned, restarted, exactly preconditioned, out of budget, zero right-hand side") {
  const int n = 60;
  const Problem p = convectionDiffusion(n, 0.8);
  const auto A = applyOf(p.A);
  const auto identity = [n](const double* in, double* out) { std::copy_n(in, n, out); };
  const double tol = 1e-12;

  SUBCASE("no preconditioner, a basis as large as the system: at most n steps, residual to tol") {
    Gmres g;
    g.resize(n, n);
    Vec x = Vec::Zero(n);
    const auto r = g.solve(A, identity, p.b, x, tol, 10 * n);
    CHECK(r.converged);
    CHECK(r.iterations <= n);
    CHECK((p.A * x - p.b).norm() <= 1.01 * tol * p.b.norm());
    CHECK(r.relative_residual == doctest::Approx((p.A * x - p.b).norm() / p.b.norm()).epsilon(1e-6));
    CHECK((x - p.x_exact).norm() <= 1e-9 * p.x_exact.norm());
  }
  SUBCASE("restarts every 8 steps: still converges, to the same solution") {
    Gmres g;
    g.resize(n, 8);
    Vec x = Vec::Zero(n);
    const auto r = g.solve(A, identity, p.b, x, tol, 5000);
    CHECK(r.converged);
    CHECK(r.iterations > 8);
    CHECK((p.A * x - p.b).norm() <= 1.01 * tol * p.b.norm());
  }
  SUBCASE("the exact inverse as right preconditioner: one step") {
    const Eigen::MatrixXd inverse = p.A.inverse();
    Gmres g;
    g.resize(n, 10);
    Vec x = Vec::Zero(n);
    const auto r = g.solve(A, applyOf(inverse), p.b, x, tol, 10);
    CHECK(r.converged);
    CHECK(r.iterations == 1);
    CHECK((x - p.x_exact).norm() <= 1e-11 * p.x_exact.norm());
  }
  SUBCASE("a warm start at the solution: no step") {
    Gmres g;
    g.resize(n, 10);
    Vec x = p.x_exact;
    const auto r = g.solve(A, identity, p.b, x, 1e-10, 10);
    CHECK(r.converged);
    CHECK(r.iterations == 0);
  }
  SUBCASE("too few steps: not converged, the residual it reached reported") {
    Gmres g;
    g.resize(n, n);
    Vec x = Vec::Zero(n);
    const auto r = g.solve(A, identity, p.b, x, tol, 5);
    CHECK_FALSE(r.converged);
    CHECK(r.iterations == 5);
    CHECK(r.relative_residual > tol);
    CHECK(r.relative_residual == doctest::Approx((p.A * x - p.b).norm() / p.b.norm()).epsilon(1e-6));
  }
  SUBCASE("b = 0: x = 0 at once") {
    Gmres g;
    g.resize(n, 10);
    Vec x = Vec::Ones(n);
    const auto r = g.solve(A, identity, Vec::Zero(n), x, tol, 10);
    CHECK(r.converged);
    CHECK(r.iterations == 0);
    CHECK(x.isZero(0));
  }
}
