// Closed cosserat rods (rings, `closed = true`): connectivity and rest lengths that wrap around,
// the frames' twist closing at the junction (with and without writhe), forces and couples against
// central differences of the energy including the junction node and the closing element, and the
// twisted ring of Mitchell's problem (Gazzola et al. 2018, Appendix E.2) as an exact discrete
// equilibrium once its two symmetric unknowns (stretch, shear tilt) are solved for.
#include "cosserat_rod.h"
#include <rodsim/testing/fake_world.h>
#include "finite_differences.h"

#include <rodsim/geometry/so3.h>

#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <string>

using namespace rodsim;
using rodsim::testing::makeParams;

namespace {

constexpr double kPi = std::numbers::pi;

// A ring of radius R in the xy plane (the paper's Fig. 14 ring for R = 1/(2 pi), B = diag(1, 1, beta)),
// naturally straight, twisted by `turns` whole turns.
Params ringParams(int nodes, double turns, double beta = 0.8, double R = 1 / (2 * kPi)) {
  const double L = 2 * nodes * R * std::sin(kPi / nodes);  // the polygon's length
  return makeParams(CosseratRod::schema(), {{"nodes", nodes},
                                            {"closed", true},
                                            {"radius", 0.01},
                                            {"density", 1 / (kPi * 1e-4)},
                                            {"youngs_modulus", 1e6},
                                            {"shear_stretch_stiffness", toValue(Vec3(1e5, 1e5, 1e5))},
                                            {"bend_twist_stiffness", toValue(Vec3(1.0, 1.0, beta))},
                                            {"initial_twist", toValue(2 * kPi * turns / L)},
                                            {"geometry.shape", std::string("circle")},
                                            {"geometry.circle_radius", toValue(R)},
                                            {"rest_shape", std::string("straight")}},
                    "ring");
}

// A non-planar closed polyline (a circle with z = a sin(3 phi)): its writhe is not zero, so the
// parallel transport round it does not return d1 to itself.
Params wobblyRingParams(int nodes, double a, double turns) {
  std::vector<Vec3> pts;
  for (int k = 0; k < nodes; ++k) {
    const double phi = 2 * kPi * k / nodes;
    pts.emplace_back(std::cos(phi), std::sin(phi), a * std::sin(3 * phi));
  }
  Params p = makeParams(CosseratRod::schema(), {{"closed", true},
                                         {"radius", 0.02},
                                         {"youngs_modulus", 1e6},
                                         {"shear_modulus", 3e5},
                                         {"geometry.shape", std::string("polyline")},
                                         {"geometry.points", toValue(pts)},
                                         {"rest_shape", std::string("straight")}},
                 "ring");
  double L = 0;
  for (int k = 0; k < nodes; ++k) L += (pts[(k + 1) % nodes] - pts[k]).norm();
  p.set("initial_twist", toValue(2 * kPi * turns / L));
  return p;
}

double totalLength(const CosseratRod& rod) {
  double L = 0;
  for (int e = 0; e < rod.numElements(); ++e) L += rod.restLength(e);
  return L;
}

// -dU/dq by central differences (positions in m, rotations about the current frames: fold φ first).
Vec centralDifferences(CosseratRod& rod, const Vec& q, double h = 1e-6) {
  const Vec g = -rodsim::test::fdGradient(
      [&](const Vec& x) {
        rod.setConfiguration(x);
        return rod.elasticEnergy();
      },
      q, h);
  rod.setConfiguration(q);
  return g;
}

}  // namespace

