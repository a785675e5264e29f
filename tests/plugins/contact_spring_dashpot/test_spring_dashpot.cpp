// The "spring-dashpot" contact (Gazzola et al. 2018, Sec. IV.4, Eqs. 36-37) against a FakeWorld: the
// spring force is -dE/dq of E = k eps^2/2 (finite differences), K = -dF/dq with the dashpot
// (finite differences at fixed q_start), the dashpot dissipates (power -gamma (dD/dt)^2), Eq. 37's
// magnitude, the neighbour exclusion by arc length, and the broad phase (sweep and prune plus the
// Verlet list) against all pairs on random crumpled rods.
#include "allocation_counter.h"  // g_allocations (this file only)
#include "contact_checks.h"
#include "finite_differences.h"
#include "spring_dashpot.h"
#include "friction.h"

#include <rodsim/testing/fake_world.h>

#include <doctest/doctest.h>

#include <cmath>
#include <random>

using namespace rodsim;
using namespace rodsim::testing;
using rodsim::spring_dashpot::SpringDashpotContact;
using rodsim::test::contactForce;
using rodsim::test::ObstacleWorld;
using rodsim::test::fdGradient;
using rodsim::test::relErr;
using rodsim::test::startStep;
using rodsim::test::stiffnessError;

namespace {

constexpr double r = 0.025, L = 0.1;

// Rod A along x at z = 0; rod B along y crossing it above x = x_cross at height z_b (centre lines),
// slightly tilted so that the closest points are interior and unique.
void addCrossing(FakeWorld& w, double z_b, double x_cross = 0.3 * L) {
  SpringChain::Options a, b;
  a.points = line(5, Vec3(-2 * L, 0, 0), Vec3(2 * L, 0, 0));
  b.points = line(5, Vec3(x_cross, -2.3 * L, z_b + 0.01 * L), Vec3(x_cross + 0.05 * L, 1.7 * L, z_b - 0.01 * L));
  a.radius = b.radius = r;
  w.addRod<SpringChain>("a", a);
  w.addRod<SpringChain>("b", b);
}

SpringDashpotContact& addModel(FakeWorld& w, double k, double gamma) {
  return w.addContact<SpringDashpotContact>(
      makeParams(SpringDashpotContact::schema(), {{"stiffness", k}, {"damping", gamma}}));
}

}  // namespace

TEST_CASE("spring: F = -dE/dq by finite differences (the spring part of Eq. 37 is conservative)") {
  for (double overlap : {1e-4, 2e-3, 7e-3}) {
    CAPTURE(overlap);
    FakeWorld w;
    addCrossing(w, 2 * r - overlap);
    auto& c = addModel(w, 1e4, 0.0);
    w.finalize();
    const Vec q = w.q();
    const Vec v0 = Vec::Zero(q.size());
    EvalContext ctx = startStep(w, q, v0, 1e-4);
    const Vec f = contactForce(c, ctx, q);
    REQUIRE(c.stats().active >= 1);
    CHECK(c.stats().min_gap < 0);
    auto E = [&](const Vec& y) {
      EvalContext e = ctx;
      e.q = &y;
      return c.energy(e);
    };
    const double h = 1e-7;
    const Vec g = fdGradient(E, q, h);
    const double err = relErr(f, Vec(-g));
    MESSAGE("overlap ", overlap, " m: |F + dE/dq| / |dE/dq| = ", err);
    CHECK(err <= 1e-6);
    // Eq. 37 magnitude: the total force on rod B is k eps n (n from A to B, about +z here), A gets the opposite
    Vec3 fa = Vec3::Zero(), fb = Vec3::Zero();
    for (int i = 0; i < 5; ++i) {
      fa += f.segment<3>(w.rod(0).globalPositionDof(i));
      fb += f.segment<3>(w.rod(1).globalPositionDof(i));
    }
    CHECK((fa + fb).norm() <= 1e-12 * fb.norm());
    CHECK(fb.z() > 0);
    CHECK(fb.norm() == doctest::Approx(1e4 * -c.stats().min_gap).epsilon(1e-12));
  }
}

TEST_CASE("K = -dF/dq by finite differences, spring and dashpot, approaching and separating") {
  for (double overlap : {1e-3, 7e-3}) {
    for (double vz : {-0.3, 0.0, 0.5}) {  // rod B's vertical velocity over the step
      CAPTURE(overlap);
      CAPTURE(vz);
      const double dt = 1e-3;
      FakeWorld w;
      addCrossing(w, 2 * r - overlap);
      auto& c = addModel(w, 1e4, 10.0);
      w.finalize();
      const Vec q = w.q();
      Vec q_start = q;
      const Vec v0 = Vec::Zero(q.size());
      for (int n = 0; n < 5; ++n) q_start.segment<3>(w.rod(1).globalPositionDof(n)) -= dt * Vec3(0.1, 0.05, vz);
      EvalContext ctx = startStep(w, q_start, v0, dt);
      ctx.q = &q;
      (void)contactForce(c, ctx, q);
      REQUIRE(c.stats().active >= 1);
      const double e = stiffnessError(c, ctx, q, 1e-8);
      MESSAGE("overlap ", overlap, ", v_z ", vz, ": K rel. error ", e);
      CHECK(e <= 1e-6);
    }
  }
}

