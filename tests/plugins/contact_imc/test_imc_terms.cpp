// The pair force and Hessian of Eq. 9/B.1 and the friction partials of Eqs. 14-21, against central
// finite differences (relative error <= 1e-6). The distance (Eqs. 10-13), the energy E(D) of
// Eq. B.1 and the sweep and prune are tested with rodsim::geometry (tests/libs/geometry).
#include "finite_differences.h"
#include "friction.h"
#include "imc_energy.h"

#include <doctest/doctest.h>

#include <cmath>
#include <string>

using namespace rodsim::imc;
using rodsim::test::fdGradient;
using rodsim::test::fdJacobian;
using rodsim::test::relErr;

namespace {

Vec12 pack(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
  Vec12 x;
  x << a, b, c, d;
  return x;
}

}  // namespace

TEST_CASE("pair force = -dE/dx and its Jacobian by finite differences, both branches, all regimes") {
  const double r = 1e-3, delta = 5e-5, k = 2.0;  // h_s = r, contact distance 2 r
  struct Case {
    std::string name;
    Vec12 x;  // with the gap set below
    DistanceType type;
  };
  // Unit-distance templates (scaled by r below), closest points along z at distance `d`.
  auto ee = [](double d) { return pack({-5, 0, 0}, {5, 0.5, 0}, {1, -5, d}, {-1, 5, d}); };
  auto pe = [](double d) { return pack({-5, 0, 0}, {5, 0, 0}, {0.3, 0, d}, {1.5, 0.2, d + 5}); };
  auto pp = [](double d) {  // q0 beyond the end p1 of edge 1, edge 2 pointing away: robustly point-point
    const Vec3 q0 = d * Vec3(std::sin(0.3), 0, std::cos(0.3));
    return pack({-5, 0, 0}, {0, 0, 0}, q0, q0 + Vec3(1, 0.3, 5));
  };
  auto par = [](double d) { return pack({-5, 0, 0}, {5, 0, 0}, {0, 0, d}, {10, 0, d}); };
  for (double gap_over_delta : {-3.0, -0.5, 0.0, 0.4, 0.9}) {  // quadratic branch, softplus band
    const double d = 2 + gap_over_delta * delta / r;
    for (const auto& [name, make, type] :
         {std::tuple{"edge-edge", +ee, DistanceType::EdgeEdge}, std::tuple{"point-edge", +pe, DistanceType::PointEdge},
          std::tuple{"point-point", +pp, DistanceType::PointPoint},
          std::tuple{"parallel", +par, DistanceType::PointEdge}}) {
      const char* case_name = name;  // clang 14 cannot capture a structured binding
      CAPTURE(case_name);
      CAPTURE(gap_over_delta);
      const Vec12 x = make(d) * r;
      auto eval = [&](const Vec12& y, int order) {
        PairEvaluation pe;
        evaluatePair(y.segment<3>(0), y.segment<3>(3), y.segment<3>(6), y.segment<3>(9), r, delta, k, order, pe);
        return pe;
      };
      const PairEvaluation p = eval(x, 2);
      REQUIRE(p.e.active);
      CHECK(p.dist.type == type);
      CHECK(p.gap == doctest::Approx(gap_over_delta * delta).epsilon(1e-6).scale(delta));
      const double h = 2e-5 * delta;
      const Vec12 g = fdGradient([&](const Vec12& y) { return eval(y, 1).energy; }, x, h);
      const Eigen::MatrixXd J = fdJacobian([&](const Vec12& y) { return Eigen::VectorXd(eval(y, 1).force); }, x, h);
      const double ef = relErr(p.force, -g), ej = relErr(p.dforce, J);
      MESSAGE(name, " gap ", gap_over_delta, " delta: force rel. error ", ef, ", Jacobian rel. error ", ej);
      CHECK(ef <= 1e-6);
      CHECK(ej <= 1e-6);
      // Newton's third law: the forces on the two edges balance.
      CHECK((p.force.segment<3>(0) + p.force.segment<3>(3) + p.force.segment<3>(6) + p.force.segment<3>(9)).norm() <=
            1e-10 * p.force.norm());
    }
  }
}

