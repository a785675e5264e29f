// Alart-Curnier solver: the generalized Jacobian against finite differences, single contacts with
// closed-form solutions (take-off, stick, slip), the small Siconos/FCLIB problems to 1e-8, and the
// contact model's parameter errors.
#include "ac_contact.h"
#include "ac_solver.h"
#include <rodsim/testing/fake_world.h>

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <random>

using namespace rodsim::ac;

namespace {

SpMat sparse(const Eigen::MatrixXd& D) { return D.sparseView(); }

// Central differences of the AC function of one contact, column by column.
void fdJacobian(const Vec3& u, const Vec3& r, double mu, double rn, double rt, Mat3& Fu, Mat3& Fr) {
  const double h = 1e-7;
  for (int j = 0; j < 3; ++j) {
    Vec3 e = Vec3::Zero();
    e[j] = h;
    Fu.col(j) = (alartCurnier(u + e, r, mu, rn, rt) - alartCurnier(u - e, r, mu, rn, rt)) / (2 * h);
    Fr.col(j) = (alartCurnier(u, r + e, mu, rn, rt) - alartCurnier(u, r - e, mu, rn, rt)) / (2 * h);
  }
}

}  // namespace

TEST_CASE("generalized Jacobian equals finite differences away from the nondifferentiable set") {
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> U(-1, 1);
  int pieces[4] = {0, 0, 0, 0};  // normal-active, stick-ball, slip-ball, delta <= 0
  for (int k = 0; k < 400; ++k) {
    const Vec3 u(U(gen), U(gen), U(gen)), r(U(gen), U(gen), U(gen));
    const double mu = 0.1 + std::abs(U(gen)), rn = 0.5 + std::abs(U(gen)), rt = 0.5 + std::abs(U(gen));
    // Skip points within 1e-4 of a kink (where one-sided pieces differ).
    const double zn = r[0] - rn * u[0], delta = mu * r[0];
    const double ny = (r.tail<2>() - rt * u.tail<2>()).norm();
    if (std::abs(zn) < 1e-4 || std::abs(delta) < 1e-4 || std::abs(ny - delta) < 1e-4) continue;
    pieces[0] += zn > 0;
    pieces[delta <= 0 ? 3 : (ny <= delta ? 1 : 2)]++;
    Mat3 Fu, Fr, Gu, Gr;
    alartCurnier(u, r, mu, rn, rt, &Fu, &Fr);
    fdJacobian(u, r, mu, rn, rt, Gu, Gr);
    CHECK((Fu - Gu).norm() < 1e-6);
    CHECK((Fr - Gr).norm() < 1e-6);
  }
  CHECK(pieces[0] > 10);
  CHECK(pieces[1] > 10);
  CHECK(pieces[2] > 10);
  CHECK(pieces[3] > 10);
}

TEST_CASE("AC function vanishes exactly on the three cases of Coulomb's law") {
  const double mu = 0.4;
  CHECK(alartCurnier(Vec3(0.3, 1, -2), Vec3::Zero(), mu, 1, 1).norm() == 0);         // take-off
  CHECK(alartCurnier(Vec3::Zero(), Vec3(1, 0.2, -0.1), mu, 1, 1).norm() < 1e-15);     // stick
  const Vec3 uslip(0, 3, 4), rslip(2, -0.8 * 0.6, -0.8 * 0.8);                        // slip, |r_T| = mu r_N
  CHECK(alartCurnier(uslip, rslip, mu, 1, 1).norm() < 1e-15);
  CHECK(naturalMap(uslip, rslip, mu).norm() < 1e-15);
  CHECK(alartCurnier(Vec3(0, 1, 0), Vec3(1, 0.2, 0), mu, 1, 1).norm() > 0.1);         // slipping inside the cone
}

TEST_CASE("single contact with W = diag(2, 1, 1): take-off, stick and slip closed forms") {
  Eigen::Matrix3d D = Eigen::Vector3d(2, 1, 1).asDiagonal();
  const double mu = 0.5;
  Solver s;
  Vec muv = Vec::Constant(1, mu);
  SUBCASE("take-off: q_N > 0 gives r = 0, u = q") {
    s.setProblem(sparse(D), Vec3(0.1, 0.3, -0.2), muv);
    Vec r = Vec3(1, 1, 1);
    const Result res = s.solve(r);
    REQUIRE(res.converged);
    CHECK(r.norm() < 1e-12);
  }
  SUBCASE("stick: |q_T| <= mu |q_N| W_T/W_N gives u = 0, r = -W^-1 q") {
    s.setProblem(sparse(D), Vec3(-1, 0.1, 0.15), muv);
    Vec r = Vec::Zero(3);
    const Result res = s.solve(r);
    REQUIRE(res.converged);
    CHECK((r - Vec3(0.5, -0.1, -0.15)).norm() < 1e-12);
    CHECK(s.velocity().norm() < 1e-12);
    CHECK(res.iterations <= 3);
  }
  SUBCASE("slip: r_N = -q_N/W_N, r_T = -mu r_N q_T/|q_T|, u_T parallel to q_T") {
    const Vec3 q(-1, 0.6, 0.8);  // r_N = 0.5, mu r_N = 0.25 < |q_T| = 1
    s.setProblem(sparse(D), q, muv);
    Vec r = Vec::Zero(3);
    const Result res = s.solve(r);
    REQUIRE(res.converged);
    CHECK(r[0] == doctest::Approx(0.5).epsilon(1e-12));
    CHECK((r.tail<2>() - Eigen::Vector2d(-0.25 * 0.6, -0.25 * 0.8)).norm() < 1e-12);
    CHECK(std::abs(s.velocity()[0]) < 1e-12);
    CHECK((s.velocity().tail<2>() - 0.75 * q.tail<2>()).norm() < 1e-12);
  }
}

