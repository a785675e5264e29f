// slender-body-drag (plugins/slender_body_drag): the force against Eqs. 43-44 of Gazzola et al. (2018),
// its Jacobians against central differences (test kit), on the test kit's SpringChain, a der rod and
// a cosserat rod; parameter errors.
#include <rodsim/testing/derivative_checks.h>
#include <rodsim/testing/fake_world.h>

#include "cosserat_rod.h"
#include "der_rod.h"
#include "slender_body_drag.h"

#include <doctest/doctest.h>

#include "allocation_counter.h"
#include "expect_param_error.h"

#include <Eigen/Dense>

#include <cmath>
#include <functional>
#include <numbers>

using namespace rodsim;
using namespace rodsim::testing;
using rodsim::sbt::SlenderBodyDrag;
using rodsim::test::checkParamError;

namespace {

constexpr double kPi = std::numbers::pi;

Params derParams(int nodes, const std::string& shape) {
  if (shape == "helix")
    return makeParams(DerRod::schema(), {{"nodes", toValue(nodes)}, {"radius", toValue(0.004)}, {"youngs_modulus", toValue(1e7)},
                                         {"geometry.shape", toValue("helix")}, {"geometry.helix_radius", toValue(0.01)},
                                         {"geometry.pitch", toValue(0.05)}, {"geometry.axial_length", toValue(0.06)}},
                      "der");
  return makeParams(DerRod::schema(), {{"nodes", toValue(nodes)}, {"radius", toValue(0.004)}, {"youngs_modulus", toValue(1e7)},
                                       {"geometry.shape", toValue("straight")}, {"geometry.start", toValue(Vec3(0, 0, 0))},
                                       {"geometry.end", toValue(Vec3(0.5, 0, 0))}},
                    "der");
}

Params cosseratParams(int nodes, const std::string& shape) {
  if (shape == "helix")
    return makeParams(CosseratRod::schema(), {{"nodes", toValue(nodes)}, {"radius", toValue(0.02)}, {"youngs_modulus", toValue(1e6)},
                                              {"geometry.shape", toValue("helix")}, {"geometry.helix_radius", toValue(0.2)},
                                              {"geometry.pitch", toValue(0.3)}, {"geometry.axial_length", toValue(0.6)}},
                      "cosserat");
  return makeParams(CosseratRod::schema(), {{"nodes", toValue(nodes)}, {"radius", toValue(0.02)}, {"youngs_modulus", toValue(1e6)},
                                            {"geometry.shape", toValue("straight")}, {"geometry.start", toValue(Vec3(0, 0, 0))},
                                            {"geometry.end", toValue(Vec3(0, 0, 1.3))}},
                    "cosserat");
}

Params dragParams(double mu, std::optional<double> L = std::nullopt, bool position_jacobian = false) {
  Params p = makeParams(SlenderBodyDrag::schema(), {{"viscosity", toValue(mu)}, {"position_jacobian", toValue(position_jacobian)}},
                        "drag");
  if (L) p.set("length", toValue(*L));
  return p;
}

// A world with one rod of each kind a test can build: the SpringChain of the test kit (with twist DOFs),
// a der rod and a cosserat rod (helices, or straight when `straight`).
struct Worlds {
  FakeWorld w;
  SlenderBodyDrag* drag = nullptr;
  explicit Worlds(double mu, bool straight = false, bool position_jacobian = false) {
    SpringChain::Options o;
    o.points = straight ? line(5, Vec3(0, 1, 0), Vec3(0.8, 1, 0))
                        : std::vector<Vec3>{Vec3(0, 1, 0), Vec3(0.2, 1.05, 0), Vec3(0.35, 1.2, 0.1), Vec3(0.5, 1.2, 0.3), Vec3(0.6, 1.1, 0.4)};
    o.twist = true;
    o.radius = 0.01;
    w.addRod<SpringChain>("chain", o);
    w.addRod<DerRod>(derParams(7, straight ? "straight" : "helix"));
    w.addRod<CosseratRod>(cosseratParams(6, straight ? "straight" : "helix"));
    drag = &w.addForce<SlenderBodyDrag>(dragParams(mu, std::nullopt, position_jacobian));
    w.finalize();
  }
};

EvalContext dynamicContext(const Vec& q, const Vec& q_start, const Vec& v_start, double dt) {
  EvalContext ctx;
  ctx.dt = dt;
  ctx.t = dt;
  ctx.q = &q;
  ctx.q_start = &q_start;
  ctx.v_start = &v_start;
  return ctx;
}

// A smooth, non-uniform displacement of every DOF (positions and frames alike).
Vec wiggle(int n, double amp, double phase) {
  Vec d(n);
  for (int i = 0; i < n; ++i) d[i] = amp * std::sin(0.7 * i + phase) * (1 + 0.3 * std::cos(1.3 * i));
  return d;
}

}  // namespace

