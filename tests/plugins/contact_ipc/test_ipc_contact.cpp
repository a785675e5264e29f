// The "ipc" contact component against a FakeWorld: K = -dF/dq of barrier + lagged friction by
// finite differences (sticking and sliding), F = -dE/dq, the CCD step bound on whole rods, plane
// obstacles, the adaptive barrier stiffness (balance, clamp, doubling), the constant sparsity
// pattern, no allocation in the evaluation loops, and the checkpoint.
#include "allocation_counter.h"  // g_allocations (this file only)
#include "contact_checks.h"
#include "crossing.h"
#include <rodsim/testing/fake_world.h>
#include "finite_differences.h"
#include "ipc_contact.h"

#include <doctest/doctest.h>

#include <cmath>

using namespace rodsim;
using namespace rodsim::testing;
using rodsim::ipc::IpcContact;
using namespace rodsim::test::ipc_crossing;  // r, L, addCrossing
using rodsim::test::fdGradient;
using rodsim::test::fdJacobian;
using rodsim::test::relErr;
using rodsim::test::contactForce;
using rodsim::test::dense;
using rodsim::test::ObstacleWorld;
using rodsim::test::startStep;
using rodsim::test::stiffnessError;

namespace {

constexpr double world_d_hat = 1e-4, world_dt = 1e-3;

double energy(IpcContact& c, const EvalContext& ctx0, const Vec& q) {
  EvalContext ctx = ctx0;
  ctx.q = &q;
  return c.energy(ctx);
}

// Moves every node of rod `rod` by d.
void shiftRod(FakeWorld& w, Vec& q, int rod, const Vec3& d) {
  for (int n = 0; n < w.rod(rod).numNodes(); ++n) q.segment<3>(w.rod(rod).globalPositionDof(n)) += d;
}

// The obstacle tests' contact (friction 0.5, eps_v = 1e-2, fixed kappa 10) on a finalized world, and
// the start of a step over which rod 0 slid by 2e-4 m (20 eps_u) along +x.
IpcContact& addObstacleContact(ObstacleWorld& w) {
  auto& c = w.addContact<IpcContact>(
      makeParams(IpcContact::schema(), {{"friction", 0.5}, {"d_hat", world_d_hat}, {"eps_v", 1e-2}, {"kappa", 10.0}}));
  c.useInitialGaps(false);  // the plain barrier, also on the pairs that start inside d_hat
  w.finalize();
  return c;
}
Vec slidStart(FakeWorld& w, const Vec& q) {
  Vec q_start = q;
  shiftRod(w, q_start, 0, Vec3(-2e-4, 0, 0));
  return q_start;
}

}  // namespace

