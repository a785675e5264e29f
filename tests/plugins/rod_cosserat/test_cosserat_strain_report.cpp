// RodStrainReport of the cosserat rod (SDK 1.7) against the model's own forces and closed forms: the
// element forces are those whose differences are the nodal elastic forces (Eq. 23 with the bending
// energy's stretch terms), σ and κ̂ are shearStrain and curvature (Eqs. 9, 20), a stretched rod carries
// EA ε, a uniform twist gives the couple GJ κ̂3, and frameTorque inverts addNodeTorque.
#include "cosserat_rod.h"
#include "cosserat_test_rods.h"
#include <rodsim/testing/fake_world.h>

#include <doctest/doctest.h>

#include <cmath>

using namespace rodsim;
using rodsim::testing::makeParams;

using rodsim::test::helixRodParams;

namespace {

Vec deformed(const CosseratRod& rod) {
  Vec q(rod.numDofs());
  rod.initialDofs(q);
  for (int i = 0; i < rod.numNodes(); ++i)
    q.segment<3>(rod.positionDof(i)) += 0.02 * Vec3(std::sin(1.3 * i), std::cos(0.7 * i), std::sin(0.4 * i + 1));
  for (int e = 0; e < rod.numElements(); ++e)
    q.segment<3>(rod.rotationDof(e)) = Vec3(0.1 * std::sin(0.9 * e), 0.07 * std::cos(1.1 * e), 0.08 * std::sin(e + 0.5));
  return q;
}

}  // namespace

TEST_CASE("cosserat: element forces difference to the nodal elastic forces; strains are shearStrain and curvature") {
  for (const char* law : {"energy", "gazzola2018"}) {
    CAPTURE(law);
    Params p = helixRodParams(10);
    p.set("force_law", std::string(law));
    CosseratRod rod(p);
    const RodStrainReport& report = *rod.as<RodStrainReport>();
    const int ne = report.numStrainElements(), nj = report.numJunctions();
    CHECK(ne == 9);
    CHECK(nj == 8);
    rod.setConfiguration(deformed(rod));
    Vec f = Vec::Zero(rod.numDofs());
    rod.addElasticForce(f);
    std::vector<double> stretch(ne), shear(3 * ne), force(3 * ne), curvature(3 * nj), couple(3 * nj);
    report.reportElements(stretch.data(), shear.data(), force.data());
    report.reportJunctions(curvature.data(), couple.data());
    double scale = 0;
    for (int i = 0; i < rod.numNodes(); ++i) scale = std::max(scale, f.segment<3>(rod.positionDof(i)).norm());
    REQUIRE(scale > 0);
    for (int i = 0; i < rod.numNodes(); ++i) {
      Vec3 sum = Vec3::Zero();
      if (i < ne) sum += Vec3(force[3 * i], force[3 * i + 1], force[3 * i + 2]);
      if (i > 0) sum -= Vec3(force[3 * i - 3], force[3 * i - 2], force[3 * i - 1]);
      CHECK((sum - f.segment<3>(rod.positionDof(i))).norm() <= 1e-12 * scale);
    }
    for (int e = 0; e < ne; ++e) {
      CHECK(stretch[e] == doctest::Approx(rod.dilatation(e) - 1.0).epsilon(1e-14));
      CHECK((Vec3(shear[3 * e], shear[3 * e + 1], shear[3 * e + 2]) - rod.shearStrain(e)).norm() < 1e-14);
    }
    for (int k = 0; k < nj; ++k) {
      const Vec3 kappa = rod.curvature(report.junctionNode(k));
      CHECK((Vec3(curvature[3 * k], curvature[3 * k + 1], curvature[3 * k + 2]) - kappa).norm() <= 1e-14 * kappa.norm());
    }
  }
}