TEST_CASE("dashpot: dissipates exactly -gamma (dD/dt)^2 and opposes the normal velocity") {
  const double dt = 1e-3, gamma = 10.0, overlap = 2e-3;
  for (double vz : {-0.4, 0.4}) {
    CAPTURE(vz);
    auto force = [&](double g) {
      FakeWorld w;
      addCrossing(w, 2 * r - overlap);
      auto& c = addModel(w, 1e4, g);
      w.finalize();
      const Vec q = w.q();
      Vec q_start = q;
      const Vec v0 = Vec::Zero(q.size());
      Vec v = Vec::Zero(q.size());
      for (int n = 0; n < 5; ++n) {
        v.segment<3>(w.rod(1).globalPositionDof(n)) = Vec3(0.2, 0.1, vz);
        q_start.segment<3>(w.rod(1).globalPositionDof(n)) -= dt * Vec3(0.2, 0.1, vz);
      }
      EvalContext ctx = startStep(w, q_start, v0, dt);
      return std::make_pair(contactForce(c, ctx, q), v);
    };
    const auto [f_damped, v] = force(gamma);
    const auto f_spring = force(0.0).first;
    const Vec fd = f_damped - f_spring;
    const double power = fd.dot(v);
    // rod B moves along z at vz; the normal is about +z, so dD/dt is about vz
    CHECK(power < 0);
    CHECK(power == doctest::Approx(-gamma * vz * vz).epsilon(0.01));
    // approaching (vz < 0): the dashpot pushes B up (adds to the spring); separating: it pulls B back
    Vec3 fb = Vec3::Zero();
    for (int n = 5; n < 10; ++n) fb += fd.segment<3>(3 * n);
    CHECK(fb.z() * vz < 0);
  }
}

TEST_CASE("neighbour exclusion by arc length: a folded rod touches itself only beyond the exclusion") {
  // A hairpin: two straight legs 2.2 r apart (centre lines) joined by a half circle of radius 1.1 r,
  // edges of about r / 3, then squeezed so that the legs overlap. Neighbours along the tight bend
  // are closer than 2 r but are never pairs.
  const double rho = 1.1 * r, h = r / 3;
  std::vector<Vec3> pts;
  const int n_leg = 30;
  for (int i = 0; i < n_leg; ++i) pts.emplace_back(-(n_leg - i) * h, rho, 0);
  const int n_arc = static_cast<int>(std::ceil(M_PI * rho / h));
  for (int i = 0; i <= n_arc; ++i) {
    const double a = M_PI / 2 - M_PI * i / n_arc;
    pts.emplace_back(rho * std::cos(a), rho * std::sin(a), 0);
  }
  for (int i = 1; i <= n_leg; ++i) pts.emplace_back(-i * h, -rho, 0);
  SpringChain::Options o;
  o.points = pts;
  o.radius = r;
  for (double squeeze : {0.0, 0.15 * r}) {
    CAPTURE(squeeze);
    FakeWorld w;
    o.points = pts;
    for (auto& p : o.points)
      if (p.x() < -2 * r) p.y() -= (p.y() > 0 ? 1 : -1) * squeeze;  // legs closer by 2 squeeze
    w.addRod<SpringChain>("hairpin", o);
    auto& c = addModel(w, 1e4, 0.0);
    w.finalize();
    const auto pairs = c.contactPairs(w.q());
    const auto all = c.contactPairsAllPairs(w.q());
    CHECK(pairs == all);
    const double reach = 2 * r, excl = 0.4 * M_PI * reach;
    const std::vector<double> arc = restArcLengths(w.rod(0));
    int excluded_close = 0;
    for (int a = 0; a < c.numEdges(); ++a)
      for (int b = a + 1; b < c.numEdges(); ++b) {
        const double gap = arc[b] - arc[a + 1];
        const Vec3 p0 = w.q().segment<3>(3 * a), p1 = w.q().segment<3>(3 * a + 3);
        const Vec3 q0 = w.q().segment<3>(3 * b), q1 = w.q().segment<3>(3 * b + 3);
        const bool close = geometry::segmentDistance(p0, p1, q0, q1) < reach;
        CHECK(c.excluded(a, b) == (gap <= excl));
        if (close && gap <= excl) ++excluded_close;
        const bool listed = std::find(pairs.begin(), pairs.end(), std::make_pair(a, b)) != pairs.end();
        CHECK(listed == (close && gap > excl));
      }
    CHECK(excluded_close > 0);  // the bend's neighbours overlap geometrically and are excluded
    if (squeeze == 0.0) {
      CHECK(pairs.empty());  // legs 2.2 r apart: no contact
    } else {
      CHECK(pairs.size() >= 10);  // the squeezed legs touch along their length
    }
    // no initial overlap reported without the squeeze
    std::vector<Overlap> ov;
    c.findOverlaps(w.q(), ov);
    CHECK(ov.size() == pairs.size());
  }
}

