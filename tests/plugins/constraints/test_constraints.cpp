// clamp, rotate and translate on the FakeWorld spring chain (with twist DOFs for the frames).
#include <rodsim/testing/fake_world.h>
#include "explicit_solvers.h"
#include "newton_solvers.h"
#include "rigid_constraints.h"

#include <doctest/doctest.h>

#include "expect_param_error.h"

#include <Eigen/Geometry>

#include <cmath>
#include <numbers>

using namespace rodsim;
using namespace rodsim::testing;
using rodsim::constraints::Clamp;
using rodsim::constraints::Rotate;
using rodsim::constraints::Translate;

using rodsim::test::checkParamError;

namespace {

SpringChain::Options twistedChain(int n, const Vec3& a, const Vec3& b) {
  SpringChain::Options o;
  o.points = line(n, a, b);
  o.twist = true;
  o.twist_stiffness = 0.01;
  return o;
}

Params nodesParams(const Schema& s, const std::string& rod, std::vector<int> nodes,
                   std::initializer_list<std::pair<std::string, Value>> extra = {}) {
  Params p = makeParams(s, extra);
  p.set("rod", toValue(rod));
  p.set("nodes", toValue(nodes));
  return p;
}


}  // namespace

TEST_CASE("clamp: prescribes node positions and the twist of edges between listed nodes") {
  FakeWorld w;
  SpringChain::Options pad;
  pad.points = line(2, Vec3(0, 3, 0), Vec3(1, 3, 0));
  w.addRod<SpringChain>("pad", pad);
  auto& rod = w.addRod<SpringChain>("beam", twistedChain(6, Vec3(0, 0, 0), Vec3(1, 0, 0)));
  auto& c = w.addConstraint<Clamp>(nodesParams(Clamp::schema(), "beam", {0, 1, -1}));
  w.finalize();
  const int off = rod.dofOffset();
  CHECK(c.nodes() == std::vector<int>{0, 1, 5});
  CHECK(c.edges() == std::vector<int>{0});  // only edge 0 has both nodes listed
  CHECK(c.dofs().size() == 3 * 3 + 1);
  CHECK(c.positionDofs() == std::vector<int>{off + 0, off + 4, off + 20});
  CHECK(c.dofs().back() == off + rod.twistDof(0));
  int fixed = 0;
  for (char f : w.fixedMask()) fixed += f;
  CHECK(fixed == 10);

  const Vec q0 = w.q();
  Vec q = q0 + Vec::Constant(w.numDofs(), 0.05);
  c.prescribe(3.0, q);
  for (int d : c.dofs()) CHECK(q[d] == doctest::Approx(q0[d]).epsilon(1e-14));
  CHECK(q[off + 8] == doctest::Approx(q0[off + 8] + 0.05));  // free node 2 untouched
}

TEST_CASE("clamp components: a pin that holds x and y only, no twist, z untouched") {
  FakeWorld w;
  auto& rod = w.addRod<SpringChain>("beam", twistedChain(6, Vec3(0, 0, 0), Vec3(0, 0, 1)));
  auto& top = w.addConstraint<Clamp>(nodesParams(Clamp::schema(), "beam", {-2, -1}, {{"components", toValue("xy")}}));
  auto& pin = w.addConstraint<Clamp>(nodesParams(Clamp::schema(), "beam", {0}));
  w.finalize();
  const int off = rod.dofOffset();
  CHECK(top.edges().empty());  // fewer than three components: no twist held
  CHECK(top.dofs() == std::vector<int>{off + 16, off + 17, off + 20, off + 21});
  CHECK(top.positionDofs() == std::vector<int>{off + 16, off + 20});
  CHECK(pin.edges().empty());  // one node: a pin (position held, frames free)
  CHECK(pin.dofs() == std::vector<int>{off + 0, off + 1, off + 2});
  const Vec q0 = w.q();
  Vec q = q0 + Vec::Constant(w.numDofs(), 0.05);
  top.prescribe(1.0, q);
  for (int d : top.dofs()) CHECK(q[d] == doctest::Approx(q0[d]).epsilon(1e-14));
  CHECK(q[off + 18] == doctest::Approx(q0[off + 18] + 0.05));  // z of node 4 slides
  CHECK(q[off + 22] == doctest::Approx(q0[off + 22] + 0.05));  // z of node 5 slides
  CHECK(q[off + rod.twistDof(4)] == doctest::Approx(q0[off + rod.twistDof(4)] + 0.05));  // twist untouched
  checkParamError([&] { Clamp(nodesParams(Clamp::schema(), "beam", {0}, {{"components", toValue("xq")}})); },
                  "components", "subset");
  checkParamError([&] { Clamp(nodesParams(Clamp::schema(), "beam", {0}, {{"components", toValue("xx")}})); },
                  "components", "at most once");
  checkParamError([&] { Clamp(nodesParams(Clamp::schema(), "beam", {0}, {{"components", toValue("")}})); },
                  "components", "at least one");
}

