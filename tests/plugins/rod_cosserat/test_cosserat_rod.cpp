// The cosserat rod: rotations (Rodrigues exponential, logarithm, inverse Jacobians) near zero
// angle, internal forces and couples against finite differences of the discrete elastic energy,
// rebasing, constraints and loads through the generic interfaces, no allocation in an evaluation.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"  // false positive with the replaced operator new
#include "cosserat_clamp.h"
#include "cosserat_rod.h"
#include "cosserat_test_rods.h"
#include <rodsim/testing/fake_world.h>
#include "finite_differences.h"
#include "loads.h"

#include <rodsim/geometry/so3.h>

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <new>

#include "allocation_counter.h"  // g_allocations

using namespace rodsim;
using namespace rodsim::cosserat;
using rodsim::geometry::expSO3;
using rodsim::geometry::logSO3;
using rodsim::geometry::logSO3Curvature;
using rodsim::testing::makeParams;

using rodsim::test::helixRodParams;

namespace {

// A deformed configuration: positions and rotation vectors perturbed smoothly.
Vec deformed(const CosseratRod& rod, double amp) {
  Vec q(rod.numDofs());
  rod.initialDofs(q);
  for (int i = 0; i < rod.numNodes(); ++i)
    q.segment<3>(rod.positionDof(i)) += amp * 0.05 * Vec3(std::sin(1.3 * i), std::cos(0.7 * i), std::sin(0.4 * i + 1));
  for (int e = 0; e < rod.numElements(); ++e)
    q.segment<3>(rod.rotationDof(e)) = amp * Vec3(0.3 * std::sin(0.9 * e), 0.2 * std::cos(1.1 * e), 0.25 * std::sin(e + 0.5));
  return q;
}

}  // namespace

TEST_CASE("internal forces and couples are minus the gradient of the discrete elastic energy (rel. error <= 1e-6)") {
  for (double amp : {0.0, 0.3, 1.0}) {
    for (const char* rest : {"straight", "initial"}) {
      Params p = helixRodParams(9);
      p.set("rest_shape", std::string(rest));
      CosseratRod rod(p);
      Vec q = deformed(rod, amp);
      // Couples are gradients with respect to rotations exp(-[a]) Q of the current frames: fold φ
      // into the frames first (rebase), where φ-derivatives are exactly those.
      Vec v = Vec::Zero(rod.numDofs());
      rod.setConfiguration(q);
      rod.rebaseDofs(q, v);
      rod.setConfiguration(q);
      Vec f = Vec::Zero(rod.numDofs());
      rod.addElasticForce(f);
      const Vec g = -rodsim::test::fdGradient(
          [&](const Vec& x) {
            rod.setConfiguration(x);
            return rod.elasticEnergy();
          },
          q, 1e-6);
      rod.setConfiguration(q);
      CAPTURE(amp);
      CAPTURE(rest);
      const double scale = std::max(f.norm(), 1e-12);
      MESSAGE("amp " << amp << " rest " << std::string(rest) << ": |f| = " << f.norm() << ", |f - fd| / |f| = " << (f - g).norm() / scale);
      if (amp > 0 || std::string(rest) == "straight") CHECK((f - g).norm() / scale <= 1e-6);
      if (amp == 0 && std::string(rest) == "initial") CHECK(f.norm() < 1e-9);  // stress free
    }
  }
}

