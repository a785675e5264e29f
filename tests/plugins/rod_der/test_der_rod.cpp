// The "der" rod through the rodsim::Rod interface: exact derivatives away from the committed
// configuration, stress-free helices, reference-twist continuity, masses, torques, geometry.
#include <doctest/doctest.h>
#include <rodsim/testing/fake_world.h>
#include <rodsim/testing/finite_differences.h>

#include "der_rod.h"
#include "expect_param_error.h"
#include <rodsim/geometry/centerline.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <numbers>
#include <random>
#include <set>
#include <string>

// Counts heap allocations of this test binary: Eigen and operator new both end in malloc, which
// the executable interposes (glibc exports the real one as __libc_malloc).
static std::atomic<long> g_allocations{0};
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__) && !defined(RODSIM_SANITIZED)
#define RODSIM_COUNT_ALLOCATIONS 1
extern "C" void* __libc_malloc(std::size_t);
extern "C" void* malloc(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(n);
}
#endif

using rodsim::DerRod;
using rodsim::Params;
using rodsim::ParamError;
using rodsim::toValue;
using rodsim::Value;
using rodsim::Vec;
using rodsim::Vec3;

using rodsim::testing::relErr;

namespace {

constexpr double kPi = std::numbers::pi;

// Parameters as the kernel hands them over: schema defaults, then the scene's values.
Params makeParams(std::initializer_list<std::pair<std::string, Value>> kv) {
  return rodsim::testing::makeParams(DerRod::schema(), kv, "test_rod");
}

Params helixParams(int nodes, const std::string& rest_shape, double lead = 0.0, double radius = 0.004) {
  return makeParams({{"nodes", toValue(nodes)},
                     {"radius", toValue(radius)},
                     {"youngs_modulus", toValue(1e7)},
                     {"geometry.shape", toValue("helix")},
                     {"geometry.origin", toValue(Vec3(0.1, -0.2, 0.3))},
                     {"geometry.axis", toValue(Vec3(1, 2, -1))},
                     {"geometry.helix_radius", toValue(0.01)},
                     {"geometry.pitch", toValue(0.05)},
                     {"geometry.axial_length", toValue(0.06)},
                     {"geometry.lead", toValue(lead)},
                     {"rest_shape", toValue(rest_shape)}});
}

Params straightParams(int nodes, double length = 1.0) {
  return makeParams({{"nodes", toValue(nodes)},
                     {"radius", toValue(0.01)},
                     {"youngs_modulus", toValue(1e6)},
                     {"shear_modulus", toValue(4e5)},
                     {"geometry.shape", toValue("straight")},
                     {"geometry.start", toValue(Vec3(0, 0, 0))},
                     {"geometry.end", toValue(Vec3(length, 0, 0))}});
}

Eigen::MatrixXd denseStiffness(const DerRod& rod) {
  rodsim::StiffnessSink K;
  rod.addStiffness(K);
  const int n = rod.numDofs(), off = rod.dofOffset();
  Eigen::MatrixXd M = Eigen::MatrixXd::Zero(n, n);
  for (const auto& t : K.entries()) {
    REQUIRE(t.row() >= off);
    REQUIRE(t.row() < off + n);
    M(t.row() - off, t.col() - off) += t.value();
  }
  return M;
}

Vec force(const DerRod& rod) {
  Vec f = Vec::Zero(rod.numDofs());
  rod.addElasticForce(f);
  return f;
}

double meanEdge(const DerRod& rod) {
  double s = 0;
  for (int e = 0; e < rod.numEdges(); ++e) s += rod.restEdgeLength(e);
  return s / rod.numEdges();
}

// Random perturbation: positions by ~`dx`, twist angles by ~`dth`.
Vec perturbation(const DerRod& rod, std::mt19937& rng, double dx, double dth) {
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  Vec d = Vec::Zero(rod.numDofs());
  for (int i = 0; i < rod.numNodes(); ++i)
    for (int c = 0; c < 3; ++c) d[rod.positionDof(i) + c] = dx * U(rng);
  for (int e = 0; e < rod.numEdges(); ++e) d[rod.twistDof(e)] = dth * U(rng);
  return d;
}

// Central differences of energy (→ gradient) and of the analytic force (→ stiffness) at q, every
// evaluation a setConfiguration from the same committed base.
void checkDerivatives(DerRod& rod, const Vec& q, double tol) {
  const int n = rod.numDofs();
  rod.setConfiguration(q);
  const Vec f = force(rod);
  const Eigen::MatrixXd K = denseStiffness(rod);
  const double L = meanEdge(rod);
  Vec g_fd(n);
  Eigen::MatrixXd K_fd(n, n);
  for (int k = 0; k < n; ++k) {
    const bool twist_dof = (k % 4) == 3;
    const double h = twist_dof ? 1e-6 : 1e-6 * L;
    Vec qp = q, qm = q;
    qp[k] += h;
    qm[k] -= h;
    rod.setConfiguration(qp);
    const double Ep = rod.elasticEnergy();
    const Vec fp = force(rod);
    rod.setConfiguration(qm);
    const double Em = rod.elasticEnergy();
    const Vec fm = force(rod);
    g_fd[k] = (Ep - Em) / (2 * h);
    K_fd.col(k) = -(fp - fm) / (2 * h);
  }
  rod.setConfiguration(q);
  const double eg = relErr(-f, g_fd), eK = relErr(K, K_fd);
  INFO("gradient rel. error " << eg << ", Hessian rel. error " << eK);
  CHECK(eg < tol);
  CHECK(eK < tol);
  CHECK((K - K.transpose()).norm() <= 1e-12 * K.norm());
}

Eigen::Matrix3d rotation(const Vec3& axis, double angle) {
  return Eigen::AngleAxisd(angle, axis.normalized()).toRotationMatrix();
}

// The configuration q rigidly rotated by R about `center`, twist angles chosen (through
// twistForDirector) so that every material frame rotates with it. Leaves the rod at the result.
Vec rigidlyRotated(DerRod& rod, const Vec& q, const Eigen::Matrix3d& R, const Vec3& center) {
  rod.setConfiguration(q);
  std::vector<Vec3> m1(rod.numEdges());
  for (int e = 0; e < rod.numEdges(); ++e) {
    Vec3 t, a, b;
    rod.materialFrame(e, t, a, b);
    m1[e] = R * a;
  }
  Vec qr = q;
  for (int i = 0; i < rod.numNodes(); ++i) {
    const int k = rod.positionDof(i);
    qr.segment<3>(k) = center + R * (q.segment<3>(k) - center);
  }
  rod.setConfiguration(qr);
  for (int e = 0; e < rod.numEdges(); ++e) qr[rod.twistDof(e)] = rod.twistForDirector(e, m1[e]);
  rod.setConfiguration(qr);
  return qr;
}

template <class F>
std::string paramErrorKey(F&& f) {
  try {
    f();
  } catch (const ParamError& e) {
    return e.key();
  }
  return "<no ParamError>";
}

}  // namespace