TEST_CASE("closed rod: n nodes and n elements, Voronoi lengths and masses wrap around, curvature at every node") {
  const int n = 12;
  CosseratRod rod(ringParams(n, 2));
  CHECK(rod.closed());
  // Components that walk edges ask through the SDK (RodClosedCenterline); an open rod answers no.
  CHECK(rodsim::isClosedRod(rod));
  Params open = ringParams(n, 2);
  open.set("closed", false);
  CHECK_FALSE(rodsim::isClosedRod(CosseratRod(open)));
  CHECK(rod.numNodes() == n);
  CHECK(rod.numElements() == n);
  CHECK(rod.numDofs() == 6 * n);
  const double h = 2 / (2 * kPi) * std::sin(kPi / n);
  for (int e = 0; e < n; ++e) CHECK(rod.restLength(e) == doctest::Approx(h).epsilon(1e-14));
  for (int i = 0; i < n; ++i) CHECK(rod.restVoronoiLength(i) == doctest::Approx(h).epsilon(1e-14));  // node 0 too
  Vec m(rod.numDofs());
  rod.lumpedMass(m);
  double mass = 0;
  for (int i = 0; i < n; ++i) mass += m[rod.positionDof(i)];
  CHECK(mass == doctest::Approx(1.0 * n * h).epsilon(1e-12));  // rho A = 1 kg/m times the ring's length
  // Every node, the junction 0 included, bends by 2 pi/n about the ring's normal and twists by 2 (2 pi)/n.
  for (int i = 0; i < n; ++i) {
    CAPTURE(i);
    const Vec3 th = rod.curvature(i) * rod.restVoronoiLength(i);
    const Vec3 th1 = rod.curvature(1) * rod.restVoronoiLength(1);
    CHECK(std::abs(th.norm() - th1.norm()) < 1e-13);
    CHECK(std::abs(th.z() - th1.z()) < 1e-13);  // the same twist across the junction as elsewhere
  }
  // The relative rotation of consecutive frames: angle of the composition of a bend by 2 pi/n about the
  // binormal and a twist by 4 pi/n about the tangent.
  const Mat3 Rb = geometry::expSO3(Vec3(0, 0, 2 * kPi / n)), Rt = geometry::expSO3(Vec3(4 * kPi / n, 0, 0));
  const double expected = geometry::logSO3(Rb * Rt).norm();
  CHECK((rod.curvature(0) * h).norm() == doctest::Approx(expected).epsilon(1e-12));
  // Elastic energy: n nodes, each storing (1/2) theta^T B theta / D (the junction as much as the others).
  Vec q(rod.numDofs());
  rod.initialDofs(q);
  rod.setConfiguration(q);
  double U = 0;
  for (int i = 0; i < n; ++i) {
    const Vec3 th = rod.curvature(i) * h;
    U += 0.5 * (th.x() * th.x() + th.y() * th.y() + 0.8 * th.z() * th.z()) / h;
  }
  CHECK(rod.elasticEnergy() == doctest::Approx(U).epsilon(1e-12));
}

TEST_CASE("closed rod: the twist closes at the junction, also for a non-planar ring (holonomy)") {
  // Plane ring: the twist across each node is 2 pi k D / L exactly, the holonomy is zero.
  for (int turns : {0, 1, 3}) {
    CosseratRod rod(ringParams(16, turns));
    const Vec3 d1first = rod.frame(0).row(0).transpose();
    CHECK(std::abs(d1first.z() - 1) < 1e-15);  // d1 of element 0 is the ring's normal (plane: no twist yet)
    for (int i = 0; i < 16; ++i) CHECK(std::abs(rod.curvature(i).z() - rod.curvature(0).z()) < 1e-12);
  }
  // Non-planar ring: parallel transport round it turns d1 by the holonomy; the frames still close with the
  // same relative twist across node 0 as across its neighbours (without the holonomy correction the
  // junction would carry it all: 0.28 rad here).
  for (int turns : {0, 2}) {
    CosseratRod rod(wobblyRingParams(40, 0.3, turns));
    const double D = rod.restVoronoiLength(0);
    const double k0 = rod.curvature(0).z() * D, k1 = rod.curvature(1).z() * D, km = rod.curvature(39).z() * D;
    CAPTURE(turns);
    MESSAGE("twist across node 39, 0, 1: " << km << ", " << k0 << ", " << k1);
    CHECK(std::abs(k0 - 0.5 * (k1 + km)) < 1e-3 * std::max(1.0, std::abs(k0)));
    // The total twist of the frames: sum of the twist angles is 2 pi k minus the writhe-like holonomy.
    double total = 0;
    for (int i = 0; i < 40; ++i) total += rod.curvature(i).z() * rod.restVoronoiLength(i);
    MESSAGE("total twist " << total << " rad for " << turns << " turns");
    CHECK(std::abs(total) < 2 * kPi * turns + 0.5);
  }
  // A total twist that is not a whole number of turns cannot close the frames.
  Params p = ringParams(12, 1.5);
  CHECK_THROWS_AS(CosseratRod{p}, ParamError);
  // 0.01 turn off (e.g. 2 pi k / (2 pi R) for the polygon): rounded to the whole turn.
  CosseratRod r(ringParams(12, 1.01)), exact(ringParams(12, 1));
  for (int i = 0; i < 12; ++i) CHECK((r.curvature(i) - exact.curvature(i)).norm() < 1e-12);
}