TEST_CASE("two coupled contacts converge from zero and warm start converges in one iteration") {
  Eigen::MatrixXd W(6, 6);
  W.setIdentity();
  W(0, 3) = W(3, 0) = 0.3;
  W(1, 4) = W(4, 1) = -0.2;
  Vec q(6);
  q << -1, 0.5, 0.1, -0.5, -0.4, 0.3;
  Solver s;
  s.setProblem(sparse(W), q, Vec::Constant(2, 0.3));
  Vec r = Vec::Zero(6);
  Result res = s.solve(r);
  REQUIRE(res.converged);
  CHECK(res.residual.rel < 1e-8);
  res = s.solve(r);
  CHECK(res.converged);
  CHECK(res.iterations == 0);
}

TEST_CASE("a stop request ends a solve before its next iteration, without rho retries or proximal loops") {
  // The two coupled contacts above take a few Newton iterations from r = 0 (the implicit step's
  // contact solve, where one iteration of a 10,000-contact mat is a factorization of seconds).
  Eigen::MatrixXd W(6, 6);
  W.setIdentity();
  W(0, 3) = W(3, 0) = 0.3;
  W(1, 4) = W(4, 1) = -0.2;
  Vec q(6);
  q << -1, 0.5, 0.1, -0.5, -0.4, 0.3;
  Solver plain;
  plain.setProblem(sparse(W), q, Vec::Constant(2, 0.3));
  Vec r = Vec::Zero(6);
  const Result full = plain.solve(r);
  REQUIRE(full.converged);
  REQUIRE(full.iterations >= 2);
  for (int allowed : {0, 1}) {
    int asked = 0;
    Options opt;
    opt.stop = [&] { return asked++ >= allowed; };  // stop once `allowed` iterations have run
    Solver s(opt);
    s.setProblem(sparse(W), q, Vec::Constant(2, 0.3));
    Vec rs = Vec::Zero(6);
    const Result res = s.solve(rs);
    INFO("allowed ", allowed, ": ", res.message);
    CHECK_FALSE(res.converged);
    CHECK(res.stopped);
    CHECK(res.iterations == allowed);
    CHECK(res.prox_iterations == 0);
    CHECK(asked == allowed + 1);  // asked once per iteration, then never again (no retry)
    CHECK(res.message.find("stopped on request") != std::string::npos);
    CHECK(rs.allFinite());
  }
}

// Coulomb's law at (u, r) of one contact, to tol (in units of r and of u): r in the cone,
// Signorini (u_N >= 0, r_N u_N = 0), stick (u_T = 0) where |r_T| < mu r_N, and slip opposite to the
// velocity (r_T = -mu r_N u_T / |u_T|) otherwise (Bertails-Descoubes et al. 2011, Eqs. 1-2).
void checkCoulomb(const Vec3& u, const Vec3& r, double mu, double tol_r, double tol_u) {
  CHECK(r[0] >= -tol_r);
  CHECK(r.tail<2>().norm() <= mu * r[0] + tol_r);
  CHECK(u[0] >= -tol_u);
  CHECK(std::min(std::abs(r[0]) / tol_r, std::abs(u[0]) / tol_u) <= 1);
  if (u.tail<2>().norm() > tol_u) {
    CHECK((r.tail<2>() + mu * r[0] * u.tail<2>().normalized()).norm() <= tol_r);
  }
}

