// Unit checks of plugins/cosserat_ground on a Cosserat rod in a FakeWorld: the B-spline envelope of
// muscle-torque, its couples (Eq. 33, equal and opposite: no net couple), and that the ground's
// evaluation allocates nothing.
#include "allocation_counter.h"
#include "cosserat_ground.h"
#include "cosserat_rod.h"
#include <rodsim/testing/fake_world.h>
#include "loads.h"

#include <doctest/doctest.h>

#include <cmath>
#include <numbers>

using rodsim::Params;
using rodsim::Value;
using rodsim::Vec;
using rodsim::Vec3;
using rodsim::ground::Ground;
using rodsim::ground::MuscleTorque;
using rodsim::testing::makeParams;

namespace {

Params rodParams(int nodes) {
  return makeParams(rodsim::CosseratRod::schema(),
                    {{"nodes", nodes},
                     {"radius", 0.025},
                     {"density", 1000.0},
                     {"youngs_modulus", 1e7},
                     {"geometry.shape", std::string("straight")},
                     {"geometry.start", rodsim::toValue(Vec3(0, 0, 0.025))},
                     {"geometry.end", rodsim::toValue(Vec3(1, 0, 0.025))},
                     {"rest_shape", std::string("straight")}},
                    "snake");
}

}  // namespace

TEST_CASE("clamped uniform cubic B-spline: end values, partition of unity, linear precision") {
  const std::vector<double> ones(6, 1.0), c{0, 17.4, 48.5, 5.4, 14.7, 0};
  // Greville abscissae of the knots [0 0 0 0 1/3 2/3 1 1 1 1]: (t_{i+1} + t_{i+2} + t_{i+3}) / 3
  const std::vector<double> greville{0, 1.0 / 9, 1.0 / 3, 2.0 / 3, 8.0 / 9, 1};
  for (double u = 0; u <= 1.0 + 1e-12; u += 0.05) {
    CHECK(MuscleTorque::bspline(ones, u) == doctest::Approx(1.0).epsilon(1e-14));
    CHECK(MuscleTorque::bspline(greville, u) == doctest::Approx(u).epsilon(1e-13));
  }
  CHECK(MuscleTorque::bspline(c, 0.0) == 0.0);
  CHECK(MuscleTorque::bspline(c, 1.0) == doctest::Approx(0.0));
  // convex hull: within [min, max] of the coefficients
  for (double u = 0; u <= 1.0; u += 0.01) {
    const double b = MuscleTorque::bspline(c, u);
    CHECK(b >= -1e-12);
    CHECK(b <= 48.5);
  }
  // Bezier case (4 coefficients): B(1/2) = (c0 + 3 c1 + 3 c2 + c3) / 8
  CHECK(MuscleTorque::bspline({1, 2, 3, 5}, 0.5) == doctest::Approx((1 + 6 + 9 + 5) / 8.0));
}

TEST_CASE("muscle-torque: couples A(s_i, t) d1 at interior nodes, equal and opposite, no net couple") {
  rodsim::testing::FakeWorld w;
  auto& rod = w.addRod<rodsim::CosseratRod>(rodParams(11));
  const double T = 1.0, k = 2 * std::numbers::pi / 0.97, t = 0.3;
  w.addForce<MuscleTorque>(makeParams(MuscleTorque::schema(),
                                      {{"rod", std::string("snake")},
                                       {"amplitudes", rodsim::toValue(std::vector<double>{0, 17.4, 48.5, 5.4, 14.7, 0})},
                                       {"period", T},
                                       {"wave_number", k}}));
  w.finalize();
  rodsim::EvalContext ctx;
  ctx.t = t;
  ctx.dt = 1e-4;
  Vec q = w.q(), f;
  ctx.q = &q;
  ctx.q_start = &q;
  w.evaluate(ctx, f, nullptr);
  // The rod is straight and at rest: only the muscle couples. Global couple of element e: Q_e^T f_e.
  Vec3 total = Vec3::Zero(), running = Vec3::Zero();
  for (int e = 0; e < rod.numElements(); ++e) {
    const Vec3 fe = f.segment<3>(rod.dofOffset() + rod.rotationDof(e));
    const Vec3 Ce = rod.frame(e).transpose() * fe;
    total += Ce;
    running += Ce;
    if (e + 1 < rod.numElements()) {
      // the couple at node e+1 is minus the sum of the couples on elements 0..e
      const double s = 0.1 * (e + 1);
      const double A = MuscleTorque::bspline({0, 17.4, 48.5, 5.4, 14.7, 0}, s) * std::sin(2 * std::numbers::pi * t / T + k * s);
      Vec3 d1, d2, d3;
      rod.materialFrame(e, d3, d1, d2);
      CHECK((-running - A * d1).norm() < 1e-10 * (1 + std::abs(A)));
    }
  }
  CHECK(total.norm() < 1e-12);
  // no force on the nodes
  for (int i = 0; i < rod.numNodes(); ++i) CHECK(f.segment<3>(rod.globalPositionDof(i)).norm() < 1e-12);
}

TEST_CASE("ground: static friction and wall response balance a resting rod; addForce allocates nothing") {
  rodsim::testing::FakeWorld w;
  auto& rod = w.addRod<rodsim::CosseratRod>(rodParams(21));
  w.addForce<rodsim::loads::Gravity>(makeParams(rodsim::loads::Gravity::schema(),
                                                {{"g", rodsim::toValue(Vec3(1.0, -2.0, -9.81))}}));
  auto& ground = w.addForce<Ground>(makeParams(Ground::schema(),
                                               {{"static_friction", rodsim::toValue(Vec3(0.5, 0.5, 0.5))},
                                                {"kinetic_friction", rodsim::toValue(Vec3(0.25, 0.25, 0.25))}}));
  w.finalize();
  rodsim::EvalContext ctx;
  ctx.t = 0;
  ctx.dt = 1e-4;
  Vec q = w.q(), f;
  ctx.q = &q;
  ctx.q_start = &q;
  w.evaluate(ctx, f, nullptr);
  // Axial pull 1 N/kg < 0.5 g: held; lateral 2 N/kg: the no-slip force of Eq. 42 is 2/3 of it, rolling
  // (the nodes accelerate at 2/3 of the lateral load), the spin accelerating consistently (a = r dw/dt).
  const Vec& M = w.mass();
  for (int i = 0; i < rod.numNodes(); ++i) {
    const int d = rod.globalPositionDof(i);
    CHECK(std::abs(f[d] / M[d]) < 1e-9);
    CHECK(f[d + 1] / M[d + 1] == doctest::Approx(-2.0 * 2.0 / 3.0).epsilon(1e-9));
    CHECK(std::abs(f[d + 2] / M[d + 2]) < 1e-9);
  }
  for (int e = 0; e < rod.numElements(); ++e) {
    const int tw = rod.dofOffset() + rod.twistDof(e);
    CHECK(0.025 * std::abs(f[tw] / M[tw]) == doctest::Approx(2.0 * 2.0 / 3.0).epsilon(1e-6));
  }
  Vec f2 = Vec::Zero(f.size());
  const long before = g_allocations.load();
  ground.addForce(ctx, f2);
  CHECK(g_allocations.load() == before);
}