namespace {

// Three random walks of 40 edges (edge ~ r/2) in a box of a few radii, radii 0.7 r, 0.8 r, 0.9 r:
// many contacts of every kind (edge-edge, point-edge, point-point).
void addCrumpledRods(FakeWorld& w, std::mt19937& rng) {
  std::normal_distribution<double> step(0, 1);
  for (int rod = 0; rod < 3; ++rod) {
    SpringChain::Options o;
    Vec3 p(step(rng) * r, step(rng) * r, step(rng) * r);
    Vec3 dir(step(rng), step(rng), step(rng));
    for (int i = 0; i <= 40; ++i) {
      o.points.push_back(p);
      dir = (dir.normalized() + 0.6 * Vec3(step(rng), step(rng), step(rng))).normalized();
      p += 0.5 * r * dir;
    }
    o.radius = r * (0.7 + 0.1 * rod);
    w.addRod<SpringChain>(std::string("rod") + std::to_string(rod), o);
  }
}

// k = 1e4 N/m, the given dashpot, the crumpled rods' initial overlaps allowed.
SpringDashpotContact& addCrumpledContact(FakeWorld& w, double damping) {
  return w.addContact<SpringDashpotContact>(makeParams(
      SpringDashpotContact::schema(), {{"stiffness", 1e4}, {"damping", damping}, {"allow_initial_overlap", true}}));
}

}  // namespace

TEST_CASE("broad phase = all pairs on random crumpled rods; the Verlet list gives the all-pairs force") {
  std::mt19937 rng(3);
  std::normal_distribution<double> step(0, 1);
  for (int trial = 0; trial < 20; ++trial) {
    CAPTURE(trial);
    FakeWorld w;
    addCrumpledRods(w, rng);
    auto& c = addCrumpledContact(w, 0.0);
    w.finalize();
    Vec q = w.q();
    const auto pairs = c.contactPairs(q);
    CHECK(pairs == c.contactPairsAllPairs(q));
    CHECK(!pairs.empty());
    // The candidate list, built here, then the nodes moved by random amounts below and above margin/2:
    // the force equals that of a fresh model (list built at the new q) bit for bit.
    const Vec v0 = Vec::Zero(q.size());
    EvalContext ctx = startStep(w, q, v0, 1e-4);
    (void)contactForce(c, ctx, q);
    // amp 0.02: no node moves beyond margin/50, so the near list (reach margin/16, made again beyond
    // margin/32) is reused too
    for (double amp : {0.02, 0.1, 0.45, 2.0}) {
      Vec y = q;
      for (int i = 0; i < y.size(); ++i) y[i] += amp * c.margin() / std::sqrt(3.0) * std::tanh(step(rng));
      const long long builds = c.builds(), near_builds = c.nearBuilds();
      const Vec f = contactForce(c, ctx, y);
      if (amp < 0.5) CHECK(c.builds() == builds);  // no node moved beyond margin/2: the list is reused
      if (amp < 0.05) CHECK(c.nearBuilds() == near_builds);
      CHECK(c.numNear() <= c.numCandidates());
      FakeWorld w2;
      for (int rod = 0; rod < 3; ++rod) {
        SpringChain::Options o;
        const Rod& R = w.rod(rod);
        for (int i = 0; i < R.numNodes(); ++i) o.points.push_back(y.segment<3>(R.globalPositionDof(i)));
        o.rest_lengths = static_cast<const SpringChain&>(R).options().rest_lengths;
        o.radius = R.radius(0);
        w2.addRod<SpringChain>(std::string("rod") + std::to_string(rod), o);
      }
      auto& c2 = addCrumpledContact(w2, 0.0);
      w2.finalize();
      EvalContext ctx2 = startStep(w2, y, v0, 1e-4);
      const Vec f2 = contactForce(c2, ctx2, y);
      CHECK((f - f2).norm() == 0.0);
      CHECK(c2.contactPairs(y) == c2.contactPairsAllPairs(y));
    }
  }
}

TEST_CASE("fast = reference: addForce (pair_kernel.cpp) gives addForceReference's force and stats bit for bit") {
  // Crumpled random walks (hundreds of pairs, in contact, near contact, point-point, point-edge and
  // edge-edge closest points) plus a pair of parallel segments and a pair whose centre lines meet
  // (D = 0: segmentNormal's fallback normal), with and without the dashpot, at random velocities.
  std::mt19937 rng(11);
  std::normal_distribution<double> step(0, 1);
  for (int trial = 0; trial < 10; ++trial) {
    CAPTURE(trial);
    FakeWorld w;
    addCrumpledRods(w, rng);
    SpringChain::Options par1, par2, cross1, cross2;
    par1.points = line(3, Vec3(1, 0, 0), Vec3(1 + L, 0, 0));
    par2.points = line(3, Vec3(1 + 0.3 * L, 0.5 * r, 0), Vec3(1 + 1.3 * L, 0.5 * r, 0));
    cross1.points = line(3, Vec3(2 - L, 0, 0), Vec3(2 + L, 0, 0));
    cross2.points = line(3, Vec3(2 - 0.5 * L, -L, 0), Vec3(2 + 0.5 * L, L, 0));  // meets cross1 at (2, 0, 0)
    for (auto* o : {&par1, &par2, &cross1, &cross2}) o->radius = r;
    w.addRod<SpringChain>("par1", par1);
    w.addRod<SpringChain>("par2", par2);
    w.addRod<SpringChain>("cross1", cross1);
    w.addRod<SpringChain>("cross2", cross2);
    const double gamma = trial % 2 ? 0.0 : 10.0;
    auto& c = addCrumpledContact(w, gamma);
    w.finalize();
    const Vec q0 = w.q();
    Vec v0 = Vec::Zero(q0.size());
    for (int i = 0; i < v0.size(); ++i) v0[i] = 0.1 * step(rng);
    for (int rod : {5, 6}) v0.segment(w.rod(rod).dofOffset(), w.rod(rod).numDofs()).setZero();  // keep D = 0
    const double dt = 1e-4;
    Vec q = q0 + dt * v0;
    EvalContext ctx = startStep(w, q0, v0, dt);
    ctx.q = &q;
    const Vec no_other_force = Vec::Zero(q.size());
    Vec f_ref = Vec::Random(q.size()), f_fast = f_ref;  // both add to the same nonzero force
    c.addForceReference(ctx, no_other_force, f_ref);
    const ContactStats s_ref = c.stats();
    c.addForce(ctx, no_other_force, f_fast);
    const ContactStats s_fast = c.stats();
    CHECK(s_ref.active > 0);
    CHECK(s_fast.active == s_ref.active);
    CHECK(s_fast.min_gap == s_ref.min_gap);
    CHECK((f_fast.array() == f_ref.array()).all());
    // K: right after addForce (its closest points reused) and at another configuration (computed)
    for (int at = 0; at < 2; ++at) {
      CAPTURE(at);
      Vec y = q;
      if (at == 1) {
        for (int i = 0; i < y.size(); ++i) y[i] += 0.3 * c.margin() * std::tanh(step(rng));
        ctx.q = &y;
      }
      StiffnessSink K_ref, K_fast;
      c.addStiffnessReference(ctx, K_ref);
      c.addStiffness(ctx, K_fast);
      REQUIRE(K_fast.entries().size() == K_ref.entries().size());
      CHECK(!K_ref.entries().empty());
      bool same = true;
      for (std::size_t e = 0; e < K_ref.entries().size(); ++e) {
        const auto &a = K_ref.entries()[e], &b = K_fast.entries()[e];
        same = same && a.row() == b.row() && a.col() == b.col() && a.value() == b.value();
      }
      CHECK(same);
    }
  }
}