TEST_CASE("straight rod at rest: zero force; pure twist gives the couple GJ dphi / D") {
  Params p = makeParams(CosseratRod::schema(), {{"nodes", 5}, {"radius", 0.01}, {"youngs_modulus", 1e6},
                                                {"geometry.shape", std::string("straight")},
                                                {"geometry.start", toValue(Vec3(0, 0, 0))}, {"geometry.end", toValue(Vec3(1, 0, 0))}});
  CosseratRod rod(p);
  Vec q(rod.numDofs());
  rod.initialDofs(q);
  rod.setConfiguration(q);
  Vec f = Vec::Zero(rod.numDofs());
  rod.addElasticForce(f);
  CHECK(f.norm() < 1e-12);
  CHECK(rod.elasticEnergy() == doctest::Approx(0.0));
  // twist element 2 by 0.01 rad about d3: couple on it -GJ (2 * 0.01) / D (two neighbours)
  q[rod.twistDof(2)] = 0.01;
  rod.setConfiguration(q);
  f.setZero();
  rod.addElasticForce(f);
  const double GJ = rod.bendStiffness().z(), D = 0.25;
  CHECK(f[rod.twistDof(2)] == doctest::Approx(-2 * GJ * 0.01 / D).epsilon(1e-6));
  CHECK(f[rod.twistDof(1)] == doctest::Approx(GJ * 0.01 / D).epsilon(1e-6));
}

TEST_CASE("rebaseDofs folds the rotation vectors into the frames without changing the configuration") {
  CosseratRod rod(helixRodParams(7));
  Vec q = deformed(rod, 1.0), v = Vec::Ones(rod.numDofs());
  rod.setConfiguration(q);
  const double E = rod.elasticEnergy();
  const Mat3 Q3 = rod.frame(3);
  rod.rebaseDofs(q, v);
  for (int e = 0; e < rod.numElements(); ++e) CHECK(q.segment<3>(rod.rotationDof(e)).norm() == 0.0);
  CHECK(v == Vec::Ones(rod.numDofs()));
  rod.setConfiguration(q);
  CHECK(rod.elasticEnergy() == doctest::Approx(E).epsilon(1e-12));
  CHECK((rod.frame(3) - Q3).norm() < 1e-14);
}

TEST_CASE("the vectorized frame and curvature passes match expSO3 and logSO3 below and above 0.1 rad") {
  // rotateFrames and nodeCurvatures take the small-angle polynomials for every element and node and
  // redo the ones at 0.1 rad or more; both kinds occur here (φ amplitudes 1e-3 and 0.5, a coarse
  // helix with large curvatures, and a mildly deformed fine one with small curvatures).
  for (const int nodes : {7, 200}) {
    CosseratRod rod(helixRodParams(nodes));
    Vec q = deformed(rod, nodes == 7 ? 1.0 : 0.01);
    for (int e = 0; e < rod.numElements(); e += 2) q.segment<3>(rod.rotationDof(e)) *= 1e-3 / 0.3;
    rod.setConfiguration(q);
    bool small = false, large = false;
    for (int e = 0; e < rod.numElements(); ++e) {
      const Vec3 phi = q.segment<3>(rod.rotationDof(e));
      (phi.squaredNorm() < 1e-2 ? small : large) = true;
      CHECK((rod.frame(e) - expSO3(-phi) * rod.committedFrame(e)).norm() < 1e-14);
    }
    CHECK(small);
    if (nodes == 7) CHECK(large);
    double kmin = INFINITY, kmax = 0;
    for (int i = 1; i < rod.numElements(); ++i) {
      const Vec3 th = logSO3(rod.frame(i - 1) * rod.frame(i).transpose());
      CHECK((rod.curvature(i) * rod.restVoronoiLength(i) - th).norm() < 1e-13);
      kmin = std::min(kmin, th.norm()), kmax = std::max(kmax, th.norm());
    }
    if (nodes == 7) CHECK(kmax > 0.1);
    if (nodes == 200) CHECK(kmin < 0.1);
  }
}

