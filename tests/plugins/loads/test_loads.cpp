// gravity, point-load and damping on the FakeWorld spring chain.
#include <rodsim/testing/fake_world.h>
#include "loads.h"

#include <doctest/doctest.h>

#include "expect_param_error.h"

#include <Eigen/Dense>

using namespace rodsim;
using namespace rodsim::testing;
using rodsim::loads::Damping;
using rodsim::loads::Gravity;
using rodsim::loads::PointLoad;

using rodsim::test::checkParamError;

namespace {

SpringChain::Options chain(int n, const Vec3& a, const Vec3& b, bool twist = false) {
  SpringChain::Options o;
  o.points = line(n, a, b);
  o.masses.clear();
  for (int i = 0; i < n; ++i) o.masses.push_back(0.1 + 0.05 * i);
  o.twist = twist;
  return o;
}

EvalContext staticContext(const Vec& q, double load = 1.0) {
  EvalContext ctx;
  ctx.quasi_static = true;
  ctx.load_scale = load;
  ctx.q = &q;
  ctx.q_start = &q;
  ctx.v_start = &q;
  return ctx;
}


}  // namespace

TEST_CASE("gravity: m_i g on every node of the selected rods, scaled by load_scale") {
  FakeWorld w;
  w.addRod<SpringChain>("a", chain(4, Vec3(0, 0, 0), Vec3(1, 0, 0)));
  w.addRod<SpringChain>("b", chain(3, Vec3(0, 1, 0), Vec3(1, 1, 0), /*twist=*/true));
  auto& all = w.addForce<Gravity>(makeParams(Gravity::schema(), {{"g", toValue(Vec3(1, -2, -9.81))}}));
  auto& only_b = w.addForce<Gravity>(makeParams(Gravity::schema(), {{"rods", toValue(std::vector<std::string>{"b"})}}));
  w.finalize();

  const Vec3 g(1, -2, -9.81);
  Vec f = Vec::Zero(w.numDofs());
  all.addForce(staticContext(w.q(), 0.5), f);
  for (int r = 0; r < 2; ++r) {
    Rod& rod = w.rod(r);
    for (int n = 0; n < rod.numNodes(); ++n) {
      const int d = rod.globalPositionDof(n);
      CHECK((f.segment<3>(d) - 0.5 * w.mass()[d] * g).norm() < 1e-15);
    }
    for (int e = 0; e < rod.numEdges(); ++e)
      if (rod.twistDof(e) >= 0) CHECK(f[rod.dofOffset() + rod.twistDof(e)] == 0.0);
  }
  // Potential energy: -sum m g.x, and F = -dE/dq.
  double e = 0;
  for (int r = 0; r < 2; ++r)
    for (int n = 0; n < w.rod(r).numNodes(); ++n) {
      const int d = w.rod(r).globalPositionDof(n);
      e -= w.mass()[d] * g.dot(w.q().segment<3>(d));
    }
  CHECK(all.potentialEnergy(staticContext(w.q())) == doctest::Approx(e));

  Vec fb = Vec::Zero(w.numDofs());
  only_b.addForce(staticContext(w.q()), fb);
  CHECK(fb.head(w.rod(1).dofOffset()).norm() == 0.0);
  CHECK(fb[w.rod(1).globalPositionDof(2) + 2] == doctest::Approx(-9.81 * w.mass()[w.rod(1).globalPositionDof(2)]));
}

TEST_CASE("gravity: an unknown rod name is a ParamError on 'rods' listing the valid names") {
  FakeWorld w;
  w.addRod<SpringChain>("beam", chain(3, Vec3(0, 0, 0), Vec3(1, 0, 0)));
  w.addForce<Gravity>(makeParams(Gravity::schema(), {{"rods", toValue(std::vector<std::string>{"bean"})}}));
  checkParamError([&] { w.finalize(); }, "rods", "valid rods: 'beam'");
}