TEST_CASE("no contact: the smallest gap is that of all candidates, also those beyond the near list") {
  for (double gap_in_margins : {0.1, 0.5, 0.9}) {
    CAPTURE(gap_in_margins);
    FakeWorld w;
    const double margin = 0.25 * r;  // the default
    addCrossing(w, 2 * r + gap_in_margins * margin);
    auto& c = addModel(w, 1e4, 10.0);
    w.finalize();
    const Vec q = w.q(), v0 = Vec::Zero(q.size());
    EvalContext ctx = startStep(w, q, v0, 1e-4);
    ctx.q = &q;
    const Vec none = Vec::Zero(q.size());
    Vec f1 = Vec::Zero(q.size()), f2 = f1;
    c.addForceReference(ctx, none, f1);
    const double g_ref = c.stats().min_gap;
    c.addForce(ctx, none, f2);
    CHECK(c.numCandidates() > 0);
    CHECK(c.stats().active == 0);
    CHECK(c.stats().min_gap == g_ref);
    CHECK(g_ref > 0);
    CHECK(f2.norm() == 0.0);
  }
}

TEST_CASE("obstacles: selected by name (unknown names refused), initial overlaps with them reported") {
  {
    FakeWorld w;
    addCrossing(w, 3 * r);
    Params p = makeParams(SpringDashpotContact::schema(), {});
    p.set("obstacles", std::vector<std::string>{"floor"});
    w.addContact<SpringDashpotContact>(p);
    CHECK_THROWS_AS(w.finalize(), ParamError);  // this world has no obstacle named 'floor'
  }
  ObstacleWorld w;
  w.body.name = "floor";
  w.body.origin = Vec3(0, 0, -0.5 * r);  // rod A's nodes (z = 0) are r/2 into it
  addCrossing(w, 3 * r);
  Params p = makeParams(SpringDashpotContact::schema(), {});
  p.set("obstacles", std::vector<std::string>{"floor"});
  auto& c = w.addContact<SpringDashpotContact>(p);
  w.finalize();
  CHECK(c.usesObstacles());
  std::vector<Overlap> ov;
  c.findOverlaps(w.q(), ov);
  REQUIRE(ov.size() == 5);  // the five nodes of rod A
  for (const auto& o : ov) {
    CHECK(o.rod_a == "a");
    CHECK(o.rod_b == "floor");
    CHECK(o.edge_b == -1);
    CHECK(o.gap == doctest::Approx(-0.5 * r));
  }
}

TEST_CASE("swept check: a rod passing through another within one step is caught; small steps skip the full check") {
  FakeWorld w;
  addCrossing(w, 3 * r);  // B 3 r above A: no contact
  auto& c = addModel(w, 1e4, 10.0);
  w.finalize();
  const Vec q0 = w.q();
  const Vec v0 = Vec::Zero(q0.size());
  EvalContext ctx = startStep(w, q0, v0, 1e-4);
  (void)contactForce(c, ctx, q0);  // the force evaluation the fast path bounds from
  Crossing out;
  // a small step (B down by r/10): cannot cross, the clearance bound skips the full check
  Vec q1 = q0;
  for (int n = 0; n < 5; ++n) q1[w.rod(1).globalPositionDof(n) + 2] -= 0.1 * r;
  CHECK_FALSE(c.findCrossing(q0, q1, out));
  CHECK(c.sweptSkipped() == 1);
  CHECK(c.sweptFull() == 0);
  // B through A in one step (from 3 r above to 3 r below): the full check runs and finds it
  Vec q2 = q0;
  for (int n = 0; n < 5; ++n) q2[w.rod(1).globalPositionDof(n) + 2] -= 6 * r;
  REQUIRE(c.findCrossing(q0, q2, out));
  CHECK(c.sweptFull() == 1);
  CHECK(out.rod_a == "a");
  CHECK(out.rod_b == "b");
  // a step of 1.2 r that ends in contact but not through: the full check runs and finds no crossing
  Vec q3 = q0;
  for (int n = 0; n < 5; ++n) q3[w.rod(1).globalPositionDof(n) + 2] -= 1.2 * r;
  CHECK_FALSE(c.findCrossing(q0, q3, out));
  CHECK(c.sweptFull() == 2);
}