TEST_CASE("both variants of the curvature pass give logSO3Curvature's values bitwise (0.01 to 0.9 rad per node)") {
  // A coarse helix (large curvatures, beyond the wide polynomials) and a finer one (0.1-0.46 rad).
  for (const int nodes : {7, 12, 30}) {
    CosseratRod rod(helixRodParams(nodes));
    Vec q = deformed(rod, 0.2);
    double kmax = 0;
    for (int pass = 0; pass < 3; ++pass) {  // pass 0: plain variant; then the wide one (the rod switches)
      q[rod.rotationDof(1)] += 1e-4;        // a new configuration each pass
      rod.setConfiguration(q);
      for (int i = 1; i < rod.numElements(); ++i) {
        Mat3 R;  // as nodeCurvatures sums it
        const Mat3 P = rod.frame(i - 1), F = rod.frame(i);
        for (int a = 0; a < 3; ++a)
          for (int b = 0; b < 3; ++b) R(a, b) = P(a, 0) * F(b, 0) + P(a, 1) * F(b, 1) + P(a, 2) * F(b, 2);
        double c;
        const Vec3 th = logSO3Curvature(R, c);
        kmax = std::max(kmax, th.norm());
        CAPTURE(nodes);
        CAPTURE(pass);
        CAPTURE(i);
        CHECK((rod.curvature(i) - th / rod.restVoronoiLength(i)).norm() == 0.0);  // D̂ = Voronoi length inside
      }
    }
    CHECK(kmax > 0.1);
  }
}

TEST_CASE("addNodeTorques is addNodeTorque for every element, bitwise") {
  for (const int nodes : {6, 31}) {
    CosseratRod rod(helixRodParams(nodes));
    rod.setConfiguration(deformed(rod, 0.5));
    std::vector<double> T(3 * rod.numEdges());
    for (std::size_t k = 0; k < T.size(); ++k) T[k] = std::sin(1.7 * k + 0.3) * (k % 7 == 3 ? 0.0 : 1.0);
    Vec f1 = Vec::LinSpaced(rod.numDofs(), -1.0, 2.0), f2 = f1;
    rod.addNodeTorques(T.data(), f1);
    rod.Rod::addNodeTorques(T.data(), f2);  // the SDK's default: one addNodeTorque per node
    CHECK((f1 - f2).cwiseAbs().maxCoeff() == 0.0);
    CHECK((f1 - Vec::LinSpaced(rod.numDofs(), -1.0, 2.0)).norm() > 0.1);
  }
}

TEST_CASE("twistForDirector returns the d3 rotation that turns d1 onto a given director") {
  CosseratRod rod(helixRodParams(7));
  Vec q(rod.numDofs());
  rod.initialDofs(q);
  rod.setConfiguration(q);
  Vec3 t, m1, m2;
  rod.materialFrame(2, t, m1, m2);
  const Vec3 target = std::cos(0.4) * m1 + std::sin(0.4) * m2;
  const double phi3 = rod.twistForDirector(2, target);
  CHECK(phi3 == doctest::Approx(0.4).epsilon(1e-12));
  q[rod.twistDof(2)] = phi3;
  rod.setConfiguration(q);
  Vec3 t2, n1, n2;
  rod.materialFrame(2, t2, n1, n2);
  CHECK((n1 - target).norm() < 1e-12);
  CHECK((t2 - t).norm() < 1e-12);
}

TEST_CASE("point-load couple: addNodeTorque puts Q T on the element's rotation DOFs; gravity acts on nodes") {
  rodsim::testing::FakeWorld w;
  Params hp = helixRodParams(6);
  hp.set("rest_shape", std::string("initial"));  // stress free: only the loads act
  auto& rod = w.addRod<CosseratRod>(hp);
  w.addForce<loads::PointLoad>(makeParams(loads::PointLoad::schema(), {{"rod", std::string("rod")}, {"node", -1},
                                                                       {"torque", toValue(Vec3(0, 0, 2.0))}}));
  w.addForce<loads::Gravity>(makeParams(loads::Gravity::schema(), {}));
  w.finalize();
  EvalContext ctx;
  ctx.q = &w.q();
  ctx.q_start = &w.q();
  ctx.dt = 1e-3;
  Vec f;
  w.evaluate(ctx, f, nullptr);
  const int last = rod.numElements() - 1;
  CHECK((f.segment<3>(rod.rotationDof(last)) - rod.frame(last) * Vec3(0, 0, 2.0)).norm() < 1e-9);
  double weight = 0;
  for (int i = 0; i < rod.numNodes(); ++i) weight += f[rod.positionDof(i) + 2];
  const double mass = 1000.0 * M_PI * 0.02 * 0.02 * [&] { double L = 0; for (int e = 0; e < rod.numElements(); ++e) L += rod.restLength(e); return L; }();
  CHECK(weight == doctest::Approx(-9.81 * mass).epsilon(1e-9));
}

