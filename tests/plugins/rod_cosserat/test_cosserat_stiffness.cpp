// The cosserat rod's stiffness (addStiffness, README.md "Stiffness"): the exact Hessian of its elastic
// energy U(q) with respect to its DOFs as setConfiguration reads them (positions, and rotation vectors
// φ relative to the committed frames, at any φ). Checked against central differences of the exact
// gradient -∂U/∂q (addElasticForceOfDofs: addElasticForce's couples C_e mapped to -∂U/∂φ_e =
// J_l(φ_e) C_e, equal at φ = 0), itself checked against central differences of the energy, in every
// regime: straight, bent, twisted, stretched, sheared, rotation vectors of 1, 2.5 rad and near π, with
// and without Eq. 10's rescaling, an intrinsically curved helix, and rings; and at φ = 0 against the
// differences of addElasticForce itself (minus the ½ [C]x its couples add there). The building blocks (the
// Jacobians of the exponential map and their derivatives) are checked on their own first, on both
// sides of their series/closed-form switch.
#include "bend_twist_energy.h"
#include "cosserat_rod.h"
#include "rotation_jacobians.h"
#include "shear_stretch_energy.h"

#include <rodsim/geometry/skew.h>
#include <rodsim/geometry/so3.h>
#include <rodsim/testing/derivative_checks.h>
#include <rodsim/testing/fake_world.h>
#include <rodsim/testing/finite_differences.h>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numbers>
#include <string>
#include <vector>

using namespace rodsim;
using namespace rodsim::cosserat;
using rodsim::geometry::expSO3;
using rodsim::geometry::logSO3;
using rodsim::testing::denseStiffness;
using rodsim::testing::fdGradient;
using rodsim::testing::fdJacobian;
using rodsim::testing::makeParams;
using rodsim::testing::relErr;

namespace {


// Rotation vectors of the sizes that matter: below and above the series switch (0.45 rad), the
// rotations of a Newton step far from its committed frames, and near π.
const double kAngles[] = {0.0, 1e-7, 0.1, 0.44, 0.45, 0.5, 1.0, 2.5, std::numbers::pi - 1e-3};

Vec3 direction(int k) { return Vec3(0.6 + 0.1 * k, -0.3, 0.74 - 0.05 * k).normalized(); }

}  // namespace

// ------------------------------------------------------------------------ the building blocks

TEST_CASE("rotation Jacobians: J_r, J_l and their inverses against the exponential map, derivatives against differences") {
  for (int k = 0; k < 3; ++k)
    for (double angle : kAngles) {
      const Vec3 x = angle * direction(k), d = Vec3(0.3, -0.7, 0.2);
      CAPTURE(angle);
      const Mat3 Jr = matrixOf(rightJacobianCoefficients(x.squaredNorm()), x);
      const Mat3 Jl = matrixOf(leftJacobianCoefficients(x.squaredNorm()), x);
      // exp([x + h d]) = exp([x]) exp([h J_r d]) + O(h²), and = exp([h J_l d]) exp([x]) + O(h²).
      const double h = 1e-6;
      const Vec3 right = (logSO3(expSO3(x).transpose() * expSO3(x + h * d)) -
                          logSO3(expSO3(x).transpose() * expSO3(x - h * d))) / (2 * h);
      const Vec3 left = (logSO3(expSO3(x + h * d) * expSO3(x).transpose()) -
                         logSO3(expSO3(x - h * d) * expSO3(x).transpose())) / (2 * h);
      CHECK((right - Jr * d).norm() < 1e-8);
      CHECK((left - Jl * d).norm() < 1e-8);
      CHECK((Jl - Jr.transpose()).norm() < 1e-15);
      if (angle < 2.0) {  // the inverse Jacobians serve curvatures (below π); 1/sin θ grows near π
        const Mat3 Jr_inv = matrixOf(inverseRightJacobianCoefficients(x.squaredNorm()), x);
        const Mat3 Jl_inv = matrixOf(inverseLeftJacobianCoefficients(x.squaredNorm()), x);
        CHECK((Jr_inv * Jr - Mat3::Identity()).norm() < 1e-13);
        CHECK((Jl_inv * Jl - Mat3::Identity()).norm() < 1e-13);
      }
      // ∂(A(x) u)/∂x for each of the four, by central differences.
      using Coefficients = RotationMatrixFunction (*)(double);
      for (Coefficients coefficients : {Coefficients(rightJacobianCoefficients), Coefficients(leftJacobianCoefficients),
                                        Coefficients(inverseRightJacobianCoefficients),
                                        Coefficients(inverseLeftJacobianCoefficients)}) {
        if (angle > 2.0 && (coefficients == inverseRightJacobianCoefficients ||
                            coefficients == inverseLeftJacobianCoefficients))
          continue;
        const Mat3 D = derivativeOfProduct(coefficients(x.squaredNorm()), x, d);
        const Eigen::MatrixXd D_fd = fdJacobian(
            [&](const Vec3& y) { return Eigen::VectorXd(matrixOf(coefficients(y.squaredNorm()), y) * d); }, x, 1e-6);
        CHECK(relErr(D, D_fd) < 1e-8);
      }
    }
}

