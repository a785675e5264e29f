// The ipc energy terms against finite differences (the barrier, the mollifier, the point-segment
// distance and |e_a x e_b|^2 are tested with rodsim::geometry, tests/libs/geometry): the pair
// barrier in every distance case (point-point,
// point-edge, edge-edge, nearly parallel with the mollifier active, near d_hat), and the lagged
// friction potential (gradient, Hessian, direction, Coulomb magnitude, parallel edges).
#include "finite_differences.h"
#include "ipc_distance.h"
#include "ipc_friction.h"

#include <doctest/doctest.h>

#include <Eigen/Eigenvalues>

#include <cmath>
#include <string>

using namespace rodsim::ipc;
using rodsim::test::fdGradient;
using rodsim::test::fdJacobian;
using rodsim::test::relErr;

namespace {

// Units of the pair tests: edges of length ~1, R = r_a + r_b = 0.2, d_hat = 0.1.
constexpr double R = 0.2, d_hat = 0.1;

Vec12 pack(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
  Vec12 x;
  x << a, b, c, d;
  return x;
}

PairBarrier evalPair(const Vec12& x, double eps_x, int order) {
  PairBarrier out;
  pairBarrier(x.segment<3>(0), x.segment<3>(3), x.segment<3>(6), x.segment<3>(9), R, d_hat, eps_x, order, out);
  return out;
}

// FD of E -> grad and grad -> Hessian; returns {grad error, Hessian error}.
std::pair<double, double> pairFdErrors(const Vec12& x, double eps_x) {
  const PairBarrier pb = evalPair(x, eps_x, 2);
  const double h = 1e-6;
  const Eigen::VectorXd g_fd = fdGradient([&](const Vec12& y) { return evalPair(y, eps_x, 0).E; }, x, h);
  const Eigen::MatrixXd H_fd =
      fdJacobian([&](const Vec12& y) { return Eigen::VectorXd(evalPair(y, eps_x, 1).grad); }, x, h);
  return {relErr(pb.grad, g_fd), relErr(pb.hess, H_fd)};
}

}  // namespace

TEST_CASE("pair barrier: gradient and Hessian by finite differences in every distance case") {
  const double eps_x = 1e-3;  // parallel_threshold 1e-3 with unit rest lengths
  struct Case {
    const char* name;
    Vec12 x;
    DistanceType type;
    bool mollified;
  };
  // Point-point: the edges leave their closest ends in opposite directions; gap 0.05.
  const Vec3 pp_dir = Vec3(1, 0.4, 0.3).normalized();
  const Vec3 pp_q0 = (R + 0.05) * pp_dir;
  // Point-edge: end p0 hangs 0.25 above the middle of edge b (gap 0.05), edge a goes up and sideways.
  // Edge-edge: crossing edges 0.26 apart (gap 0.06), slightly skew.
  // Nearly parallel: sin^2(angle) ~ 4e-4 < eps_x (m ~ 0.64), crossing in plan view mid-edge, gap ~ 0.04.
  // Near d_hat: crossing, gap 0.099.
  const Case cases[] = {
      {"point-point", pack(Vec3(0, 0, 0), Vec3(-1, 0.2, 0.1), pp_q0, pp_q0 + Vec3(1, 0.3, -0.2)),
       DistanceType::PointPoint, false},
      {"point-edge", pack(Vec3(0.4, 0.02, 0.25), Vec3(0.6, 0.3, 1.2), Vec3(0, 0, 0), Vec3(1, 0.05, 0)),
       DistanceType::PointEdge, false},
      {"edge-edge", pack(Vec3(-0.5, 0.1, 0.26), Vec3(0.5, -0.05, 0.26), Vec3(0.05, -0.5, 0), Vec3(-0.1, 0.5, 0.01)),
       DistanceType::EdgeEdge, false},
      {"nearly parallel", pack(Vec3(0, -0.005, 0.24), Vec3(1, 0.005, 0.24), Vec3(0.3, 0.005, 0), Vec3(1.3, -0.005, 0)),
       DistanceType::EdgeEdge, true},
      {"near d_hat", pack(Vec3(-0.5, 0.1, R + 0.099), Vec3(0.5, -0.05, R + 0.099), Vec3(0.05, -0.5, 0), Vec3(-0.1, 0.5, 0)),
       DistanceType::EdgeEdge, false},
  };
  for (const Case& c : cases) {
    const std::string name = c.name;
    CAPTURE(name);
    const PairBarrier pb = evalPair(c.x, eps_x, 2);
    CHECK(pb.active);
    CHECK(pb.gap > 0);
    CHECK(pb.gap < d_hat);
    CHECK(static_cast<int>(pb.type) == static_cast<int>(c.type));
    if (c.mollified) {
      CHECK(pb.mollifier > 0.05);
      CHECK(pb.mollifier < 0.95);
    } else {
      CHECK(pb.mollifier == 1);
    }
    const auto [eg, eh] = pairFdErrors(c.x, eps_x);
    MESSAGE(std::string(c.name), ": gap ", pb.gap, ", m ", pb.mollifier, ", FD errors grad ", eg, " Hessian ", eh);
    // central differences with h = 1e-6 on derivatives varying over ~gap = 0.05: O(h^2/gap^2) ~ 1e-9
    CHECK(eg < 1e-6);
    CHECK(eh < 1e-5);
    CHECK((pb.hess - pb.hess.transpose()).norm() < 1e-10 * pb.hess.norm());
  }
}