// ------------------------------------------------------------------------------------------------

TEST_CASE("der rod: schema") {
  const rodsim::Schema s = DerRod::schema();
  CHECK(s.type() == "der");
  std::set<std::string> names;
  for (const auto& p : s.params()) {
    CHECK_MESSAGE(names.insert(p.name).second, "duplicate parameter " << p.name);
    CHECK_MESSAGE(!p.doc.empty(), p.name);
  }
  for (const char* k : {"nodes", "radius", "density", "youngs_modulus", "poisson_ratio", "shear_modulus",
                        "geometry.shape", "geometry.start", "geometry.end", "geometry.origin", "geometry.axis",
                        "geometry.helix_radius", "geometry.pitch", "geometry.axial_length", "geometry.handedness",
                        "geometry.lead", "geometry.points", "geometry.file", "rest_shape", "initial_velocity"})
    CHECK_MESSAGE(s.find(k) != nullptr, k);
  CHECK(s.find("radius")->unit == "m");
  CHECK(s.find("radius")->required);
  CHECK(s.find("youngs_modulus")->unit == "Pa");
  CHECK(s.find("geometry.file")->is_path);
  CHECK(s.find("poisson_ratio")->min_exclusive);
  CHECK(*s.find("poisson_ratio")->max == 0.5);
}