TEST_CASE("barrier + friction stiffness K = -dF/dq and F = -dE/dq by finite differences, sticking and sliding") {
  const double eps_v = 1e-2, eps_u = eps_v * world_dt, mu = 0.4, kappa = 1e3;
  for (double gap : {0.5 * world_d_hat, 0.05 * world_d_hat}) {
    for (double slip : {0.0, 0.3, 30.0}) {  // in units of eps_u
      CAPTURE(gap);
      CAPTURE(slip);
      FakeWorld w;
      addCrossing(w, gap);
      auto& c = w.addContact<IpcContact>(makeParams(
          IpcContact::schema(), {{"friction", mu}, {"d_hat", world_d_hat}, {"eps_v", eps_v}, {"kappa", kappa}}));
      c.useInitialGaps(false);  // the plain barrier, also on the pairs that start inside d_hat
      w.finalize();
      const Vec q = w.q();
      Vec q_start = q;
      shiftRod(w, q_start, 1, -slip * eps_u * Vec3(1, 0.3, 0));  // b slid by slip eps_u along (1, 0.3, 0)
      w.q() = q_start;
      w.beginStep(world_dt);
      REQUIRE(c.numCandidates() >= 1);
      Vec v0 = Vec::Zero(q.size());
      EvalContext ctx;
      ctx.dt = world_dt;
      ctx.q_start = &q_start;
      ctx.v_start = &v0;
      ctx.q = &q;
      const Vec f = contactForce(c, ctx, q);
      CHECK(c.stats().active >= 1);
      CHECK(c.stats().min_gap == doctest::Approx(gap).epsilon(1e-9));
      StiffnessSink K;
      c.addStiffness(ctx, K);
      const Eigen::MatrixXd Kd = dense(K, q.size());
      // at zero slip the friction force (2/eps_u - |u|/eps_u^2) u is only C1: central differences
      // err by h/(2 eps_u) there, so the step is smaller
      const double h = std::min(1e-3 * gap, (slip == 0 ? 1e-5 : 1e-3) * eps_u);
      const Eigen::MatrixXd J = fdJacobian([&](const Vec& y) { return contactForce(c, ctx, y); }, q, h);
      const double eK = relErr(Kd, -J);
      const Eigen::VectorXd g = fdGradient([&](const Vec& y) { return energy(c, ctx, y); }, q, h);
      const double eF = relErr(f, -g);
      MESSAGE("gap ", gap / world_d_hat, " d_hat, slip ", slip, " eps_u: K rel. error ", eK, ", F rel. error ", eF);
      CHECK(eK < 1e-5);
      CHECK(eF < 1e-5);
      CHECK((Kd - Kd.transpose()).norm() < 1e-10 * Kd.norm());  // lagged friction: symmetric
      // sliding: the tangential force on rod b opposes its slip with magnitude mu lambda
      Vec3 fb = Vec3::Zero();
      for (int n = 0; n < 5; ++n) fb += f.segment<3>(w.rod(1).globalPositionDof(n));
      const double fn = fb.z();
      const Vec3 ft(fb.x(), fb.y(), 0);
      CHECK(fn > 0);
      if (slip > 10) {
        // lambda is lagged at q_start, where the gap is the same (b moved tangentially)
        CHECK(ft.norm() == doctest::Approx(mu * fn).epsilon(1e-9));
        CHECK(ft.normalized().dot(Vec3(1, 0.3, 0).normalized()) == doctest::Approx(-1).epsilon(1e-9));
      } else if (slip == 0) {
        CHECK(ft.norm() < 1e-12 * fn);
      } else {
        CHECK(ft.norm() < mu * fn);
        CHECK(ft.norm() > 0.3 * mu * fn);  // f1(0.3) = 0.51
      }
    }
  }
}

TEST_CASE("maxStepFraction keeps every gap positive: rod b driven through rod a") {
  FakeWorld w;
  const double gap = 0.5 * world_d_hat;
  addCrossing(w, gap);
  auto& c = w.addContact<IpcContact>(makeParams(IpcContact::schema(), {{"d_hat", world_d_hat}}));
  w.finalize();
  w.beginStep(world_dt);
  const Vec q = w.q();
  Vec dq = Vec::Zero(q.size());
  shiftRod(w, dq, 1, Vec3(1e-4, 0, -3e-3));  // would cross rod a entirely
  const double f = w.maxStepFraction(q, dq);
  // translation: the gap closes at 3e-3 per unit step while the CCD bound is V = |dq_b|, so the
  // advancement stops after one iterate, 0.3 % short of the target; safety 0.8 of that time
  const double V = Vec3(1e-4, 0, -3e-3).norm();
  CHECK(f == doctest::Approx(0.8 * 0.9 * gap / V).epsilon(1e-9));
  const Vec q1 = q + f * dq;
  EvalContext ctx;
  Vec zero = Vec::Zero(q.size());
  ctx.dt = world_dt;
  ctx.q_start = &q;
  ctx.v_start = &zero;
  contactForce(c, ctx, q1);
  CHECK(c.stats().min_gap == doctest::Approx(gap - f * 3e-3).epsilon(1e-9));
  CHECK(c.stats().min_gap > 0.2 * gap);
  // receding motion and no motion: full step
  CHECK(w.maxStepFraction(q, -dq) == 1);
  CHECK(w.maxStepFraction(q, zero) == 1);
  CHECK(c.lastStepFraction() == doctest::Approx(f));
}