TEST_CASE("K = -dF/dq where the closest point is an end node (point-edge, point-point): the skipped zero rows") {
  // Rod B stands on rod A: its lowest node 2 r - overlap above the middle of an edge of A (point-edge),
  // then above a node of A (point-point with both of A's edges there), with the dashpot moving.
  for (double x_foot : {0.37 * L, 0.0}) {
    CAPTURE(x_foot);
    const double dt = 1e-3, overlap = 3e-3;
    FakeWorld w;
    SpringChain::Options a, b;
    a.points = line(5, Vec3(-2 * L, 0, 0), Vec3(2 * L, 0, 0));
    b.points = line(4, Vec3(x_foot + 0.01 * L, 0.02 * L, 2 * r - overlap), Vec3(x_foot + 0.3 * L, 0.4 * L, 2 * r + 3 * L));
    a.radius = b.radius = r;
    w.addRod<SpringChain>("a", a);
    w.addRod<SpringChain>("b", b);
    auto& c = addModel(w, 1e4, 10.0);
    w.finalize();
    const Vec q = w.q();
    Vec q_start = q;
    const Vec v0 = Vec::Zero(q.size());
    for (int n = 0; n < 4; ++n) q_start.segment<3>(w.rod(1).globalPositionDof(n)) -= dt * Vec3(0.05, -0.1, -0.2);
    EvalContext ctx = startStep(w, q_start, v0, dt);
    ctx.q = &q;
    (void)contactForce(c, ctx, q);
    REQUIRE(c.stats().active >= 1);
    StiffnessSink K;
    c.addStiffness(ctx, K);
    const double e = stiffnessError(c, ctx, q, 1e-8);
    MESSAGE("foot at x = ", x_foot, ": ", c.stats().active, " pairs, ", K.entries().size(), " entries, K rel. error ", e);
    CHECK(e <= 1e-6);
    CHECK(K.entries().size() < 144 * static_cast<std::size_t>(c.stats().active));  // zero rows left out
  }
}

TEST_CASE("no heap allocation in beginStep, addForce and addStiffness once warm, list rebuilds included") {
  std::mt19937 rng(5);
  std::normal_distribution<double> step(0, 1);
  FakeWorld w;
  for (int rod = 0; rod < 3; ++rod) {  // crumpled random walks: many pairs in contact
    SpringChain::Options o;
    Vec3 p(step(rng) * r, step(rng) * r, step(rng) * r);
    Vec3 dir(step(rng), step(rng), step(rng));
    for (int i = 0; i <= 40; ++i) {
      o.points.push_back(p);
      dir = (dir.normalized() + 0.6 * Vec3(step(rng), step(rng), step(rng))).normalized();
      p += 0.5 * r * dir;
    }
    o.radius = r;
    w.addRod<SpringChain>(std::string("rod") + std::to_string(rod), o);
  }
  auto& c = w.addContact<SpringDashpotContact>(makeParams(
      SpringDashpotContact::schema(), {{"stiffness", 1e4}, {"damping", 10.0}, {"allow_initial_overlap", true}}));
  w.finalize();
  const Vec q0 = w.q();
  const Vec v0 = Vec::Zero(q0.size());
  // Two configurations farther apart than the Verlet margin: alternating makes every step rebuild.
  Vec q1 = q0;
  for (int i = 0; i < q1.size(); ++i) q1[i] += 2.0 * c.margin() * std::tanh(step(rng));
  Vec f = Vec::Zero(q0.size());
  const Vec no_other_force = Vec::Zero(q0.size());
  StiffnessSink K;
  auto stepAt = [&](const Vec& q) {
    w.q() = q;
    w.beginStep(1e-4);
    EvalContext ctx;
    ctx.dt = 1e-4;
    ctx.q_start = &q;
    ctx.v_start = &v0;
    ctx.q = &q;
    f.setZero();
    K.clear();
    c.addForce(ctx, no_other_force, f);
    c.addStiffness(ctx, K);
    return c.stats().active;
  };
  int active = stepAt(q0) + stepAt(q1);  // warm: buffers sized for both
  const long long builds = c.builds();
  const long before = g_allocations.load();
  for (int k = 0; k < 6; ++k) active += stepAt(k % 2 ? q1 : q0);
  CHECK(g_allocations.load() == before);
  CHECK(c.builds() > builds);  // the candidate list was rebuilt in the timed steps
  CHECK(active > 0);
}

// ------------------------------------------------------------------ obstacles and friction (issue 39)