TEST_CASE("the element and node energies are the rod's and their gradients and Hessians match differences") {
  // One shear/stretch element and one bend/twist node in general position, φ of 0 to near π.
  const Mat3 Qc_p = expSO3(Vec3(0.2, -0.4, 0.9)), Qc_i = expSO3(Vec3(0.25, -0.3, 1.0));
  const ShearStretchElement element{0.1, Vec3(3e3, 2e3, 8e3), Vec3(0.01, -0.02, 0.03)};
  for (const bool rescaling : {true, false}) {
    const BendTwistNode node{0.11, Vec3(2.0, 3.0, 1.5), Vec3(0.05, 0.02, -0.04), rescaling};
    for (double angle : {0.0, 0.3, 1.0, 2.5, std::numbers::pi - 1e-3}) {
      CAPTURE(rescaling);
      CAPTURE(angle);
      const Vec3 phi_p = angle * direction(0), phi_i = angle * direction(1) + Vec3(0.01, 0.02, -0.01);
      Vec15 q;
      q << -0.09, 0.01, 0.0, 0.0, 0.0, 0.0, 0.02, 0.005, 0.105, phi_p, phi_i;
      // U(q) through the frames as the rod builds them: Q = exp(-[φ]) Q_committed.
      auto shear = [&](const Eigen::VectorXd& y, Vec9* g, Mat9* H) {
        const Vec3 phi = y.segment<3>(6);
        return shearStretchEnergy(y.segment<3>(0), y.segment<3>(3), expSO3(-phi) * Qc_i, rotationDofJacobians(phi),
                                  element, g, H);
      };
      auto bend = [&](const Eigen::VectorXd& y, Vec15* g, Mat15* H) {
        const Vec3 pp = y.segment<3>(9), pi = y.segment<3>(12);
        return bendTwistEnergy(y.segment<3>(0), y.segment<3>(3), y.segment<3>(6), expSO3(-pp) * Qc_p,
                               expSO3(-pi) * Qc_i, rotationDofJacobians(pp), rotationDofJacobians(pi), node, g, H);
      };
      Eigen::VectorXd y9(9);
      y9 << q.segment<3>(3), q.segment<3>(6), phi_i;
      Vec9 g9;
      Mat9 H9;
      shear(y9, &g9, &H9);
      const double h = 1e-6;
      CHECK(relErr(g9, fdGradient([&](const Eigen::VectorXd& y) { return shear(y, nullptr, nullptr); }, y9, h)) < 1e-7);
      const Eigen::MatrixXd H9_fd = fdJacobian(
          [&](const Eigen::VectorXd& y) {
            Vec9 g;
            shear(y, &g, nullptr);
            return Eigen::VectorXd(g);
          },
          y9, h);
      CHECK(relErr(H9, H9_fd) < 1e-7);
      CHECK((H9 - H9.transpose()).norm() <= 1e-12 * H9.norm());

      const Eigen::VectorXd y15 = q;
      Vec15 g15;
      Mat15 H15;
      bend(y15, &g15, &H15);
      CHECK(relErr(g15, fdGradient([&](const Eigen::VectorXd& y) { return bend(y, nullptr, nullptr); }, y15, h)) < 1e-7);
      const Eigen::MatrixXd H15_fd = fdJacobian(
          [&](const Eigen::VectorXd& y) {
            Vec15 g;
            bend(y, &g, nullptr);
            return Eigen::VectorXd(g);
          },
          y15, h);
      CHECK(relErr(H15, H15_fd) < 1e-7);
      CHECK((H15 - H15.transpose()).norm() <= 1e-12 * H15.norm());
    }
  }
}