TEST_CASE("der rod: layout, material constants and lumped masses") {
  DerRod rod(straightParams(11, 2.0));
  CHECK(rod.numNodes() == 11);
  CHECK(rod.numDofs() == 43);
  CHECK(rod.positionDof(3) == 12);
  CHECK(rod.twistDof(3) == 15);
  const double r = 0.01, A = kPi * r * r, J = kPi * std::pow(r, 4) / 2;
  CHECK(rod.stretchStiffness() == doctest::Approx(1e6 * A).epsilon(1e-14));
  CHECK(rod.bendStiffness() == doctest::Approx(1e6 * kPi * std::pow(r, 4) / 4).epsilon(1e-14));
  CHECK(rod.twistStiffness() == doctest::Approx(4e5 * J).epsilon(1e-14));  // shear_modulus overrides nu
  DerRod nu_rod(makeParams({{"nodes", toValue(3)}, {"radius", toValue(0.01)}, {"youngs_modulus", toValue(3e6)},
                            {"poisson_ratio", toValue(0.25)}, {"geometry.shape", toValue("straight")},
                            {"geometry.start", toValue(Vec3(0, 0, 0))}, {"geometry.end", toValue(Vec3(0, 1, 0))}}));
  CHECK(nu_rod.shearModulus() == doctest::Approx(3e6 / 2.5).epsilon(1e-14));

  Vec m(rod.numDofs());
  rod.lumpedMass(m);
  const double rho = 1000, L = 2.0;
  double pos_mass = 0, twist_inertia = 0;
  for (int i = 0; i < rod.numNodes(); ++i) {
    pos_mass += m[rod.positionDof(i)];
    CHECK(m[rod.positionDof(i) + 1] == m[rod.positionDof(i)]);
    CHECK(m[rod.positionDof(i) + 2] == m[rod.positionDof(i)]);
  }
  for (int e = 0; e < rod.numEdges(); ++e) twist_inertia += m[rod.twistDof(e)];
  CHECK(pos_mass == doctest::Approx(rho * A * L).epsilon(1e-13));
  CHECK(twist_inertia == doctest::Approx(rho * J * L).epsilon(1e-13));  // Σ ½ m_edge r²
  CHECK(m[rod.positionDof(0)] == doctest::Approx(rho * A * 0.1).epsilon(1e-13));   // half edge at the ends
  CHECK(m[rod.positionDof(5)] == doctest::Approx(rho * A * 0.2).epsilon(1e-13));
  CHECK(rod.restVoronoiLength(0) == doctest::Approx(0.1));
  CHECK(rod.restVoronoiLength(10) == doctest::Approx(0.1));
  CHECK(rod.restVoronoiLength(4) == doctest::Approx(0.2));

  // Helix masses also sum to ρ A L (L: rest length of the centerline).
  DerRod helix(helixParams(40, "initial", 0.01));
  Vec mh(helix.numDofs());
  helix.lumpedMass(mh);
  double Lh = 0, mass = 0;
  for (int e = 0; e < helix.numEdges(); ++e) Lh += helix.restEdgeLength(e);
  for (int i = 0; i < helix.numNodes(); ++i) mass += mh[helix.positionDof(i)];
  CHECK(mass == doctest::Approx(rho * kPi * 0.004 * 0.004 * Lh).epsilon(1e-13));

  Vec q(rod.numDofs()), v(rod.numDofs());
  rod.initialDofs(q);
  CHECK(q[rod.twistDof(2)] == 0.0);
  CHECK(q.segment<3>(rod.positionDof(10)).isApprox(Vec3(2, 0, 0)));
  DerRod moving(makeParams({{"nodes", toValue(3)}, {"radius", toValue(0.01)}, {"youngs_modulus", toValue(1e6)},
                            {"geometry.shape", toValue("straight")}, {"geometry.start", toValue(Vec3(0, 0, 0))},
                            {"geometry.end", toValue(Vec3(1, 0, 0))},
                            {"initial_velocity", toValue(Vec3(0.5, -1, 2))}}));
  Vec v3(moving.numDofs());
  moving.initialVelocity(v3);
  CHECK(v3.segment<3>(moving.positionDof(2)).isApprox(Vec3(0.5, -1, 2)));
  CHECK(v3[moving.twistDof(1)] == 0.0);
}