namespace {

SpringDashpotContact& addFrictionModel(FakeWorld& w, double k, double gamma, double mu, double vs) {
  return w.addContact<SpringDashpotContact>(makeParams(
      SpringDashpotContact::schema(),
      {{"stiffness", k}, {"damping", gamma}, {"friction", mu}, {"slip_velocity", vs}, {"allow_initial_overlap", true}}));
}

// The largest |F_t| / (mu f_n) over the nodes of rod 0 (normal of obstacle `o` at each node).
double coulombRatio(FakeWorld& w, const Obstacle& o, const Vec& q, const Vec& f, double mu) {
  double worst = 0;
  for (int i = 0; i < w.rod(0).numNodes(); ++i) {
    const int x = w.rod(0).globalPositionDof(i);
    Vec3 n;
    o.signedDistance(q.segment<3>(x), &n);
    const Vec3 F = f.segment<3>(x);
    const double fn = F.dot(n);
    if (F.norm() == 0) continue;
    CHECK(fn > 0);  // never pulling
    worst = std::max(worst, (F - fn * n).norm() / (mu * fn));
  }
  return worst;
}

}  // namespace

TEST_CASE("node-obstacle contact with friction: K = -dF/dq by finite differences on a plane, a sphere and a spinning cylinder") {
  // Four nodes of a rod pressed into the obstacle (overlaps 1e-4 to 4e-4 m, r = 0.025), moving over the
  // step with the surface plus a slip of `slip` v_s across it (0.3: the viscous branch of tanh, 20:
  // sliding), approaching or separating along the normal (the dashpot), with and without friction.
  const double vs = 1e-3, dt = 1e-3;
  for (const auto shape : {Obstacle::Shape::Plane, Obstacle::Shape::Sphere, Obstacle::Shape::Cylinder})
    for (double mu : {0.0, 0.4})
      for (double slip : {0.3, 20.0})
        for (double vn : {-0.02, 0.005}) {
          CAPTURE(static_cast<int>(shape));
          CAPTURE(mu);
          CAPTURE(slip);
          CAPTURE(vn);
          ObstacleWorld w;
          w.body.name = "body";
          w.body.shape = shape;
          w.body.radius = 0.05;
          w.body.normal = Vec3(0, 0.2, 1).normalized();
          w.body.origin = w.body.center = Vec3(0.01, 0, shape == Obstacle::Shape::Plane ? 0.0 : -0.05);
          w.body.axis = Vec3(1, 0.3, 0).normalized();
          w.body.angular_velocity = shape == Obstacle::Shape::Cylinder ? 2.0 : 0.0;
          SpringChain::Options o;
          for (int k = 0; k < 4; ++k) {
            const double depth = 1e-4 * (k + 1);
            if (shape == Obstacle::Shape::Plane) {
              o.points.push_back(w.body.origin + Vec3(0.3 * L * k, 0.05 * L * k, 0) +
                                 (r - depth) * w.body.normal - Vec3(0.3 * L * k, 0.05 * L * k, 0).dot(w.body.normal) * w.body.normal);
              continue;
            }
            const double a = 0.2 * (k - 1.5);
            const Vec3 radial = Vec3(-0.3 * std::sin(a), std::sin(a), std::cos(a)).normalized();
            const Vec3 across = shape == Obstacle::Shape::Cylinder
                                    ? Vec3(radial - radial.dot(w.body.axis) * w.body.axis).normalized()
                                    : radial;
            const Vec3 along = shape == Obstacle::Shape::Cylinder ? Vec3(0.01 * k * w.body.axis) : Vec3::Zero();
            o.points.push_back(w.body.origin + (w.body.radius + r - depth) * across + along);
          }
          o.radius = r;
          w.addRod<SpringChain>("rod", o);
          auto& c = addFrictionModel(w, 1e3, 0.5, mu, vs);
          w.finalize();
          const Vec q = w.q();
          Vec q_start = q;
          const Vec v0 = Vec::Zero(q.size());
          for (int k = 0; k < 4; ++k) {
            Vec3 n;
            const Vec3 x = q.segment<3>(3 * k);
            const double d = w.body.signedDistance(x, &n);
            const Vec3 t = (Vec3::UnitX() - Vec3::UnitX().dot(n) * n).normalized();
            q_start.segment<3>(3 * k) -= dt * (w.body.surfaceVelocity(x - d * n) + slip * vs * t + vn * n);
          }
          const EvalContext ctx = startStep(w, q_start, v0, dt);
          const Vec f = contactForce(c, ctx, q);
          CHECK(c.stats().active == 4);
          const double e = stiffnessError(c, ctx, q, 1e-3 * vs * dt);
          MESSAGE("shape " << static_cast<int>(shape) << ", mu " << mu << ", slip " << slip << " v_s, v_n " << vn
                           << ": K rel. error " << e);
          CHECK(e <= 1e-6);
          if (mu > 0) {
            const double ratio = coulombRatio(w, w.body, q, f, mu);
            CHECK(ratio <= 1 + 1e-12);
            if (slip > 10) CHECK(ratio > 0.99);  // sliding: the full Coulomb force
          }
        }
}

