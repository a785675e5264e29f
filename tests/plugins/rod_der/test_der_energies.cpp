// Finite-difference checks of the DER stencil energies (der_energies.h): gradients by central
// differences of the energy, Hessians by central differences of the analytic gradient.
#include <doctest/doctest.h>
#include <rodsim/testing/finite_differences.h>

#include "der_energies.h"

#include <rodsim/geometry/frames.h>

#include <cmath>
#include <numbers>
#include <random>

using namespace rodsim::der;
using rodsim::geometry::anyPerpendicular;
using rodsim::geometry::curvatureBinormal;
using rodsim::geometry::parallelTransport;
using rodsim::geometry::wrapAngle;

using rodsim::testing::relErr;

namespace {

Vec3 randomUnit(std::mt19937& rng) {
  std::normal_distribution<double> n(0.0, 1.0);
  return Vec3(n(rng), n(rng), n(rng)).normalized();
}

// A committed frame whose tangent is near the current edge direction (as after one step).
EdgeFrame nearbyCommittedFrame(const Vec3& edge, double spread, std::mt19937& rng) {
  EdgeFrame f;
  f.t = (edge.normalized() + spread * randomUnit(rng)).normalized();
  const Vec3 r = randomUnit(rng);
  f.d1 = (r - r.dot(f.t) * f.t).normalized();
  f.d2 = f.t.cross(f.d1);
  return f;
}

// Random bent stencil [x_{i-1}, θ^{i-1}, x_i, θ^i, x_{i+1}] with edges of length ~ L.
Vec11 randomStencil(std::mt19937& rng, double L) {
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  Vec11 q;
  const Vec3 x0(U(rng), U(rng), U(rng));
  const Vec3 t0 = randomUnit(rng);
  const Vec3 t1 = (t0 + 0.9 * randomUnit(rng)).normalized();  // turning angle up to ~ 1 rad
  q.segment<3>(0) = x0;
  q.segment<3>(4) = x0 + L * (1.0 + 0.2 * U(rng)) * t0;
  q.segment<3>(8) = q.segment<3>(4) + L * (1.0 + 0.2 * U(rng)) * t1;
  q[3] = 3.0 * U(rng);
  q[7] = 3.0 * U(rng);
  return q;
}

template <int N, class F>
Eigen::Matrix<double, N, 1> fdGradient(const Eigen::Matrix<double, N, 1>& q, F energy, double h) {
  Eigen::Matrix<double, N, 1> g;
  for (int k = 0; k < N; ++k) {
    Eigen::Matrix<double, N, 1> qp = q, qm = q;
    qp[k] += h;
    qm[k] -= h;
    g[k] = (energy(qp) - energy(qm)) / (2 * h);
  }
  return g;
}

template <int N, class G>
Eigen::Matrix<double, N, N> fdJacobian(const Eigen::Matrix<double, N, 1>& q, G gradient, double h) {
  Eigen::Matrix<double, N, N> H;
  for (int k = 0; k < N; ++k) {
    Eigen::Matrix<double, N, 1> qp = q, qm = q;
    qp[k] += h;
    qm[k] -= h;
    H.col(k) = (gradient(qp) - gradient(qm)) / (2 * h);
  }
  return H;
}

constexpr double kTol = 1e-6;

}  // namespace

TEST_CASE("der stretching: gradient and Hessian match finite differences") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 10; ++trial) {
    std::uniform_real_distribution<double> U(-1.0, 1.0);
    Vec6 q;
    for (int k = 0; k < 6; ++k) q[k] = U(rng);
    StretchParams p{2.5e3, 0.8 * (q.segment<3>(3) - q.segment<3>(0)).norm() * (1.0 + 0.3 * U(rng))};
    const double h = 1e-6;
    auto E = [&](const Vec6& x) { return stretchingEnergy(x, p); };
    auto G = [&](const Vec6& x) { return stretchingGradient(x, p); };
    CHECK(relErr(stretchingGradient(q, p), fdGradient<6>(q, E, h)) < kTol);
    CHECK(relErr(stretchingHessian(q, p), fdJacobian<6>(q, G, h)) < kTol);
  }
  // Value: E = ½ EA ε² |ē| (Eq. 1, 5).
  Vec6 q;
  q << 0, 0, 0, 1.2, 0, 0;
  CHECK(stretchingEnergy(q, {10.0, 1.0}) == doctest::Approx(0.5 * 10.0 * 0.04 * 1.0));
}