// ------------------------------------------------------------------------------------- the rod

namespace {

// A straight rod 1 m long, thick enough (r = 0.1 m, 8 elements of 0.125 m) that bending and twisting
// weigh about as much as shear and stretch in the Hessian.
Params stiffnessRod(int nodes = 9) {
  return makeParams(CosseratRod::schema(), {{"nodes", nodes},
                                            {"radius", 0.1},
                                            {"density", 1000.0},
                                            {"youngs_modulus", 1e6},
                                            {"shear_modulus", 4e5},
                                            {"geometry.shape", std::string("straight")},
                                            {"geometry.start", toValue(Vec3(0, 0, 0))},
                                            {"geometry.end", toValue(Vec3(0.3, 0.4, 0.866))},
                                            {"rest_shape", std::string("straight")}},
                    "rod");
}

Params helixRod(const std::string& rest_shape) {
  return makeParams(CosseratRod::schema(), {{"nodes", 9},
                                            {"radius", 0.05},
                                            {"density", 1000.0},
                                            {"youngs_modulus", 1e6},
                                            {"shear_modulus", 3e5},
                                            {"geometry.shape", std::string("helix")},
                                            {"geometry.helix_radius", 0.2},
                                            {"geometry.pitch", 0.3},
                                            {"geometry.axial_length", 0.6},
                                            {"rest_shape", rest_shape}},
                    "rod");
}

Params ring(int nodes, double turns) {
  const double R = 0.3, L = 2 * nodes * R * std::sin(std::numbers::pi / nodes);
  return makeParams(CosseratRod::schema(), {{"nodes", nodes},
                                            {"closed", true},
                                            {"radius", 0.05},
                                            {"density", 1000.0},
                                            {"youngs_modulus", 1e6},
                                            {"shear_modulus", 3e5},
                                            {"initial_twist", toValue(2 * std::numbers::pi * turns / L)},
                                            {"geometry.shape", std::string("circle")},
                                            {"geometry.circle_radius", toValue(R)},
                                            {"rest_shape", std::string("straight")}},
                    "ring");
}

// An open rod's configuration from rotation vectors φ_e: element e's nodes follow its own frame,
// x_{e+1} = x_e + ℓ̂_e (stretch d3 + shear d1), so `stretch` and `shear` set the strain σ exactly and
// the curvatures come from the φ's alone.
Vec followFrames(CosseratRod& rod, const std::function<Vec3(int)>& phi, double stretch, double shear) {
  Vec q(rod.numDofs());
  rod.initialDofs(q);
  for (int e = 0; e < rod.numElements(); ++e) q.segment<3>(rod.rotationDof(e)) = phi(e);
  rod.setConfiguration(q);
  for (int e = 0; e < rod.numElements(); ++e) {
    const Mat3 Q = rod.frame(e);
    const Vec3 step = rod.restLength(e) * (stretch * Q.row(2).transpose() + shear * Q.row(0).transpose());
    q.segment<3>(rod.positionDof(e + 1)) = q.segment<3>(rod.positionDof(e)) + step;
  }
  return q;
}

// A smooth perturbation of every DOF (positions by `dx` m, rotation vectors by `dphi` rad).
Vec perturbed(const CosseratRod& rod, Vec q, double dx, double dphi) {
  for (int i = 0; i < rod.numNodes(); ++i)
    q.segment<3>(rod.positionDof(i)) += dx * Vec3(std::sin(1.3 * i), std::cos(0.7 * i), std::sin(0.4 * i + 1));
  for (int e = 0; e < rod.numElements(); ++e)
    q.segment<3>(rod.rotationDof(e)) += dphi * Vec3(std::sin(0.9 * e), std::cos(1.1 * e), std::sin(e + 0.5));
  return q;
}

// The rotation vectors of a rod turned as a whole by |φ| = angle about a slowly varying axis.
std::function<Vec3(int)> largeRotation(double angle, double curvature = 0.0) {
  return [=](int e) { return Vec3(angle * Vec3(1.0, 0.3 + curvature * e, 0.2).normalized()); };
}

struct Errors {
  double gradient = 0, stiffness = 0, rotation_block = 0, symmetry = 0;
};

// Every check at q: the gradient (-∂U/∂q) against differences of the energy, the stiffness against
// differences of that gradient, the φ-φ block on its own (the positions' entries are larger), symmetry.
Errors checkStiffness(CosseratRod& rod, const Vec& q) {
  const int n = rod.numDofs(), r0 = rod.rotationDof(0);
  const double h = 1e-6;
  auto gradient = [&](const Vec& x) {
    rod.setConfiguration(x);
    Vec f = Vec::Zero(n);
    rod.addElasticForceOfDofs(f);
    return f;
  };
  rod.setConfiguration(q);
  StiffnessSink sink;
  rod.addStiffness(sink);
  const Eigen::MatrixXd K = denseStiffness(sink, n);
  const Vec f = gradient(q);
  const Vec g_fd = -fdGradient(
      [&](const Vec& x) {
        rod.setConfiguration(x);
        return rod.elasticEnergy();
      },
      q, h);
  const Eigen::MatrixXd K_fd = -fdJacobian(gradient, q, h);
  rod.setConfiguration(q);
  Errors e;
  // At rest the gradient is zero and its differences are round-off: measure against the stiffness's
  // scale there (|K| times a millimetre).
  e.gradient = (f - g_fd).norm() / std::max(g_fd.norm(), 1e-3 * K.norm());
  e.stiffness = relErr(K, K_fd);
  e.rotation_block = relErr(K.bottomRightCorner(n - r0, n - r0), K_fd.bottomRightCorner(n - r0, n - r0));
  e.symmetry = (K - K.transpose()).norm() / K.norm();
  return e;
}

struct Regime {
  std::string name;
  std::function<Params()> params;
  std::function<Vec(CosseratRod&)> configuration;
};

std::vector<Regime> regimes() {
  std::vector<Regime> out;
  const auto straight = [] { return stiffnessRod(); };
  out.push_back({"straight, at rest", straight, [](CosseratRod& rod) {
                   return followFrames(rod, [](int) { return Vec3::Zero(); }, 1.0, 0.0);
                 }});
  out.push_back({"bent (0.2 rad per node about d1)", straight, [](CosseratRod& rod) {
                   return followFrames(rod, [](int e) { return Vec3(0.2 * e, 0, 0); }, 1.0, 0.0);
                 }});
  out.push_back({"twisted (0.3 rad per node about d3)", straight, [](CosseratRod& rod) {
                   return followFrames(rod, [](int e) { return Vec3(0, 0, 0.3 * e); }, 1.0, 0.0);
                 }});
  out.push_back({"stretched by 10 %, bent and twisted", straight, [](CosseratRod& rod) {
                   return followFrames(rod, [](int e) { return Vec3(0.15 * e, 0.05 * e, 0.2 * e); }, 1.1, 0.0);
                 }});
  out.push_back({"sheared (0.1), bent", straight, [](CosseratRod& rod) {
                   return followFrames(rod, [](int e) { return Vec3(0.1 * e, 0.1 * e, 0); }, 1.0, 0.1);
                 }});
  out.push_back({"everything at once, perturbed", straight, [](CosseratRod& rod) {
                   return perturbed(rod, followFrames(rod, [](int e) { return Vec3(0.2 * e, -0.1 * e, 0.25 * e); }, 0.95, 0.05),
                                    0.01, 0.05);
                 }});
  for (double angle : {1.0, 2.5, std::numbers::pi - 1e-3, std::numbers::pi + 0.2}) {
    out.push_back({"rotation vectors of " + std::to_string(angle) + " rad, bent and perturbed", straight,
                   [angle](CosseratRod& rod) {
                     return perturbed(rod, followFrames(rod, largeRotation(angle, 0.05), 1.02, 0.03), 0.005, 0.02);
                   }});
  }
  out.push_back({"bend_twist_rescaling = false, everything at once",
                 [] {
                   Params p = stiffnessRod();
                   p.set("bend_twist_rescaling", false);
                   return p;
                 },
                 [](CosseratRod& rod) {
                   return perturbed(rod, followFrames(rod, [](int e) { return Vec3(0.2 * e, -0.1 * e, 0.25 * e); }, 1.05, 0.05),
                                    0.01, 0.05);
                 }});
  out.push_back({"bend_twist_rescaling = false, rotation vectors of 2.5 rad",
                 [] {
                   Params p = stiffnessRod();
                   p.set("bend_twist_rescaling", false);
                   return p;
                 },
                 [](CosseratRod& rod) {
                   return perturbed(rod, followFrames(rod, largeRotation(2.5, 0.05), 1.02, 0.03), 0.005, 0.02);
                 }});
  out.push_back({"helix with its rest curvature (rest_shape = initial), deformed", [] { return helixRod("initial"); },
                 [](CosseratRod& rod) {
                   Vec q(rod.numDofs());
                   rod.initialDofs(q);
                   return perturbed(rod, q, 0.01, 0.3);
                 }});
  out.push_back({"helix of a straight rod (bent and twisted), rotation vectors of 1 rad", [] { return helixRod("straight"); },
                 [](CosseratRod& rod) {
                   Vec q(rod.numDofs());
                   rod.initialDofs(q);
                   for (int e = 0; e < rod.numElements(); ++e) q.segment<3>(rod.rotationDof(e)) = largeRotation(1.0)(e);
                   return perturbed(rod, q, 0.01, 0.05);
                 }});
  out.push_back({"ring (closed), twisted by one turn, deformed", [] { return ring(8, 1.0); },
                 [](CosseratRod& rod) {
                   Vec q(rod.numDofs());
                   rod.initialDofs(q);
                   return perturbed(rod, q, 0.01, 0.2);
                 }});
  out.push_back({"ring (closed), rotation vectors of 2.5 rad", [] { return ring(7, 0.0); },
                 [](CosseratRod& rod) {
                   Vec q(rod.numDofs());
                   rod.initialDofs(q);
                   for (int e = 0; e < rod.numElements(); ++e) q.segment<3>(rod.rotationDof(e)) = largeRotation(2.5)(e);
                   return perturbed(rod, q, 0.005, 0.05);
                 }});
  return out;
}

}  // namespace

