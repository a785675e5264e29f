// The readable reference of the cosserat rod (plugins/rod_cosserat/cosserat_reference.cpp) against
// the fast CosseratRod, and against finite differences of its own energy.
//
// Reference and fast forms evaluate the same closed-form expressions from the same inputs; they
// differ only in how they round: the fast passes use Taylor polynomials for the Rodrigues
// coefficients, the logarithm and c(θ) where the reference calls so3.h's closed forms (each accurate
// to an ulp or two), multiply the 3x3 frames in another order, and gather the nodal sums in another
// order. Every output entry is a fixed chain of a few dozen operations with no iteration, so the two
// differ by O(10 ulp) of the largest intermediate term, and the normwise relative difference is that
// times the ratio of the largest intermediate (e.g. one element's internal force n) to the result
// (the difference Δh(Qᵀn) of neighbouring elements, σ - σ° of a small strain). With the strains here
// (1e-3 .. 1e-1, neighbours differing by tens of per cent) that ratio is below ~100, hence the
// bound kAgree = 1e-12 (observed: below 1e-14, printed by the MESSAGE).
#include "cosserat_reference.h"
#include "cosserat_rod.h"
#include <rodsim/geometry/so3.h>

#include <rodsim/testing/fake_world.h>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

using namespace rodsim;
namespace ref = rodsim::cosserat::reference;
using rodsim::testing::makeParams;