TEST_CASE("closed rod: forces and couples are minus the gradient of the energy, junction included (rel. error <= 1e-6)") {
  for (double amp : {0.0, 0.3, 1.0}) {
    for (const std::string rest : {"straight", "initial"}) {
      for (int turns : {0, 2}) {
        Params p = ringParams(9, turns, 0.7, 0.5);
        p.set("rest_shape", rest);
        CosseratRod rod(p);
        Vec q(rod.numDofs());
        rod.initialDofs(q);
        for (int i = 0; i < rod.numNodes(); ++i)
          q.segment<3>(rod.positionDof(i)) += amp * 0.05 * Vec3(std::sin(1.3 * i), std::cos(0.7 * i), std::sin(0.4 * i + 1));
        for (int e = 0; e < rod.numElements(); ++e)
          q.segment<3>(rod.rotationDof(e)) = amp * Vec3(0.3 * std::sin(0.9 * e), 0.2 * std::cos(1.1 * e), 0.25 * std::sin(e + 0.5));
        Vec v = Vec::Zero(rod.numDofs());
        rod.setConfiguration(q);
        rod.rebaseDofs(q, v);  // couples are derivatives about the current frames
        rod.setConfiguration(q);
        Vec f = Vec::Zero(rod.numDofs());
        rod.addElasticForce(f);
        const Vec g = centralDifferences(rod, q);
        CAPTURE(amp);
        CAPTURE(rest);
        CAPTURE(turns);
        const double scale = std::max(f.norm(), 1e-12);
        MESSAGE("ring amp " << amp << " rest " << rest << " turns " << turns << ": |f| = " << f.norm()
                            << ", |f - fd| / |f| = " << (f - g).norm() / scale);
        if (amp == 0 && rest == "initial") {
          CHECK(f.norm() < 1e-8);  // stress free, the junction too
          continue;
        }
        CHECK((f - g).norm() / scale <= 1e-6);
        // the junction's DOFs alone: node 0, node n-1, element n-1 (closing), element 0
        const int n = rod.numNodes();
        for (int d : {rod.positionDof(0), rod.positionDof(n - 1), rod.rotationDof(n - 1), rod.rotationDof(0)})
          CHECK((f.segment<3>(d) - g.segment<3>(d)).norm() / scale <= 1e-6);
      }
    }
  }
}

TEST_CASE("closed rod: the elastic couples feed the velocity couples of the closing element (e - 1) C") {
  // addVelocityForce adds (e - 1) C of the last addElasticForce on every element, the closing one too:
  // stretch the ring uniformly by 1 % at rest (no velocity) and compare with the couples.
  CosseratRod rod(ringParams(10, 1, 0.7, 0.5));
  Vec q(rod.numDofs());
  rod.initialDofs(q);
  for (int i = 0; i < rod.numNodes(); ++i) q.segment<3>(rod.positionDof(i)) *= 1.01;
  rod.setConfiguration(q);
  Vec f = Vec::Zero(rod.numDofs()), fv = Vec::Zero(rod.numDofs());
  rod.addElasticForce(f);
  EvalContext ctx;
  ctx.q = &q;
  ctx.q_start = &q;
  ctx.dt = 1e-3;
  rod.addVelocityForce(ctx, fv);
  for (int e = 0; e < rod.numElements(); ++e) {
    CAPTURE(e);
    CHECK((fv.segment<3>(rod.rotationDof(e)) - (rod.dilatation(e) - 1) * f.segment<3>(rod.rotationDof(e))).norm() <
          1e-12 * (1 + f.segment<3>(rod.rotationDof(e)).norm()));
  }
  const int last = rod.numElements() - 1;
  CHECK(rod.dilatation(last) == doctest::Approx(1.01).epsilon(1e-12));
  CHECK(f.segment<3>(rod.rotationDof(last)).norm() > 1e-3);  // the closing element does carry a couple
}