TEST_CASE("der rod: exact gradient and Hessian through the Rod interface, away from the committed frames") {
  std::mt19937 rng(42);
  struct Case {
    std::string name;
    Params params;
  };
  // Thick rods (radius ~ edge length) so that bending and twisting weigh as much as stretching.
  const Case cases[] = {{"helix, natural curvature", helixParams(7, "initial", 0.0, 0.01)},
                        {"helix with lead and hook", helixParams(8, "initial", 0.01, 0.01)},
                        {"helix, naturally straight", helixParams(7, "straight", 0.0, 0.01)}};
  for (const auto& c : cases) {
    CAPTURE(c.name);
    DerRod rod(c.params);
    rod.setDofOffset(5);
    const double L = meanEdge(rod);
    Vec q(rod.numDofs());
    rod.initialDofs(q);
    // A few committed steps: frames are transported in time, reference twists move off zero.
    for (int step = 0; step < 3; ++step) {
      q += perturbation(rod, rng, 0.1 * L, 0.4);
      rod.setConfiguration(q);
      rod.commitConfiguration();
    }
    for (int trial = 0; trial < 3; ++trial) {
      CAPTURE(trial);
      // Far from the committed configuration: edges turn by up to ~0.4 rad, twists by ~1 rad.
      const Vec qe = q + perturbation(rod, rng, 0.2 * L, 1.0);
      checkDerivatives(rod, qe, 1e-6);
    }
    // Exactly at the committed configuration too.
    checkDerivatives(rod, q, 1e-6);
  }
}

TEST_CASE("der rod: addStiffness adds the same entries in the same order on every call") {
  DerRod rod(helixParams(9, "initial"));
  rod.setDofOffset(7);
  auto pattern = [&] {
    rodsim::StiffnessSink K;
    rod.addStiffness(K);
    std::vector<std::pair<int, int>> rc;
    for (const auto& t : K.entries()) rc.emplace_back(t.row(), t.col());
    return rc;
  };
  const auto p0 = pattern();
  std::mt19937 rng(1);
  Vec q(rod.numDofs());
  rod.initialDofs(q);
  rod.setConfiguration(q + perturbation(rod, rng, 1e-3, 0.3));
  CHECK(pattern() == p0);
  // Each entry of the rod's pattern (the union of the 11x11 stencil blocks) exactly once.
  std::set<std::pair<int, int>> expected;
  for (int i = 1; i + 1 < rod.numNodes(); ++i)
    for (int r = 0; r < 11; ++r)
      for (int c = 0; c < 11; ++c) expected.emplace(7 + rod.positionDof(i - 1) + r, 7 + rod.positionDof(i - 1) + c);
  CHECK(std::set<std::pair<int, int>>(p0.begin(), p0.end()) == expected);
  CHECK(p0.size() == expected.size());
}

TEST_CASE("der rod: the stiffness is the same with or without the force evaluated first") {
  // addElasticForce leaves the strain gradients for addStiffness: reusing them must change nothing.
  DerRod rod(helixParams(12, "initial", 0.01, 0.01));
  Vec q(rod.numDofs());
  rod.initialDofs(q);
  std::mt19937 rng(5);
  const Vec q1 = q + perturbation(rod, rng, 1e-3, 0.5);
  rod.setConfiguration(q1);
  const Eigen::MatrixXd K_alone = denseStiffness(rod);
  rod.setConfiguration(q1);
  const Vec f = force(rod);
  const Eigen::MatrixXd K_after_force = denseStiffness(rod);
  CHECK((K_alone - K_after_force).cwiseAbs().maxCoeff() == 0.0);
  CHECK(f.norm() > 0.0);
  // A commit changes the transport base, hence the Hessian: gradients left by a force evaluation
  // before the commit must not be reused after it.
  const Vec q2 = q1 + perturbation(rod, rng, 1e-3, 0.5);
  rod.setConfiguration(q2);
  force(rod);
  rod.commitConfiguration();
  const Eigen::MatrixXd K_after_commit = denseStiffness(rod);
  rod.setConfiguration(q2);  // recomputes everything from the new committed frames
  const Eigen::MatrixXd K_fresh = denseStiffness(rod);
  CHECK(relErr(K_after_commit, K_fresh) < 1e-12);
}