TEST_CASE("addStiffness is the exact Hessian of the elastic energy in every regime (rel. error <= 1e-6)") {
  double worst = 0;
  for (const Regime& regime : regimes()) {
    CosseratRod rod(regime.params());
    const Vec q = regime.configuration(rod);
    const Errors e = checkStiffness(rod, q);
    CAPTURE(regime.name);
    MESSAGE(regime.name << ": gradient " << e.gradient << ", Hessian " << e.stiffness << " (rotation block "
                        << e.rotation_block << "), asymmetry " << e.symmetry);
    CHECK(e.gradient < 1e-6);
    CHECK(e.stiffness < 1e-6);
    CHECK(e.rotation_block < 1e-6);
    CHECK(e.symmetry < 1e-12);
    worst = std::max({worst, e.stiffness, e.rotation_block});
  }
  MESSAGE("largest relative error of the Hessian over all regimes: " << worst);
}

TEST_CASE("addElasticForceOfDofs differs from addElasticForce only on the rotations, by J_l(phi) - I") {
  CosseratRod rod(stiffnessRod());
  const Vec q = perturbed(rod, followFrames(rod, largeRotation(1.0, 0.05), 1.02, 0.03), 0.005, 0.02);
  rod.setConfiguration(q);
  Vec f = Vec::Zero(rod.numDofs()), g = Vec::Zero(rod.numDofs());
  rod.addElasticForce(f);
  rod.addElasticForceOfDofs(g);
  const int r0 = rod.rotationDof(0);
  CHECK((f.head(r0) - g.head(r0)).norm() == 0.0);
  CHECK((f.tail(f.size() - r0) - g.tail(g.size() - r0)).norm() > 1e-3 * f.norm());  // matters at |φ| = 1
  // At φ = 0 (after a commit) they are the same.
  Vec v = Vec::Zero(rod.numDofs()), qc = q;
  rod.rebaseDofs(qc, v);
  rod.setConfiguration(qc);
  f.setZero(), g.setZero();
  rod.addElasticForce(f);
  rod.addElasticForceOfDofs(g);
  CHECK((f - g).norm() == 0.0);
}