TEST_CASE("slender-body-drag: c = 4 pi mu / ln(L/r) with L the rod's rest length, or the `length` parameter (Eq. 43)") {
  Worlds s(2.0);
  const auto& c = s.drag->coefficients();
  REQUIRE(c.size() == 4 + 6 + 5);
  CHECK(c[0] == doctest::Approx(4 * kPi * 2.0 / std::log(restArcLengths(s.w.rod(0)).back() / 0.01)).epsilon(1e-14));
  CHECK(c[4] == doctest::Approx(4 * kPi * 2.0 / std::log(restArcLengths(s.w.rod(1)).back() / 0.004)).epsilon(1e-14));
  CHECK(c[10] == doctest::Approx(4 * kPi * 2.0 / std::log(restArcLengths(s.w.rod(2)).back() / 0.02)).epsilon(1e-14));

  FakeWorld w;
  w.addRod<CosseratRod>(cosseratParams(6, "straight"));
  auto& d = w.addForce<SlenderBodyDrag>(dragParams(2.0, 40.0));
  w.finalize();
  for (double ce : d.coefficients()) CHECK(ce == doctest::Approx(4 * kPi * 2.0 / std::log(40.0 / 0.02)).epsilon(1e-14));
}

TEST_CASE("slender-body-drag: a straight rod translating rigidly feels -c L (I - t t^T/2) U, tangential half the normal (Eq. 44)") {
  Worlds s(0.5, /*straight=*/true);
  const double dt = 1e-3;
  const Vec3 U(0.3, -0.2, 0.7);
  const int n = s.w.numDofs();
  const Vec q0 = s.w.q(), v0 = Vec::Zero(n);
  Vec q = q0;
  for (int r = 0; r < s.w.numRods(); ++r)
    for (int i = 0; i < s.w.rod(r).numNodes(); ++i) q.segment<3>(s.w.rod(r).globalPositionDof(i)) += U * dt;
  Vec f = Vec::Zero(n);
  s.drag->addForce(dynamicContext(q, q0, v0, dt), f);
  int k = 0;
  for (int r = 0; r < s.w.numRods(); ++r) {
    Rod& rod = s.w.rod(r);
    const Vec3 t = (q0.segment<3>(rod.globalPositionDof(rod.numNodes() - 1)) - q0.segment<3>(rod.globalPositionDof(0))).normalized();
    const double L = restArcLengths(rod).back(), c = s.drag->coefficients()[k];
    Vec3 total = Vec3::Zero();
    for (int i = 0; i < rod.numNodes(); ++i) {
      const Vec3 fi = f.segment<3>(rod.globalPositionDof(i));
      total += fi;
      // per node: the drag of its Voronoi length (uniform edges)
      CHECK((fi + c * rod.restVoronoiLength(i) * (U - 0.5 * t.dot(U) * t)).norm() < 1e-12 * c * L * U.norm());
    }
    const Vec3 para = total.dot(t) * t, perp = total - para;
    CHECK((para + 0.5 * c * L * U.dot(t) * t).norm() < 1e-12 * c * L);                // Eq. 44, tangential: c/2
    CHECK((perp + c * L * (U - U.dot(t) * t)).norm() < 1e-12 * c * L);               // Eq. 44, normal: c
    for (int e = 0; e < rod.numEdges(); ++e)
      if (rod.twistDof(e) >= 0) CHECK(f[rod.dofOffset() + rod.twistDof(e)] == 0.0);  // no couple
    k += rod.numEdges();
  }
}

