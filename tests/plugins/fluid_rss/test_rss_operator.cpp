// The assembled RSS operator (Tong et al. 2023, Eqs. A.6-A.8) on a straight rod: drag against slender-body
// theory, convergence with resolution, and the GMRES path against the dense LU reference.
#include "stokeslet_operator.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <numbers>
#include <vector>

using namespace rodsim;
using namespace rodsim::rss;

namespace {

constexpr double kPi = std::numbers::pi;

// Total force on a straight rod of length L along z with n nodes, blob eps, moving at velocity U
// in a fluid of viscosity eta: solve 8πη U = A F, integrate the densities (trapezoid, the hat
// functions' quadrature).
Vec3 straightRodDrag(int n, double L, double eps, const Vec3& U, double eta, bool lu) {
  StokesletOperator op;
  std::vector<Segment> seg;
  for (int i = 0; i + 1 < n; ++i) seg.push_back({i, i + 1});
  op.setTopology(n, seg, std::vector<double>(n, eps), {0, n}, 0);
  std::vector<Vec3> x(n);
  for (int i = 0; i < n; ++i) x[i] = Vec3(0, 0, L * i / (n - 1));
  op.assemble(x);
  Vec rhs(3 * n), F = Vec::Zero(3 * n);
  for (int i = 0; i < n; ++i) rhs.segment<3>(3 * i) = 8 * kPi * eta * U;
  if (lu) {
    op.solveLu(rhs, F);
  } else {
    const GmresResult r = op.solveGmres(rhs, F, 1e-12, 500);
    REQUIRE(r.converged);
  }
  const double h = L / (n - 1);
  Vec3 total = Vec3::Zero();
  for (int i = 0; i < n; ++i) total += ((i == 0 || i == n - 1) ? 0.5 * h : h) * F.segment<3>(3 * i);
  return total;
}

}  // namespace

TEST_CASE("a straight rod drags like a slender cylinder of radius eps / sqrt(e)") {
  // Matching the local expansion of a line of regularized Stokeslets (Cortez blob) with that of
  // Keller-Rubinow slender-body theory at the middle of a rod gives, in both directions,
  // ln(2l/eps) = ln(2l/a) - 1/2, i.e. a = eps e^(-1/2) (derivation in docs/flagella.md). The total
  // drag then includes the ends: slender-body theory for a cylinder of aspect ratio p = L / 2a
  // (Tirado and Garcia de la Torre 1979; Broersma's end corrections) gives
  //   F_perp = 4πηUL / (ln p + 0.839 + 0.185/p + 0.233/p²),
  //   F_par  = 2πηUL / (ln p - 0.207 + 0.980/p - 0.133/p²),
  // while the leading order, F_perp = 4πηUL / (ln(L/a) + 1/2), F_par = 2πηUL / (ln(L/a) - 1/2),
  // misses the ends by O(1 / ln(L/a)) (6-8% here).
  const double eta = 0.1, U = 1e-3, eps = 1e-3, a = eps * std::exp(-0.5);
  for (double L : {0.2, 0.6}) {
    const double p = L / (2 * a), lp = std::log(p);
    const int n = static_cast<int>(std::lround(L / eps)) + 1;  // edge = eps
    const double perp = straightRodDrag(n, L, eps, Vec3(U, 0, 0), eta, false).x();
    const double par = straightRodDrag(n, L, eps, Vec3(0, 0, U), eta, false).z();
    const double perp_sbt = 4 * kPi * eta * U * L / (lp + 0.839 + 0.185 / p + 0.233 / (p * p));
    const double par_sbt = 2 * kPi * eta * U * L / (lp - 0.207 + 0.980 / p - 0.133 / (p * p));
    const double perp_lead = 4 * kPi * eta * U * L / (std::log(L / a) + 0.5);
    const double par_lead = 2 * kPi * eta * U * L / (std::log(L / a) - 0.5);
    std::printf("L/a = %.0f: F_perp / SBT = %.4f (leading order %.4f), F_par / SBT = %.4f (%.4f)\n", L / a,
                perp / perp_sbt, perp / perp_lead, par / par_sbt, par / par_lead);
    // The cylinder formulas are fits good to about 1%; a regularized line is not exactly a
    // cylinder near its ends.
    CHECK(std::abs(perp / perp_sbt - 1) < 0.02);
    CHECK(std::abs(par / par_sbt - 1) < 0.02);
  }
}

TEST_CASE("the drag converges with resolution") {
  const double L = 0.1, eps = 1e-3, eta = 0.1;
  std::vector<double> perp;
  for (int n : {26, 51, 101, 201}) perp.push_back(straightRodDrag(n, L, eps, Vec3(1e-3, 0, 0), eta, false).x());
  const double d1 = std::abs(perp[1] - perp[0]), d2 = std::abs(perp[2] - perp[1]), d3 = std::abs(perp[3] - perp[2]);
  std::printf("broadside drag, n = 26..201: %.6e %.6e %.6e %.6e; successive ratios %.2f %.2f\n", perp[0],
              perp[1], perp[2], perp[3], d1 / d2, d2 / d3);
  CHECK(d2 < 0.6 * d1);
  CHECK(d3 < 0.6 * d2);
  CHECK(d3 / perp[3] < 1e-2);
}

TEST_CASE("GMRES agrees with the dense LU reference") {
  const double L = 0.1, eps = 1e-3;
  for (const Vec3& U : {Vec3(1e-3, 0, 0), Vec3(0, 0, 1e-3), Vec3(2e-4, -1e-3, 5e-4)}) {
    const Vec3 lu = straightRodDrag(51, L, eps, U, 0.1, true);
    const Vec3 gm = straightRodDrag(51, L, eps, U, 0.1, false);
    CHECK((lu - gm).norm() <= 1e-10 * lu.norm());
  }
}
