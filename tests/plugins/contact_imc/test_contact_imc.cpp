// The "imc" contact component against a FakeWorld: K = -dF/dq of contact + friction by finite
// differences (sticking and sliding, Eq. 21), F = -dE/dq, the adaptive stiffness of SI B.3, the
// self-contact exclusion by arc length, the constant sparsity pattern, obstacles (plane, sphere,
// spinning cylinder), errors.
#include "contact_checks.h"
#include <rodsim/testing/fake_world.h>
#include "finite_differences.h"
#include "imc_contact.h"
#include "loads.h"
#include "overlap_checks.h"

#include <doctest/doctest.h>

#include <cmath>

using namespace rodsim;
using namespace rodsim::testing;
using rodsim::imc::ImcContact;
using rodsim::test::fdGradient;
using rodsim::test::fdJacobian;
using rodsim::test::relErr;
using rodsim::test::contactForce;
using rodsim::test::dense;
using rodsim::test::ObstacleWorld;
using rodsim::test::startStep;
using rodsim::test::stiffnessError;

namespace {

constexpr double r = 1e-3, L = 4e-3, delta = 1e-4;

// Rod A along x at z = 0; rod B along y crossing it at x = x_cross, at height z_b (centerlines).
void addCrossing(FakeWorld& w, double z_b, double x_cross = 0.3 * L) {
  SpringChain::Options a, b;
  a.points = line(5, Vec3(-2 * L, 0, 0), Vec3(2 * L, 0, 0));
  b.points = line(5, Vec3(x_cross, -2.3 * L, z_b), Vec3(x_cross, 1.7 * L, z_b));  // crossing mid-edge
  a.radius = b.radius = r;
  w.addRod<SpringChain>("a", a);
  w.addRod<SpringChain>("b", b);
}

struct Eval {
  EvalContext ctx;
  Vec q_start, v_start;
};

}  // namespace

TEST_CASE("contact + friction stiffness K = -dF/dq by finite differences: sticking and sliding, both branches") {
  for (double gap : {-0.5 * delta, 0.3 * delta, -5 * delta}) {
    for (double slip : {0.0, 0.2, 30.0}) {  // in units of nu: at rest, sticking, sliding
      CAPTURE(gap);
      CAPTURE(slip);
      const double nu = 1e-3, dt = 1e-3;
      FakeWorld w;
      addCrossing(w, 2 * r + gap);
      auto& c = w.addContact<ImcContact>(makeParams(ImcContact::schema(), {{"friction", 0.4}, {"delta", delta},
                                                                            {"slip_tolerance", nu}, {"stiffness", 1e-2}}));
      w.finalize();
      const Vec q = w.q();
      // rod b moved by (slip nu dt) along x (and a little along y) during the step
      Vec q_start = q, v0 = Vec::Zero(q.size());
      for (int n = 0; n < 5; ++n) q_start.segment<3>(w.rod(1).globalPositionDof(n)) -= slip * nu * dt * Vec3(1, 0.3, 0);
      EvalContext ctx = startStep(w, q_start, v0, dt);
      ctx.q = &q;
      Vec f = contactForce(c, ctx, q);
      REQUIRE(c.stats().active >= 1);  // deep in, the neighbouring edges of b touch too
      CHECK(c.stats().min_gap == doctest::Approx(gap).scale(delta).epsilon(1e-3));
      StiffnessSink K;
      c.addStiffness(ctx, K);
      const Eigen::MatrixXd Kd = dense(K, q.size());
      const Eigen::MatrixXd J = fdJacobian([&](const Vec& y) { return contactForce(c, ctx, y); }, q, std::min(1e-5 * delta, 1e-4 * nu * dt));
      const double e = relErr(Kd, -J);
      MESSAGE("gap ", gap / delta, " delta, slip ", slip, " nu: K rel. error ", e);
      CHECK(e <= 1e-6);
      if (slip > 10 && c.stats().active == 1) {
        // sliding: friction on rod b opposes its slip with magnitude mu |F_n|
        Vec3 fb = Vec3::Zero();
        for (int n = 0; n < 5; ++n) fb += f.segment<3>(w.rod(1).globalPositionDof(n));
        const Vec3 nrm = Vec3::UnitZ();
        const double fn = fb.dot(nrm);
        const Vec3 ft = fb - fn * nrm;
        CHECK(fn > 0);
        CHECK(ft.norm() == doctest::Approx(0.4 * fn).epsilon(1e-3));
        CHECK(ft.dot(Vec3(1, 0.3, 0)) < 0);
      }
    }
  }
}