// The velocity-level step's single contact (README, "Explicit solvers"): W = H M^-1 H^T of a rope edge
// crossing a clamped-end bar edge (weights (1-s, s) on the rope's nodes, -(1-t, -t) on the bar's, an
// isotropic lumped mass per node), at the first impact (u_N = -0.44 m/s) and at the degenerate points
// of the Alart-Curnier function (Bertails-Descoubes et al. 2011, Eqs. 4a-4b, Appendix B): zero
// tangential velocity (y = r_T at the solution, the ball's centre), the stick/slip boundary
// (|y| = mu r_N exactly), and starts with r_N = 0 (the ball of radius 0) or outside the cone. The
// exact Coulomb answer from every start.
TEST_CASE("velocity-level single contact at zero tangential velocity and on the stick/slip boundary") {
  const double m_rope = 1.57e-5, m_bar = 2.8e-4, s = 0.3, t = 0.6, mu = 0.3;
  const double w = (s * s + (1 - s) * (1 - s)) / m_rope + t * t / m_bar;  // the bar's node 0 clamped
  const Eigen::Matrix3d W = w * Eigen::Matrix3d::Identity();
  const double qn = -0.44;
  const Vec muv = Vec::Constant(1, mu);
  const Vec3 r_impact(-qn / w, 0, 0);
  const double r_scale = r_impact[0];
  const std::vector<Vec3> starts = {Vec3::Zero(), Vec3(0, r_scale, 0), r_impact, Vec3(r_scale, 0.3 * r_scale, 0),
                                    Vec3(r_scale, -mu * r_scale, 0), Vec3(2 * r_scale, 0, 3 * r_scale),
                                    Vec3(-r_scale, 0.5 * r_scale, 0.5 * r_scale)};
  Solver solver;
  for (const double tangential : {0.0, 1.0, 1.0 + 1e-12, 1.0 - 1e-12, 1.5}) {
    // q_T along (0.6, 0.8) with |q_T| = tangential x mu |q_N|: 1 is the stick/slip boundary (the
    // sticking impulse has |r_T| = mu r_N exactly), beyond it the contact slips.
    const Vec3 q(qn, 0.6 * tangential * mu * -qn, 0.8 * tangential * mu * -qn);
    CAPTURE(tangential);
    solver.setProblem(sparse(W), q, muv);
    for (const Vec3& start : starts) {
      CAPTURE(start.transpose());
      Vec r = start;
      const Result res = solver.solve(r);
      REQUIRE(res.converged);
      CHECK(res.prox_iterations == 0);
      CHECK(res.iterations <= 4);
      const Vec3 u = solver.velocityAt(r);
      checkCoulomb(u, r, mu, 1e-12 * r_scale, 1e-12 * std::abs(qn));
      CHECK(r[0] == doctest::Approx(r_impact[0]).epsilon(1e-12));  // u_N = 0: r_N = -q_N / w
      if (tangential <= 1) {  // stick: r = -W^-1 q, u = 0
        CHECK((r - Vec3(-q / w)).norm() <= 1e-12 * r_scale);
        CHECK(u.norm() <= 1e-12 * std::abs(qn));
      } else {  // slip: |r_T| = mu r_N against q_T, u_T = q_T + w r_T along q_T
        CHECK((r.tail<2>() + mu * r[0] * Eigen::Vector2d(0.6, 0.8)).norm() <= 1e-12 * r_scale);
        CHECK((u.tail<2>() - (tangential - 1) * mu * -qn * Eigen::Vector2d(0.6, 0.8)).norm() <= 1e-12 * std::abs(qn));
      }
    }
  }
}

// A rope edge landing on a bar edge while its end node lands on the floor in the same step (the
// simultaneous impact of tests/validation/contact_alart_curnier/test_rope_over_bar.cpp): two contacts
// coupled through the rope's shared node, normals 30 degrees apart, no tangential velocity before the
// impact; from zero and from the last step's impulses turned by the frame change (a warm start on the
// wrong side of the cone).
TEST_CASE("velocity-level simultaneous impacts sharing a node: exact Coulomb from zero and stale warm starts") {
  const double m_rope = 1.57e-5, m_bar = 2.8e-4, s = 0.4, t = 0.5, mu = 0.3;
  // Nodes: rope 0, 1 (DOFs 0-5), bar 0, 1 (6-11); contact 0: rope edge (0, 1) on bar edge (0, 1);
  // contact 1: rope node 1 on the floor.
  Eigen::MatrixXd H = Eigen::MatrixXd::Zero(6, 12);
  Eigen::Matrix3d F0, F1;
  const Vec3 n0 = Vec3(0, std::sin(0.5236), std::cos(0.5236)), n1 = Vec3::UnitZ();
  F0.row(0) = n0;
  F0.row(1) = n0.unitOrthogonal();
  F0.row(2) = n0.cross(n0.unitOrthogonal());
  F1.row(0) = n1;
  F1.row(1) = n1.unitOrthogonal();
  F1.row(2) = n1.cross(n1.unitOrthogonal());
  H.block<3, 3>(0, 0) = (1 - s) * F0;
  H.block<3, 3>(0, 3) = s * F0;
  H.block<3, 3>(0, 6) = -(1 - t) * F0;
  H.block<3, 3>(0, 9) = -t * F0;
  H.block<3, 3>(3, 3) = F1;
  Vec minv(12);
  minv << Vec3::Constant(1 / m_rope), Vec3::Constant(1 / m_rope), Vec3::Constant(1 / m_bar), Vec3::Constant(1 / m_bar);
  const Eigen::MatrixXd W = H * minv.asDiagonal() * H.transpose();
  Vec vfree = Vec::Zero(12);
  vfree[2] = vfree[5] = -0.44;  // the rope falls, the bar is at rest
  const Vec q = H * vfree;
  const Vec muv = Vec::Constant(2, mu);
  Solver solver;
  solver.setProblem(sparse(W), q, muv);
  const double r_scale = 0.44 * m_rope;
  Vec stale(6);
  stale << r_scale, -r_scale * mu, 0, r_scale, 0, r_scale * mu;
  for (const Vec& start : {Vec(Vec::Zero(6)), stale, Vec(-stale)}) {
    Vec r = start;
    Result res = solver.solve(r);
    REQUIRE(res.converged);
    CHECK(res.prox_iterations == 0);
    // The solver's default tolerance (1e-8 on the relative natural map, scaled by |q| = 0.44 m/s)
    // stops the stale start after 2 iterations with contact 0 outside its cone by 1.2e-4 of its
    // impulse; polishContacts brings every contact onto Coulomb's law in its own units.
    CHECK(solver.polishContacts(r, res, 1e-12) <= 1e-12);
    const Vec u = solver.velocityAt(r);
    for (int i = 0; i < 2; ++i) checkCoulomb(u.segment<3>(3 * i), r.segment<3>(3 * i), mu, 1e-12 * r_scale, 1e-12 * 0.44);
    CHECK(r[0] > 0);
    CHECK(r[3] > 0);
    MESSAGE("start |r0| = " << start.norm() << ": " << res.iterations << " iterations, r = " << r.transpose()
                            << ", u = " << u.transpose());
  }
}