TEST_CASE("rotate: nodes and frames turn rigidly about the axis through the center") {
  FakeWorld w;
  auto& rod = w.addRod<SpringChain>("beam", twistedChain(5, Vec3(0.1, 0.2, 0.3), Vec3(0.5, 0.3, 0.1)));
  const Vec3 axis = Vec3(1, 2, 2) / 3.0, center(0.2, -0.1, 0.4);
  const double omega = 2.0, start = 0.3;
  auto& c = w.addConstraint<Rotate>(nodesParams(Rotate::schema(), "beam", {0, 1, 2},
      {{"axis", toValue(Vec3(1, 2, 2))}, {"center", toValue(center)},
       {"angular_velocity", toValue(omega)}, {"start", toValue(start)}}));
  w.finalize();
  const int off = rod.dofOffset();
  std::vector<Vec3> m1_0;
  for (int e = 0; e < 2; ++e) {
    Vec3 t, m1, m2;
    rod.materialFrame(e, t, m1, m2);
    m1_0.push_back(m1);
  }
  const Vec q0 = w.q();

  // Before start: still.
  Vec q = q0;
  c.prescribe(0.2, q);
  CHECK((q - q0).norm() < 1e-14);

  // March in time (the solver passes the previous values in q) up to t = 1.3: 2 rad.
  for (double t = 0.0; t <= 1.3 + 1e-12; t += 0.05) c.prescribe(t, q);
  const Mat3 R = Eigen::AngleAxisd(omega * (1.3 - start), axis).toRotationMatrix();
  for (int n = 0; n < 3; ++n) {
    const Vec3 p0 = q0.segment<3>(off + rod.positionDof(n));
    const Vec3 expected = center + R * (p0 - center);
    CHECK((q.segment<3>(off + rod.positionDof(n)) - expected).norm() < 1e-12);
  }
  // Free nodes untouched.
  CHECK((q.segment<3>(off + rod.positionDof(3)) - q0.segment<3>(off + rod.positionDof(3))).norm() == 0.0);
  // The material frames of edges 0 and 1 follow: m1 = R m1_0.
  rod.setConfiguration(q.segment(off, rod.numDofs()));
  for (int e = 0; e < 2; ++e) {
    Vec3 t, m1, m2;
    rod.materialFrame(e, t, m1, m2);
    CHECK((m1 - R * m1_0[e]).norm() < 1e-12);
  }
  CHECK(c.dofs().size() == 9 + 2);
}