TEST_CASE("nearly parallel edges: the mollified energy is continuous through exact parallelism") {
  // Edge a rotates about its middle in the plane of the two edges through the parallel position:
  // the unmollified distance has a |theta| kink there; the blend must not jump.
  const double eps_x = 1e-3;
  auto E = [&](double theta) {
    const Vec3 mid(0.5, 0, R + 0.03), half(0.5 * std::cos(theta), 0, 0.5 * std::sin(theta));
    return evalPair(pack(mid - half, mid + half, Vec3(0, 0, 0), Vec3(1, 0, 0)), eps_x, 1);
  };
  const double e0 = E(0).E;
  CHECK(e0 > 0);
  for (double th : {1e-6, 1e-5, 1e-4}) {
    CHECK(std::abs(E(th).E - e0) < 1e-2 * e0 * th / 1e-4 + 1e-12);
    CHECK(std::abs(E(-th).E - E(th).E) < 1e-6 * e0);  // symmetric: no first-order kink
  }
  // and a parallel pair repels: the force pushes edge a up
  CHECK(E(0).grad[2] + E(0).grad[5] < 0);
}

TEST_CASE("friction potential: gradient and Hessian by finite differences, sticking and sliding") {
  const double eps_u = 1e-3, mu_lambda = 0.7;
  const Vec3 n = Vec3(0.1, -0.2, 1).normalized();
  const double w[4] = {0.6, 0.4, -0.3, -0.7};
  for (double slip : {0.2 * eps_u, 0.9 * eps_u, 5 * eps_u}) {
    CAPTURE(slip);
    Vec12 dx;
    dx << slip * Vec3(1, 0.3, 0.2), slip * Vec3(0.8, 0.5, -0.1), Vec3(-0.1, 0.2, 0.3) * slip, Vec3(0, -0.3, 0) * slip;
    NodeFriction<4> out;
    frictionPotential<4>(w, dx, n, mu_lambda, eps_u, 2, out);
    auto D = [&](const Vec12& y) {
      NodeFriction<4> o;
      frictionPotential<4>(w, y, n, mu_lambda, eps_u, 0, o);
      return o.D;
    };
    auto G = [&](const Vec12& y) {
      NodeFriction<4> o;
      frictionPotential<4>(w, y, n, mu_lambda, eps_u, 1, o);
      return Eigen::VectorXd(o.grad);
    };
    const double h = 1e-4 * eps_u;
    CHECK(relErr(out.grad, fdGradient(D, dx, h)) < 1e-6);
    CHECK(relErr(out.hess, fdJacobian(G, dx, h)) < 1e-6);
    // PSD (IPC's smoothing needs no projection)
    Eigen::SelfAdjointEigenSolver<Mat12> es(out.hess);
    CHECK(es.eigenvalues().minCoeff() > -1e-9 * es.eigenvalues().maxCoeff());
  }
}