// The case measured in the velocity-level step on rope_over_bar.toml (DER, dt = 9.1e-6 s): a rope
// node sliding on the floor at 0.27 m/s starts to leave it (u_N = 5.6e-6 m/s without impulse) with
// last step's impulse as warm start (r_N = 1.9e-11 N s, sliding friction). The relative natural map
// is 7.5e-11 < 1e-10 there (abs 2e-11 N s against |u| = 0.27 m/s) and the solve returns it at
// iteration 0: a normal impulse on a separating contact. Coulomb: r = 0, u = q.
TEST_CASE("a warm start the relative residual accepts on a separating contact is polished to r = 0") {
  const double m = 1.57e-5, mu = 0.3;
  const Vec3 q(5.58e-6 - 1.93e-11 / m, -0.2681 - 0.3 * 1.93e-11 / m, 5.3e-7);  // u = W r_warm + q as measured
  const Vec3 r_warm(1.93e-11, 0.3 * 1.93e-11, 0);
  Solver solver;
  solver.options().tolerance = 1e-10;
  solver.setProblem(sparse(Eigen::Matrix3d::Identity() / m), q, Vec::Constant(1, mu));
  Vec r = r_warm;
  Result res = solver.solve(r);
  REQUIRE(res.converged);
  CHECK(res.iterations == 0);  // accepted as it came in
  CHECK(coulombError(solver.velocityAt(r), r, mu, m) > 1e-6);
  CHECK(solver.polishContacts(r, res, 1e-10) < 1e-15);
  CHECK(r.norm() < 1e-15 * r_warm.norm());  // take-off: no impulse (to round-off)
  CHECK((solver.velocityAt(r) - q).norm() < 1e-15 * q.norm());
  CHECK(res.iterations == 1);
}

TEST_CASE("Siconos and FCLIB problems: natural-map residual below 1e-8") {
  const std::string dir = std::string(RODSIM_SOURCE_DIR) + "/../shared/fclib/";
  for (const char* name : {"FrictionContact3D_1c.dat", "FC3D_Example1.dat", "Confeti-ex13-4contact-Fc3D-SBM.dat",
                           "Rover4396.dat", "NESpheres_10_1.dat", "FrictionContactProblem00394.dat",
                           "OneObject-i1028-138.hdf5.dat", "BoxesStack1-i100000-32.hdf5.dat", "GFC3D_TwoRods1.dat"}) {
    const std::string path = dir + name;
    if (!std::filesystem::exists(path)) {
      MESSAGE("skipped (not found): " << path);
      continue;
    }
    const bool global = std::string(name).rfind("GFC3D", 0) == 0;
    Problem p = readSiconosDat(path, global);
    reduceGlobal(p);
    Solver s;
    s.setProblem(p.W, p.q, p.mu);
    Vec r = Vec::Zero(3 * p.contacts);
    const Result res = s.solve(r);
    MESSAGE(std::string(name) << ": " << res.iterations << " iterations (" << res.prox_iterations << " proximal), rel "
                 << res.residual.rel << ", abs " << res.residual.abs);
    CHECK(res.converged);
    CHECK(res.residual.rel <= 1e-8);
    // Independent check: every r_i in the cone, u_N >= -tol, and complementarity.
    const Vec u = p.W * r + p.q;
    const double scale = std::max({p.q.norm(), u.norm(), r.norm()});
    for (int i = 0; i < p.contacts; ++i) {
      CHECK(r.segment<2>(3 * i + 1).norm() <= p.mu[i] * r[3 * i] + 1e-7 * scale);
      CHECK(u[3 * i] >= -1e-7 * scale);
      CHECK(std::abs(r[3 * i] * u[3 * i]) <= 1e-7 * scale * scale);
    }
  }
}

TEST_CASE("alart-curnier contact: parameter errors name the key") {
  using rodsim::testing::makeParams;
  const auto schema = AlartCurnierContact::schema();
  CHECK(schema.find("friction")->min == 0.0);
  rodsim::testing::FakeWorld w;
  rodsim::testing::SpringChain::Options o;
  o.points = rodsim::testing::line(3, Vec3(0, 0, 0), Vec3(1, 0, 0));
  w.addRod<rodsim::testing::SpringChain>("beam", o);
  w.addContact<AlartCurnierContact>(
      makeParams(schema, {{"rods", std::vector<std::string>{"bean"}}}, "c"));
  try {
    w.finalize();
    FAIL("expected a ParamError");
  } catch (const rodsim::ParamError& e) {
    CHECK(e.key() == "rods");
    CHECK(std::string(e.what()).find("'beam'") != std::string::npos);
  }
}

TEST_CASE("projectCone and naturalMap with mu = 0 and no tangential part (frictionless, separating)") {
  using namespace rodsim::ac;
  // z = r - u = (-0.99, 0, 0) lies in the polar cone: the projection is 0 (was z: 0 <= mu zn = -0.0).
  CHECK(projectCone(Vec3(-0.99, 0, 0), 0.0).norm() == 0.0);
  CHECK(projectCone(Vec3(0.5, 0, 0), 0.0).isApprox(Vec3(0.5, 0, 0)));
  CHECK(naturalMap(Vec3(0.99, 0, 0), Vec3::Zero(), 0.0).norm() == 0.0);
  CHECK(naturalMap(Vec3(0.99, 0, 0), Vec3::Zero(), 0.3).norm() == 0.0);
}