TEST_CASE("rotate: an edge on the axis spins about itself and its twist accumulates turns") {
  FakeWorld w;
  auto& rod = w.addRod<SpringChain>("flagellum", twistedChain(4, Vec3(0, 0, 0), Vec3(0.3, 0, 0)));
  const double omega = 5.0;
  auto& c = w.addConstraint<Rotate>(nodesParams(Rotate::schema(), "flagellum", {0, 1},
      {{"axis", toValue(Vec3(2, 0, 0))}, {"angular_velocity", toValue(omega)}}));
  w.finalize();
  const int tw = rod.dofOffset() + rod.twistDof(0);
  Vec q = w.q();
  const double theta0 = q[tw];
  const double dt = 0.01;
  for (int n = 1; n <= 1000; ++n) {  // 10 s: about 8 turns
    c.prescribe(n * dt, q);
    CHECK(q[tw] == doctest::Approx(theta0 + omega * n * dt).epsilon(1e-12));
  }
  CHECK(q.segment<3>(rod.globalPositionDof(1)).isApprox(Vec3(0.1, 0, 0), 1e-14));
}

TEST_CASE("rotate: parameter errors") {
  checkParamError([] {
    Rotate r(nodesParams(Rotate::schema(), "beam", {0}, {{"axis", toValue(Vec3(0, 0, 0))}, {"angular_velocity", toValue(1.0)}}));
  }, "axis", "nonzero");
  FakeWorld w;
  w.addRod<SpringChain>("beam", twistedChain(3, Vec3(0, 0, 0), Vec3(1, 0, 0)));
  w.addConstraint<Rotate>(nodesParams(Rotate::schema(), "beam", {0, 3},
      {{"axis", toValue(Vec3(0, 0, 1))}, {"angular_velocity", toValue(1.0)}}));
  checkParamError([&] { w.finalize(); }, "nodes", "node 3 is out of range for rod 'beam' with 3 nodes: valid -3 to 2");
  FakeWorld w2;
  w2.addRod<SpringChain>("beam", twistedChain(3, Vec3(0, 0, 0), Vec3(1, 0, 0)));
  w2.addConstraint<Clamp>(nodesParams(Clamp::schema(), "rod1", {0}));
  checkParamError([&] { w2.finalize(); }, "rod", "valid rods: 'beam'");
}

TEST_CASE("translate: moves at the velocity between start and stop, frames keep m1") {
  FakeWorld w;
  auto& rod = w.addRod<SpringChain>("beam", twistedChain(4, Vec3(0, 0, 0), Vec3(0, 0.3, 0.3)));
  const Vec3 v(0.1, -0.2, 0.05);
  auto& c = w.addConstraint<Translate>(nodesParams(Translate::schema(), "beam", {-2, -1},
      {{"velocity", toValue(v)}, {"start", toValue(0.5)}, {"stop", toValue(1.5)}}));
  w.finalize();
  Vec3 t0, m1_0, m2_0;
  rod.materialFrame(2, t0, m1_0, m2_0);
  const Vec q0 = w.q();
  const int d = rod.globalPositionDof(3);
  for (double t : {0.0, 0.4, 0.5, 1.0, 1.5, 2.0, 10.0}) {
    Vec q = q0;
    c.prescribe(t, q);
    const double s = std::clamp(t - 0.5, 0.0, 1.0);
    CHECK((q.segment<3>(d) - (q0.segment<3>(d) + s * v)).norm() < 1e-14);
    rod.setConfiguration(q.segment(rod.dofOffset(), rod.numDofs()));
    Vec3 tt, m1, m2;
    rod.materialFrame(2, tt, m1, m2);
    CHECK((m1 - m1_0).norm() < 1e-12);
  }
  checkParamError([] {
    Translate tr(nodesParams(Translate::schema(), "beam", {0},
        {{"velocity", toValue(Vec3(1, 0, 0))}, {"start", toValue(2.0)}, {"stop", toValue(1.0)}}));
  }, "stop", "before start");
  // Without stop it keeps moving.
  Translate forever(nodesParams(Translate::schema(), "beam", {0}, {{"velocity", toValue(Vec3(1, 0, 0))}}));
  Mat3 R;
  Vec3 b;
  forever.motion(100.0, R, b);
  CHECK(b.x() == doctest::Approx(100.0));
  CHECK(R.isIdentity());
}