TEST_CASE("Mitchell's twisted ring (Appendix E.2) is an exact discrete equilibrium: forces ~ 0 once stretch and tilt are solved") {
  // A naturally straight rod bent into a ring and twisted by Phi = 2 pi k is, in the continuum, an
  // equilibrium for any Phi (stable below Phi_c of Eq. E3). In the shearable, extensible model it needs two
  // uniform adjustments: a stretch e (the bending energy's 1/e^3 of Eq. 10 pulls the ring outwards) and a
  // shear tilt psi of every frame about its radial direction (the twist-bend couple beta tau kappa per length
  // is carried by an out-of-plane shear force). Solve those two numbers from the rod's own forces (Newton,
  // finite-difference Jacobian), then every component of the force, junction included, must vanish.
  for (double beta : {0.6, 0.866}) {
    const int n = 24;
    CosseratRod rod(ringParams(n, 2, beta));
    Vec q0(rod.numDofs());
    rod.initialDofs(q0);
    rod.setConfiguration(q0);
    std::vector<Vec3> radial(n);  // lab radial direction at each element centre, material components
    for (int e = 0; e < n; ++e) {
      const Vec3 c = 0.5 * (q0.segment<3>(rod.positionDof(e)) + q0.segment<3>(rod.positionDof((e + 1) % n)));
      radial[e] = rod.committedFrame(e) * c.normalized();
    }
    auto config = [&](double s, double psi) {
      Vec q = q0;
      for (int i = 0; i < n; ++i) q.segment<3>(rod.positionDof(i)) *= s;
      for (int e = 0; e < n; ++e) q.segment<3>(rod.rotationDof(e)) = psi * radial[e];  // Q = exp(-psi [N]) Qc
      return q;
    };
    // Reduced residual: the generalized forces along the two symmetric directions.
    auto residual = [&](double s, double psi) {
      const Vec q = config(s, psi);
      rod.setConfiguration(q);
      Vec f = Vec::Zero(rod.numDofs());
      rod.addElasticForce(f);
      Vec dq_s = (config(s + 1e-7, psi) - config(s - 1e-7, psi)) / 2e-7;
      Vec dq_p = (config(s, psi + 1e-7) - config(s, psi - 1e-7)) / 2e-7;
      return Eigen::Vector2d(f.dot(dq_s), f.dot(dq_p));
    };
    double s = 1, psi = 0;
    Vec f0 = Vec::Zero(rod.numDofs());
    rod.addElasticForce(f0);
    for (int it = 0; it < 20; ++it) {
      const Eigen::Vector2d r = residual(s, psi);
      Eigen::Matrix2d J;
      const double hs = 1e-7, hp = 1e-7;
      J.col(0) = (residual(s + hs, psi) - residual(s - hs, psi)) / (2 * hs);
      J.col(1) = (residual(s, psi + hp) - residual(s, psi - hp)) / (2 * hp);
      const Eigen::Vector2d d = J.fullPivLu().solve(-r);
      s += d[0], psi += d[1];
      if (d.norm() < 1e-15) break;
    }
    const Vec q = config(s, psi);
    rod.setConfiguration(q);
    Vec f = Vec::Zero(rod.numDofs());
    rod.addElasticForce(f);
    double worst = 0;
    int worst_dof = -1;
    for (int j = 0; j < rod.numDofs(); ++j)
      if (std::abs(f[j]) > worst) worst = std::abs(f[j]), worst_dof = j;
    const double tau = 4 * kPi / totalLength(rod), kappa = 2 * kPi / totalLength(rod);
    MESSAGE("beta " << beta << ": stretch e - 1 = " << s - 1 << " (1.5 (kappa^2 + beta tau^2)/S = "
                    << 1.5 * (kappa * kappa + beta * tau * tau) / 1e5 << "), tilt " << psi << " rad (beta tau kappa/S = "
                    << beta * tau * kappa / 1e5 << "); |f|max at the perfect ring " << f0.cwiseAbs().maxCoeff()
                    << ", after " << worst << " (DOF " << worst_dof << ")");
    CAPTURE(beta);
    CHECK(f0.cwiseAbs().maxCoeff() > 1.0);                      // the perfect ring is not the equilibrium
    CHECK(worst < 1e-9 * f0.cwiseAbs().maxCoeff());             // the stretched, tilted ring is, to round-off
    CHECK(s - 1 == doctest::Approx(1.5 * (kappa * kappa + beta * tau * tau) / 1e5).epsilon(0.05));
    CHECK(std::abs(psi) == doctest::Approx(beta * tau * kappa / 1e5).epsilon(0.05));
  }
}
