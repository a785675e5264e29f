// Start-up of the ipc contact (README, "Start-up: pairs inside d_hat"): a pair inside d_hat at the
// first step gets its own barrier, with no force where it started and a force that grows as it
// closes (K = -dF/dq, F = -dE/dq by finite differences); a pair touching to round-off starts with
// the barrier's zero moved below contact; the pair relaxes to the plain barrier as it opens, with no
// jump of force at a step start; the state survives a checkpoint.
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
using rodsim::test::contactForce;
using rodsim::test::fdGradient;
using rodsim::test::ObstacleWorld;
using rodsim::test::relErr;
using rodsim::test::startStep;
using rodsim::test::stiffnessError;

namespace {

constexpr double start_d_hat = 1e-4, start_dt = 1e-3, kappa = 1e3;

// q with rod b (rod 1) lifted so that the crossing's gap is `gap`.
Vec atGap(FakeWorld& w, double gap) {
  Vec q = w.q();
  for (int n = 0; n < w.rod(1).numNodes(); ++n) q[w.rod(1).globalPositionDof(n) + 2] = 2 * r + gap;
  return q;
}

// The net z force on rod b at q, within a step that started at q_start (at rest).
double liftOnB(FakeWorld& w, IpcContact& c, const Vec& q_start, const Vec& q) {
  const Vec v0 = Vec::Zero(q.size());
  const EvalContext ctx = startStep(w, q_start, v0, start_dt);
  const Vec f = contactForce(c, ctx, q);
  double fz = 0;
  for (int n = 0; n < w.rod(1).numNodes(); ++n) fz += f[w.rod(1).globalPositionDof(n) + 2];
  return fz;
}

}  // namespace

TEST_CASE("a pair that starts inside start_d_hat: no force where it started, a barrier from there on") {
  FakeWorld w;
  const double g0 = 0.5 * start_d_hat;
  addCrossing(w, g0);
  auto& c = w.addContact<IpcContact>(makeParams(IpcContact::schema(), {{"d_hat", start_d_hat}, {"kappa", kappa}}));
  w.finalize();
  const Vec q0 = w.q();
  CHECK(liftOnB(w, c, q0, q0) == 0.0);  // the plain barrier would push with kappa |b'(g0)| = 1.3e-2 N
  CHECK(c.numStartPairs() == 1);
  // Closing from g0: the pair's barrier is b on the scale g0 (its activation gap), zero offset.
  const Vec q1 = atGap(w, 0.3 * start_d_hat);
  const Vec v0 = Vec::Zero(q0.size());
  const EvalContext ctx = startStep(w, q0, v0, start_dt);
  const Vec f = contactForce(c, ctx, q1);
  double fz = 0;
  for (int n = 0; n < w.rod(1).numNodes(); ++n) fz += f[w.rod(1).globalPositionDof(n) + 2];
  CHECK(fz == doctest::Approx(kappa * std::abs(rodsim::ipc::barrier(0.3 * start_d_hat, g0).d1)).epsilon(1e-9));
  CHECK(c.stats().min_gap == doctest::Approx(0.3 * start_d_hat).epsilon(1e-9));
  CHECK(c.stats().active == 1);
  CHECK(stiffnessError(c, ctx, q1, 1e-3 * 0.3 * start_d_hat) < 1e-5);
  auto energy = [&](const Vec& y) {
    EvalContext e = ctx;
    e.q = &y;
    return c.energy(e);
  };
  CHECK(relErr(f, -fdGradient(energy, q1, 1e-3 * 0.3 * start_d_hat)) < 1e-5);
  // The plain barrier for comparison (IPC as published): a push where the pair starts.
  FakeWorld w2;
  addCrossing(w2, g0);
  auto& plain = w2.addContact<IpcContact>(makeParams(IpcContact::schema(), {{"d_hat", start_d_hat}, {"kappa", kappa}}));
  plain.useInitialGaps(false);
  w2.finalize();
  CHECK(liftOnB(w2, plain, q0, q0) == doctest::Approx(kappa * std::abs(rodsim::ipc::barrier(g0, start_d_hat).d1)));
  CHECK(plain.numStartPairs() == 0);
}

TEST_CASE("a pair that opens relaxes to the plain barrier without a jump of force; the state is checkpointed") {
  FakeWorld w;
  addCrossing(w, 0.5 * start_d_hat);
  auto& c = w.addContact<IpcContact>(makeParams(IpcContact::schema(), {{"d_hat", start_d_hat}, {"kappa", kappa}}));
  w.finalize();
  const Vec q0 = w.q();
  liftOnB(w, c, q0, q0);  // the first step: captured at 0.5 d_hat
  // A later step starting at 0.7 d_hat: no force there (the activation gap grew to 0.7 d_hat), and
  // closing to 0.4 d_hat it is the barrier on the scale 0.7 d_hat.
  const Vec q7 = atGap(w, 0.7 * start_d_hat), q4 = atGap(w, 0.4 * start_d_hat);
  CHECK(liftOnB(w, c, q7, q7) == 0.0);
  CHECK(liftOnB(w, c, q7, q4) == doctest::Approx(kappa * std::abs(rodsim::ipc::barrier(0.4 * start_d_hat, 0.7 * start_d_hat).d1)));
  // Back at 0.6 d_hat (pressed, below its 0.7 d_hat): unchanged, it pushes.
  const Vec q6 = atGap(w, 0.6 * start_d_hat);
  CHECK(liftOnB(w, c, q6, q6) == doctest::Approx(kappa * std::abs(rodsim::ipc::barrier(0.6 * start_d_hat, 0.7 * start_d_hat).d1)));
  CHECK(c.numStartPairs() == 1);
  // checkpoint round trip: the same force in a fresh contact
  std::vector<double> state;
  c.saveState(state);
  FakeWorld w2;
  addCrossing(w2, 0.5 * start_d_hat);
  auto& c2 = w2.addContact<IpcContact>(makeParams(IpcContact::schema(), {{"d_hat", start_d_hat}, {"kappa", kappa}}));
  w2.finalize();
  c2.loadState(state);
  CHECK(c2.numStartPairs() == 1);
  CHECK(liftOnB(w2, c2, q6, q4) == liftOnB(w, c, q6, q4));
  // Opened beyond d_hat at a step start: released; from then on the plain barrier.
  const Vec q12 = atGap(w, 1.2 * start_d_hat);
  CHECK(liftOnB(w, c, q12, q12) == 0.0);
  CHECK(c.numStartPairs() == 0);
  CHECK(liftOnB(w, c, q12, q4) == doctest::Approx(kappa * std::abs(rodsim::ipc::barrier(0.4 * start_d_hat, start_d_hat).d1)));
}