namespace {

constexpr double kAgree = 1e-12;

// |a - b|_inf / |b|_inf over entries [from, to) (|a - b|_inf when b is zero there).
double relDiff(const Vec& a, const Vec& b, int from, int to) {
  const Vec d = a.segment(from, to - from) - b.segment(from, to - from);
  const double nb = b.segment(from, to - from).lpNorm<Eigen::Infinity>();
  return nb > 0 ? d.lpNorm<Eigen::Infinity>() / nb : d.lpNorm<Eigen::Infinity>();
}

struct Case {
  std::string name;
  Params params;
};

Params openHelix(const std::string& rest, double gamma_r, double twist) {
  return makeParams(CosseratRod::schema(), {{"nodes", 14},
                                            {"radius", 0.02},
                                            {"density", 1200.0},
                                            {"youngs_modulus", 1e6},
                                            {"shear_modulus", 3e5},
                                            {"rotational_damping", gamma_r},
                                            {"initial_twist", twist},
                                            {"geometry.shape", std::string("helix")},
                                            {"geometry.helix_radius", 0.2},
                                            {"geometry.pitch", 0.3},
                                            {"geometry.axial_length", 0.6},
                                            {"rest_shape", rest}},
                    "rod");
}

Params ring(const std::string& rest, double turns) {
  const double R = 0.3;
  const int nodes = 16;
  const double L = 2 * nodes * R * std::sin(std::numbers::pi / nodes);
  return makeParams(CosseratRod::schema(), {{"nodes", nodes},
                                            {"closed", true},
                                            {"radius", 0.01},
                                            {"density", 1000.0},
                                            {"youngs_modulus", 2e6},
                                            {"shear_modulus", 7e5},
                                            {"rotational_damping", 0.003},
                                            {"bend_twist_stiffness", toValue(Vec3(0.02, 0.03, 0.015))},
                                            {"initial_twist", toValue(2 * std::numbers::pi * turns / L)},
                                            {"geometry.shape", std::string("circle")},
                                            {"geometry.circle_radius", toValue(R)},
                                            {"rest_shape", rest}},
                    "ring");
}

// A non-planar ring (writhe: its frames carry a holonomy), rest shape = its initial shape.
Params wobblyRing() {
  std::vector<Vec3> pts;
  for (int k = 0; k < 11; ++k) {
    const double a = 2 * std::numbers::pi * k / 11;
    pts.emplace_back(0.5 * std::cos(a), 0.5 * std::sin(a), 0.12 * std::sin(3 * a));
  }
  return makeParams(CosseratRod::schema(), {{"closed", true},
                                            {"radius", 0.02},
                                            {"youngs_modulus", 1e6},
                                            {"shear_modulus", 3e5},
                                            {"geometry.shape", std::string("polyline")},
                                            {"geometry.points", toValue(pts)},
                                            {"rest_shape", std::string("initial")}},
                    "ring");
}

// A straight rod bent and twisted through large angles: curvatures beyond 0.46 rad take the closed
// forms (logSO3Large) in the fast pass.
Params straightRod() {
  return makeParams(CosseratRod::schema(), {{"nodes", 11},
                                            {"radius", 0.01},
                                            {"youngs_modulus", 1e6},
                                            {"rotational_damping", 0.01},
                                            {"geometry.shape", std::string("straight")},
                                            {"geometry.start", toValue(Vec3(0, 0, 0))},
                                            {"geometry.end", toValue(Vec3(1, 0.2, 0))},
                                            {"rest_shape", std::string("straight")}},
                    "rod");
}

// The helix of openHelix with force_law = "gazzola2018" (Eq. 23 as written).
Params writtenLawHelix() {
  Params p = openHelix("initial", 0.02, 4.0);
  p.set("force_law", std::string("gazzola2018"));
  return p;
}

// The helix of openHelix with bend/twist couples B̂κ̂ at every stretch (no 1/E³ of Eq. 10).
Params unrescaledHelix(const std::string& law) {
  Params p = openHelix("initial", 0.02, 4.0);
  p.set("bend_twist_rescaling", false);
  p.set("force_law", law);
  return p;
}

std::vector<Case> cases() {
  return {{"open helix, straight rest shape", openHelix("straight", 0.0, 0.0)},
          {"open helix, force_law = gazzola2018", writtenLawHelix()},
          {"open helix, bend_twist_rescaling = false", unrescaledHelix("energy")},
          {"open helix, force_law = gazzola2018, bend_twist_rescaling = false", unrescaledHelix("gazzola2018")},
          {"open helix, initial rest shape, twisted, rotational damping", openHelix("initial", 0.02, 4.0)},
          {"ring, straight rest shape, one turn of twist", ring("straight", 1.0)},
          {"ring, initial rest shape, two turns", ring("initial", 2.0)},
          {"non-planar ring, initial rest shape", wobblyRing()},
          {"straight rod, large bends", straightRod()}};
}

// A straight rod along z, 1 m, 10 elements, its frames twisted uniformly by tau (rad/m) about a
// straight, untwisted rest shape.
Params twistedStraightRod(double tau) {
  return makeParams(CosseratRod::schema(), {{"nodes", 11},
                                            {"radius", 0.01},
                                            {"youngs_modulus", 1e6},
                                            {"initial_twist", tau},
                                            {"geometry.shape", std::string("straight")},
                                            {"geometry.start", toValue(Vec3(0, 0, 0))},
                                            {"geometry.end", toValue(Vec3(0, 0, 1))},
                                            {"rest_shape", std::string("straight")}},
                    "rod");
}

// The elastic generalized force of `rod` at DOFs q.
Vec elasticForceAt(CosseratRod& rod, const Vec& q) {
  Vec f = Vec::Zero(rod.numDofs());
  rod.setConfiguration(q);
  rod.addElasticForce(f);
  return f;
}

// A configuration with non-uniform strains: node positions moved by a few per cent of an element
// (stretch 1e-3 .. 1e-1, shear) and rotation vectors of amplitude `amp` varying along the rod.
Vec deformed(const CosseratRod& rod, double amp, double phase) {
  Vec q(rod.numDofs());
  rod.initialDofs(q);
  const double h = rod.restLength(0);
  for (int i = 0; i < rod.numNodes(); ++i)
    q.segment<3>(rod.positionDof(i)) +=
        0.06 * h * Vec3(std::sin(1.3 * i + phase), std::cos(0.7 * i + 2 * phase), std::sin(0.4 * i * i + 1));
  for (int e = 0; e < rod.numElements(); ++e)
    q.segment<3>(rod.rotationDof(e)) =
        amp * Vec3(0.3 * std::sin(0.9 * e + phase), 0.2 * std::cos(1.1 * e * e), 0.25 * std::sin(e + 0.5 + phase));
  return q;
}

std::vector<Mat3> committedFrames(const CosseratRod& rod) {
  std::vector<Mat3> Q;
  for (int e = 0; e < rod.numElements(); ++e) Q.push_back(rod.committedFrame(e));
  return Q;
}

// -dU/dq of the reference energy by fourth-order central differences.
template <class Energy>
Vec minusGradient(Energy U, Vec q, const Vec& h) {
  Vec g(q.size());
  for (int k = 0; k < q.size(); ++k) {
    const double qk = q[k];
    auto at = [&](double s) {
      q[k] = qk + s * h[k];
      return U(q);
    };
    g[k] = -(8.0 * (at(1) - at(-1)) - (at(2) - at(-2))) / (12.0 * h[k]);
    q[k] = qk;
  }
  return g;
}

}  // namespace