TEST_CASE("slender-body-drag: the nodal forces are -dR/dv of the Rayleigh function; the drag only dissipates") {
  Worlds s(1.5);
  const int n = s.w.numDofs();
  const double dt = 2e-3;
  const Vec q0 = s.w.q(), v0 = Vec::Zero(n);
  const Vec q = q0 + wiggle(n, 1e-3, 0.3);
  const EvalContext ctx = dynamicContext(q, q0, v0, dt);
  Vec f = Vec::Zero(n);
  s.drag->addForce(ctx, f);
  // R(v) = sum_e c l v_e^T (I - t t^T/2) v_e / 2 at the configuration q; F_i = -dR/dv_i.
  auto rayleigh = [&](const Vec& v) {
    double R = 0;
    int k = 0;
    for (int r = 0; r < s.w.numRods(); ++r) {
      Rod& rod = s.w.rod(r);
      for (int e = 0; e < rod.numEdges(); ++e, ++k) {
        const int a = rod.globalPositionDof(e), b = rod.globalPositionDof(e + 1);
        const Vec3 ev = q.segment<3>(b) - q.segment<3>(a);
        const double l = ev.norm();
        const Vec3 t = ev / l, ve = 0.5 * (v.segment<3>(a) + v.segment<3>(b));
        R += 0.5 * s.drag->coefficients()[k] * l * (ve.squaredNorm() - 0.5 * std::pow(t.dot(ve), 2));
      }
    }
    return R;
  };
  const Vec v = (q - q0) / dt;
  const Vec dR = fdGradient(rayleigh, v, 1e-6);
  CHECK(relErr(f, -dR) < 1e-8);
  CHECK(f.dot(v) == doctest::Approx(-2 * rayleigh(v)).epsilon(1e-12));
  CHECK(f.dot(v) < 0);
}