TEST_CASE("rods that start exactly touching: the barrier's zero moved below contact by 1e-2 start_d_hat, CCD keeps it") {
  for (const double g0 : {0.0, -1e-12, 1e-3 * start_d_hat}) {  // touching, by round-off, closer than the floor
    CAPTURE(g0);
    FakeWorld w;
    addCrossing(w, g0);
    auto& c = w.addContact<IpcContact>(makeParams(IpcContact::schema(), {{"d_hat", start_d_hat}, {"kappa", kappa}}));
    w.finalize();
    const Vec q0 = w.q();
    CHECK(liftOnB(w, c, q0, q0) == 0.0);  // no throw, no force
    CHECK(c.numStartPairs() == 1);
    // the barrier acts on gap + offset, offset = 1e-2 d_hat - g0, from 1e-2 d_hat on
    const double floor = 1e-2 * start_d_hat, offset = floor - g0;
    const Vec q1 = atGap(w, 0.5 * floor - offset);  // pressed in: gap + offset = floor / 2
    CHECK(liftOnB(w, c, q0, q1) == doctest::Approx(kappa * std::abs(rodsim::ipc::barrier(0.5 * floor, floor).d1)));
    CHECK(c.stats().min_gap == doctest::Approx(0.5 * floor - offset).epsilon(1e-6));  // the true gap
    // CCD: rod b pushed down by 1 mm stops where gap + offset is 0.1 of its start value, times 0.8
    Vec dq = Vec::Zero(q0.size());
    for (int n = 0; n < w.rod(1).numNodes(); ++n) dq[w.rod(1).globalPositionDof(n) + 2] = -1e-3;
    CHECK(w.maxStepFraction(q0, dq) == doctest::Approx(0.8 * 0.9 * floor / 1e-3).epsilon(1e-6));
  }
  // A real overlap is no start pair: the step refuses it (the kernel refused it before).
  FakeWorld w;
  addCrossing(w, -1e-3 * start_d_hat);
  w.addContact<IpcContact>(makeParams(IpcContact::schema(), {{"d_hat", start_d_hat}}));
  w.finalize();
  CHECK_THROWS_WITH_AS(w.beginStep(start_dt), doctest::Contains("overlap"), std::runtime_error);
}

TEST_CASE("a node resting on a plane inside start_d_hat: no force at the start, K = -dF/dq with friction") {
  ObstacleWorld w;
  w.body.name = "floor";
  w.body.origin = Vec3(0, 0, 0);
  w.body.normal = Vec3::UnitZ();
  SpringChain::Options o;
  o.points = line(4, Vec3(0, 0, r + 0.05 * start_d_hat), Vec3(3 * L, 0, r + 0.05 * start_d_hat));
  o.radius = r;
  w.addRod<SpringChain>("rod", o);
  auto& c = w.addContact<IpcContact>(
      makeParams(IpcContact::schema(), {{"friction", 0.5}, {"d_hat", start_d_hat}, {"eps_v", 1e-2}, {"kappa", kappa}}));
  w.finalize();
  const Vec q0 = w.q(), v0 = Vec::Zero(q0.size());
  {
    const EvalContext ctx = startStep(w, q0, v0, start_dt);
    CHECK(contactForce(c, ctx, q0).norm() == 0.0);
    CHECK(c.numStartPairs() == 4);
  }
  // The next step starts pressed to 0.03 d_hat and slid along x: the lagged normal force is the
  // start pair's barrier there, and friction acts with it.
  Vec q1 = q0;
  for (int n = 0; n < 4; ++n) q1[w.rod(0).globalPositionDof(n) + 2] -= 0.02 * start_d_hat;
  Vec q2 = q1;
  for (int n = 0; n < 4; ++n) q2[w.rod(0).globalPositionDof(n)] += 2e-4;
  const EvalContext ctx = startStep(w, q1, v0, start_dt);
  const Vec f = contactForce(c, ctx, q2);
  const double lambda = kappa * std::abs(rodsim::ipc::barrier(0.03 * start_d_hat, 0.05 * start_d_hat).d1);
  CHECK(f[2] == doctest::Approx(lambda).epsilon(1e-9));
  CHECK(f[0] == doctest::Approx(-0.5 * lambda).epsilon(1e-9));
  CHECK(stiffnessError(c, ctx, q2, 1e-9) < 1e-5);
}