namespace {

// The linearized implicit-Euler system at q = q_n for a FakeWorld of spring chains under gravity
// (A = M/dt^2 + K, b = -R = M v_n/dt + F), with the DOFs in `fixed` held (identity rows).
struct LinearSystemFixture {
  rodsim::testing::FakeWorld w;
  std::vector<char> fixed;
  Eigen::SparseMatrix<double> A;
  Vec b, q0, v0;
  rodsim::EvalContext ctx;
  double dt = 1e-3;

  void build() {
    using namespace rodsim::testing;
    w.finalize();
    const int N = w.numDofs();
    if (fixed.empty()) fixed.assign(N, 0);
    q0 = w.q();
    v0 = w.v();
    rodsim::StiffnessSink K;
    ctx.t = dt;
    ctx.dt = dt;
    ctx.q = &q0;
    ctx.q_start = &q0;
    ctx.v_start = &v0;
    Vec F = Vec::Zero(N);
    w.evaluate(ctx, F, &K);
    for (int i = 2; i < N; i += 3) F[i] -= 9.81 * w.mass()[i];
    std::vector<Eigen::Triplet<double>> t;
    for (const auto& e : K.entries())
      if (!fixed[e.row()] && !fixed[e.col()]) t.push_back(e);
    for (int i = 0; i < N; ++i) t.emplace_back(i, i, fixed[i] ? 1.0 : w.mass()[i] / (dt * dt));
    A.resize(N, N);
    A.setFromTriplets(t.begin(), t.end());
    b = w.mass().cwiseProduct(v0) / dt + F;
    for (int i = 0; i < N; ++i)
      if (fixed[i]) b[i] = 0;
  }

  // One contact solve of the step (beginStep, then solveLinearized on this system) into dq.
  bool solve(rodsim::Contact& c, Vec& dq) {
    c.beginStep(ctx);
    rodsim::LinearizedSystem sys;
    sys.A = &A;
    sys.b = &b;
    sys.fixed = &fixed;
    sys.ctx = &ctx;
    dq = Vec::Zero(w.numDofs());
    return c.as<rodsim::LinearizedImpulseContact>()->solveLinearized(sys, dq);
  }
};

rodsim::testing::SpringChain::Options chain(const Vec3& a, const Vec3& c, const Vec3& v) {
  rodsim::testing::SpringChain::Options o;
  o.points = rodsim::testing::line(3, a, c);
  o.initial_velocity = v;
  o.radius = 1e-3;
  return o;
}

// The partition tests' rods: the held A1 crossed by B1 at the origin; `off` away, A2 crossed by B2,
// and C2 (velocity c2_velocity) across B2 at another point; crossings at height z1 (B) and 2 z1 (C).
template <class World>
void addTwoCrossingPairs(World& w, double z1, double off, const Vec3& c2_velocity) {
  using rodsim::testing::SpringChain;
  w.template addRod<SpringChain>("A1", chain(Vec3(-0.02, 0.001, 0), Vec3(0.02, 0.001, 0), Vec3::Zero()));
  w.template addRod<SpringChain>("B1", chain(Vec3(0.003, -0.02, z1), Vec3(0.003, 0.02, z1), Vec3(0.05, 0, -0.1)));
  w.template addRod<SpringChain>("A2", chain(Vec3(off - 0.02, 0.001, 0), Vec3(off + 0.02, 0.001, 0), Vec3::Zero()));
  w.template addRod<SpringChain>("B2", chain(Vec3(off + 0.003, -0.02, z1), Vec3(off + 0.003, 0.02, z1), Vec3(0.05, 0, -0.1)));
  w.template addRod<SpringChain>("C2", chain(Vec3(off - 0.02, -0.012, 2 * z1), Vec3(off + 0.02, -0.012, 2 * z1), c2_velocity));
}

}  // namespace