TEST_CASE("contact force = -dE/dq (no friction) and the static-solver merit energy") {
  FakeWorld w;
  addCrossing(w, 2 * r - 0.4 * delta);
  auto& c = w.addContact<ImcContact>(makeParams(ImcContact::schema(), {{"delta", delta}, {"stiffness", 1e-2}}));
  w.finalize();
  w.beginStep(1e-3);
  const Vec q = w.q();
  Vec zero = Vec::Zero(q.size());
  EvalContext ctx;
  ctx.dt = 1e-3;
  ctx.q_start = &q;
  ctx.v_start = &zero;
  const Vec f = contactForce(c, ctx, q);
  const Vec g = fdGradient(
      [&](const Vec& y) {
        EvalContext e = ctx;
        e.q = &y;
        return c.energy(e);
      },
      q, 1e-5 * delta);
  CHECK(relErr(f, -g) <= 1e-6);
}

TEST_CASE("adaptive stiffness (SI B.3): k = s max|F_i| over the candidate nodes at the first evaluation") {
  FakeWorld w;
  addCrossing(w, 2 * r + 0.5 * delta);
  w.addForce<loads::Gravity>(makeParams(loads::Gravity::schema(), {}));
  auto& c = w.addContact<ImcContact>(makeParams(ImcContact::schema(), {{"delta", delta}, {"stiffness_scale", 1e5}}));
  w.finalize();
  const double dt = 1e-3;
  w.beginStep(dt);
  CHECK(c.numCandidates() >= 1);
  Vec q = w.q(), f, v0 = Vec::Zero(q.size());
  EvalContext ctx;
  ctx.dt = dt;
  ctx.q = &q;
  ctx.q_start = &w.q();
  ctx.v_start = &v0;
  w.evaluate(ctx, f, nullptr);
  // straight chains at rest length, at rest: the only force is the weight m g of each node (0.1 kg)
  CHECK(c.stiffness() == doctest::Approx(1e5 * 0.1 * 9.81).epsilon(1e-12));
  // later evaluations of the same step keep k
  q.segment<3>(w.rod(1).globalPositionDof(2)) += Vec3(0, 0, -1e-6);
  w.evaluate(ctx, f, nullptr);
  CHECK(c.stiffness() == doctest::Approx(1e5 * 0.1 * 9.81).epsilon(1e-12));
}

TEST_CASE("no self-contact on a straight rod whose radius equals its edge length") {
  for (double radius_over_edge : {0.5, 1.0, 2.0}) {
    FakeWorld w;
    SpringChain::Options o;
    o.points = line(41, Vec3(0, 0, 0), Vec3(0.04, 0, 0));  // edges of 1 mm
    o.radius = radius_over_edge * 1e-3;
    w.addRod<SpringChain>("straight", o);
    auto& c = w.addContact<ImcContact>(makeParams(ImcContact::schema(), {}));
    w.finalize();
    w.beginStep(1e-3);
    Vec f = Vec::Zero(w.numDofs());
    EvalContext ctx;
    ctx.dt = 1e-3;
    ctx.q = ctx.q_start = &w.q();
    ctx.v_start = &w.v();
    c.addForce(ctx, Vec(Vec::Zero(f.size())), f);
    CAPTURE(radius_over_edge);
    CHECK(c.numBroadPairs() > 0);  // the boxes of nearby edges do overlap...
    CHECK(c.numCandidates() == 0);  // ...but they are neighbours by arc length
    CHECK(c.stats().active == 0);
    CHECK(f.norm() == 0.0);
  }
}