TEST_CASE("gravity: a rod listed twice is a ParamError; an empty list means every rod (the contract's rods = [])") {
  FakeWorld twice;
  twice.addRod<SpringChain>("beam", chain(3, Vec3(0, 0, 0), Vec3(1, 0, 0)));
  twice.addForce<Gravity>(makeParams(Gravity::schema(), {{"rods", toValue(std::vector<std::string>{"beam", "beam"})}}));
  checkParamError([&] { twice.finalize(); }, "rods", "rod 'beam' is listed twice");  // it would fall twice as fast

  FakeWorld w;
  w.addRod<SpringChain>("a", chain(3, Vec3(0, 0, 0), Vec3(1, 0, 0)));
  w.addRod<SpringChain>("b", chain(3, Vec3(0, 1, 0), Vec3(1, 1, 0)));
  auto& g = w.addForce<Gravity>(makeParams(Gravity::schema(), {{"rods", toValue(std::vector<std::string>{})}}));
  w.finalize();
  Vec f = Vec::Zero(w.numDofs());
  g.addForce(staticContext(w.q()), f);
  for (int r = 0; r < 2; ++r) {
    const int d = w.rod(r).globalPositionDof(1);
    CHECK(f[d + 2] == doctest::Approx(-9.81 * w.mass()[d]));
  }
}

TEST_CASE("point-load: force at a node (negative index), torque through addNodeTorque") {
  FakeWorld w;
  w.addRod<SpringChain>("other", chain(2, Vec3(0, 5, 0), Vec3(1, 5, 0)));
  auto& rod = w.addRod<SpringChain>("beam", chain(4, Vec3(0, 0, 0), Vec3(0.3, 0, 0), true));
  auto& load = w.addForce<PointLoad>(makeParams(PointLoad::schema(),
      {{"rod", toValue("beam")}, {"node", toValue(-1)}, {"force", toValue(Vec3(0, 0, -2))},
       {"torque", toValue(Vec3(0.5, 0.1, 0))}}));
  w.finalize();
  Vec f = Vec::Zero(w.numDofs());
  load.addForce(staticContext(w.q(), 0.25), f);
  // Expected: the force on the last node, plus the rod's own torque mapping, both x 0.25.
  Vec expected = Vec::Zero(w.numDofs());
  expected.segment<3>(rod.globalPositionDof(3)) += 0.25 * Vec3(0, 0, -2);
  rod.addNodeTorque(3, 0.25 * Vec3(0.5, 0.1, 0), expected.segment(rod.dofOffset(), rod.numDofs()));
  CHECK((f - expected).norm() < 1e-15);
  CHECK(f.head(rod.dofOffset()).norm() == 0.0);
  // Axial torque 0.5 N m x 0.25 lands on the twist of the last edge.
  CHECK(f[rod.dofOffset() + rod.twistDof(2)] == doctest::Approx(0.125));
  // Potential of the force only: -P.x
  CHECK(load.potentialEnergy(staticContext(w.q())) == doctest::Approx(2 * w.q()[rod.globalPositionDof(3) + 2]));
}

TEST_CASE("point-load: start, smooth ramp and harmonic factor in dynamics; ignored when quasi-static") {
  FakeWorld w;
  auto& rod = w.addRod<SpringChain>("beam", chain(4, Vec3(0, 0, 0), Vec3(0.3, 0, 0), true));
  auto& load = w.addForce<PointLoad>(makeParams(PointLoad::schema(),
      {{"rod", toValue("beam")}, {"node", toValue(-1)}, {"torque", toValue(Vec3(2, 0, 0))},
       {"frequency", toValue(0.5)}, {"start", toValue(1.0)}, {"ramp", toValue(2.0)}}));
  auto& constant = w.addForce<PointLoad>(makeParams(PointLoad::schema(),
      {{"rod", toValue("beam")}, {"node", toValue(0)}, {"force", toValue(Vec3(0, 0, 3))}, {"start", toValue(1.0)}}));
  w.finalize();
  const int twist = rod.dofOffset() + rod.twistDof(2), fz = rod.globalPositionDof(0) + 2;
  auto at = [&](double t) {
    EvalContext ctx;
    ctx.t = t;
    ctx.dt = 1e-3;
    ctx.q = &w.q();
    ctx.q_start = &w.q();
    ctx.v_start = &w.q();
    Vec f = Vec::Zero(w.numDofs());
    load.addForce(ctx, f);
    constant.addForce(ctx, f);
    return std::pair{f[twist], f[fz]};
  };
  const double pi = 3.14159265358979323846;
  CHECK(at(0.5).first == 0.0);  // before start
  CHECK(at(0.5).second == 0.0);
  CHECK(at(1.5).first == doctest::Approx(2 * 0.5 * (1 - std::cos(pi * 0.25)) * std::sin(pi * 0.5)));  // in the ramp
  CHECK(at(3.5).first == doctest::Approx(2 * std::sin(pi * 2.5)));  // after the ramp: 2 sin(2 pi f (t - start))
  CHECK(at(1.5).second == doctest::Approx(3.0));                    // constant from start on (no ramp)
  Vec f = Vec::Zero(w.numDofs());
  load.addForce(staticContext(w.q(), 0.5), f);  // quasi-static: load_scale only
  CHECK(f[twist] == doctest::Approx(1.0));
}