TEST_CASE("plane obstacle: node barrier and friction, K = -dF/dq, CCD against the plane") {
  ObstacleWorld w;
  w.body.name = "floor";
  w.body.origin = Vec3(0, 0, -0.5 * r);
  w.body.normal = Vec3::UnitZ();
  SpringChain::Options o;
  o.points = line(4, Vec3(0, 0, 0.5 * r + 0.3 * world_d_hat), Vec3(3 * L, 0, 0.5 * r + 0.6 * world_d_hat));
  o.radius = r;
  w.addRod<SpringChain>("rod", o);
  auto& c = addObstacleContact(w);
  const Vec q = w.q(), q_start = slidStart(w, q), v0 = Vec::Zero(q.size());
  EvalContext ctx = startStep(w, q_start, v0, world_dt);
  CHECK(c.numObstacleCandidates() == 4);
  const Vec f = contactForce(c, ctx, q);
  CHECK(c.stats().min_gap == doctest::Approx(0.3 * world_d_hat).epsilon(1e-9));
  CHECK(c.stats().active == 4);
  // node 0: normal force kappa |b'(0.3 d_hat)|, friction -mu lambda x-hat (sliding)
  const double lambda = 10.0 * std::abs(rodsim::ipc::barrier(0.3 * world_d_hat, world_d_hat).d1);
  CHECK(f[2] == doctest::Approx(lambda).epsilon(1e-9));
  CHECK(f[0] == doctest::Approx(-0.5 * lambda).epsilon(1e-9));
  CHECK(stiffnessError(c, ctx, q, 1e-9) < 1e-5);
  // CCD: the rod falls by 1 mm: stops at 0.8 of the time the lowest node reaches 0.1 of its gap
  Vec dq = Vec::Zero(q.size());
  shiftRod(w, dq, 0, Vec3(0, 0, -1e-3));
  CHECK(w.maxStepFraction(q, dq) == doctest::Approx(0.8 * 0.9 * 0.3 * world_d_hat / 1e-3).epsilon(1e-9));
}

// Curved obstacles: the barrier's Hessian gains B' dn/dx (the normal turns with the node); the
// lagged friction slides against the surface point under the node, which a spinning cylinder moves.
TEST_CASE("sphere and spinning cylinder: node barrier and friction, K = -dF/dq, CCD") {
  for (const auto shape : {Obstacle::Shape::Sphere, Obstacle::Shape::Cylinder}) {
    ObstacleWorld w;
    w.body.name = "body";
    w.body.shape = shape;
    w.body.radius = 0.05;
    w.body.center = w.body.origin = Vec3(0, 0, -0.05);
    w.body.axis = Vec3::UnitX();
    w.body.angular_velocity = shape == Obstacle::Shape::Cylinder ? 3.0 : 0.0;
    SpringChain::Options o;
    for (int k = 0; k < 4; ++k) {  // nodes over the top, 0.3 ... 0.6 d_hat from the surface
      const double a = 0.05 * (k - 1.5), reach = w.body.radius + r + (0.3 + 0.1 * k) * world_d_hat;
      o.points.push_back(w.body.origin + Vec3(0.3 * L * k * (shape == Obstacle::Shape::Cylinder), reach * std::sin(a),
                                               reach * std::cos(a)));
    }
    o.radius = r;
    w.addRod<SpringChain>("rod", o);
    auto& c = addObstacleContact(w);
    const Vec q = w.q(), q_start = slidStart(w, q), v0 = Vec::Zero(q.size());
    const EvalContext ctx = startStep(w, q_start, v0, world_dt);
    CHECK(c.numObstacleCandidates() == 4);
    const Vec f = contactForce(c, ctx, q);
    CHECK(c.stats().active == 4);
    CHECK(c.stats().min_gap == doctest::Approx(0.3 * world_d_hat).epsilon(1e-9));
    // node 0 slides (20 eps_u and more: the sliding regime) relative to the surface point under it:
    // +x, and on the drum (turning about x) the surface moves along y under it. The friction force is
    // opposite to that relative slide.
    Vec3 n;
    const Vec3 x0 = q.segment<3>(0);
    const double dist = w.body.signedDistance(q_start.segment<3>(0), &n);
    const Vec3 slide = x0 - q_start.segment<3>(0) - world_dt * w.body.surfaceVelocity(q_start.segment<3>(0) - dist * n);
    const Vec3 ft = f.segment<3>(0) - f.segment<3>(0).dot(n) * n;
    const Vec3 slide_t = slide - slide.dot(n) * n;
    CHECK(ft.normalized().dot(slide_t.normalized()) < -0.999);
    CAPTURE(static_cast<int>(shape));
    CHECK(stiffnessError(c, ctx, q, 1e-9) < 1e-5);
    // CCD: the rod falls by 1 mm; the first node (0.3 d_hat) hits first, almost radially
    Vec dq = Vec::Zero(q.size());
    shiftRod(w, dq, 0, Vec3(0, 0, -1e-3));
    const double t = w.maxStepFraction(q, dq) / 0.8;
    CHECK(t > 0);
    CHECK(t < 1);
    const Vec3 x_hit = q.segment<3>(0) + t * dq.segment<3>(0);
    CHECK(w.body.signedDistance(x_hit) - r == doctest::Approx(0.1 * 0.3 * world_d_hat).epsilon(1e-6));
  }
}