TEST_CASE("cosserat: stretched straight rod carries EA eps; uniform twist gives GJ kappa3; frameTorque inverts addNodeTorque") {
  Params p = makeParams(CosseratRod::schema(), {{"nodes", 11}, {"radius", 0.01}, {"youngs_modulus", 1e6},
                                                {"shear_modulus", 4e5},
                                                {"geometry.shape", std::string("straight")},
                                                {"geometry.start", toValue(Vec3(0, 0, 0))},
                                                {"geometry.end", toValue(Vec3(1, 0, 0))}});
  CosseratRod rod(p);
  const RodStrainReport& report = *rod.as<RodStrainReport>();
  Vec q(rod.numDofs());
  rod.initialDofs(q);
  const double eps = 2e-3, delta = 0.01, l = 0.1;
  for (int i = 0; i < rod.numNodes(); ++i) q[rod.positionDof(i)] *= 1 + eps;
  rod.setConfiguration(q);
  std::vector<double> stretch(10), force(30), curvature(27), couple(27);
  report.reportElements(stretch.data(), nullptr, force.data());
  const double EA = rod.shearStiffness().z();
  for (int e = 0; e < 10; ++e) {
    CHECK(stretch[e] == doctest::Approx(eps).epsilon(1e-12));
    CHECK(force[3 * e] == doctest::Approx(EA * eps).epsilon(1e-10));
  }
  rod.initialDofs(q);
  for (int e = 0; e < rod.numElements(); ++e) q[rod.twistDof(e)] = delta * e;
  rod.setConfiguration(q);
  report.reportJunctions(curvature.data(), couple.data());
  const double GJ = rod.bendStiffness().z();
  for (int k = 0; k < 9; ++k) {
    CHECK(std::abs(curvature[3 * k]) + std::abs(curvature[3 * k + 1]) < 1e-12);
    CHECK(std::abs(curvature[3 * k + 2]) == doctest::Approx(delta / l).epsilon(1e-10));
    CHECK(couple[3 * k + 2] == doctest::Approx(GJ * curvature[3 * k + 2]).epsilon(1e-10));
  }
  // A torque through addNodeTorque and back.
  rod.setConfiguration(deformed(rod));
  const Vec3 T(0.3, -1.2, 0.5);
  Vec f = Vec::Zero(rod.numDofs());
  rod.addNodeTorque(4, T, f);
  const Vec3 back = report.frameTorque(4, f.data() + rod.rotationDof(4));
  CHECK((back - T).norm() <= 1e-14 * T.norm());
}

TEST_CASE("cosserat ring: the closing element and junction node 0 are reported; forces difference around the ring") {
  const double R = 0.2;
  Params p = makeParams(CosseratRod::schema(), {{"nodes", 12},
                                                {"closed", true},
                                                {"radius", 0.01},
                                                {"youngs_modulus", 1e6},
                                                {"geometry.shape", std::string("circle")},
                                                {"geometry.circle_radius", toValue(R)},
                                                {"rest_shape", std::string("straight")}},
                        "ring");
  CosseratRod rod(p);
  const RodStrainReport& report = *rod.as<RodStrainReport>();
  const int n = rod.numNodes();
  REQUIRE(report.numStrainElements() == n);
  REQUIRE(report.numJunctions() == n);
  CHECK(report.junctionNode(0) == 0);
  rod.setConfiguration(deformed(rod));
  Vec f = Vec::Zero(rod.numDofs());
  rod.addElasticForce(f);
  std::vector<double> force(3 * n), curvature(3 * n), couple(3 * n);
  report.reportElements(nullptr, nullptr, force.data());
  report.reportJunctions(curvature.data(), couple.data());
  double scale = 0;
  for (int i = 0; i < n; ++i) scale = std::max(scale, f.segment<3>(rod.positionDof(i)).norm());
  for (int i = 0; i < n; ++i) {
    const int prev = (i + n - 1) % n;  // the element ending at node i (the closing one at node 0)
    const Vec3 sum = Vec3(force[3 * i], force[3 * i + 1], force[3 * i + 2]) -
                     Vec3(force[3 * prev], force[3 * prev + 1], force[3 * prev + 2]);
    CHECK((sum - f.segment<3>(rod.positionDof(i))).norm() <= 1e-12 * scale);
    const Vec3 kappa = rod.curvature(i);
    CHECK((Vec3(curvature[3 * i], curvature[3 * i + 1], curvature[3 * i + 2]) - kappa).norm() <= 1e-14 * kappa.norm());
  }
}