TEST_CASE("slender-body-drag: K = -dF/dq (velocity and position parts) against central differences on three rod models") {
  Worlds s(0.8, /*straight=*/false, /*position_jacobian=*/true);
  const int n = s.w.numDofs();
  const double dt = 1e-2;
  const Vec q0 = s.w.q() + wiggle(n, 2e-3, 1.1), v0 = Vec::Zero(n);
  const Vec q = q0 + wiggle(n, 3e-3, 0.4);
  EvalContext ctx = dynamicContext(q, q0, v0, dt);

  // The whole Jacobian: F depends on q through the velocities (q - q_start)/dt and the edge geometry.
  const DerivativeErrors total = checkForce(*s.drag, ctx, q, 1e-7, /*conservative=*/false);
  MESSAGE("K against -dF/dq: " << total.stiffness << ", asymmetry " << total.symmetry);
  CHECK(total.stiffness < 1e-6);
  CHECK(total.symmetry > 1e-6);  // the position part is not symmetric (the solvers then use LU)

  StiffnessSink sink;
  s.drag->addStiffness(ctx, sink);
  const Eigen::MatrixXd K = denseStiffness(sink, n);
  // The velocity part alone: -dF/dv / dt = dF/dq_start (q fixed).
  auto forceAtStart = [&](const Vec& qs) {
    EvalContext c = ctx;
    c.q_start = &qs;
    Vec F = Vec::Zero(n);
    s.drag->addForce(c, F);
    return F;
  };
  const Eigen::MatrixXd Kv = fdJacobian(forceAtStart, q0, 1e-7);
  CHECK((Kv - Kv.transpose()).norm() < 1e-9 * Kv.norm());  // symmetric: the Hessian of R / dt
  // The position part alone: -dF/dx at fixed velocities (q and q_start moved together).
  auto forceAtFixedVelocity = [&](const Vec& x) {
    const Vec xs = x - (q - q0);
    EvalContext c = ctx;
    c.q = &x;
    c.q_start = &xs;
    Vec F = Vec::Zero(n);
    s.drag->addForce(c, F);
    return F;
  };
  const Eigen::MatrixXd Kx = -fdJacobian(forceAtFixedVelocity, q, 1e-7);
  CHECK(relErr(Eigen::MatrixXd(K - Kx), Kv) < 1e-6);
  CHECK(relErr(Eigen::MatrixXd(K - Kv), Kx) < 1e-5);
  CHECK(Kx.norm() > 1e-3 * Kv.norm());  // the position part is really there

  // position_jacobian = false (the default): K is the velocity part alone, symmetric.
  Worlds v(0.8);
  StiffnessSink sink_v;
  v.drag->addStiffness(ctx, sink_v);
  const Eigen::MatrixXd Kvel = denseStiffness(sink_v, n);
  CHECK(relErr(Kvel, Kv) < 1e-6);
  CHECK((Kvel - Kvel.transpose()).norm() == 0.0);
  REQUIRE(sink_v.entries().size() == sink.entries().size());  // same pattern either way

  // Quasi-static: no force and the same pattern with zero values.
  ctx.quasi_static = true;
  Vec fs = Vec::Zero(n);
  s.drag->addForce(ctx, fs);
  CHECK(fs.norm() == 0.0);
  StiffnessSink sink_static;
  s.drag->addStiffness(ctx, sink_static);
  REQUIRE(sink_static.entries().size() == sink.entries().size());
  for (std::size_t i = 0; i < sink.entries().size(); ++i) {
    CHECK(sink_static.entries()[i].row() == sink.entries()[i].row());
    CHECK(sink_static.entries()[i].col() == sink.entries()[i].col());
    CHECK(sink_static.entries()[i].value() == 0.0);
  }
}

TEST_CASE("slender-body-drag: parameter errors (schema ranges, L <= r, unknown rods)") {
  const Schema s = SlenderBodyDrag::schema();
  REQUIRE(s.find("viscosity") != nullptr);
  CHECK(s.find("viscosity")->unit == "Pa s");
  CHECK(s.find("viscosity")->min == 0.0);
  REQUIRE(s.find("length") != nullptr);
  CHECK(s.find("length")->min_exclusive);

  FakeWorld w;
  w.addRod<CosseratRod>(cosseratParams(6, "straight"));  // r = 0.02 m
  w.addForce<SlenderBodyDrag>(dragParams(1.0, 0.015));
  checkParamError([&] { w.finalize(); }, "length", "L > r");

  FakeWorld w2;
  w2.addRod<CosseratRod>(cosseratParams(6, "straight"));
  w2.addForce<SlenderBodyDrag>(makeParams(SlenderBodyDrag::schema(), {{"viscosity", toValue(1.0)},
                                                                       {"rods", toValue(std::vector<std::string>{"rod"})}}));
  checkParamError([&] { w2.finalize(); }, "rods", "valid rods: 'cosserat'");
}

TEST_CASE("slender-body-drag: force and Jacobian allocate nothing once the stiffness sink is warm") {
  Worlds s(1.0, /*straight=*/false, /*position_jacobian=*/true);
  const int n = s.w.numDofs();
  const Vec q0 = s.w.q(), v0 = Vec::Zero(n);
  const Vec q = q0 + wiggle(n, 1e-3, 0.2);
  const EvalContext ctx = dynamicContext(q, q0, v0, 1e-3);
  Vec f = Vec::Zero(n);
  StiffnessSink sink;
  s.drag->addForce(ctx, f);
  s.drag->addStiffness(ctx, sink);
  const long before = g_allocations.load();
  for (int k = 0; k < 10; ++k) {
    s.drag->addForce(ctx, f);
    sink.clear();
    s.drag->addStiffness(ctx, sink);
  }
  CHECK(g_allocations.load() - before == 0);
}