TEST_CASE("der rod: setting the same configuration again keeps its kinematics, until a commit") {
  // Newton evaluates an iterate a second time when it needs its stiffness after all: the rod then
  // keeps the kinematics and strain gradients of that configuration. Everything it returns must be
  // what a rod that computes them afresh returns, bit for bit.
  std::mt19937 rng(11);
  DerRod a(helixParams(12, "initial", 0.01, 0.01)), b(helixParams(12, "initial", 0.01, 0.01));
  Vec q(a.numDofs());
  a.initialDofs(q);
  const Vec q1 = q + perturbation(a, rng, 1e-3, 0.5), q2 = q1 + perturbation(a, rng, 1e-3, 0.5);
  a.setConfiguration(q1);
  const Vec f_fresh = force(a);
  const Eigen::MatrixXd K_fresh = denseStiffness(a);
  const double E_fresh = a.elasticEnergy();
  b.setConfiguration(q2);
  force(b);
  b.setConfiguration(q1);
  force(b);
  b.setConfiguration(q1);  // the same q: kept
  CHECK((force(b) - f_fresh).cwiseAbs().maxCoeff() == 0.0);
  CHECK((denseStiffness(b) - K_fresh).cwiseAbs().maxCoeff() == 0.0);
  CHECK(b.elasticEnergy() == E_fresh);
  // After a commit at q1 the transport starts from the new frames: the same q1 is recomputed (its
  // reference twists from the committed ones), as the rod that is moved away and back computes it.
  a.commitConfiguration();
  b.commitConfiguration();
  a.setConfiguration(q2);
  a.setConfiguration(q1);
  b.setConfiguration(q1);
  for (int i = 1; i + 1 < a.numNodes(); ++i) CHECK(b.referenceTwist(i) == a.referenceTwist(i));
  CHECK((force(b) - force(a)).cwiseAbs().maxCoeff() == 0.0);
  CHECK((denseStiffness(b) - denseStiffness(a)).cwiseAbs().maxCoeff() == 0.0);
}

TEST_CASE("der rod: no heap allocation in setConfiguration, energy, force and stiffness") {
#ifndef RODSIM_COUNT_ALLOCATIONS
  return;  // needs glibc (and no ASan/TSan) to count allocations
#endif
  DerRod rod(helixParams(30, "initial", 0.01));
  Vec q(rod.numDofs()), f = Vec::Zero(rod.numDofs());
  rod.initialDofs(q);
  std::mt19937 rng(3);
  const Vec dq = perturbation(rod, rng, 1e-4, 0.1);
  rodsim::StiffnessSink K;
  rod.addStiffness(K);  // warm the sink's capacity
  double E = 0;
  const Vec q1 = q + dq;
  const long start = g_allocations.load();
  for (int k = 0; k < 3; ++k) {
    rod.setConfiguration(q1);
    E += rod.elasticEnergy();
    rod.addElasticForce(f);
    K.clear();
    rod.addStiffness(K);
    rod.commitConfiguration();
  }
  CHECK(g_allocations.load() - start == 0);
  const Vec probe = q1 + dq;  // the counter does see an allocation
  CHECK(g_allocations.load() - start >= 1);
  CHECK(probe.size() == q1.size());
  CHECK(E > 0);
}

TEST_CASE("der rod: a helix with rest_shape = initial is stress free") {
  for (double lead : {0.0, 0.01}) {
    CAPTURE(lead);
    DerRod rod(helixParams(61, "initial", lead));
    Vec q(rod.numDofs());
    rod.initialDofs(q);
    rod.setConfiguration(q);
    double L = 0;
    for (int e = 0; e < rod.numEdges(); ++e) L += rod.restEdgeLength(e);
    const double EA = rod.stretchStiffness();
    CHECK(rod.elasticEnergy() <= 1e-24 * EA * L);
    CHECK(force(rod).lpNorm<Eigen::Infinity>() <= 1e-12 * EA);
    // The natural curvature is the helix's: |κ̄| ≈ 2 tan(φ/2)/Δl̄ · Δl̄ with curvature R/(R² + c²).
    const double R = 0.01, c = 0.05 / (2 * kPi);
    const int mid = rod.numNodes() - 10;
    const double kappa = rod.naturalCurvature(mid).norm() / rod.restVoronoiLength(mid);
    CHECK(kappa == doctest::Approx(R / (R * R + c * c)).epsilon(1e-2));

    // Rigid rotation in many small committed steps (frames transported in time, reference twist
    // unwrapped): still stress free.
    const Vec3 center(0.3, 0.1, -0.2), axis(0.3, -1, 0.5);
    const int steps = 100;
    for (int k = 0; k < steps; ++k) {
      q = rigidlyRotated(rod, q, rotation(axis, 2.5 * 2 * kPi / steps), center);
      rod.commitConfiguration();
    }
    CHECK(rod.elasticEnergy() <= 1e-20 * EA * L);
    CHECK(force(rod).lpNorm<Eigen::Infinity>() <= 1e-9 * EA);
  }
  // The same helix naturally straight is loaded.
  DerRod straight(helixParams(61, "straight"));
  CHECK(straight.elasticEnergy() > 0);
}