TEST_CASE("self-contact of a folded rod is found (arc-length exclusion does not hide real contacts)") {
  // a hairpin: two straight legs 2r + delta/2 apart, joined by a half circle
  FakeWorld w;
  SpringChain::Options o;
  const double gap = 2 * r + 0.5 * delta, R = gap / 2;
  for (int i = 0; i <= 20; ++i) o.points.push_back(Vec3(-0.02 + i * 1e-3, R, 0));
  for (int i = 1; i < 8; ++i) {
    const double a = M_PI / 2 - M_PI * i / 8;
    o.points.push_back(Vec3(R * std::cos(a), R * std::sin(a), 0));
  }
  for (int i = 0; i <= 20; ++i) o.points.push_back(Vec3(-i * 1e-3, -R, 0));
  o.radius = r;
  w.addRod<SpringChain>("hairpin", o);
  auto& c = w.addContact<ImcContact>(makeParams(ImcContact::schema(), {{"delta", delta}, {"stiffness", 1.0}}));
  w.finalize();
  w.beginStep(1e-3);
  Vec f = Vec::Zero(w.numDofs());
  EvalContext ctx;
  ctx.dt = 1e-3;
  ctx.q = ctx.q_start = &w.q();
  ctx.v_start = &w.v();
  c.addForce(ctx, Vec(Vec::Zero(f.size())), f);
  CHECK(c.stats().active >= 15);
  CHECK(c.stats().min_gap == doctest::Approx(0.5 * delta).epsilon(1e-6));
}

TEST_CASE("the stiffness pattern: stable within a step for pairs near the band, grown for pairs from afar") {
  for (double start_gap : {1.5 * delta, 3 * delta}) {
    CAPTURE(start_gap);
    // At rest the pattern band is delta (max(delta, 4 |v|max dt)): a pair starting within delta + delta
    // of contact is in the pattern while inactive (structural zeros); one from farther adds its
    // block once it presses in (the solver then re-analyses the pattern).
    const bool in_pattern = start_gap < 2 * delta;
    FakeWorld w;
    addCrossing(w, 2 * r + start_gap);  // starts inactive, then presses in
    auto& c = w.addContact<ImcContact>(makeParams(ImcContact::schema(), {{"delta", delta}, {"stiffness", 1.0}, {"friction", 0.2}}));
    w.finalize();
    w.beginStep(1e-3);
    Vec q = w.q(), q0 = w.q(), v0 = Vec::Zero(q.size());
    EvalContext ctx;
    ctx.dt = 1e-3;
    ctx.q = &q;
    ctx.q_start = &q0;
    ctx.v_start = &v0;
    StiffnessSink K1, K2;
    Vec f = Vec::Zero(q.size());
    c.addForce(ctx, Vec(Vec::Zero(f.size())), f);
    c.addStiffness(ctx, K1);
    CHECK(c.stats().active == 0);
    for (int n = 0; n < 5; ++n) q.segment<3>(w.rod(1).globalPositionDof(n)) += Vec3(1e-6, 0, -4 * delta);
    c.addForce(ctx, Vec(Vec::Zero(f.size())), f);
    c.addStiffness(ctx, K2);
    CHECK(c.stats().active == 1);
    REQUIRE(K2.entries().size() == 144);
    if (!in_pattern) {
      CHECK(K1.entries().empty());
      continue;
    }
    REQUIRE(K1.entries().size() == K2.entries().size());
    bool same = true;
    for (std::size_t i = 0; i < K1.entries().size(); ++i)
      same = same && K1.entries()[i].row() == K2.entries()[i].row() && K1.entries()[i].col() == K2.entries()[i].col();
    CHECK(same);
  }
}