TEST_CASE("reference and fast cosserat rod agree to round-off: energy, elastic and velocity forces") {
  double worst_energy = 0, worst_force = 0, worst_couple = 0, worst_velocity = 0;
  for (const Case& c : cases()) {
    CosseratRod rod(c.params);
    const ref::RodConstants constants = ref::constantsOf(rod, c.params);
    const int nn = rod.numNodes(), n = rod.numDofs(), r0 = rod.rotationDof(0);
    // Evaluate at two configurations: straight from the initial frames, then after a committed
    // step (rebaseDofs folds φ into re-orthonormalized committed frames) with new φ on top.
    for (int stage = 0; stage < 2; ++stage) {
      for (double amp : {0.05, 0.4, 1.2}) {
        if (stage == 1) {
          Vec q0 = deformed(rod, 0.7 * amp, 0.3), v0 = Vec::Zero(n);
          rod.setConfiguration(q0);
          rod.rebaseDofs(q0, v0);
        }
        const Vec q = deformed(rod, amp, 1.0 + stage);
        // The start of the step: positions and rotations behind q by a non-uniform velocity times dt.
        const double dt = 1e-4;
        Vec qs = q;
        for (int k = 0; k < n; ++k) qs[k] -= dt * (k < r0 ? 0.3 : 2.0) * std::sin(0.37 * k * k + 0.2);
        rod.setConfiguration(q);

        // fast
        const double U_fast = rod.elasticEnergy();
        Vec f_fast = Vec::Zero(n);
        rod.addElasticForce(f_fast);
        Vec fv_fast = Vec::Zero(n);
        EvalContext ctx;
        ctx.dt = dt;
        ctx.q = &q;
        ctx.q_start = &qs;
        rod.addVelocityForce(ctx, fv_fast);

        // reference
        const ref::Configuration conf = ref::configurationFromDofs(constants, committedFrames(rod), q);
        const double U_ref = ref::elasticEnergy(constants, conf);
        const Vec f_ref = ref::toDofs(constants, ref::elasticForces(constants, conf));
        const ref::Velocities w = ref::velocitiesFromDofs(constants, q, qs, dt);
        const Vec fv_ref = ref::couplesToDofs(constants, ref::velocityCouples(constants, conf, w));

        const double dU = std::abs(U_ref - U_fast) / std::abs(U_fast);
        const double dF = relDiff(f_ref, f_fast, 0, r0), dC = relDiff(f_ref, f_fast, r0, n);
        const double dV = relDiff(fv_ref, fv_fast, 0, n);
        CAPTURE(c.name);
        CAPTURE(stage);
        CAPTURE(amp);
        CHECK(U_fast > 0);
        CHECK(dU <= kAgree);
        CHECK(dF <= kAgree);
        CHECK(dC <= kAgree);
        CHECK(dV <= kAgree);
        CHECK(fv_fast.head(3 * nn).isZero(0.0));  // velocity forces are couples only
        worst_energy = std::max(worst_energy, dU);
        worst_force = std::max(worst_force, dF);
        worst_couple = std::max(worst_couple, dC);
        worst_velocity = std::max(worst_velocity, dV);

        // The curvatures too (the fast pass's polynomial variants against logSO3's closed forms).
        for (int i = 0; i < nn; ++i) {
          if (!ref::hasCurvature(constants, i)) continue;
          const Vec3 kr = ref::curvature(constants, conf, i), kf = rod.curvature(i);
          CHECK((kr - kf).norm() <= kAgree * std::max(kf.norm(), 1e-3));
        }
        for (int e = 0; e < rod.numElements(); ++e) {
          CHECK((ref::shearStrain(constants, conf, e) - rod.shearStrain(e)).norm() <= 1e-14);
          CHECK(std::abs(ref::dilatation(constants, conf, e) - rod.dilatation(e)) <= 1e-15);
        }
      }
    }
  }
  MESSAGE("reference vs fast, largest normwise relative difference over all cases: energy "
          << worst_energy << ", nodal forces " << worst_force << ", couples " << worst_couple
          << ", velocity couples " << worst_velocity);
}