TEST_CASE("friction opposes the slip with magnitude mu lambda once sliding well beyond eps_u") {
  const double eps_u = 1e-4, mu = 0.4, lambda = 2.5;
  const Vec3 n(0, 0, 1);
  const double s = 0.3, t = 0.6;
  const double w[4] = {1 - s, s, -(1 - t), -t};
  // edge a slides by 100 eps_u along (1, 2, 0) (plus a normal component that friction ignores)
  const Vec3 slip = 100 * eps_u * Vec3(1, 2, 0).normalized();
  Vec12 dx;
  dx << slip + Vec3(0, 0, 0.3 * eps_u), slip, Vec3::Zero(), Vec3::Zero();
  NodeFriction<4> out;
  frictionPotential<4>(w, dx, n, mu * lambda, eps_u, 1, out);
  const Vec3 force_a = -(out.grad.segment<3>(0) + out.grad.segment<3>(3));
  const Vec3 force_b = -(out.grad.segment<3>(6) + out.grad.segment<3>(9));
  CHECK(force_a.norm() == doctest::Approx(mu * lambda).epsilon(1e-12));
  CHECK(force_a.normalized().dot(slip.normalized()) == doctest::Approx(-1).epsilon(1e-12));
  CHECK((force_a + force_b).norm() < 1e-12);  // action = reaction
  // below eps_u the force is f1(y) mu lambda < mu lambda, linear for small slips (sticking spring)
  dx *= 1e-3;  // slip 0.1 eps_u
  frictionPotential<4>(w, dx, n, mu * lambda, eps_u, 1, out);
  const double y = 0.1 * eps_u;
  CHECK((out.grad.segment<3>(0) + out.grad.segment<3>(3)).norm() ==
        doctest::Approx(mu * lambda * (2 * y / eps_u - y * y / (eps_u * eps_u))).epsilon(1e-9));
}

TEST_CASE("lagged contact point of parallel edges: middle of the overlap, normal across, friction kept") {
  // edge a from x = 0 to 1 at z = 0.25; edge b from x = 0.4 to 1.6 at z = 0: overlap [0.4, 1]
  const FrictionLag lag = lagEdgeEdge(Vec3(0, 0, 0.25), Vec3(1, 0, 0.25), Vec3(0.4, 0, 0), Vec3(1.6, 0, 0));
  CHECK(lag.s == doctest::Approx(0.7));
  CHECK(lag.t == doctest::Approx(0.25));  // x = 0.7 on edge b
  CHECK(lag.n.isApprox(Vec3(0, 0, 1)));
  // sliding along the edges gives the full Coulomb force
  const double w[4] = {1 - lag.s, lag.s, -(1 - lag.t), -lag.t};
  Vec12 dx = Vec12::Zero();
  dx.segment<3>(0) = dx.segment<3>(3) = Vec3(0.01, 0, 0);
  NodeFriction<4> out;
  frictionPotential<4>(w, dx, lag.n, 1.0, 1e-4, 1, out);
  CHECK((out.grad.segment<3>(0) + out.grad.segment<3>(3)).isApprox(Vec3(1, 0, 0), 1e-12));
  // reversed edge b and non-overlapping parallel edges: well defined
  const FrictionLag rev = lagEdgeEdge(Vec3(0, 0, 0.25), Vec3(1, 0, 0.25), Vec3(1.6, 0, 0), Vec3(0.4, 0, 0));
  CHECK(rev.s == doctest::Approx(0.7));
  CHECK(rev.t == doctest::Approx(0.75));
  const FrictionLag apart = lagEdgeEdge(Vec3(0, 0, 0.25), Vec3(1, 0, 0.25), Vec3(2, 0, 0), Vec3(3, 0, 0));
  CHECK(apart.s == 1);
  CHECK(apart.t == 0);
  CHECK(std::isfinite(apart.n.norm()));
}