TEST_CASE("candidates are refreshed within a step when a node moves farther than the margin/2") {
  FakeWorld w;
  addCrossing(w, 0.02);  // far apart: no candidates
  auto& c = w.addContact<ImcContact>(makeParams(ImcContact::schema(), {{"delta", delta}, {"stiffness", 1.0}, {"margin", 1e-3}}));
  w.finalize();
  w.beginStep(1e-3);
  CHECK(c.numCandidates() == 0);
  Vec q = w.q(), v0 = Vec::Zero(q.size());
  for (int n = 0; n < 5; ++n) q[w.rod(1).globalPositionDof(n) + 2] -= 0.02 - 2 * r + 0.5 * delta;
  EvalContext ctx;
  ctx.dt = 1e-3;
  ctx.q = &q;
  ctx.q_start = &w.q();
  ctx.v_start = &v0;
  Vec f = Vec::Zero(q.size());
  c.addForce(ctx, Vec(Vec::Zero(f.size())), f);
  CHECK(c.numCandidates() >= 1);
  CHECK(c.stats().active >= 1);
  CHECK(c.timing().refreshes == 1);
}

TEST_CASE("node-plane contact with friction: K = -dF/dq by finite differences, rest gap and Coulomb bound") {
  for (double slip : {0.3, 20.0}) {
    ObstacleWorld w;
    w.body.name = "floor";
    w.body.normal = Vec3(0, 0.2, 1).normalized();
    SpringChain::Options o;
    o.points = line(4, Vec3(0, 0, r - 0.3 * delta), Vec3(3 * L, 0, r - 0.3 * delta));
    o.radius = r;
    w.addRod<SpringChain>("rod", o);
    const double nu = 1e-3, dt = 1e-3;
    auto& c = w.addContact<ImcContact>(makeParams(ImcContact::schema(), {{"delta", delta}, {"stiffness", 1e-2},
                                                                          {"friction", 0.5}, {"slip_tolerance", nu}}));
    w.finalize();
    const Vec q = w.q();
    Vec q_start = q, v0 = Vec::Zero(q.size());
    for (int n = 0; n < 4; ++n) q_start[3 * n] -= slip * nu * dt;
    const EvalContext ctx = startStep(w, q_start, v0, dt);
    const Vec f = contactForce(c, ctx, q);
    CHECK(c.stats().active == 4);
    CAPTURE(slip);
    CHECK(stiffnessError(c, ctx, q, std::min(1e-5 * delta, 1e-4 * nu * dt)) <= 1e-6);
    const Vec3 fz = f.segment<3>(0);
    const double fn = fz.dot(w.body.normal);
    CHECK(fn > 0);
    CHECK((fz - fn * w.body.normal).norm() <= 0.5 * fn * (1 + 1e-12));
  }
}