TEST_CASE("the reference forces are minus the gradient of the reference energy (open and closed rods)") {
  for (const Case& c : cases()) {
    if (c.params.string("force_law") == "gazzola2018") continue;  // Eq. 23 as written is no energy's gradient
    CosseratRod rod(c.params);
    const ref::RodConstants constants = ref::constantsOf(rod, c.params);
    const int n = rod.numDofs(), r0 = rod.rotationDof(0);
    const Vec q = deformed(rod, 0.4, 0.7);
    const ref::Configuration conf = ref::configurationFromDofs(constants, committedFrames(rod), q);
    const Vec f = ref::toDofs(constants, ref::elasticForces(constants, conf));
    Vec h(n);
    h.head(r0).setConstant(1e-3 * rod.restLength(0));  // m
    h.tail(n - r0).setConstant(1e-3);                  // rad
    CAPTURE(c.name);

    // The couples are -∂U/∂a for Q_e -> exp(-[a]) Q_e, i.e. the gradient with respect to the
    // rotation-vector DOFs from φ = 0 (README.md, "Degrees of freedom"): take the current frames as
    // the committed ones and differentiate at φ = 0, as the rod's rebaseDofs leaves it.
    Vec q0 = q;
    q0.tail(n - r0).setZero();
    const Vec g0 = minusGradient(
        [&](const Vec& x) { return ref::elasticEnergy(constants, ref::configurationFromDofs(constants, conf.Q, x)); },
        q0, h);
    const double e_pos = relDiff(f, g0, 0, r0), e_rot = relDiff(f, g0, r0, n);
    MESSAGE(c.name << ": |f + dU/dq| / |dU/dq| (inf norms) = " << e_pos << " (positions), " << e_rot
                   << " (rotations)");
    CHECK(e_pos <= 1e-10);  // observed below 1e-12 (fourth-order differences, steps 1e-3)
    CHECK(e_rot <= 1e-10);

    // At φ != 0 the derivative with respect to φ itself is that couple through the Jacobian of the
    // exponential map: exp(-[φ + δ]) = exp(-[J_l(-φ) δ]) exp(-[φ]) to first order, so
    // couple_e = J_l⁻¹(φ_e) (-∂U/∂φ_e), not -∂U/∂φ_e.
    const Vec gphi = minusGradient(
        [&](const Vec& x) {
          return ref::elasticEnergy(constants, ref::configurationFromDofs(constants, committedFrames(rod), x));
        },
        q, h);
    double e_jac = 0, plain = 0, scale = 0;
    for (int e = 0; e < rod.numElements(); ++e) {
      const int r = r0 + 3 * e;
      const Vec3 phi = q.segment<3>(r), G = gphi.segment<3>(r), C = f.segment<3>(r);
      e_jac = std::max(e_jac, (geometry::invLeftJacobianTimes(phi, G) - C).lpNorm<Eigen::Infinity>());
      plain = std::max(plain, (G - C).lpNorm<Eigen::Infinity>());
      scale = std::max(scale, C.lpNorm<Eigen::Infinity>());
    }
    CHECK(e_jac <= 1e-10 * scale);
    CHECK(plain > 1e-3 * scale);  // the convention matters at φ = O(0.1 rad)
    CHECK(relDiff(gphi, f, 0, r0) <= 1e-10);  // positions: the same either way
  }
}

TEST_CASE("reference velocity couples: each term on its own") {
  CosseratRod rod(openHelix("straight", 0.05, 0.0));
  const Params p = openHelix("straight", 0.05, 0.0);
  const ref::RodConstants constants = ref::constantsOf(rod, p);
  const Vec q = deformed(rod, 0.3, 0.2);
  const ref::Configuration conf = ref::configurationFromDofs(constants, committedFrames(rod), q);
  // A rod spinning rigidly about the material d3 axis of every element: (Ĵω) × ω = 0 for an axis of
  // symmetry (J1 = J2), no stretching rate: only the friction and the dilatation couple remain.
  ref::Velocities w;
  w.v.assign(rod.numNodes(), Vec3(0.1, -0.2, 0.3));  // a translation: ė = 0
  for (int e = 0; e < rod.numElements(); ++e) w.omega.push_back(Vec3(0, 0, 2.0 + e));
  for (int e = 0; e < rod.numElements(); ++e) {
    CHECK(ref::lagrangianTransportCouple(constants, e, w).norm() == 0.0);
    CHECK(ref::unsteadyDilatationCouple(constants, conf, e, w).norm() == 0.0);
    const double ee = ref::dilatation(constants, conf, e);
    const Vec3 friction = ref::rotationalFrictionCouple(constants, conf, e, w);
    CHECK(friction.z() == doctest::Approx(-0.05 * constants.rest_length[e] * ee * ee * (2.0 + e)));
  }
  // The gyroscopic couple (Ĵω) × ω component by component (Ĵ = ℓ̂ ρ diag(I, I, 2I)).
  w.omega.assign(rod.numElements(), Vec3(1.0, 2.0, 3.0));
  const Vec3 gyro = ref::lagrangianTransportCouple(constants, 0, w);
  const Vec3 J = constants.rest_length[0] * constants.J;
  CHECK(gyro.x() == doctest::Approx((J.y() - J.z()) * 2.0 * 3.0));
  CHECK(gyro.y() == doctest::Approx((J.z() - J.x()) * 3.0 * 1.0));
  CHECK(gyro.z() == doctest::Approx(0.0));
}