TEST_CASE("partition (Sec. 4.5, Fig. 5): two separated crossings give 2 groups, impulses of the joint solve") {
  using namespace rodsim::testing;
  // Pair 1 at the origin: a held rod A1 along x and B1 along y on top of it, 0.1 mm into it,
  // moving down and sliding along x. Pair 2, 1 m away: A2 (free) crossed by B2, and C2 across B2
  // at another point: contacts A2-B2 and B2-C2 are coupled through B2 (one group of 2).
  const double z1 = 0.0019, off = 1.0;  // 2 r = 0.002: gap -1e-4 m at every crossing
  Vec dq_joint, r_joint;
  int groups_joint = 0;
  for (bool partition : {false, true}) {
    LinearSystemFixture f;
    addTwoCrossingPairs(f.w, z1, off, Vec3(0, 0.03, -0.05));
    auto& c = f.w.addContact<AlartCurnierContact>(makeParams(
        AlartCurnierContact::schema(), {{"friction", 0.3}, {"partition", partition}, {"tolerance", 1e-12}}, "ac"));
    f.fixed.assign(5 * 9, 0);
    for (int i = 0; i < 9; ++i) f.fixed[i] = 1;  // A1 held
    f.build();
    Vec dq;
    REQUIRE(f.solve(c, dq));
    REQUIRE(c.contacts().size() == 3);
    CHECK(c.numComponents() == 4);  // B1, A2, B2, C2 (A1 is held)
    const Vec& r = c.impulses();
    // Every contact pushes (r_N > 0: the rods are 0.1 mm into each other and approaching) and
    // the sliding ones are on the friction cone.
    for (int i = 0; i < 3; ++i) CHECK(r[3 * i] > 0);
    if (!partition) {
      CHECK(c.groups().size() == 1);
      dq_joint = dq;
      r_joint = r;
      groups_joint = static_cast<int>(c.groups().size());
      continue;
    }
    REQUIRE(c.groups().size() == 2);
    std::vector<std::size_t> sizes{c.groups()[0].contacts.size(), c.groups()[1].contacts.size()};
    std::sort(sizes.begin(), sizes.end());
    CHECK(sizes == std::vector<std::size_t>{1, 2});
    for (const auto& g : c.groups()) {
      // nu_g = 3 n_g / m_g: B1 alone (9 DOFs) with 1 contact; A2 + B2 + C2 (27 DOFs) with 2.
      CHECK(g.nu == doctest::Approx(g.contacts.size() == 1 ? 3.0 / 9 : 6.0 / 27));
      CHECK(g.result.converged);
    }
    // W is block diagonal over the groups, so the joint solution is the union of the group
    // solutions: the same impulses up to the solver tolerance (1e-12 relative natural map,
    // then polished to round-off).
    const double scale = r_joint.norm();
    MESSAGE("|r_partition - r_joint| = " << (r - r_joint).norm() << " (|r| = " << scale << " N s), groups "
                                         << groups_joint << " -> " << c.groups().size());
    CHECK((r - r_joint).norm() <= 1e-10 * scale);
    CHECK((dq - dq_joint).norm() <= 1e-10 * dq_joint.norm());
  }
}

// The velocity-level step groups contacts through the same partitionIntoGroups (one union-find)
// with the nodes as units: the two crossings of B2 share its middle node (one group of 2), B1 on
// the held A1 is alone; W = H M^-1 H^T is block diagonal over the groups, so the impulses are those
// of the joint solve.
TEST_CASE("velocity-level partition: contacts sharing a node form a group, impulses of the joint solve") {
  using namespace rodsim::testing;
  const double z1 = 0.0019, off = 1.0;
  Vec dv_joint, r_joint;
  for (bool partition : {false, true}) {
    LinearSystemFixture f;
    addTwoCrossingPairs(f.w, z1, off, Vec3(0, 0.03, -0.2));  // C2 onto B2 (falling at 0.1 m/s)
    auto& c = f.w.addContact<AlartCurnierContact>(makeParams(
        AlartCurnierContact::schema(), {{"friction", 0.3}, {"partition", partition}, {"tolerance", 1e-12}}, "ac"));
    f.fixed.assign(5 * 9, 0);
    for (int i = 0; i < 9; ++i) f.fixed[i] = 1;  // A1 held
    f.build();
    c.beginStep(f.ctx);
    const Vec mass = f.w.mass();
    rodsim::VelocityContactProblem pb;
    pb.q = &f.q0;
    pb.v_free = &f.v0;
    pb.mass = &mass;
    pb.fixed = &f.fixed;
    pb.dt = f.dt;
    pb.drift = 0.5 * f.dt;
    Vec dv;
    REQUIRE(c.as<rodsim::VelocityImpulseContact>()->solveVelocity(pb, dv));
    REQUIRE(c.contacts().size() == 3);
    const Vec& r = c.impulses();
    for (int i = 0; i < 3; ++i) CHECK(r[3 * i] > 0);  // closed and approaching: every contact pushes
    if (!partition) {
      CHECK(c.groups().size() == 1);
      dv_joint = dv;
      r_joint = r;
      continue;
    }
    REQUIRE(c.groups().size() == 2);
    std::vector<std::size_t> sizes{c.groups()[0].contacts.size(), c.groups()[1].contacts.size()};
    std::sort(sizes.begin(), sizes.end());
    CHECK(sizes == std::vector<std::size_t>{1, 2});
    for (const auto& g : c.groups()) CHECK(g.result.converged);
    CHECK((r - r_joint).norm() <= 1e-10 * r_joint.norm());
    CHECK((dv - dv_joint).norm() <= 1e-10 * dv_joint.norm());
  }
}