TEST_CASE("cosserat-clamp holds positions and whole frames; bad element indexes are ParamErrors") {
  rodsim::testing::FakeWorld w;
  auto& rod = w.addRod<CosseratRod>(helixRodParams(6));
  auto& clamp = w.addConstraint<CosseratClamp>(makeParams(
      CosseratClamp::schema(), {{"rod", std::string("rod")}, {"nodes", toValue(std::vector<int>{0})}, {"elements", toValue(std::vector<int>{0})}}));
  w.finalize();
  CHECK(clamp.dofs().size() == 6u);
  Vec q = w.q();
  q.segment<3>(rod.rotationDof(0)) = Vec3(0.1, 0.2, 0.3);
  q.segment<3>(0) += Vec3(1, 1, 1);
  w.prescribe(0.5, q);
  CHECK(q.segment<3>(rod.rotationDof(0)).norm() < 1e-15);
  CHECK((q.segment<3>(0) - w.q().segment<3>(0)).norm() < 1e-15);

  rodsim::testing::FakeWorld w2;
  w2.addRod<CosseratRod>(helixRodParams(6));
  w2.addConstraint<CosseratClamp>(makeParams(CosseratClamp::schema(), {{"rod", std::string("rod")}, {"elements", toValue(std::vector<int>{7})}}));
  CHECK_THROWS_AS(w2.finalize(), ParamError);
}

TEST_CASE("bad parameters are ParamErrors naming the key") {
  Params p = helixRodParams(2);
  try {
    CosseratRod rod(p);
    FAIL("expected a ParamError");
  } catch (const ParamError& e) {
    CHECK(e.key() == "nodes");
  }
}

TEST_CASE("an evaluation (configuration, elastic and velocity forces) allocates nothing") {
 for (const bool closed : {false, true}) {  // an open helix, and the same points as a ring
  Params p = helixRodParams(101);
  p.set("closed", closed);
  CosseratRod rod(p);
  CAPTURE(closed);
  Vec q = deformed(rod, 0.5), qs = q, f = Vec::Zero(rod.numDofs());
  qs.array() -= 1e-6;
  EvalContext ctx;
  ctx.q = &q;
  ctx.q_start = &qs;
  ctx.dt = 1e-3;
  rod.setConfiguration(q);  // warm
  const long before = g_allocations.load();
  for (int k = 0; k < 10; ++k) {
    rod.setConfiguration(q);
    rod.addElasticForce(f);
    rod.addVelocityForce(ctx, f);
    (void)rod.elasticEnergy();
  }
  CHECK(g_allocations.load() - before == 0);
 }
}

TEST_CASE("addStiffness allocates nothing once the sink has its capacity (open rod and ring)") {
  for (const bool closed : {false, true}) {
    Params p = helixRodParams(101);
    p.set("closed", closed);
    CosseratRod rod(p);
    CAPTURE(closed);
    const Vec q = deformed(rod, 0.5);
    rodsim::StiffnessSink K;
    rod.setConfiguration(q);
    rod.addStiffness(K);  // warm the sink's capacity
    const long before = g_allocations.load();
    for (int k = 0; k < 5; ++k) {
      rod.setConfiguration(q);
      K.clear();
      rod.addStiffness(K);
    }
    CHECK(g_allocations.load() - before == 0);
    CHECK(!K.entries().empty());
  }
}