TEST_CASE("node-obstacle: the spring-dashpot law of Eq. 37 on the overlap, never pulling, energy k eps^2/2") {
  ObstacleWorld w;
  w.body.name = "floor";
  SpringChain::Options o;
  const double eps = 2e-4;
  o.points = line(3, Vec3(0, 0, r - eps), Vec3(2 * L, 0, r + 0.5 * r));  // node 0 in contact only
  o.radius = r;
  w.addRod<SpringChain>("rod", o);
  auto& c = addFrictionModel(w, 1e3, 0.5, 0.0, 1e-4);
  w.finalize();
  const Vec q = w.q(), v0 = Vec::Zero(q.size());
  const double dt = 1e-3;
  for (double vn : {-0.1, 0.1, 1.0}) {  // approaching, separating slower / faster than k eps / gamma = 0.4 m/s
    CAPTURE(vn);
    Vec q_start = q;
    q_start[2] -= vn * dt;
    const EvalContext ctx = startStep(w, q_start, v0, dt);
    const Vec f = contactForce(c, ctx, q);
    CHECK(c.stats().active == 1);
    CHECK(c.stats().min_gap == doctest::Approx(-eps));
    const double fn = std::max(1e3 * eps - 0.5 * vn, 0.0);
    CHECK(f[2] == doctest::Approx(fn).epsilon(1e-12));
    CHECK(f.norm() == doctest::Approx(fn).epsilon(1e-12));
    EvalContext e = ctx;
    e.q = &q;
    CHECK(c.energy(e) == doctest::Approx(0.5 * 1e3 * eps * eps));
  }
}

TEST_CASE("rod-rod friction: K = -dF/dq by finite differences (s, t and n moving), Coulomb bound, dissipation") {
  // The crossing of addCrossing (interior closest points) and rod B standing on A (point-edge and
  // point-point closest points), rod B moving over the step along and across A (sliding and in the
  // viscous branch), approaching and separating, with and without the dashpot.
  const double vs = 1e-3, dt = 1e-3;
  for (int config = 0; config < 3; ++config)
    for (double gamma : {0.0, 0.5})
      for (double slip : {0.3, 20.0})
        for (double vz : {-0.02, 0.005}) {
          CAPTURE(config);
          CAPTURE(gamma);
          CAPTURE(slip);
          CAPTURE(vz);
          FakeWorld w;
          const double overlap = 1e-3;
          if (config == 0) {
            addCrossing(w, 2 * r - overlap);
          } else {
            const double x_foot = config == 1 ? 0.37 * L : 0.0;
            SpringChain::Options a, b;
            a.points = line(5, Vec3(-2 * L, 0, 0), Vec3(2 * L, 0, 0));
            b.points = line(4, Vec3(x_foot + 0.01 * L, 0.02 * L, 2 * r - overlap),
                            Vec3(x_foot + 0.3 * L, 0.4 * L, 2 * r + 3 * L));
            a.radius = b.radius = r;
            w.addRod<SpringChain>("a", a);
            w.addRod<SpringChain>("b", b);
          }
          auto& c = addFrictionModel(w, 1e3, gamma, 0.4, vs);
          w.finalize();
          const Vec q = w.q();
          Vec q_start = q;
          const Vec v0 = Vec::Zero(q.size());
          const Vec3 vb = slip * vs * Vec3(0.8, 0.6, 0) + Vec3(0, 0, vz);
          for (int n = 0; n < w.rod(1).numNodes(); ++n)
            q_start.segment<3>(w.rod(1).globalPositionDof(n)) -= dt * (vb + 0.1 * slip * vs * n * Vec3(0, 1, 0));
          EvalContext ctx = startStep(w, q_start, v0, dt);
          const Vec f = contactForce(c, ctx, q);
          REQUIRE(c.stats().active >= 1);
          const double e = stiffnessError(c, ctx, q, 1e-3 * vs * dt);
          MESSAGE("config " << config << ", gamma " << gamma << ", slip " << slip << " v_s, v_z " << vz
                            << ": K rel. error " << e);
          CHECK(e <= 1e-6);
          // the friction alone: its power is <= 0 and it is at most mu f_n on each rod
          const Vec v = (q - q_start) / dt;
          Vec f_nf = Vec::Zero(q.size());
          {
            // same model without friction: rebuild with mu = 0 in a copy of the world
            FakeWorld w2;
            for (int rod = 0; rod < 2; ++rod) {
              SpringChain::Options o;
              const Rod& R = w.rod(rod);
              for (int i = 0; i < R.numNodes(); ++i) o.points.push_back(q.segment<3>(R.globalPositionDof(i)));
              o.rest_lengths = static_cast<const SpringChain&>(R).options().rest_lengths;
              o.radius = R.radius(0);
              w2.addRod<SpringChain>(rod ? "b" : "a", o);
            }
            auto& c2 = addFrictionModel(w2, 1e3, gamma, 0.0, vs);
            w2.finalize();
            EvalContext ctx2 = startStep(w2, q_start, v0, dt);
            f_nf = contactForce(c2, ctx2, q);
          }
          const Vec ffr = f - f_nf;
          CHECK(ffr.dot(v) <= 0);
          Vec3 fb = Vec3::Zero(), fbn = Vec3::Zero();
          for (int n = 0; n < w.rod(1).numNodes(); ++n) {
            fb += ffr.segment<3>(w.rod(1).globalPositionDof(n));
            fbn += f_nf.segment<3>(w.rod(1).globalPositionDof(n));
          }
          if (c.stats().active == 1) {
            CHECK(fb.norm() <= 0.4 * fbn.norm() * (1 + 1e-12));
            if (slip > 10) CHECK(fb.norm() > 0.99 * 0.4 * fbn.norm());
            CHECK(std::abs(fb.dot(fbn)) <= 1e-12 * fb.norm() * fbn.norm() + 1e-300);  // tangential
          }
        }
}