TEST_CASE("addStiffness: global indexing, the same pattern on every call, and a ParamError for force_law gazzola2018") {
  CosseratRod rod(stiffnessRod());
  rod.setDofOffset(4);
  const Vec q = perturbed(rod, followFrames(rod, largeRotation(1.0, 0.05), 1.02, 0.03), 0.005, 0.02);
  auto pattern = [&](const Vec& x) {
    rod.setConfiguration(x);
    StiffnessSink K;
    rod.addStiffness(K);
    std::vector<std::pair<int, int>> rc;
    for (const auto& t : K.entries()) {
      CHECK(t.row() >= 4);
      CHECK(t.row() < 4 + rod.numDofs());
      rc.emplace_back(t.row(), t.col());
    }
    return rc;
  };
  CHECK(pattern(q) == pattern(perturbed(rod, q, 0.01, 0.1)));
  Params p = stiffnessRod();
  p.set("force_law", std::string("gazzola2018"));
  CosseratRod written(p);
  StiffnessSink K;
  CHECK_THROWS_AS(written.addStiffness(K), ParamError);
}

TEST_CASE("at phi = 0 (after a commit) addStiffness is minus the Jacobian of addElasticForce, up to the couples' 1/2 [C]x") {
  // addElasticForce returns C_e = J_l(φ_e)⁻¹ (-∂U/∂φ_e) on the rotations. At φ = 0, J_l⁻¹ = I - ½[φ] + O(φ²),
  // so -∂C_e/∂φ_e = ∂²U/∂φ_e² - ½ [C_e]x and every other block is the Hessian's: the force's own
  // differences check K directly, with that known antisymmetric correction.
  double worst = 0;
  for (const Regime& regime : regimes()) {
    CosseratRod rod(regime.params());
    Vec q = regime.configuration(rod), v = Vec::Zero(rod.numDofs());
    rod.setConfiguration(q);
    rod.rebaseDofs(q, v);  // φ folded into the committed frames: φ = 0, same configuration
    const int n = rod.numDofs();
    auto force = [&](const Vec& x) {
      rod.setConfiguration(x);
      Vec f = Vec::Zero(n);
      rod.addElasticForce(f);
      return f;
    };
    const Vec C = force(q);
    StiffnessSink sink;
    rod.addStiffness(sink);
    Eigen::MatrixXd K = denseStiffness(sink, n);
    for (int e = 0; e < rod.numElements(); ++e) {
      const int r = rod.rotationDof(e);
      K.block<3, 3>(r, r) -= 0.5 * rodsim::geometry::skew(C.segment<3>(r));
    }
    const double err = relErr(K, -fdJacobian(force, q, 1e-6));
    CAPTURE(regime.name);
    CHECK(err < 1e-6);
    worst = std::max(worst, err);
  }
  MESSAGE("K - 1/2 [C]x against differences of addElasticForce at phi = 0, largest relative error: " << worst);
}