TEST_CASE("adaptive kappa: balance at the first contact, clamp to [kappa_min, 100 kappa_min], doubling") {
  FakeWorld w;
  addCrossing(w, 0.8 * world_d_hat);
  auto& c = w.addContact<IpcContact>(makeParams(IpcContact::schema(), {{"d_hat", world_d_hat}}));
  c.useInitialGaps(false);  // the plain barrier, also on the pairs that start inside d_hat
  w.finalize();
  const double kappa_min = 0.1 / (world_dt * world_dt);  // mean nodal mass 0.1 kg (no other force acts)
  Vec zero = Vec::Zero(w.q().size());
  std::vector<double> kappas;
  for (double gap : {0.8, 0.09, 0.05, 0.04, 0.03, 0.02, 0.01, 0.005, 0.004, 0.003, 0.05}) {
    Vec q = w.q();
    for (int n = 0; n < 5; ++n) q[w.rod(1).globalPositionDof(n) + 2] = 2 * r + gap * world_d_hat;
    EvalContext ctx = startStep(w, q, zero, world_dt);
    contactForce(c, ctx, q);
    kappas.push_back(c.kappa());
    CHECK(c.kappaMin() == doctest::Approx(kappa_min));
  }
  // the residual without contact is 0 here: the balance gives 0, clamped to kappa_min; then the gap
  // shrinks below 0.1 d_hat at every step: doubling up to 100 kappa_min; a growing gap keeps it.
  const std::vector<double> expected = {1, 2, 4, 8, 16, 32, 64, 100, 100, 100, 100};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CAPTURE(i);
    CHECK(kappas[i] == doctest::Approx(expected[i] * kappa_min));
  }
  // checkpoint round trip
  std::vector<double> state;
  c.saveState(state);
  FakeWorld w2;
  addCrossing(w2, 0.8 * world_d_hat);
  auto& c2 = w2.addContact<IpcContact>(makeParams(IpcContact::schema(), {{"d_hat", world_d_hat}}));
  w2.finalize();
  c2.loadState(state);
  CHECK(c2.kappa() == c.kappa());
  CHECK(c2.kappaMin() == c.kappaMin());
}

TEST_CASE("balance: kappa minimizes |r + kappa grad B| when a load pushes the rods together") {
  // A test-local force pushing rod b down with 0.05 N per node: at the first contact kappa balances
  // it (within the clamp).
  struct Push : Force {
    Push() : Force(Params("push")) {}
    int first = 0, count = 0;
    void addForce(const EvalContext&, Vec& f) override {
      for (int n = 0; n < count; ++n) f[first + 3 * n + 2] -= 0.05;
    }
  };
  FakeWorld w;
  addCrossing(w, 0.5 * world_d_hat);
  auto push = std::make_unique<Push>();
  Push& p = *push;
  w.addForce(std::move(push));
  auto& c = w.addContact<IpcContact>(makeParams(IpcContact::schema(), {{"d_hat", world_d_hat}, {"kappa_min", 10.0}}));
  c.useInitialGaps(false);  // the plain barrier, also on the pairs that start inside d_hat
  w.finalize();
  p.first = w.rod(1).globalPositionDof(0);
  p.count = 5;
  w.beginStep(world_dt);
  Vec q = w.q(), zero = Vec::Zero(q.size()), F = Vec::Zero(q.size());
  EvalContext ctx;
  ctx.dt = world_dt;
  ctx.q = &q;
  ctx.q_start = &q;
  ctx.v_start = &zero;
  ctx.quasi_static = true;
  w.evaluate(ctx, F, nullptr);
  // the contact force on rod b balances the 0.25 N load in the least-squares sense: the barrier
  // acts only on the two nodes of b's crossing edge, along z
  Vec3 fb = Vec3::Zero();
  for (int n = 0; n < 5; ++n) fb += F.segment<3>(w.rod(1).globalPositionDof(n));
  MESSAGE("kappa ", c.kappa(), " N/m, net force on rod b ", fb.transpose());
  // kappa = -r.gB/|gB|^2: r = 0.05 N on b's crossing-edge nodes (weights 0.7, 0.3), gB = b' w n on
  // the four nodes of the crossing edges (weights 0.7, 0.3 on each rod): 0.05 / (1.16 |b'|)
  const double db = std::abs(rodsim::ipc::barrier(0.5 * world_d_hat, world_d_hat).d1);
  CHECK(c.kappa() == doctest::Approx(0.05 / (1.16 * db)).epsilon(1e-6));
  CHECK(c.kappa() > 10.0);
  CHECK(c.kappa() < 1000.0);
}