TEST_CASE("closest-point parameters: d(s, t)/dx by finite differences (interior, one clamped)") {
  std::mt19937 rng(7);
  std::normal_distribution<double> N(0, 1);
  int interior = 0, one = 0;
  for (int trial = 0; trial < 200; ++trial) {
    Vec3 x[4];
    for (auto& p : x) p = Vec3(N(rng), N(rng), N(rng));
    geometry::SegmentNormal sn;
    geometry::segmentNormal(x[0], x[1], x[2], x[3], sn);
    if (!(sn.D > 1e-3)) continue;
    Eigen::Matrix<double, 2, 12> J;
    rodsim::spring_dashpot::closestPointJacobian(x[0], x[1], x[2], x[3], sn, J);
    const double h = 1e-7;
    double err = 0, ref = 0;
    bool same_class = true;
    for (int i = 0; i < 12; ++i) {
      Vec3 xp[4] = {x[0], x[1], x[2], x[3]}, xm[4] = {x[0], x[1], x[2], x[3]};
      xp[i / 3][i % 3] += h;
      xm[i / 3][i % 3] -= h;
      geometry::SegmentNormal sp, sm;
      geometry::segmentNormal(xp[0], xp[1], xp[2], xp[3], sp);
      geometry::segmentNormal(xm[0], xm[1], xm[2], xm[3], sm);
      same_class = same_class && sp.s_free == sn.s_free && sm.s_free == sn.s_free && sp.t_free == sn.t_free &&
                   sm.t_free == sn.t_free;
      const Eigen::Vector2d fd((sp.s - sm.s) / (2 * h), (sp.t - sm.t) / (2 * h));
      err = std::max(err, (fd - J.col(i)).norm());
      ref = std::max(ref, fd.norm());
    }
    if (!same_class) continue;
    if (sn.s_free && sn.t_free) ++interior;
    else if (sn.s_free || sn.t_free) ++one;
    CHECK(err <= 1e-6 * std::max(1.0, ref));
  }
  CHECK(interior > 10);
  CHECK(one > 10);
}

TEST_CASE("fast = reference with friction and an obstacle: forces, stats and K bit for bit") {
  std::mt19937 rng(13);
  std::normal_distribution<double> step(0, 1);
  for (int trial = 0; trial < 6; ++trial) {
    CAPTURE(trial);
    ObstacleWorld w;
    w.body.name = "floor";
    w.body.origin = Vec3(0, 0, -0.5 * r);
    addCrumpledRods(w, rng);
    auto& c = w.addContact<SpringDashpotContact>(
        makeParams(SpringDashpotContact::schema(), {{"stiffness", 1e4}, {"damping", trial % 2 ? 0.0 : 10.0},
                                                    {"friction", 0.3}, {"allow_initial_overlap", true}}));
    w.finalize();
    const Vec q0 = w.q();
    Vec v0 = Vec::Zero(q0.size());
    for (int i = 0; i < v0.size(); ++i) v0[i] = 0.1 * step(rng);
    const double dt = 1e-4;
    Vec q = q0 + dt * v0;
    EvalContext ctx = startStep(w, q0, v0, dt);
    ctx.q = &q;
    const Vec none = Vec::Zero(q.size());
    Vec f_ref = Vec::Random(q.size()), f_fast = f_ref;
    c.addForceReference(ctx, none, f_ref);
    const ContactStats s_ref = c.stats();
    c.addForce(ctx, none, f_fast);
    CHECK(c.stats().active == s_ref.active);
    CHECK(c.stats().min_gap == s_ref.min_gap);
    CHECK((f_fast.array() == f_ref.array()).all());
    StiffnessSink K_ref, K_fast;
    c.addStiffnessReference(ctx, K_ref);
    c.addStiffness(ctx, K_fast);
    REQUIRE(K_fast.entries().size() == K_ref.entries().size());
    bool same = true;
    for (std::size_t e = 0; e < K_ref.entries().size(); ++e) {
      const auto &a = K_ref.entries()[e], &b = K_fast.entries()[e];
      same = same && a.row() == b.row() && a.col() == b.col() && a.value() == b.value();
    }
    CHECK(same);
  }
}

TEST_CASE("swept check with an obstacle: a node passing through the floor within one step is caught") {
  ObstacleWorld w;
  w.body.name = "floor";
  SpringChain::Options o;
  o.points = line(4, Vec3(0, 0, 3 * r), Vec3(3 * L, 0, 3 * r));
  o.radius = r;
  w.addRod<SpringChain>("rod", o);
  auto& c = addFrictionModel(w, 1e4, 0.0, 0.3, 1e-3);
  w.finalize();
  const Vec q0 = w.q(), v0 = Vec::Zero(q0.size());
  EvalContext ctx = startStep(w, q0, v0, 1e-4);
  (void)contactForce(c, ctx, q0);
  CHECK(c.stats().active == 0);
  CHECK(c.stats().min_gap == doctest::Approx(2 * r));
  Crossing out;
  Vec q1 = q0;  // down by r/4: cannot cross, the clearance bound skips the full check
  for (int n = 0; n < 4; ++n) q1[3 * n + 2] -= 0.25 * r;
  CHECK_FALSE(c.findCrossing(q0, q1, out));
  CHECK(c.sweptSkipped() == 1);
  Vec q2 = q0;  // through the floor in one step
  for (int n = 0; n < 4; ++n) q2[3 * n + 2] -= 6 * r;
  REQUIRE(c.findCrossing(q0, q2, out));
  CHECK(out.rod_a == "rod");
  CHECK(out.rod_b == "floor");
}