TEST_CASE("point-load: parameter errors") {
  checkParamError([] { PointLoad p(makeParams(PointLoad::schema(), {{"rod", toValue("beam")}, {"node", toValue(0)}})); },
                  "force", "force");
  FakeWorld w;
  w.addRod<SpringChain>("beam", chain(4, Vec3(0, 0, 0), Vec3(1, 0, 0)));
  w.addForce<PointLoad>(makeParams(PointLoad::schema(),
      {{"rod", toValue("beam")}, {"node", toValue(-5)}, {"force", toValue(Vec3(1, 0, 0))}}));
  checkParamError([&] { w.finalize(); }, "node", "valid -4 to 3");

  FakeWorld w2;
  w2.addRod<SpringChain>("beam", chain(4, Vec3(0, 0, 0), Vec3(1, 0, 0)));
  w2.addForce<PointLoad>(makeParams(PointLoad::schema(),
      {{"rod", toValue("bean")}, {"node", toValue(0)}, {"force", toValue(Vec3(1, 0, 0))}}));
  checkParamError([&] { w2.finalize(); }, "rod", "no rod named 'bean'; valid rods: 'beam'");
}

TEST_CASE("damping: F = -c lbar v, and its Jacobian matches finite differences") {
  FakeWorld w;
  auto o = chain(5, Vec3(0, 0, 0), Vec3(1, 0.2, 0), true);
  o.rest_lengths = {0.2, 0.3, 0.25, 0.25};
  auto& rod = w.addRod<SpringChain>("beam", o);
  auto& damp = w.addForce<Damping>(makeParams(Damping::schema(), {{"coefficient", toValue(0.7)}}));
  w.finalize();

  const double dt = 1e-2;
  const int n = w.numDofs();
  const Vec q0 = w.q();
  Vec q = q0 + Vec::LinSpaced(n, -0.01, 0.02);
  const Vec v0 = Vec::Zero(n);
  EvalContext ctx;
  ctx.dt = dt;
  ctx.q = &q;
  ctx.q_start = &q0;
  ctx.v_start = &v0;

  Vec f = Vec::Zero(n);
  damp.addForce(ctx, f);
  for (int node = 0; node < rod.numNodes(); ++node) {
    const int d = rod.globalPositionDof(node);
    const Vec3 v = (q - q0).segment<3>(d) / dt;
    CHECK((f.segment<3>(d) + 0.7 * rod.restVoronoiLength(node) * v).norm() < 1e-14);
  }
  for (int e = 0; e < rod.numEdges(); ++e) CHECK(f[rod.twistDof(e)] == 0.0);
  CHECK(rod.restVoronoiLength(0) == doctest::Approx(0.1));
  CHECK(rod.restVoronoiLength(2) == doctest::Approx(0.275));

  // K = -dF/dq by central differences.
  StiffnessSink sink;
  damp.addStiffness(ctx, sink);
  Eigen::MatrixXd K = Eigen::MatrixXd::Zero(n, n);
  for (const auto& t : sink.entries()) K(t.row(), t.col()) += t.value();
  const double h = 1e-6;
  Eigen::MatrixXd Kfd(n, n);
  for (int j = 0; j < n; ++j) {
    Vec qp = q, qm = q;
    qp[j] += h;
    qm[j] -= h;
    Vec fp = Vec::Zero(n), fm = Vec::Zero(n);
    ctx.q = &qp;
    damp.addForce(ctx, fp);
    ctx.q = &qm;
    damp.addForce(ctx, fm);
    Kfd.col(j) = -(fp - fm) / (2 * h);
  }
  CHECK((K - Kfd).norm() < 1e-6 * K.norm());
  CHECK(K(0, 0) == doctest::Approx(0.7 * 0.1 / dt));

  // Quasi-static: no force, same pattern with zero values.
  ctx.q = &q;
  ctx.quasi_static = true;
  Vec fs = Vec::Zero(n);
  damp.addForce(ctx, fs);
  CHECK(fs.norm() == 0.0);
  StiffnessSink sink_static;
  damp.addStiffness(ctx, sink_static);
  REQUIRE(sink_static.entries().size() == sink.entries().size());
  for (std::size_t i = 0; i < sink.entries().size(); ++i) {
    CHECK(sink_static.entries()[i].row() == sink.entries()[i].row());
    CHECK(sink_static.entries()[i].value() == 0.0);
  }
}