TEST_CASE("der rod: twisting an end past 2π in small committed steps grows the twist smoothly") {
  const int N = 6;
  DerRod rod(straightParams(N, 1.0));
  Vec q(rod.numDofs());
  rod.initialDofs(q);
  rod.setConfiguration(q);
  const int last = rod.numEdges() - 1;
  Vec3 t, m1_0, m2_0;
  rod.materialFrame(last, t, m1_0, m2_0);
  const double GJ = rod.twistStiffness(), l = 0.2;
  double prev = 0;
  const int steps = 400;
  const double total = 3.0 * 2 * kPi;  // three turns
  for (int k = 1; k <= steps; ++k) {
    const double phi = total * k / steps;
    // Spin the last edge's material frame about its tangent; the branch follows the current θ.
    const double th = rod.twistForDirector(last, rotation(t, phi) * m1_0);
    CHECK(th - prev == doctest::Approx(total / steps).epsilon(1e-9));
    prev = th;
    for (int e = 0; e <= last; ++e) q[rod.twistDof(e)] = th * e / last;  // uniform twist: equilibrium
    rod.setConfiguration(q);
    rod.commitConfiguration();
  }
  CHECK(prev == doctest::Approx(total).epsilon(1e-12));
  // E_t = Σ GJ τ²/(2 Δl̄) with τ = Φ/(N-2) at each of the N-2 interior nodes.
  const double tau = total / (N - 2);
  CHECK(rod.elasticEnergy() == doctest::Approx((N - 2) * GJ * tau * tau / (2 * l)).epsilon(1e-12));
  for (int i = 1; i < N - 1; ++i) CHECK(rod.twist(i) == doctest::Approx(tau).epsilon(1e-12));
  // The uniformly twisted straight rod is in equilibrium except for the end moments ∓GJ τ/Δl̄
  // on the first and last twist angles (what a clamp and a motor would supply).
  Vec f = force(rod);
  CHECK(f[rod.twistDof(0)] == doctest::Approx(GJ * tau / l).epsilon(1e-12));
  CHECK(f[rod.twistDof(last)] == doctest::Approx(-GJ * tau / l).epsilon(1e-12));
  f[rod.twistDof(0)] = f[rod.twistDof(last)] = 0;
  CHECK(f.norm() <= 1e-12 * GJ * tau / l);
}

TEST_CASE("der rod: reference twist accumulates continuously (holonomy) when an end precesses") {
  // Edge 0 along x; edge 1 at angle α from it, swept around a cone about x in small committed
  // steps. The time-parallel frame of edge 1 picks up the enclosed solid angle 2π(1 - cos α) per
  // turn: with α = 120° that is 3π per turn, so the reference twist must run past ±2π unwrapped.
  DerRod rod(makeParams({{"nodes", toValue(3)}, {"radius", toValue(0.01)}, {"youngs_modulus", toValue(1e6)},
                         {"geometry.shape", toValue("polyline")},
                         {"geometry.points", toValue(std::vector<Vec3>{Vec3(-1, 0, 0), Vec3(0, 0, 0),
                                                                        Vec3(-0.5, std::sqrt(3.0) / 2, 0)})}}));
  const double alpha = 2 * kPi / 3;
  Vec q(rod.numDofs());
  rod.initialDofs(q);
  const int steps = 720, turns = 2;
  double prev = rod.referenceTwist(1);
  CHECK(std::abs(prev) < 1e-14);
  double max_jump = 0;
  int sign_changes = 0;
  double last_delta = 0;
  for (int k = 1; k <= steps; ++k) {
    const double phi = turns * 2 * kPi * k / steps;
    q.segment<3>(rod.positionDof(2)) = Vec3(std::cos(alpha), std::sin(alpha) * std::cos(phi), std::sin(alpha) * std::sin(phi));
    rod.setConfiguration(q);
    rod.commitConfiguration();
    const double m = rod.referenceTwist(1);
    const double d = m - prev;
    max_jump = std::max(max_jump, std::abs(d));
    if (k > 1 && d * last_delta < 0) ++sign_changes;
    last_delta = d;
    prev = m;
  }
  CHECK(max_jump < 0.05);
  CHECK(sign_changes == 0);
  CHECK(std::abs(prev) == doctest::Approx(turns * 2 * kPi * (1 - std::cos(alpha))).epsilon(1e-4));
}