TEST_CASE("friction partials df/dv and df/dF^c by finite differences, sticking and sliding") {
  const double mu = 0.3, nu = 1e-4, K2 = 15 / nu;
  // Contact forces of an edge-edge pair at beta_i = 0.3, beta_j = 0.6, normal ~ +z on edge i.
  Vec12 f;
  f << 0.7 * Vec3(0.01, 0.02, 1.0), 0.3 * Vec3(0.01, 0.02, 1.0), -0.4 * Vec3(0.01, 0.02, 1.0),
      -0.6 * Vec3(0.01, 0.02, 1.0);
  f.segment<3>(3) += Vec3(0.002, -0.001, 0.0);  // not exactly collinear: exercises every term
  for (double speed : {0.05 * nu, 0.5 * nu, 3 * nu, 100 * nu}) {  // sticking ... sliding
    CAPTURE(speed);
    Vec12 v;
    v << Vec3(1, 0.5, 0.1) * speed, Vec3(0.8, 0.7, -0.1) * speed, Vec3(-0.2, 0.1, 0.05) * speed,
        Vec3(-0.1, -0.3, 0) * speed;
    FrictionResult fr;
    pairFriction(f, v, mu, K2, true, fr);
    CHECK(fr.force.norm() > 0);
    CHECK(fr.gamma <= 1);
    // |F^fr| <= mu |F^c| node by node (Coulomb cone), -> equality when sliding
    for (int m = 0; m < 4; ++m) CHECK(fr.force.segment<3>(3 * m).norm() <= mu * f.segment<3>(3 * m).norm() * (1 + 1e-12));
    if (speed > 10 * nu) CHECK(fr.gamma == doctest::Approx(1.0).epsilon(1e-6));
    auto byV = [&](const Vec12& y) {
      FrictionResult o;
      pairFriction(f, y, mu, K2, false, o);
      return Eigen::VectorXd(o.force);
    };
    auto byF = [&](const Vec12& y) {
      FrictionResult o;
      pairFriction(y, v, mu, K2, false, o);
      return Eigen::VectorXd(o.force);
    };
    const double hv = 1e-5 * std::min(nu, speed), hf = 1e-7;
    const double ev = relErr(fr.d_dv, fdJacobian(byV, v, hv)), ef = relErr(fr.d_df, fdJacobian(byF, f, hf));
    MESSAGE("|v| ~ ", speed / nu, " nu: d/dv rel. error ", ev, ", d/dF rel. error ", ef);
    CHECK(ev <= 1e-6);
    CHECK(ef <= 1e-6);
  }
}

TEST_CASE("node-plane friction partials by finite differences") {
  const double mu = 0.5, K2 = 15 / 1e-3, fn = 2.0;
  const Vec3 n = Vec3(0.1, 0.2, 1).normalized();
  for (double speed : {1e-5, 1e-4, 1e-2}) {
    const Vec3 v = Vec3(1, -0.4, 0.3) * speed;
    Vec3 F, dfn;
    Eigen::Matrix3d dv;
    nodeFriction(fn, n, v, mu, K2, F, &dv, &dfn);
    auto byV = [&](const Vec3& y) {
      Vec3 o;
      nodeFriction(fn, n, y, mu, K2, o, nullptr, nullptr);
      return Eigen::VectorXd(o);
    };
    CHECK(relErr(dv, fdJacobian(byV, v, 1e-5 * speed)) <= 1e-6);
    Vec3 Fp, Fm;
    nodeFriction(fn + 1e-6, n, v, mu, K2, Fp, nullptr, nullptr);
    nodeFriction(fn - 1e-6, n, v, mu, K2, Fm, nullptr, nullptr);
    CHECK(relErr(dfn, (Fp - Fm) / 2e-6) <= 1e-6);
    // d/dn (n as a free 3-vector: the law projects with I - n n^T)
    Eigen::Matrix3d dn;
    nodeFriction(fn, n, v, mu, K2, F, nullptr, nullptr, &dn);
    auto byN = [&](const Vec3& m) {
      Vec3 o;
      nodeFriction(fn, m, v, mu, K2, o, nullptr, nullptr);
      return Eigen::VectorXd(o);
    };
    CHECK(relErr(dn, fdJacobian(byN, n, 1e-6)) <= 1e-6);
  }
}