// Curved obstacles: the normal turns with the node (d n / dx = distanceHessian) and a spinning
// cylinder's surface moves (d v_s / dx): both enter K through the contact force and the friction.
TEST_CASE("node on a sphere and on a spinning cylinder: K = -dF/dq by finite differences, Coulomb bound") {
  for (const auto shape : {Obstacle::Shape::Sphere, Obstacle::Shape::Cylinder})
    for (double slip : {-1.0, 0.3, 20.0}) {  // -1: frictionless (the normal force's curvature term shows)
      const double mu = slip < 0 ? 0.0 : 0.5;
      ObstacleWorld w;
      w.body.name = "body";
      w.body.shape = shape;
      w.body.radius = 0.05;
      w.body.center = Vec3(0.01, 0, -0.05);
      w.body.origin = Vec3(0.01, 0, -0.05);
      w.body.axis = Vec3(1, 0.3, 0).normalized();
      w.body.angular_velocity = shape == Obstacle::Shape::Cylinder ? 2.0 : 0.0;
      // Four nodes on the surface, r - 0.3 delta deep, along an arc across the axis.
      SpringChain::Options o;
      const double reach = w.body.radius + r - 0.3 * delta;
      for (int k = 0; k < 4; ++k) {
        const double a = 0.2 * (k - 1.5);
        const Vec3 radial = Vec3(-0.3 * std::sin(a), std::sin(a), std::cos(a)).normalized();
        const Vec3 across = shape == Obstacle::Shape::Cylinder
                                ? Vec3(radial - radial.dot(w.body.axis) * w.body.axis).normalized()
                                : radial;
        const Vec3 along = shape == Obstacle::Shape::Cylinder ? Vec3(0.01 * k * w.body.axis) : Vec3::Zero();
        o.points.push_back(w.body.origin + reach * across + along);
      }
      o.radius = r;
      w.addRod<SpringChain>("rod", o);
      const double nu = 1e-3, dt = 1e-3;
      auto& c = w.addContact<ImcContact>(makeParams(ImcContact::schema(), {{"delta", delta}, {"stiffness", 1e-2},
                                                                            {"friction", mu}, {"slip_tolerance", nu}}));
      w.finalize();
      const Vec q = w.q();
      // Start of the step: each node moved with the surface, plus a slip of `slip` nu along x.
      Vec q_start = q, v0 = Vec::Zero(q.size());
      for (int k = 0; k < 4; ++k) {  // the surface point under node k moves with the surface
        Vec3 n;
        const Vec3 x = q.segment<3>(3 * k);
        const double d = w.body.signedDistance(x, &n);
        q_start.segment<3>(3 * k) -= dt * (w.body.surfaceVelocity(x - d * n) + std::abs(slip) * nu * Vec3::UnitX());
      }
      const EvalContext ctx = startStep(w, q_start, v0, dt);
      const Vec f = contactForce(c, ctx, q);
      CHECK(c.stats().active == 4);
      const double e = stiffnessError(c, ctx, q, std::min(1e-5 * delta, 1e-4 * nu * dt));
      CAPTURE(slip);
      CAPTURE(static_cast<int>(shape));
      MESSAGE("shape " << static_cast<int>(shape) << ", mu " << mu << ", slip " << slip << " nu: K rel. error " << e);
      CHECK(e <= 1e-6);
      for (int k = 0; k < 4; ++k) {
        Vec3 n;
        w.body.signedDistance(q.segment<3>(3 * k), &n);
        const Vec3 fk = f.segment<3>(3 * k);
        const double fn = fk.dot(n);
        CHECK(fn > 0);
        CHECK((fk - fn * n).norm() <= mu * fn * (1 + 1e-12) + 1e-18);
      }
    }
}

TEST_CASE("bad parameters are ParamErrors naming the key") {
  FakeWorld w;
  addCrossing(w, 0.01);
  w.addContact<ImcContact>(makeParams(ImcContact::schema(), {{"rods", std::vector<std::string>{"a", "nope"}}}));
  try {
    w.finalize();
    FAIL("expected a ParamError");
  } catch (const ParamError& e) {
    CHECK(e.key() == "rods");
    CHECK(std::string(e.what()).find("'nope'") != std::string::npos);
    CHECK(std::string(e.what()).find("'a', 'b'") != std::string::npos);
  }
  ObstacleWorld pw;
  pw.body.name = "floor";
  addCrossing(pw, 0.01);
  pw.addContact<ImcContact>(makeParams(ImcContact::schema(), {{"obstacles", std::vector<std::string>{"flor"}}}));
  CHECK_THROWS_WITH_AS(pw.finalize(), doctest::Contains("no obstacle named 'flor'; valid obstacles: 'floor'"), ParamError);
  ObstacleWorld twice;
  twice.body.name = "floor";
  addCrossing(twice, 0.01);
  twice.addContact<ImcContact>(makeParams(ImcContact::schema(), {{"obstacles", std::vector<std::string>{"floor", "floor"}}}));
  CHECK_THROWS_WITH_AS(twice.finalize(), doctest::Contains("obstacle 'floor' is listed twice"), ParamError);
}

TEST_CASE("findOverlaps: every overlapping edge pair and node in the floor of a random pile, as all pairs find them") {
  for (unsigned seed : {1u, 2u}) {
    CAPTURE(seed);
    rodsim::test::OverlapPile pile;
    rodsim::test::buildPile(pile, 30, 12, seed);
    auto& c = pile.world.addContact<ImcContact>(makeParams(ImcContact::schema(), {}));
    pile.world.finalize();
    rodsim::test::checkOverlaps(c, pile);
  }
}