TEST_CASE("sparsity pattern is constant within a step for pairs in the pattern band; errors name the bad rod or obstacle") {
  FakeWorld w;
  addCrossing(w, 0.5 * world_d_hat);
  auto& c = w.addContact<IpcContact>(makeParams(IpcContact::schema(), {{"d_hat", world_d_hat}, {"friction", 0.3}}));
  c.useInitialGaps(false);  // the plain barrier, also on the pairs that start inside d_hat
  w.finalize();
  w.beginStep(world_dt);
  Vec q = w.q(), zero = Vec::Zero(q.size());
  EvalContext ctx;
  ctx.dt = world_dt;
  ctx.q_start = &q;
  ctx.v_start = &zero;
  Vec q1 = q;
  shiftRod(w, q1, 1, Vec3(0, 0, 2 * world_d_hat));  // out of the barrier band: structural zeros (the pair started in the pattern band)
  StiffnessSink K0, K1;
  contactForce(c, ctx, q);
  ctx.q = &q;
  c.addStiffness(ctx, K0);
  ctx.q = &q1;
  c.addStiffness(ctx, K1);
  REQUIRE(K0.entries().size() == K1.entries().size());
  bool same = true;
  for (std::size_t i = 0; i < K0.entries().size(); ++i)
    same = same && K0.entries()[i].row() == K1.entries()[i].row() && K0.entries()[i].col() == K1.entries()[i].col();
  CHECK(same);

  FakeWorld bad;
  addCrossing(bad, 0.5 * world_d_hat);
  bad.addContact<IpcContact>(makeParams(IpcContact::schema(), {{"rods", std::vector<std::string>{"a", "c"}}}));
  try {
    bad.finalize();
    FAIL("expected a ParamError");
  } catch (const ParamError& e) {
    CHECK(e.key() == "rods");
    CHECK(std::string(e.what()).find("'c'") != std::string::npos);
  }
}

TEST_CASE("overlapping rods at the start of a step are refused with a message") {
  FakeWorld w;
  addCrossing(w, -0.2 * world_d_hat);
  w.addContact<IpcContact>(makeParams(IpcContact::schema(), {{"d_hat", world_d_hat}}));
  w.finalize();
  CHECK_THROWS_WITH_AS(w.beginStep(world_dt), doctest::Contains("overlap"), std::runtime_error);
}

TEST_CASE("no heap allocation in addForce, addStiffness, energy and maxStepFraction once warm") {
  FakeWorld w;
  addCrossing(w, 0.5 * world_d_hat);
  auto& c = w.addContact<IpcContact>(makeParams(IpcContact::schema(), {{"d_hat", world_d_hat}, {"friction", 0.3}}));
  c.useInitialGaps(false);  // the plain barrier, also on the pairs that start inside d_hat
  w.finalize();
  w.beginStep(world_dt);
  const Vec q = w.q();
  Vec q1 = q, zero = Vec::Zero(q.size()), f = Vec::Zero(q.size()), dq = Vec::Zero(q.size());
  shiftRod(w, q1, 1, Vec3(1e-6, 0, -1e-6));
  shiftRod(w, dq, 1, Vec3(1e-5, 0, -1e-3));
  EvalContext ctx;
  ctx.dt = world_dt;
  ctx.q_start = &q;
  ctx.v_start = &zero;
  StiffnessSink K;
  auto evaluate = [&](const Vec& x) {
    ctx.q = &x;
    f.setZero();
    K.clear();
    c.addForce(ctx, Vec(Vec::Zero(f.size())), f);
    c.addStiffness(ctx, K);
    return c.energy(ctx) + w.maxStepFraction(x, dq);
  };
  evaluate(q);  // warm: buffers sized
  const long before = g_allocations.load();
  double sink = 0;
  for (int i = 0; i < 5; ++i) sink += evaluate(i % 2 ? q : q1);
  CHECK(g_allocations.load() == before);
  CHECK(std::isfinite(sink));
}