TEST_CASE("der bending: gradient and Hessian match finite differences away from the committed frames") {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 20; ++trial) {
    const double L = 0.05;
    const Vec11 q = randomStencil(rng, L);
    const double spread = (trial % 4 == 0) ? 0.0 : 0.3;  // also exactly at the committed tangents
    const EdgeFrame f0 = nearbyCommittedFrame(q.segment<3>(4) - q.segment<3>(0), spread, rng);
    const EdgeFrame f1 = nearbyCommittedFrame(q.segment<3>(8) - q.segment<3>(4), spread, rng);
    BendParams p;
    p.EI1 = 1.3;
    p.EI2 = (trial % 2) ? 1.3 : 0.4;  // isotropic and anisotropic sections
    p.kappa_bar = (trial % 3 == 0) ? Vec2(0, 0) : Vec2(0.7, -1.1);
    p.voronoi_length = L;
    const double h = 1e-6 * L;
    auto E = [&](const Vec11& x) { return bendingEnergy(x, f0, f1, p); };
    auto G = [&](const Vec11& x) { return bendingGradient(x, f0, f1, p); };
    const Vec11 g = bendingGradient(q, f0, f1, p);
    const Mat11 H = bendingHessian(q, f0, f1, p);
    CAPTURE(trial);
    CHECK(relErr(g, fdGradient<11>(q, E, h)) < kTol);
    CHECK(relErr(H, fdJacobian<11>(q, G, h)) < kTol);
    CHECK((H - H.transpose()).norm() <= 1e-12 * H.norm());
    // The value agrees with Eq. 5 evaluated from materialCurvature.
    const Vec2 k = materialCurvature(q, f0, f1);
    const double Eb = 0.5 / L * (p.EI1 * std::pow(k[0] - p.kappa_bar[0], 2) + p.EI2 * std::pow(k[1] - p.kappa_bar[1], 2));
    CHECK(E(q) == doctest::Approx(Eb).epsilon(1e-12));
  }
}

TEST_CASE("der material curvature: planar arc with straight frames") {
  // Two edges in the xy plane turning by φ; directors d1 = z (out of plane), θ = 0:
  // |κb| = 2 tan(φ/2) along z, so κ^(2) = m1·κb = 2 tan(φ/2), κ^(1) = m2·κb = 0.
  const double phi = 0.4;
  Vec11 q = Vec11::Zero();
  q.segment<3>(0) = Vec3(-1, 0, 0);
  q.segment<3>(8) = Vec3(std::cos(phi), std::sin(phi), 0);
  EdgeFrame f0{Vec3::UnitX(), Vec3::UnitZ(), Vec3::UnitX().cross(Vec3::UnitZ())};
  const Vec3 t1(std::cos(phi), std::sin(phi), 0);
  EdgeFrame f1{t1, Vec3::UnitZ(), t1.cross(Vec3::UnitZ())};
  const Vec2 k = materialCurvature(q, f0, f1);
  CHECK(k[1] == doctest::Approx(2 * std::tan(phi / 2)).epsilon(1e-14));
  CHECK(std::abs(k[0]) < 1e-14);
  // θ = π/2 on both edges swaps the roles: m2 = -d1.
  q[3] = q[7] = std::numbers::pi / 2;
  const Vec2 k2 = materialCurvature(q, f0, f1);
  CHECK(k2[0] == doctest::Approx(-2 * std::tan(phi / 2)).epsilon(1e-14));
  CHECK(std::abs(k2[1]) < 1e-14);
}