TEST_CASE("unreduced Newton system (Eq. 7): the impulses and the step of the reduced one") {
  using namespace rodsim::testing;
  // The crossings of the partition test, sliding with friction and coupled through B2; solved
  // once with J = F_u W + F_r (W formed) and once with the rods' DOFs kept (W never formed).
  const double z1 = 0.0019;
  Vec dq_reduced, r_reduced;
  for (const char* system : {"reduced", "unreduced"}) {
    LinearSystemFixture f;
    f.w.addRod<SpringChain>("A", chain(Vec3(-0.02, 0.001, 0), Vec3(0.02, 0.001, 0), Vec3::Zero()));
    f.w.addRod<SpringChain>("B", chain(Vec3(0.003, -0.02, z1), Vec3(0.003, 0.02, z1), Vec3(0.05, 0, -0.1)));
    f.w.addRod<SpringChain>("C", chain(Vec3(-0.02, -0.012, 2 * z1), Vec3(0.02, -0.012, 2 * z1), Vec3(0, 0.03, -0.05)));
    auto& c = f.w.addContact<AlartCurnierContact>(makeParams(
        AlartCurnierContact::schema(), {{"friction", 0.3}, {"newton_system", std::string(system)}, {"tolerance", 1e-12}},
        "ac"));
    f.fixed.assign(3 * 9, 0);
    for (int i = 0; i < 9; ++i) f.fixed[i] = 1;  // A held
    f.build();
    Vec dq;
    REQUIRE(f.solve(c, dq));
    REQUIRE(c.contacts().size() == 2);
    const Vec& r = c.impulses();
    for (int i = 0; i < 2; ++i) CHECK(r[3 * i] > 0);
    CHECK(c.lastResult().residual.rel <= 1e-12);
    if (std::string(system) == "reduced") {
      dq_reduced = dq;
      r_reduced = r;
      continue;
    }
    // Same problem, same solution: the directions agree to the GMRES tolerance (1e-10) and both
    // solves end polished at the round-off floor.
    MESSAGE("|r_unreduced - r_reduced| = " << (r - r_reduced).norm() << " (|r| = " << r_reduced.norm() << " N s)");
    CHECK((r - r_reduced).norm() <= 1e-9 * r_reduced.norm());
    CHECK((dq - dq_reduced).norm() <= 1e-9 * dq_reduced.norm());
  }
}

namespace {

// A pile in miniature: `rods` chains of `nodes` nodes (3 DOFs each, A = m/dt^2 + a stretching
// Laplacian per rod, symmetric positive definite), and contacts between edges of different rods,
// each with a random orthonormal frame. Block row i of G is the frame times the nodes' weights.
struct UnreducedProblem {
  SpMat A, G;
  Vec q, mu, wdiag;
};

UnreducedProblem makeUnreducedProblem(int rods, int nodes, int contacts, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uni(-1.0, 1.0), unit(0.0, 1.0);
  const int m = 3 * rods * nodes;
  std::vector<Eigen::Triplet<double>> ta, tg;
  for (int r = 0; r < rods; ++r)
    for (int i = 0; i < nodes; ++i)
      for (int c = 0; c < 3; ++c) {
        const int row = 3 * (r * nodes + i) + c;
        const double k = 50.0;
        const int neighbours = (i > 0) + (i + 1 < nodes);
        ta.emplace_back(row, row, 1.0 + k * neighbours);
        if (i > 0) ta.emplace_back(row, row - 3, -k);
        if (i + 1 < nodes) ta.emplace_back(row, row + 3, -k);
      }
  UnreducedProblem p;
  p.A.resize(m, m);
  p.A.setFromTriplets(ta.begin(), ta.end());
  for (int i = 0; i < contacts; ++i) {
    const int ra = i % rods, rb = (i + 1 + i / rods) % rods == ra ? (ra + 1) % rods : (i + 1 + i / rods) % rods;
    const int ea = static_cast<int>(unit(rng) * (nodes - 1)), eb = static_cast<int>(unit(rng) * (nodes - 1));
    const double s = unit(rng), t = unit(rng);
    std::normal_distribution<double> normal;
    const Eigen::Matrix3d frame =
        Eigen::Quaterniond(normal(rng), normal(rng), normal(rng), normal(rng)).normalized().toRotationMatrix();
    const std::array<std::pair<int, double>, 4> w{{{ra * nodes + ea, 1 - s}, {ra * nodes + ea + 1, s},
                                                   {rb * nodes + eb, -(1 - t)}, {rb * nodes + eb + 1, -t}}};
    for (int a = 0; a < 3; ++a)
      for (const auto& [node, weight] : w)
        for (int c = 0; c < 3; ++c) tg.emplace_back(3 * i + a, 3 * node + c, weight * frame(a, c));
  }
  p.G.resize(3 * contacts, m);
  p.G.setFromTriplets(tg.begin(), tg.end());
  const Eigen::MatrixXd W = Eigen::MatrixXd(p.G) * Eigen::MatrixXd(p.A).inverse() * Eigen::MatrixXd(p.G).transpose();
  p.wdiag = W.diagonal();
  p.q.resize(3 * contacts);
  for (int i = 0; i < contacts; ++i) {
    const double scale = p.wdiag.segment<3>(3 * i).mean();
    // 2 of 3 contacts approach (closing), the others separate; tangential velocities mixed, so
    // that the solution has sticking, sliding and open contacts.
    p.q[3 * i] = (i % 3 == 2 ? 0.5 : -1.0) * scale;
    p.q[3 * i + 1] = 0.3 * uni(rng) * scale;
    p.q[3 * i + 2] = 0.3 * uni(rng) * scale;
  }
  p.mu = Vec::Constant(contacts, 0.3);
  return p;
}

}  // namespace