TEST_CASE("cosserat-clamp rigid motion: positions and frames follow R = exp(omega tau), translation v tau; held after stop") {
  rodsim::testing::FakeWorld w;
  auto& rod = w.addRod<CosseratRod>(helixRodParams(6));
  const Vec3 omega(0.1, -0.2, 0.3), v(0.01, 0.02, -0.03), c(0.5, 0.0, 0.2);
  auto& clamp = w.addConstraint<CosseratClamp>(makeParams(
      CosseratClamp::schema(), {{"rod", std::string("rod")}, {"nodes", toValue(std::vector<int>{0, 1})},
                                {"elements", toValue(std::vector<int>{0})}, {"angular_velocity", toValue(omega)},
                                {"velocity", toValue(v)}, {"center", toValue(c)}, {"start", toValue(1.0)},
                                {"stop", toValue(3.0)}}));
  w.finalize();
  CHECK(clamp.dofs().size() == 9u);
  const Vec q0 = w.q();
  const Mat3 Q0 = rod.frame(0);
  for (double t : {0.5, 2.0, 5.0}) {
    const double tau = std::clamp(t - 1.0, 0.0, 2.0);
    const Mat3 R = expSO3(omega * tau);
    Vec q = q0;
    w.prescribe(t, q);
    for (int node : {0, 1})
      CHECK((q.segment<3>(rod.positionDof(node)) - (c + R * (q0.segment<3>(rod.positionDof(node)) - c) + v * tau)).norm() <
            1e-14);
    // the frame the rod builds from the prescribed rotation DOFs: Q = exp(-[phi]) Q_committed = Q0 R^T
    rod.setConfiguration(q);
    CHECK((rod.frame(0) - Q0 * R.transpose()).norm() < 1e-14);
  }
  CHECK_THROWS_AS(CosseratClamp(makeParams(CosseratClamp::schema(), {{"rod", std::string("rod")},
                                                                     {"nodes", toValue(std::vector<int>{0})},
                                                                     {"start", toValue(2.0)}, {"stop", toValue(1.0)}})),
                  ParamError);
}

TEST_CASE("initial_twist and the stiffness overrides: a uniformly twisted straight rod stores (1/2) B3 tau^2 per length") {
  const double tau = 0.7, L = 1.0;
  const int n = 8;
  Params p = makeParams(CosseratRod::schema(), {{"nodes", n + 1},
                                                {"radius", 0.02},
                                                {"youngs_modulus", 1e6},
                                                {"shear_stretch_stiffness", toValue(Vec3(1e4, 2e4, 3e4))},
                                                {"bend_twist_stiffness", toValue(Vec3(2.0, 2.5, 1.5))},
                                                {"initial_twist", toValue(tau)},
                                                {"geometry.shape", std::string("straight")},
                                                {"geometry.start", toValue(Vec3(0, 0, 0))},
                                                {"geometry.end", toValue(Vec3(0, 0, L))},
                                                {"rest_shape", std::string("straight")}},
                        "rod");
  CosseratRod rod(p);
  CHECK((rod.shearStiffness() - Vec3(1e4, 2e4, 3e4)).norm() == 0.0);
  CHECK((rod.bendStiffness() - Vec3(2.0, 2.5, 1.5)).norm() == 0.0);
  const double h = L / n;
  for (int i = 1; i < n; ++i) {
    const Vec3 k = rod.curvature(i);
    CHECK(std::abs(std::abs(k.z()) - tau) < 1e-12);  // twist only, tau between every pair of elements
    CHECK(std::hypot(k.x(), k.y()) < 1e-12);
    const Vec3 d3 = rod.frame(i).row(2).transpose();
    CHECK(std::abs(d3.z() - 1) < 1e-15);  // d3 still along the axis
  }
  // U = sum over interior nodes of (1/2) B3 (tau D)^2 / D = (1/2) B3 tau^2 (L - h)
  CHECK(rod.elasticEnergy() == doctest::Approx(0.5 * 1.5 * tau * tau * (L - h)).epsilon(1e-12));
  // the angle between d1 of the first and of the last element is tau times their distance (mod 2 pi)
  const Vec3 a = rod.frame(0).row(0).transpose(), b = rod.frame(n - 1).row(0).transpose();
  const double ang = std::atan2(a.cross(b).z(), a.dot(b));
  CHECK(std::abs(std::remainder(ang - tau * (n - 1) * h, 2 * M_PI)) < 1e-12);
}
