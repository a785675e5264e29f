// RodStrainReport of the der rod (SDK 1.7) against the model's own forces and closed forms: the internal
// forces are the partial sums of the elastic forces (Eq. 6), a stretched rod carries EA ε, a uniform
// twist Δ per edge gives τ = Δ/l and the couple GJ Δ/l (Eqs. 4, 5), frameTorque is the twist
// generalized force along the tangent.
#include <doctest/doctest.h>
#include <rodsim/testing/fake_world.h>

#include "der_rod.h"

#include <cmath>

using rodsim::DerRod;
using rodsim::Params;
using rodsim::RodStrainReport;
using rodsim::toValue;
using rodsim::Value;
using rodsim::Vec;
using rodsim::Vec3;

namespace {

// Parameters as the kernel hands them over: schema defaults, then the scene's values.
Params params(std::initializer_list<std::pair<std::string, Value>> kv) {
  return rodsim::testing::makeParams(DerRod::schema(), kv, "test_rod");
}

Params straight(int nodes) {
  return params({{"nodes", toValue(nodes)}, {"radius", toValue(0.01)}, {"youngs_modulus", toValue(1e6)},
                 {"shear_modulus", toValue(4e5)}, {"geometry.shape", toValue("straight")},
                 {"geometry.start", toValue(Vec3(0, 0, 0))}, {"geometry.end", toValue(Vec3(1, 0, 0))}});
}

}  // namespace

TEST_CASE("der: internal forces are the partial sums of the elastic forces; the last balances the end node") {
  DerRod rod(params({{"nodes", toValue(12)}, {"radius", toValue(0.004)}, {"youngs_modulus", toValue(1e7)},
                     {"geometry.shape", toValue("helix")}, {"geometry.helix_radius", toValue(0.01)},
                     {"geometry.pitch", toValue(0.05)}, {"geometry.axial_length", toValue(0.06)},
                     {"rest_shape", toValue("straight")}}));
  const RodStrainReport* report = rod.as<RodStrainReport>();
  REQUIRE(report != nullptr);
  CHECK(report->numStrainElements() == 11);
  CHECK(report->numJunctions() == 10);
  CHECK(report->junctionNode(0) == 1);
  Vec q(rod.numDofs());
  rod.initialDofs(q);
  for (int i = 0; i < rod.numNodes(); ++i) q.segment<3>(rod.positionDof(i)) += 1e-3 * Vec3(std::sin(i), std::cos(2.0 * i), 0.3 * i);
  for (int e = 0; e < rod.numEdges(); ++e) q[rod.twistDof(e)] = 0.2 * std::sin(0.7 * e);
  rod.setConfiguration(q);
  Vec f = Vec::Zero(rod.numDofs());
  rod.addElasticForce(f);
  std::vector<double> force(3 * 11), stretch(11), shear(3 * 11);
  report->reportElements(stretch.data(), shear.data(), force.data());
  double scale = 0;
  for (int i = 0; i < rod.numNodes(); ++i) scale = std::max(scale, f.segment<3>(rod.positionDof(i)).norm());
  REQUIRE(scale > 0);
  // Node i takes F_i - F_{i-1} (element i pushes its first node with F_i, its second with -F_i).
  for (int i = 0; i < rod.numNodes(); ++i) {
    Vec3 sum = Vec3::Zero();
    if (i < 11) sum += Vec3(force[3 * i], force[3 * i + 1], force[3 * i + 2]);
    if (i > 0) sum -= Vec3(force[3 * i - 3], force[3 * i - 2], force[3 * i - 1]);
    CHECK((sum - f.segment<3>(rod.positionDof(i))).norm() <= 1e-12 * scale);
  }
  for (int e = 0; e < 11; ++e) {
    CHECK(shear[3 * e] == 0.0);
    CHECK(shear[3 * e + 2] == stretch[e]);
  }
}

TEST_CASE("der: a stretched straight rod carries EA eps along its tangent; a uniform twist gives GJ Delta / l") {
  DerRod rod(straight(11));
  const RodStrainReport& report = *rod.as<RodStrainReport>();
  Vec q(rod.numDofs());
  rod.initialDofs(q);
  const double eps = 2e-3, delta = 0.01, l = 0.1;
  for (int i = 0; i < rod.numNodes(); ++i) q[rod.positionDof(i)] *= 1 + eps;
  for (int e = 0; e < rod.numEdges(); ++e) q[rod.twistDof(e)] = delta * e;
  rod.setConfiguration(q);
  std::vector<double> stretch(10), force(30), curvature(27), couple(27);
  report.reportElements(stretch.data(), nullptr, force.data());
  report.reportJunctions(curvature.data(), couple.data());
  for (int e = 0; e < 10; ++e) {
    CHECK(stretch[e] == doctest::Approx(eps).epsilon(1e-12));
    CHECK(force[3 * e] == doctest::Approx(rod.stretchStiffness() * eps).epsilon(1e-12));
    CHECK(std::abs(force[3 * e + 1]) + std::abs(force[3 * e + 2]) < 1e-12);
  }
  for (int k = 0; k < 9; ++k) {
    // Straight: no bending. The twist per rest Voronoi length l (the reference twist of a straight
    // rod is zero).
    CHECK(std::abs(curvature[3 * k]) + std::abs(curvature[3 * k + 1]) < 1e-12);
    CHECK(curvature[3 * k + 2] == doctest::Approx(delta / l).epsilon(1e-10));
    CHECK(couple[3 * k + 2] == doctest::Approx(rod.twistStiffness() * delta / l).epsilon(1e-10));
  }
  const double g = 0.7;
  const Vec3 T = report.frameTorque(3, &g);
  CHECK((T - g * Vec3::UnitX()).norm() < 1e-14);
}