TEST_CASE("unreduced directions: the Cholesky on the rods' DOFs and K's LU give the same impulses") {
  const UnreducedProblem p = makeUnreducedProblem(6, 12, 60, 7);
  Vec r_lu;
  int states[3] = {0, 0, 0};  // open, sticking, sliding
  for (const bool primal : {false, true}) {
    Options opt;
    opt.tolerance = 1e-12;
    opt.unreduced_preconditioner = primal ? Options::Preconditioner::Cholesky : Options::Preconditioner::Lu;
    Solver s(opt);
    s.setProblem(p.A, p.G, p.wdiag, p.q, p.mu);
    Vec r = Vec::Zero(p.q.size());
    const Result res = s.solve(r);
    REQUIRE(res.converged);
    CHECK(res.residual.rel <= 1e-12);
    CHECK(s.factorizations() > 0);
    MESSAGE((primal ? "primal" : "K's LU") << ": " << res.iterations << " Newton iterations, "
                                             << s.factorizations() << " factorizations, "
                                             << s.gmresIterations() << " GMRES iterations");
    if (!primal) {
      r_lu = r;
      const Vec u = s.velocity();
      for (int i = 0; i < static_cast<int>(p.mu.size()); ++i) {
        const double rn = r[3 * i], rt = r.segment<2>(3 * i + 1).norm();
        states[rn <= 1e-12 * r.norm() ? 0 : rt < (1 - 1e-9) * p.mu[i] * rn ? 1 : 2]++;
      }
      continue;
    }
    // The primal preconditioner is the inverse of J's proximal neighbour (eta + 1e-6 / rho) without
    // the sliding contacts' non-associated coupling: GMRES removes both within its budget of 30
    // per direction (2-4 on rod piles, where few contacts slide; more here, where most do).
    CHECK(s.gmresIterations() <= 20 * s.factorizations());
    // Same problem, same solution: both solves end at the 1e-12 natural map.
    MESSAGE("|r_primal - r_lu| = " << (r - r_lu).norm() << " (|r| = " << r_lu.norm() << ")");
    CHECK((r - r_lu).norm() <= 1e-9 * r_lu.norm());
  }
  MESSAGE("contacts open / sticking / sliding: " << states[0] << " / " << states[1] << " / " << states[2]);
  CHECK(states[0] > 0);
  CHECK(states[1] > 0);
  CHECK(states[2] > 0);
}

TEST_CASE("unreduced directions: where the Cholesky fails, K's LU gives the same impulses") {
  // The same problem with a decoupled block of 6 DOFs that no contact touches and whose A is
  // negative definite: W, the impulses and K's LU are those of the problem without it, but
  // A + G^T P G is not positive definite, so the Cholesky fails and K's LU takes over.
  const UnreducedProblem p = makeUnreducedProblem(6, 12, 60, 7);
  const int m = static_cast<int>(p.A.rows()), extra = 6;
  std::vector<Eigen::Triplet<double>> ta, tg;
  for (int c = 0; c < m; ++c)
    for (SpMat::InnerIterator it(p.A, c); it; ++it) ta.emplace_back(int(it.row()), c, it.value());
  for (int k = 0; k < extra; ++k) ta.emplace_back(m + k, m + k, -2.0);
  for (int c = 0; c < m; ++c)
    for (SpMat::InnerIterator it(p.G, c); it; ++it) tg.emplace_back(int(it.row()), c, it.value());
  SpMat A(m + extra, m + extra), G(p.G.rows(), m + extra);
  A.setFromTriplets(ta.begin(), ta.end());
  G.setFromTriplets(tg.begin(), tg.end());
  Vec r_ref, r_fallback;
  for (const bool with_extra : {false, true}) {
    Options opt;
    opt.tolerance = 1e-12;
    Solver s(opt);
    if (with_extra)
      s.setProblem(A, G, p.wdiag, p.q, p.mu);
    else
      s.setProblem(p.A, p.G, p.wdiag, p.q, p.mu);
    Vec r = Vec::Zero(p.q.size());
    const Result res = s.solve(r);
    REQUIRE(res.converged);
    CHECK(res.residual.rel <= 1e-12);
    (with_extra ? r_fallback : r_ref) = r;
    MESSAGE(std::string(with_extra ? "Cholesky fails, K's LU" : "Cholesky")
            << ": " << s.factorizations() << " factorizations, " << s.gmresIterations() << " GMRES iterations");
    // K's LU (with its 1e-8 pivot regularization) leaves GMRES 1-2 iterations per direction, the
    // Cholesky about 15 on this problem: the count tells which one served.
    if (with_extra) CHECK(s.gmresIterations() <= 3 * s.factorizations());
  }
  CHECK((r_fallback - r_ref).norm() <= 1e-9 * r_ref.norm());
}

TEST_CASE("Siconos problem files: /dev/zero, counts beyond the file and indexes outside the matrix are refused") {
  // Issue 43: every count a problem file declares is bounded by its length before anything is
  // allocated, and its block indexes are checked before any is used.
  auto refused = [](const std::string& text, const char* why) {
    const auto path = std::filesystem::temp_directory_path() / "rodsim_ac_io_test.dat";
    std::ofstream(path) << text;
    CHECK_THROWS_WITH_AS(readSiconosDat(path.string(), false), doctest::Contains(why), std::runtime_error);
    std::filesystem::remove(path);
  };
  CHECK_THROWS_WITH_AS(readSiconosDat("/dev/zero", false), doctest::Contains("not a regular file"), std::runtime_error);
  refused("3 100000000\n0 3 3 3 3\n", "more than the file can hold");             // 1e8 contacts
  refused("3 1\n0 1000000000 3\n", "more than the file can hold");                // a dense matrix of 1e9 rows
  refused("3 1\n1 3 3 1 1 1 3 3 2 1 0 5\n", "outside");                           // block column 5 of 1
  refused("3 1\n1 3 3 1 1 1 4 3 2 1 0 0\n", "outside");                           // a cumulative size past the rows
}