TEST_CASE("der twisting: gradient and Hessian (incl. reference twist) match finite differences") {
  std::mt19937 rng(23);
  for (int trial = 0; trial < 20; ++trial) {
    const double L = 0.05;
    const Vec11 q = randomStencil(rng, L);
    const double spread = (trial % 4 == 0) ? 0.0 : 0.3;
    const EdgeFrame f0 = nearbyCommittedFrame(q.segment<3>(4) - q.segment<3>(0), spread, rng);
    const EdgeFrame f1 = nearbyCommittedFrame(q.segment<3>(8) - q.segment<3>(4), spread, rng);
    // A committed twist on another branch: the reference twist is unwrapped to within π of it.
    const double raw = referenceTwist(q, f0, f1, 0.0);
    const double committed = raw + 2 * std::numbers::pi * (trial % 3 - 1) + 0.2;
    const double m = referenceTwist(q, f0, f1, committed);
    CHECK(std::abs(m - committed) <= std::numbers::pi);
    CHECK(std::abs(wrapAngle(m - raw)) < 1e-12);
    TwistParams p{0.9, (trial % 2) ? 0.3 : 0.0, L};
    const double h = 1e-6 * L;
    auto M = [&](const Vec11& x) { return referenceTwist(x, f0, f1, committed); };
    Vec11 gm;
    Mat11 Hm;
    referenceTwistDerivatives(q, f0, f1, gm, Hm);
    CAPTURE(trial);
    CHECK(relErr(gm, fdGradient<11>(q, M, h)) < kTol);
    auto GM = [&](const Vec11& x) {
      Vec11 g;
      Mat11 H;
      referenceTwistDerivatives(x, f0, f1, g, H);
      return g;
    };
    CHECK(relErr(Hm, fdJacobian<11>(q, GM, h)) < kTol);

    auto E = [&](const Vec11& x) { return twistingEnergy(x, f0, f1, committed, p); };
    auto G = [&](const Vec11& x) { return twistingGradient(x, f0, f1, committed, p); };
    const Vec11 g = twistingGradient(q, f0, f1, committed, p);
    const Mat11 H = twistingHessian(q, f0, f1, committed, p);
    CHECK(relErr(g, fdGradient<11>(q, E, h)) < kTol);
    CHECK(relErr(H, fdJacobian<11>(q, G, h)) < kTol);
    const double tau = q[7] - q[3] + m;
    CHECK(E(q) == doctest::Approx(0.5 * p.GJ / L * (tau - p.tau_bar) * (tau - p.tau_bar)).epsilon(1e-12));
  }
}

TEST_CASE("der reference twist: holonomy term vanishes at the committed tangents, classic DER gradient") {
  std::mt19937 rng(5);
  const Vec11 q = randomStencil(rng, 1.0);
  const EdgeFrame f0 = nearbyCommittedFrame(q.segment<3>(4) - q.segment<3>(0), 0.0, rng);
  const EdgeFrame f1 = nearbyCommittedFrame(q.segment<3>(8) - q.segment<3>(4), 0.0, rng);
  Vec11 g;
  Mat11 H;
  referenceTwistDerivatives(q, f0, f1, g, H);
  const Vec3 e0 = q.segment<3>(4) - q.segment<3>(0), e1 = q.segment<3>(8) - q.segment<3>(4);
  const Vec3 kb = curvatureBinormal(e0, e1);
  // ∂m/∂e^{i-1} = κb/(2|e^{i-1}|), ∂m/∂e^i = κb/(2|e^i|) (Bergou et al. 2010).
  const Vec3 ge0 = kb / (2 * e0.norm()), ge1 = kb / (2 * e1.norm());
  CHECK((g.segment<3>(0) + ge0).norm() < 1e-14);
  CHECK((g.segment<3>(4) - ge0 + ge1).norm() < 1e-14);
  CHECK((g.segment<3>(8) - ge1).norm() < 1e-14);
}

TEST_CASE("der parallel transport and frames") {
  std::mt19937 rng(3);
  for (int i = 0; i < 10; ++i) {
    const Vec3 a = randomUnit(rng), b = randomUnit(rng);
    const Vec3 v = anyPerpendicular(a);
    const Vec3 w = parallelTransport(v, a, b);
    CHECK(std::abs(w.norm() - 1) < 1e-13);
    CHECK(std::abs(w.dot(b)) < 1e-13);
    CHECK((parallelTransport(a, a, b) - b).norm() < 1e-13);
    // The rotation axis a×b is fixed.
    const Vec3 n = a.cross(b);
    CHECK((parallelTransport(n, a, b) - n).norm() < 1e-13);
    EdgeFrame f{a, v, a.cross(v)};
    Vec3 d1, d2;
    transportFrame(f, b, d1, d2);
    CHECK((d1 - w).norm() < 1e-13);
    CHECK((b.cross(d1) - d2).norm() < 1e-13);
  }
  CHECK(wrapAngle(3 * std::numbers::pi + 0.1) == doctest::Approx(-std::numbers::pi + 0.1));
}