TEST_CASE("translate + static solver: a chain pulled at its end stretches uniformly") {
  // Springs in series: end displacement u over N springs of stiffness k; reaction k u / N.
  FakeWorld w;
  SpringChain::Options o;
  o.points = line(5, Vec3(0, 0, 0), Vec3(1, 0, 0));
  o.stiffness = 40;
  w.addRod<SpringChain>("chain", o);
  w.addConstraint<Clamp>(nodesParams(Clamp::schema(), "chain", {0}));
  auto& pull = w.addConstraint<Translate>(nodesParams(Translate::schema(), "chain", {-1},
      {{"velocity", toValue(Vec3(0.2, 0, 0))}, {"stop", toValue(0.5)}}));
  w.finalize();
  newton::StaticSolver s(makeParams(newton::StaticSolver::schema(), {}));
  for (int n = 0; n < 4; ++n) {
    const StepReport r = s.step(w, 0.25);
    REQUIRE_MESSAGE(r.ok, r.message);
  }
  const double u = 0.1;  // 0.2 m/s for 0.5 s
  for (int n = 0; n < 5; ++n) CHECK(w.q()[3 * n] == doctest::Approx(n * (1.0 + u) / 4).epsilon(1e-10));
  // Reaction on the pulled end (x component of the residual): -k u / 4 (it pulls the rod +x,
  // the rod pulls back): residual = -F = +k u/4 on the end node.
  CHECK(w.lastResidual()[pull.positionDofs()[0]] == doctest::Approx(40 * u / 4).epsilon(1e-10));
  CHECK(w.lastResidual()[0] == doctest::Approx(-40 * u / 4).epsilon(1e-10));
}

TEST_CASE("position-verlet's residual: the reaction on the clamped node, an exact 0 on the free DOFs") {
  // Node 1 of a resting chain displaced by d along x: the first spring pulls node 0 with k d in +x,
  // so the clamp's reaction (residual = M a - F, a = 0 on a held node) is -k d in x. On a free DOF
  // the kick solves M (v - v0)/dt = F for v: the residual there is 0 exactly, not round-off.
  FakeWorld w;
  SpringChain::Options o;
  o.points = line(3, Vec3(0, 0, 0), Vec3(1, 0, 0));
  o.stiffness = 40;
  w.addRod<SpringChain>("chain", o);
  auto& clamp = w.addConstraint<Clamp>(nodesParams(Clamp::schema(), "chain", {0}));
  w.finalize();
  const double d = 0.01;
  w.q()[3] += d;
  explicit_solver::PositionVerlet s(makeParams(explicit_solver::PositionVerlet::schema(), {}));
  for (int n = 0; n < 2; ++n) {  // the second step from the state after the first (v != 0)
    const StepReport r = s.step(w, 1e-3);
    REQUIRE_MESSAGE(r.ok, r.message);
    const Vec& R = w.lastResidual();
    if (n == 0) {
      // the force is evaluated after a half drift at v = 0: at the initial positions
      CHECK(R[clamp.positionDofs()[0]] == doctest::Approx(-40 * d).epsilon(1e-12));
      CHECK(R[1] == 0.0);
      CHECK(R[2] == 0.0);
    }
    for (int i = 3; i < R.size(); ++i) CHECK(R[i] == 0.0);
  }
}

TEST_CASE("constraint schemas") {
  CHECK(Clamp::schema().type() == "clamp");
  CHECK(Rotate::schema().type() == "rotate");
  CHECK(Translate::schema().type() == "translate");
  CHECK(Rotate::schema().find("angular_velocity")->unit == "rad/s");
  CHECK(Rotate::schema().find("center")->unit == "m");
  CHECK(Translate::schema().find("velocity")->unit == "m/s");
  CHECK(Translate::schema().find("stop")->unit == "s");
  for (const Schema& s : {Clamp::schema(), Rotate::schema(), Translate::schema()}) {
    CHECK(s.find("rod")->required);
    CHECK(s.find("nodes")->required);
  }
}