TEST_CASE("damping: negative coefficient is rejected by the schema range; rods are selectable") {
  const Schema s = Damping::schema();
  REQUIRE(s.find("coefficient") != nullptr);
  CHECK(s.find("coefficient")->min == 0.0);
  CHECK(s.find("coefficient")->unit == "N s/m^2");
  FakeWorld w;
  w.addRod<SpringChain>("a", chain(3, Vec3(0, 0, 0), Vec3(1, 0, 0)));
  w.addRod<SpringChain>("b", chain(3, Vec3(0, 1, 0), Vec3(1, 1, 0)));
  auto& damp = w.addForce<Damping>(makeParams(s, {{"coefficient", toValue(1.0)}, {"rods", toValue(std::vector<std::string>{"b"})}}));
  w.finalize();
  StiffnessSink K;
  EvalContext ctx;
  ctx.dt = 1.0;
  damp.addStiffness(ctx, K);
  CHECK(K.entries().size() == 9);
  for (const auto& t : K.entries()) CHECK(t.row() >= w.rod(1).dofOffset());
}

TEST_CASE("load schemas: type names, units and docs") {
  CHECK(Gravity::schema().type() == "gravity");
  CHECK(Gravity::schema().find("g")->unit == "m/s^2");
  CHECK(PointLoad::schema().type() == "point-load");
  CHECK(PointLoad::schema().find("force")->unit == "N");
  CHECK(PointLoad::schema().find("torque")->unit == "N m");
  CHECK(PointLoad::schema().find("node")->required);
  CHECK(Damping::schema().type() == "damping");
  for (const Schema& s : {Gravity::schema(), PointLoad::schema(), Damping::schema()}) {
    CHECK_FALSE(s.doc().empty());
    for (const auto& p : s.params()) CHECK_FALSE(p.doc.empty());
  }
}

TEST_CASE("damping with stop: acts while t < stop, nothing (same stiffness pattern, zero values) from stop on") {
  FakeWorld w;
  w.addRod<SpringChain>("beam", chain(4, Vec3(0, 0, 0), Vec3(1, 0, 0)));
  auto& damp = w.addForce<Damping>(makeParams(Damping::schema(), {{"coefficient", toValue(2.0)}, {"stop", toValue(0.5)}}));
  w.finalize();
  const int n = w.numDofs();
  const Vec q0 = w.q();
  const Vec q = q0 + Vec::Constant(n, 1e-3);
  EvalContext ctx;
  ctx.dt = 1e-2;
  ctx.q = &q;
  ctx.q_start = &q0;
  std::size_t pattern = 0;
  for (double t : {0.0, 0.49, 0.5, 1.0}) {
    ctx.t = t;
    Vec f = Vec::Zero(n);
    damp.addForce(ctx, f);
    StiffnessSink K;
    damp.addStiffness(ctx, K);
    double kmax = 0;
    for (const auto& e : K.entries()) kmax = std::max(kmax, std::abs(e.value()));
    if (pattern == 0) pattern = K.entries().size();
    CAPTURE(t);
    CHECK(K.entries().size() == pattern);
    CHECK((f.norm() > 0) == (t < 0.5));
    CHECK((kmax > 0) == (t < 0.5));
  }
}