// A straight rod at its rest length, twisted uniformly by τ: no shear or stretch strain, a twist
// energy ½ B̂₃ τ² D̂ / E³ per interior node. Under force_law = "energy" its dependence on the length
// pulls the rod longer: the last node, whose element lies in node n-1's Voronoi domain only, takes
// -∂U/∂ℓ = (3/4) B̂₃ τ² along the axis (the twist-stretch coupling of the energy). Eq. 23 as Gazzola et al.
// write it (force_law = "gazzola2018") has no such force: every nodal force is zero. The couples agree.
TEST_CASE("force_law: the energy law pulls a twisted straight rod longer, Eq. 23 as Gazzola et al. write it does not") {
  const double tau = 3.0;  // rad/m
  auto twisted = [&](const std::string& law) {
    Params p = twistedStraightRod(tau);
    p.set("force_law", law);
    return p;
  };
  CosseratRod energy_rod(twisted("energy")), written_rod(twisted("gazzola2018"));
  Vec q(energy_rod.numDofs());
  energy_rod.initialDofs(q);
  const int n = energy_rod.numDofs(), r0 = energy_rod.rotationDof(0), last = energy_rod.numNodes() - 1;
  const Vec f_energy = elasticForceAt(energy_rod, q), f_written = elasticForceAt(written_rod, q);

  const double B3 = energy_rod.bendStiffness()[2];
  const double pull = 0.75 * B3 * tau * tau;
  CHECK(f_energy[energy_rod.positionDof(last) + 2] == doctest::Approx(pull).epsilon(1e-12));
  CHECK(f_energy[energy_rod.positionDof(0) + 2] == doctest::Approx(-pull).epsilon(1e-12));
  CHECK(f_written.head(r0).lpNorm<Eigen::Infinity>() <= 1e-12 * pull);
  CHECK(relDiff(f_written, f_energy, r0, n) <= 1e-15);
}

// bend_twist_rescaling = false: the twisted rod of the test above, stretched uniformly by 10 %. The
// twist couple on the interior elements is B̂₃ τ at any stretch (with Eq. 10's rescaling it is
// B̂₃ τ / E³), and the energy law pulls no node: without the 1/E³ the energy does not depend on
// the lengths, so there is no twist-stretch coupling. The stretch force is that of the stretch alone.
TEST_CASE("bend_twist_rescaling = false: the twist couple does not soften with the stretch, no twist-stretch pull") {
  const double tau = 3.0, stretch = 1.1;
  auto twisted = [&](bool rescaling) {
    Params p = twistedStraightRod(tau);
    p.set("bend_twist_rescaling", rescaling);
    return p;
  };
  CosseratRod rescaled(twisted(true)), plain(twisted(false));
  Vec q(plain.numDofs());
  plain.initialDofs(q);
  for (int i = 0; i < plain.numNodes(); ++i) q[plain.positionDof(i) + 2] *= stretch;
  const int last = plain.numNodes() - 1, mid = plain.numElements() / 2;
  const Vec f_rescaled = elasticForceAt(rescaled, q), f_plain = elasticForceAt(plain, q);

  const double B3 = plain.bendStiffness()[2];
  // An interior element sits between two nodes twisted by θ₃ = τ D̂: couples ∓B̂₃ τ from each, so the
  // net couple is zero; the end element takes one of them.
  const double end_couple = f_plain[plain.rotationDof(plain.numElements() - 1) + 2];
  CHECK(std::abs(end_couple) == doctest::Approx(B3 * tau).epsilon(1e-12));
  CHECK(std::abs(f_rescaled[rescaled.rotationDof(plain.numElements() - 1) + 2]) ==
        doctest::Approx(B3 * tau / (stretch * stretch * stretch)).epsilon(1e-12));
  CHECK(std::abs(f_plain[plain.rotationDof(mid) + 2]) <= 1e-12 * B3 * tau);
  // The end node: the stretch force E Â (e - 1) alone (the rod is unsheared), no twist-stretch pull.
  const double EA = plain.shearStiffness()[2];
  CHECK(f_plain[plain.positionDof(last) + 2] == doctest::Approx(-EA * (stretch - 1.0)).epsilon(1e-12));
  CHECK(f_rescaled[rescaled.positionDof(last) + 2] + EA * (stretch - 1.0) > 0.1 * B3 * tau * tau);
}