TEST_CASE("der rod: addNodeTorque does the virtual work T·ω of a small rigid rotation") {
  DerRod rod(helixParams(12, "initial", 0.01));
  Vec q(rod.numDofs());
  rod.initialDofs(q);
  std::mt19937 rng(9);
  q += perturbation(rod, rng, 1e-3, 0.5);
  rod.setConfiguration(q);
  rod.commitConfiguration();
  const Vec3 T(0.3, -0.7, 1.1);
  for (int node : {0, 5, rod.numNodes() - 1}) {
    for (const Vec3& axis : {Vec3(1, 0, 0), Vec3(0.2, 0.9, -0.4), Vec3(-1, 1, 1)}) {
      CAPTURE(node);
      rod.setConfiguration(q);
      Vec f = Vec::Zero(rod.numDofs());
      rod.addNodeTorque(node, T, f);
      // Net force zero: a pure couple plus an axial moment.
      Vec3 net = Vec3::Zero();
      for (int i = 0; i < rod.numNodes(); ++i) net += f.segment<3>(rod.positionDof(i));
      CHECK(net.norm() < 1e-12 * T.norm() / meanEdge(rod));
      const double w = 1e-6;
      const Vec3 omega = w * axis.normalized();
      const Vec qr = rigidlyRotated(rod, q, rotation(axis, w), q.segment<3>(rod.positionDof(node)));
      const double work = f.dot(qr - q);
      CHECK(std::abs(work - T.dot(omega)) <= 1e-5 * T.norm() * w);
    }
  }
}

TEST_CASE("der rod: materialFrame and twistForDirector") {
  DerRod rod(helixParams(10, "initial"));
  Vec q(rod.numDofs());
  rod.initialDofs(q);
  q[rod.twistDof(4)] = 7.0;  // beyond 2π: the branch near the current value is returned
  rod.setConfiguration(q);
  Vec3 t, m1, m2;
  rod.materialFrame(4, t, m1, m2);
  CHECK(std::abs(t.dot(m1)) < 1e-14);
  CHECK((t.cross(m1) - m2).norm() < 1e-14);
  CHECK(rod.twistForDirector(4, m1) == doctest::Approx(7.0).epsilon(1e-14));
  CHECK(rod.twistForDirector(4, 3.0 * m1 + 0.5 * t) == doctest::Approx(7.0).epsilon(1e-14));  // projected
  CHECK(rod.twistForDirector(4, m2) == doctest::Approx(7.0 + kPi / 2).epsilon(1e-14));
}

// ------------------------------------------------------------------------------------ geometry

TEST_CASE("der geometry: polyline and point files") {
  using namespace rodsim::geometry;
  const std::vector<Vec3> pts{Vec3(0, 0, 0), Vec3(0.1, 0, 0), Vec3(1, 0, 0), Vec3(1, 1, 0)};
  const auto r = resamplePolyline(pts, 5);
  REQUIRE(r.size() == 5);
  for (int i = 0; i < 5; ++i) {
    const double s = 2.0 * i / 4;  // arc length
    const Vec3 expect = s <= 1 ? Vec3(s, 0, 0) : Vec3(1, s - 1, 0);
    CHECK((r[i] - expect).norm() < 1e-14);
  }
  DerRod as_is(makeParams({{"radius", toValue(0.01)}, {"youngs_modulus", toValue(1e6)},
                           {"geometry.shape", toValue("polyline")}, {"geometry.points", toValue(pts)}}));
  CHECK(as_is.numNodes() == 4);
  CHECK(as_is.restEdgeLength(0) == doctest::Approx(0.1));

  const std::string path = "/tmp/rodsim_test_der_points.csv";
  {
    std::ofstream f(path);
    f << "x,y,z\n0,0,0\n\n# comment\n0.5, 0, 0\n1,0,0.5\n";
  }
  const auto read = readPointsCsv(path);
  REQUIRE(read.size() == 3);
  CHECK((read[2] - Vec3(1, 0, 0.5)).norm() < 1e-15);
  DerRod from_file(makeParams({{"radius", toValue(0.01)}, {"youngs_modulus", toValue(1e6)},
                               {"geometry.shape", toValue("points")}, {"geometry.file", toValue(path)},
                               {"nodes", toValue(7)}}));
  CHECK(from_file.numNodes() == 7);
  {
    std::ofstream f(path);
    f << "x,y,z\n0,0,0\n1,0\n";
  }
  try {
    readPointsCsv(path);
    FAIL("expected a ParamError");
  } catch (const ParamError& e) {
    CHECK(e.key() == "geometry.file");
    CHECK(std::string(e.what()).find("line 3") != std::string::npos);
  }
  std::remove(path.c_str());
}

TEST_CASE("der geometry: bad inputs throw ParamError naming the key") {
  const Value R = toValue(0.01), E = toValue(1e6);
  auto build = [&](std::initializer_list<std::pair<std::string, Value>> kv) {
    return paramErrorKey([&] {
      Params p = makeParams({{"radius", R}, {"youngs_modulus", E}});
      for (const auto& [k, v] : kv) p.set(k, v);
      DerRod rod(p);
    });
  };
  const Value a = toValue(Vec3(0, 0, 0)), b = toValue(Vec3(1, 0, 0));
  CHECK(build({{"geometry.shape", toValue("straight")}, {"geometry.start", a}, {"geometry.end", b}}) == "nodes");
  CHECK(build({{"geometry.shape", toValue("straight")}, {"nodes", toValue(3)}, {"geometry.start", a}}) ==
        "geometry.end");
  CHECK(build({{"geometry.shape", toValue("straight")}, {"nodes", toValue(3)}, {"geometry.start", a},
               {"geometry.end", a}}) == "geometry.end");
  CHECK(build({{"geometry.shape", toValue("straight")}, {"nodes", toValue(3)}, {"geometry.start", a},
               {"geometry.end", b}, {"geometry.pitch", toValue(0.1)}}) == "geometry.pitch");
  CHECK(build({{"geometry.shape", toValue("helix")}, {"nodes", toValue(10)}, {"geometry.helix_radius", R},
               {"geometry.axial_length", toValue(0.1)}}) == "geometry.pitch");
  CHECK(build({{"geometry.shape", toValue("helix")}, {"geometry.helix_radius", R}, {"geometry.pitch", R},
               {"geometry.axial_length", R}}) == "nodes");
  CHECK(build({{"geometry.shape", toValue("helix")}, {"nodes", toValue(10)}, {"geometry.helix_radius", R},
               {"geometry.pitch", R}, {"geometry.axial_length", R}, {"geometry.axis", a}}) == "geometry.axis");
  CHECK(build({{"geometry.shape", toValue("helix")}, {"nodes", toValue(3)}, {"geometry.helix_radius", R},
               {"geometry.pitch", R}, {"geometry.axial_length", R}, {"geometry.lead", R}}) == "nodes");
  CHECK(build({{"geometry.shape", toValue("polyline")},
               {"geometry.points", toValue(std::vector<Vec3>{Vec3(0, 0, 0), Vec3(0, 0, 0), Vec3(1, 0, 0)})}}) ==
        "geometry.points");
  CHECK(build({{"geometry.shape", toValue("polyline")}}) == "geometry.points");
  CHECK(build({{"geometry.shape", toValue("points")}, {"geometry.file", toValue("/nonexistent/x.csv")}}) ==
        "geometry.file");
  CHECK(build({{"geometry.shape", toValue("straight")}, {"nodes", toValue(1)}, {"geometry.start", a},
               {"geometry.end", b}}) == "nodes");
}

TEST_CASE("point masses add to the lumped mass of their nodes; bad lists are ParamErrors") {
  auto with = [](std::vector<int> nodes, std::vector<double> masses) {
    Params p = straightParams(5);
    p.set("point_mass_nodes", toValue(nodes));
    p.set("point_masses", toValue(masses));
    return p;
  };
  DerRod plain(straightParams(5)), loaded(with({-1, 1}, {0.25, 0.5}));
  Vec m0(plain.numDofs()), m1(loaded.numDofs());
  plain.lumpedMass(m0);
  loaded.lumpedMass(m1);
  const Vec dm = m1 - m0;
  for (int k = 0; k < 3; ++k) {
    CHECK(dm[loaded.positionDof(4) + k] == doctest::Approx(0.25));
    CHECK(dm[loaded.positionDof(1) + k] == doctest::Approx(0.5));
  }
  CHECK(dm.sum() == doctest::Approx(3 * 0.75));  // nothing else changes, twist inertia included
  using rodsim::test::checkParamError;
  checkParamError([&] { DerRod r(with({0, 1}, {1.0})); }, "point_masses", "has 1 entries");
  checkParamError([&] { DerRod r(with({5}, {1.0})); }, "point_mass_nodes", "out of range");
  checkParamError([&] { DerRod r(with({0}, {-1.0})); }, "point_masses", ">= 0");
  Params half = straightParams(5);
  half.set("point_masses", toValue(std::vector<double>{1.0}));
  checkParamError([&] { DerRod r(half); }, "point_masses", "go together");
}
