// Newton solvers (implicit-euler, static) and the sparse assembly, on the FakeWorld spring chain.
#include <rodsim/testing/fake_world.h>
#include "loads.h"
#include "newton_solvers.h"
#include "rigid_constraints.h"
#include "sparse_assembly.h"

#include <doctest/doctest.h>

#include <Eigen/Dense>
#include <Eigen/SparseCholesky>

#include <cmath>
#include <limits>

using namespace rodsim;
using namespace rodsim::testing;
using rodsim::newton::ImplicitEulerSolver;
using rodsim::newton::LinearSolver;
using rodsim::newton::SparseAssembler;
using rodsim::newton::StaticSolver;
using rodsim::newton::SpMat;

namespace {

Params clampParams(const std::string& rod, std::vector<int> nodes) {
  return makeParams(constraints::Clamp::schema(), {{"rod", toValue(rod)}, {"nodes", toValue(nodes)}});
}

// A force that adds NaN to DOF 0 while armed.
class NanForce : public Force {
 public:
  NanForce() : Force(Params("nan")) {}
  void addForce(const EvalContext&, Vec& f) override {
    if (armed) f[f.size() - 1] += std::numeric_limits<double>::quiet_NaN();
  }
  bool armed = false;
};

// A barrier contact that allows only a fixed fraction of every step and records the calls.
class CappingBarrier : public Contact, public StepBoundContact {
  RODSIM_INTERFACES(CappingBarrier, StepBoundContact)

 public:
  explicit CappingBarrier(double fraction) : Contact(Params("cap")), fraction_(fraction) {}
  double maxStepFraction(const Vec&, const Vec&) override {
    ++calls;
    return fraction_;
  }
  int calls = 0;

 private:
  double fraction_;
};

// An impulse contact without contacts: solves A dq = b densely.
class PlainImpulse : public Contact, public LinearizedImpulseContact {
  RODSIM_INTERFACES(PlainImpulse, LinearizedImpulseContact)

 public:
  PlainImpulse() : Contact(Params("impulse")) {}
  std::string failureReason() const override { return {}; }
  bool solveLinearized(const LinearizedSystem& sys, Vec& dq) override {
    ++calls;
    const Eigen::MatrixXd A(*sys.A);
    dq = A.partialPivLu().solve(*sys.b);
    return true;
  }
  int calls = 0;
};

// A vertical chain hanging from node 0 under gravity.
struct HangingChain {
  FakeWorld w;
  SpringChain* rod = nullptr;
  std::vector<double> k{200, 150, 300, 120, 250}, m{0.3, 0.2, 0.15, 0.25, 0.1, 0.4};
  double L = 0.2, g = 9.81;

  explicit HangingChain(bool gravity = true) {
    SpringChain::Options o;
    o.points = line(6, Vec3(0, 0, 0), Vec3(0, 0, -1.0));
    o.stiffnesses = k;
    o.masses = m;
    rod = &w.addRod<SpringChain>("chain", o);
    if (gravity) w.addForce<loads::Gravity>(makeParams(loads::Gravity::schema(), {}));
    w.addConstraint<constraints::Clamp>(clampParams("chain", {0}));
  }
  // Exact static z of node i: each spring stretches by the weight below it over its stiffness.
  double exactZ(int i, double load = 1.0) const {
    double z = 0;
    for (int j = 0; j < i; ++j) {
      double below = 0;
      for (std::size_t n = j + 1; n < m.size(); ++n) below += m[n];
      z -= L + load * g * below / k[j];
    }
    return z;
  }
  double totalWeight() const {
    double s = 0;
    for (double x : m) s += x;
    return s * g;
  }
};

}  // namespace

TEST_CASE("static solver: hanging spring chain reaches the exact extension with every linear solver") {
  for (const char* solver : {"umfpack", "sparselu", "ldlt"}) {
    SUBCASE(solver) {
      HangingChain c;
      c.w.finalize();
      StaticSolver s(makeParams(StaticSolver::schema(), {{"linear_solver", toValue(solver)}}));
      const StepReport r = s.step(c.w, 1.0);
      REQUIRE_MESSAGE(r.ok, r.message);
      CHECK(r.iterations <= 3);
      CHECK(r.residual < 1e-8);
      for (int i = 0; i < 6; ++i) {
        const Vec3 x = c.w.q().segment<3>(3 * i);
        CHECK(x.z() == doctest::Approx(c.exactZ(i)).epsilon(1e-9));
        CHECK(std::abs(x.x()) < 1e-12);
        CHECK(std::abs(x.y()) < 1e-12);
      }
      // Reaction at the clamp (residual on the fixed DOFs) carries the whole weight.
      CHECK(c.w.lastResidual()[2] == doctest::Approx(c.totalWeight()).epsilon(1e-9));
      CHECK(c.w.v().norm() == 0.0);
      CHECK(c.w.time() == 1.0);
    }
  }
}

TEST_CASE("static solver: ramp_time scales the load linearly and the pattern is analysed once") {
  HangingChain c;
  c.w.finalize();
  StaticSolver s(makeParams(StaticSolver::schema(), {{"ramp_time", toValue(1.0)}}));
  CHECK(s.loadAt(0.25) == doctest::Approx(0.25));
  CHECK(s.loadAt(3.0) == 1.0);
  for (int step = 1; step <= 6; ++step) {
    const StepReport r = s.step(c.w, 0.25);
    REQUIRE_MESSAGE(r.ok, r.message);
    const double load = std::min(1.0, 0.25 * step);
    CHECK(c.w.q()[3 * 5 + 2] == doctest::Approx(c.exactZ(5, load)).epsilon(1e-9));
  }
  CHECK(s.core().assembler().rebuilds() == 1);
}

TEST_CASE("static solver without a ramp: a failing load increment is bisected") {
  // Hardening spring k s + k3 s^3 = P from s = 0: full Newton steps (no line search) overshoot
  // far and need many iterations; smaller load increments converge within the limit.
  FakeWorld w;
  SpringChain::Options o;
  o.points = line(2, Vec3(0, 0, 0), Vec3(1, 0, 0));
  o.stiffness = 10;
  o.cubic = 1e5;
  w.addRod<SpringChain>("spring", o);
  w.addConstraint<constraints::Clamp>(clampParams("spring", {0}));
  w.addForce<loads::PointLoad>(makeParams(loads::PointLoad::schema(),
      {{"rod", toValue("spring")}, {"node", toValue(-1)}, {"force", toValue(Vec3(50, 0, 0))}}));
  w.finalize();
  StaticSolver s(makeParams(StaticSolver::schema(),
      {{"line_search", toValue(false)}, {"max_iterations", toValue(8)}}));
  const StepReport r = s.step(w, 1.0);
  REQUIRE_MESSAGE(r.ok, r.message);
  CHECK(s.lastCuts() >= 1);
  const double x = w.q()[3] - 1.0;
  CHECK(10 * x + 1e5 * x * x * x == doctest::Approx(50).epsilon(1e-10));
}

TEST_CASE("static solver: Newton with line search converges quadratically on a hardening spring") {
  FakeWorld w;
  SpringChain::Options o;
  o.points = line(2, Vec3(0, 0, 0), Vec3(0, 1, 0));
  o.stiffness = 10;
  o.cubic = 1e5;
  w.addRod<SpringChain>("spring", o);
  w.addConstraint<constraints::Clamp>(clampParams("spring", {0}));
  w.addForce<loads::PointLoad>(makeParams(loads::PointLoad::schema(),
      {{"rod", toValue("spring")}, {"node", toValue(1)}, {"force", toValue(Vec3(0, 50, 0))}}));
  w.finalize();
  // Plain SI Algorithm 1 (watchdog 0) and the default watchdog (full steps first).
  for (int watchdog : {0, 4}) {
  CAPTURE(watchdog);
  StaticSolver s(makeParams(StaticSolver::schema(), {{"tolerance", toValue(1e-10)},
      {"line_search_watchdog", toValue(watchdog)}}));
  const Vec q_init = w.q();
  const StepReport r = s.step(w, 1.0);
  REQUIRE_MESSAGE(r.ok, r.message);
  CHECK(s.lastCuts() == 0);
  CHECK(r.iterations <= (watchdog ? 7 : 5));
  const double y = w.q()[4] - 1.0;
  CHECK(10 * y + 1e5 * y * y * y == doctest::Approx(50).epsilon(1e-11));
  // Quadratic tail: r_{k+1} <= C r_k^2 with C ~ f''/(2 f'^2) = 6.6e-3 1/N at the solution.
  const auto& h = s.core().history();
  REQUIRE(h.size() >= 3);
  int quadratic_steps = 0;
  for (std::size_t i = 0; i + 1 < h.size(); ++i) {
    MESSAGE("residual " << i << ": " << h[i]);
    if (h[i] < 10.0 && h[i + 1] > 1e-13) {
      CHECK(h[i + 1] <= 0.05 * h[i] * h[i]);
      ++quadratic_steps;
    }
  }
  CHECK(quadratic_steps >= 2);
  w.commitStep(0.0, q_init, Vec::Zero(w.numDofs()), Vec::Zero(w.numDofs()));  // reset
  }
}

TEST_CASE("implicit-euler: a mass-spring loses exactly the backward-Euler energy factor per step") {
  // x'' = -w^2 x, backward Euler: [x, v]_{n+1} = [[1, dt], [-w^2 dt, 1]] [x, v]_n / (1 + w^2 dt^2),
  // so E = m v^2/2 + k x^2/2 (proportional to w^2 x^2 + v^2) is multiplied by 1/(1 + w^2 dt^2).
  const double k = 100, m = 0.1, dt = 0.01, w2 = k / m;
  FakeWorld w;
  SpringChain::Options o;
  o.points = {Vec3(0, 0, 0), Vec3(1.1, 0, 0)};
  o.rest_lengths = {1.0};
  o.stiffness = k;
  o.mass = m;
  w.addRod<SpringChain>("spring", o);
  w.addConstraint<constraints::Clamp>(clampParams("spring", {0}));
  w.finalize();
  ImplicitEulerSolver s(makeParams(ImplicitEulerSolver::schema(), {}));
  auto energy = [&] { return w.kineticEnergy() + w.elasticEnergy(); };
  double e = energy();
  REQUIRE(e == doctest::Approx(0.5 * k * 0.01));
  for (int n = 0; n < 50; ++n) {
    const Vec q_n = w.q();
    const StepReport r = s.step(w, dt);
    REQUIRE_MESSAGE(r.ok, r.message);
    CHECK(r.iterations == 1);  // linear problem: one Newton solve
    const double e1 = energy();
    CHECK(e1 / e == doctest::Approx(1.0 / (1.0 + w2 * dt * dt)).epsilon(1e-10));
    e = e1;
    CHECK((w.v() - (w.q() - q_n) / dt).norm() < 1e-12);
  }
  CHECK(w.time() == doctest::Approx(50 * dt));
  CHECK(w.commits == 50);
  CHECK(s.core().assembler().rebuilds() == 1);
}

// A constant pull on the last DOF, declared step-constant or not; counts its evaluations.
class ConstantPull : public Force {
 public:
  explicit ConstantPull(bool step_constant) : Force(Params("pull")), step_constant_(step_constant) {}
  void addForce(const EvalContext&, Vec& f) override {
    f[f.size() - 1] += 0.5;
    ++calls;
  }
  bool constantInStep() const override { return step_constant_; }
  int calls = 0;

 private:
  bool step_constant_;
};

TEST_CASE("implicit-euler: a step-constant force is added after the factorization, with the same steps") {
  // A hardening spring (nonlinear: several Newton solves per step) pulled by a constant force.
  auto run = [](bool step_constant, std::vector<Vec>& states) {
    FakeWorld w;
    SpringChain::Options o;
    o.points = {Vec3(0, 0, 0), Vec3(1.0, 0, 0), Vec3(2.0, 0, 0)};
    o.stiffness = 50;
    o.cubic = 5e4;
    o.mass = 0.1;
    w.addRod<SpringChain>("chain", o);
    w.addConstraint<constraints::Clamp>(clampParams("chain", {0}));
    auto& pull = static_cast<ConstantPull&>(w.addForce(std::make_unique<ConstantPull>(step_constant)));
    w.finalize();
    CHECK(w.hasStepConstantForces() == step_constant);
    ImplicitEulerSolver s(makeParams(ImplicitEulerSolver::schema(), {{"tolerance", toValue(1e-12)}}));
    for (int n = 0; n < 20; ++n) {
      const StepReport r = s.step(w, 0.01);
      REQUIRE_MESSAGE(r.ok, r.message);
      CHECK(r.iterations >= 2);  // nonlinear: the prefactorized Jacobian is not the only one
      states.push_back(w.q());
    }
    CHECK(pull.calls == w.evaluations);  // added to every evaluation, split or not
  };
  std::vector<Vec> plain, split;
  run(false, plain);
  run(true, split);
  REQUIRE(plain.size() == split.size());
  // The split evaluation adds the pull after the contacts instead of before them: with no
  // contacts the sums are the same, bit for bit.
  for (std::size_t n = 0; n < plain.size(); ++n) CHECK((plain[n] - split[n]).norm() == 0.0);
}

TEST_CASE("implicit-euler: no stiffness at the line search's trial point once steps take one solve") {
  // A linear spring: every step converges after one linear solve, at the trial point. The first
  // step cannot know it and assembles the trial point's stiffness; the later ones skip it.
  FakeWorld w;
  SpringChain::Options o;
  o.points = {Vec3(0, 0, 0), Vec3(1.1, 0, 0)};
  o.rest_lengths = {1.0};
  o.stiffness = 100;
  o.mass = 0.1;
  w.addRod<SpringChain>("spring", o);
  w.addConstraint<constraints::Clamp>(clampParams("spring", {0}));
  w.finalize();
  ImplicitEulerSolver s(makeParams(ImplicitEulerSolver::schema(), {}));
  const int steps = 10;
  for (int n = 0; n < steps; ++n) {
    const StepReport r = s.step(w, 0.01);
    REQUIRE_MESSAGE(r.ok, r.message);
    CHECK(r.iterations == 1);
  }
  CHECK(w.evaluations == 2 * steps);              // the initial guess and the trial point
  CHECK(w.stiffness_evaluations == steps + 1);    // the initial guesses, and step 1's trial point
}

TEST_CASE("implicit-euler: the trial point expected to end a step of several solves has no stiffness") {
  // A horizontal chain released under gravity swings down about its clamped end: the springs turn,
  // and Newton needs several solves per step. A step is expected to take as many solves as the one
  // before; the trial point after that many is evaluated without stiffness. Where the step goes on,
  // that point is evaluated again with it; where it ends sooner, its last trial point had the
  // stiffness for nothing.
  FakeWorld w;
  SpringChain::Options o;
  o.points = line(6, Vec3(0, 0, 0), Vec3(1.0, 0, 0));
  o.stiffness = 500;
  o.mass = 0.05;
  w.addRod<SpringChain>("chain", o);
  w.addForce<loads::Gravity>(makeParams(loads::Gravity::schema(), {}));
  w.addConstraint<constraints::Clamp>(clampParams("chain", {0}));
  w.finalize();
  ImplicitEulerSolver s(makeParams(ImplicitEulerSolver::schema(), {}));
  int expected_evaluations = 0, expected_stiffness = 0, predicted = 0, several = 0;
  for (int n = 0; n < 40; ++n) {
    const StepReport r = s.step(w, 0.01);
    REQUIRE_MESSAGE(r.ok, r.message);
    const int k = r.iterations;
    several += k >= 2 && k == predicted;
    // The initial guess and k trial points, all with stiffness except the trial point `predicted`:
    // when it ended the step that stiffness is saved, otherwise it is evaluated a second time.
    expected_evaluations += 1 + k + (predicted > 0 && predicted < k);
    expected_stiffness += 1 + k - (predicted == k);
    predicted = k;
  }
  CHECK(several > 20);  // the case this covers: steps of 2 solves or more, predicted
  CHECK(w.evaluations == expected_evaluations);
  CHECK(w.stiffness_evaluations == expected_stiffness);
}

TEST_CASE("implicit-euler: the committed residual is M a - F; on the clamp it is the reaction") {
  HangingChain c;
  c.w.finalize();
  ImplicitEulerSolver s(makeParams(ImplicitEulerSolver::schema(), {}));
  const double dt = 1e-3;
  for (int n = 0; n < 3; ++n) REQUIRE(s.step(c.w, dt).ok);
  const Vec v_prev = c.w.v();
  REQUIRE(s.step(c.w, dt).ok);
  // Recompute M a - F at the committed state.
  Vec F(c.w.numDofs());
  EvalContext ctx;
  ctx.t = c.w.time();
  ctx.dt = dt;
  ctx.q = &c.w.q();
  ctx.q_start = &c.w.q();  // velocities do not enter these forces
  ctx.v_start = &v_prev;
  c.w.evaluate(ctx, F, nullptr);
  const Vec expected = c.w.mass().cwiseProduct(c.w.v() - v_prev) / dt - F;
  const Vec& R = c.w.lastResidual();
  CHECK((R - expected).norm() < 1e-9 * expected.norm());
  // Free DOFs balanced; the clamp carries the weight of node 0 plus the top spring tension.
  CHECK(R.tail(R.size() - 3).norm() < 1e-8);
  CHECK(R[2] > 0);
}

TEST_CASE("implicit-euler: a barrier contact caps the Newton step") {
  const double k = 100, m = 0.1;
  FakeWorld w;
  SpringChain::Options o;
  o.points = {Vec3(0, 0, 0), Vec3(1.1, 0, 0)};
  o.rest_lengths = {1.0};
  o.stiffness = k;
  o.mass = m;
  w.addRod<SpringChain>("spring", o);
  w.addConstraint<constraints::Clamp>(clampParams("spring", {0}));
  auto& barrier = static_cast<CappingBarrier&>(w.addContact(std::make_unique<CappingBarrier>(0.25)));
  w.finalize();
  ImplicitEulerSolver s(makeParams(ImplicitEulerSolver::schema(), {{"max_iterations", toValue(60)}}));
  const StepReport r = s.step(w, 0.01);
  REQUIRE_MESSAGE(r.ok, r.message);
  // alpha <= 0.25 * alpha_max = 0.5 on a linear problem: the residual halves per iteration.
  CHECK(r.iterations >= 25);
  CHECK(barrier.calls == r.iterations);
  const auto& h = s.core().history();
  for (std::size_t i = 0; i + 1 < h.size(); ++i)
    if (h[i] > 1e-6) CHECK(h[i + 1] / h[i] == doctest::Approx(0.5).epsilon(1e-6));
}

TEST_CASE("implicit-euler: an impulse contact replaces the linear solve") {
  const double k = 100, m = 0.1, dt = 0.01;
  FakeWorld w;
  SpringChain::Options o;
  o.points = {Vec3(0, 0, 0), Vec3(1.1, 0, 0)};
  o.rest_lengths = {1.0};
  o.stiffness = k;
  o.mass = m;
  w.addRod<SpringChain>("spring", o);
  w.addConstraint<constraints::Clamp>(clampParams("spring", {0}));
  auto& contact = static_cast<PlainImpulse&>(w.addContact(std::make_unique<PlainImpulse>()));
  w.finalize();
  ImplicitEulerSolver s(makeParams(ImplicitEulerSolver::schema(), {}));
  const StepReport r = s.step(w, dt);
  REQUIRE_MESSAGE(r.ok, r.message);
  CHECK(contact.calls == r.iterations);
  CHECK(r.iterations <= 2);
  const double x = 0.1 / (1 + k / m * dt * dt);
  CHECK(w.q()[3] - 1.0 == doctest::Approx(x).epsilon(1e-10));
  CHECK(w.q().head<3>().norm() == 0.0);
}

TEST_CASE("solvers fail with a reason and commit nothing on NaN") {
  HangingChain c;
  auto& nan = static_cast<NanForce&>(c.w.addForce(std::make_unique<NanForce>()));
  c.w.finalize();
  ImplicitEulerSolver ie(makeParams(ImplicitEulerSolver::schema(), {}));
  REQUIRE(ie.step(c.w, 1e-3).ok);
  nan.armed = true;
  const Vec q_before = c.w.q();
  StepReport r = ie.step(c.w, 1e-3);
  CHECK_FALSE(r.ok);
  CHECK(r.message.find("NaN") != std::string::npos);
  CHECK(r.message.find("rod 'chain', node 5, z") != std::string::npos);
  CHECK(c.w.commits == 1);
  CHECK(c.w.time() == doctest::Approx(1e-3));
  CHECK(c.w.q() == q_before);

  StaticSolver st(makeParams(StaticSolver::schema(), {{"max_load_cuts", toValue(2)}}));
  r = st.step(c.w, 1.0);
  CHECK_FALSE(r.ok);
  CHECK(r.message.find("NaN") != std::string::npos);
  CHECK(c.w.commits == 1);

  // A NaN state is refused before anything is evaluated.
  nan.armed = false;
  c.w.v()[4] = std::numeric_limits<double>::infinity();
  r = ie.step(c.w, 1e-3);
  CHECK_FALSE(r.ok);
  CHECK(r.message.find("not finite") != std::string::npos);
}

TEST_CASE("implicit-euler: non-convergence reports the residual and the iteration count") {
  HangingChain c;
  c.w.finalize();
  ImplicitEulerSolver s(makeParams(ImplicitEulerSolver::schema(),
      {{"max_iterations", toValue(1)}, {"tolerance", toValue(1e-30)}, {"relative_tolerance", toValue(0.0)}}));
  // One Newton iteration solves this linear problem only up to round-off, far above 1e-30 N.
  const StepReport r = s.step(c.w, 1e-2);
  CHECK_FALSE(r.ok);
  CHECK(r.message.find("did not converge") != std::string::npos);
  CHECK(r.message.find("after 1 iterations") != std::string::npos);
  CHECK(r.iterations == 1);
  CHECK(c.w.commits == 0);
}

TEST_CASE("static solver: a rod held nowhere is reported as unconstrained") {
  FakeWorld w;
  SpringChain::Options o;
  o.points = line(4, Vec3(0, 0, 0), Vec3(1, 0, 0));
  w.addRod<SpringChain>("loose", o);
  w.addForce<loads::Gravity>(makeParams(loads::Gravity::schema(), {}));
  w.finalize();
  StaticSolver s(makeParams(StaticSolver::schema(),
      {{"max_iterations", toValue(10)}, {"max_load_cuts", toValue(2)}}));
  const StepReport r = s.step(w, 1.0);
  CHECK_FALSE(r.ok);
  MESSAGE(r.message);
  CHECK(r.message.find("unconstrained") != std::string::npos);
  CHECK(r.message.find("no node of rod 'loose' is held") != std::string::npos);
  CHECK(w.commits == 0);
}

TEST_CASE("static solver: a free rod without load is at equilibrium despite the singular K") {
  FakeWorld w;
  SpringChain::Options o;
  o.points = line(4, Vec3(0, 0, 0), Vec3(1, 0, 0));
  o.rest_lengths = {0.3, 0.3, 0.3};  // stretched: Newton must move it, K has rigid modes
  w.addRod<SpringChain>("loose", o);
  w.finalize();
  StaticSolver s(makeParams(StaticSolver::schema(), {{"linear_solver", toValue("ldlt")}}));
  const StepReport r = s.step(w, 1.0);
  REQUIRE_MESSAGE(r.ok, r.message);
  for (int e = 0; e < 3; ++e)
    CHECK((w.q().segment<3>(3 * e + 3) - w.q().segment<3>(3 * e)).norm() == doctest::Approx(0.3).epsilon(1e-9));
}

TEST_CASE("solver schemas declare their parameters") {
  const Schema ie = ImplicitEulerSolver::schema(), st = StaticSolver::schema();
  CHECK(ie.type() == "implicit-euler");
  CHECK(st.type() == "static");
  for (const char* key : {"tolerance", "relative_tolerance", "max_iterations", "line_search",
                          "line_search_m1", "line_search_m2", "line_search_alpha_min",
                          "line_search_alpha_max", "line_search_max_trials", "linear_solver"}) {
    CHECK_MESSAGE(ie.find(key) != nullptr, key);
    CHECK_MESSAGE(st.find(key) != nullptr, key);
  }
  CHECK(ie.find("tolerance")->unit == "N");
  CHECK(st.find("ramp_time")->unit == "s");
  CHECK(st.find("max_load_cuts") != nullptr);
  CHECK(ie.find("linear_solver")->choices.size() == 4);
  CHECK_THROWS_AS(ImplicitEulerSolver(makeParams(ie, {{"line_search_m1", toValue(0.95)}})), ParamError);
}

// ------------------------------------------------------------------------------ sparse assembly

namespace {

// Triplets of a symmetric positive definite 1D Laplacian-like matrix over n DOFs, with duplicates.
std::vector<Eigen::Triplet<double>> laplacian(int n, double scale) {
  std::vector<Eigen::Triplet<double>> t;
  for (int i = 0; i + 1 < n; ++i) {
    const double k = scale * (1.0 + 0.1 * i);
    t.emplace_back(i, i, k);
    t.emplace_back(i + 1, i + 1, k);
    t.emplace_back(i, i + 1, -k);
    t.emplace_back(i + 1, i, -k);
  }
  return t;
}

Eigen::MatrixXd dense(const SpMat& A) { return Eigen::MatrixXd(A); }

}  // namespace

TEST_CASE("sparse assembly: the cached pattern gives the fresh matrix, a new pattern rebuilds") {
  const int n = 8;
  std::vector<char> fixed(n, 0);
  fixed[0] = fixed[5] = 1;
  Vec mass = Vec::LinSpaced(n, 1.0, 2.0);

  SparseAssembler cached;
  cached.setFixed(fixed, SparseAssembler::Layout::Free);
  CHECK(cached.assemble(laplacian(n, 1.0), &mass, 4.0));  // first: rebuilt
  CHECK(cached.size() == n - 2);
  const double* values_before = cached.matrix().valuePtr();
  CHECK_FALSE(cached.assemble(laplacian(n, 3.0), &mass, 7.0));  // same sequence: reuse
  CHECK(cached.matrix().valuePtr() == values_before);            // no reallocation
  CHECK(cached.rebuilds() == 1);

  SparseAssembler fresh;
  fresh.setFixed(fixed, SparseAssembler::Layout::Free);
  fresh.assemble(laplacian(n, 3.0), &mass, 7.0);
  CHECK((dense(cached.matrix()) - dense(fresh.matrix())).norm() == 0.0);

  // Reference built by hand: K over free DOFs plus 7 M.
  Eigen::MatrixXd K = Eigen::MatrixXd::Zero(n, n);
  for (const auto& t : laplacian(n, 3.0)) K(t.row(), t.col()) += t.value();
  K.diagonal() += 7.0 * mass;
  Eigen::MatrixXd Kff(n - 2, n - 2);
  const auto& g = cached.globalOf();
  for (int i = 0; i < n - 2; ++i)
    for (int j = 0; j < n - 2; ++j) Kff(i, j) = K(g[i], g[j]);
  CHECK((dense(cached.matrix()) - Kff).norm() < 1e-14);

  // A different triplet sequence rebuilds.
  auto t2 = laplacian(n, 3.0);
  t2.emplace_back(2, 7, 0.5);
  t2.emplace_back(7, 2, 0.5);
  CHECK(cached.assemble(t2, &mass, 7.0));
  CHECK(cached.rebuilds() == 2);
  // A changed mask rebuilds too.
  fixed[5] = 0;
  CHECK(cached.setFixed(fixed, SparseAssembler::Layout::Free));
  CHECK(cached.assemble(t2, &mass, 7.0));
  CHECK(cached.size() == n - 1);

  // Global layout: fixed rows/cols become identity.
  SparseAssembler global;
  global.setFixed(fixed, SparseAssembler::Layout::GlobalIdentity);
  global.assemble(laplacian(n, 1.0), &mass, 1.0);
  const Eigen::MatrixXd G = dense(global.matrix());
  CHECK(G.rows() == n);
  CHECK(G(0, 0) == 1.0);
  CHECK(G.row(0).cwiseAbs().sum() == 1.0);
  CHECK(G.col(0).cwiseAbs().sum() == 1.0);
}

TEST_CASE("sparse assembly: a narrow band is assembled into band storage, the same matrix as the sparse one") {
  // Couplings up to 10 DOFs apart (a DER stencil's reach), duplicates, two fixed DOFs.
  const int n = 40;
  std::vector<char> fixed(n, 0);
  fixed[0] = fixed[17] = 1;
  const Vec mass = Vec::LinSpaced(n, 1.0, 2.0);
  auto t = laplacian(n, 2.0);
  for (int i = 0; i + 10 < n; i += 3) {
    t.emplace_back(i, i + 10, 0.25 + 0.01 * i);
    t.emplace_back(i + 10, i, 0.25 + 0.01 * i);
  }
  SparseAssembler a;
  a.setFixed(fixed, SparseAssembler::Layout::Free);
  REQUIRE(a.assemble(t, &mass, 3.0));
  CHECK(a.banded());
  Eigen::MatrixXd K = Eigen::MatrixXd::Zero(n, n);
  for (const auto& e : t) K(e.row(), e.col()) += e.value();
  K.diagonal() += 3.0 * mass;
  const auto& g = a.globalOf();
  Eigen::MatrixXd Kff(a.size(), a.size());
  for (int i = 0; i < a.size(); ++i)
    for (int j = 0; j < a.size(); ++j) Kff(i, j) = K(g[i], g[j]);
  CHECK((dense(a.matrix()) - Kff).norm() < 1e-14 * Kff.norm());
  // The band's product, in the sparse product's order: the same numbers.
  const Vec x = Vec::LinSpaced(a.size(), -1.0, 3.0);
  Vec y;
  a.multiply(x, y);
  CHECK((y - a.matrix() * x).cwiseAbs().maxCoeff() == 0.0);
  CHECK(std::abs(a.frobeniusNorm() - Kff.norm()) < 1e-14 * Kff.norm());
  CHECK(a.isSymmetric());
  // Factorized from the band or from the sparse matrix: the same factorization.
  LinearSolver s(LinearSolver::Kind::Auto);
  s.analyzePattern(a.matrix());
  REQUIRE(s.takesBand(true));
  CHECK_FALSE(s.takesBand(false));  // auto takes an LU for an unsymmetric J
  const Vec b = Vec::LinSpaced(a.size(), 2.0, -1.0);
  Vec from_band(a.size()), from_matrix(a.size());
  REQUIRE(s.factorizeBand(a.band(), a.size()));
  REQUIRE(s.solve(b, from_band));
  REQUIRE(s.factorize(a.matrix(), true));
  REQUIRE(s.solve(b, from_matrix));
  CHECK((from_band - from_matrix).cwiseAbs().maxCoeff() == 0.0);
  CHECK((Kff * from_band - b).norm() < 1e-12 * b.norm());
  // The Levenberg shift moves the band's diagonal, which matrix() shows.
  const double mean = a.meanAbsDiagonal();
  CHECK(std::abs(mean - Kff.diagonal().cwiseAbs().mean()) < 1e-14 * mean);
  a.shiftDiagonal(0.5);
  CHECK((dense(a.matrix()) - Kff - 0.5 * Eigen::MatrixXd::Identity(a.size(), a.size())).norm() < 1e-14 * Kff.norm());
  // An unsymmetric entry inside the band: still banded, no longer symmetric.
  auto u = t;
  u.emplace_back(3, 4, 0.7);
  REQUIRE(a.assemble(u, &mass, 3.0));
  CHECK(a.banded());
  CHECK_FALSE(a.isSymmetric());
  // A coupling 11 DOFs apart leaves the band: the sparse matrix holds the values.
  auto w = t;
  w.emplace_back(2, 13, 0.1);
  w.emplace_back(13, 2, 0.1);
  REQUIRE(a.assemble(w, &mass, 3.0));
  CHECK_FALSE(a.banded());
  a.multiply(x, y);
  CHECK((y - a.matrix() * x).cwiseAbs().maxCoeff() == 0.0);
  // The Global layout (an impulse contact's) is never banded.
  SparseAssembler global;
  global.setFixed(fixed, SparseAssembler::Layout::GlobalIdentity);
  global.assemble(t, &mass, 3.0);
  CHECK_FALSE(global.banded());
}

TEST_CASE("sparse assembly: umfpack, sparselu and ldlt agree") {
  const int n = 30;
  std::vector<char> fixed(n, 0);
  fixed[0] = 1;
  Vec mass = Vec::Constant(n, 0.5);
  SparseAssembler a;
  a.setFixed(fixed, SparseAssembler::Layout::Free);
  a.assemble(laplacian(n, 10.0), &mass, 1.0);
  const Vec b = Vec::LinSpaced(a.size(), -1.0, 2.0);
  std::vector<Vec> x;
  for (const char* name : {"umfpack", "sparselu", "ldlt", "auto"}) {
    LinearSolver s(LinearSolver::parse(name));
    s.analyzePattern(a.matrix());
    REQUIRE(s.factorize(a.matrix()));
    Vec xi(a.size());
    REQUIRE(s.solve(b, xi));
    CHECK((a.matrix() * xi - b).norm() < 1e-10 * b.norm());
    x.push_back(xi);
    // Refactorization with new values on the same pattern.
    REQUIRE(s.factorize(a.matrix()));
    CHECK(s.analyses() == 1);
  }
  CHECK((x[0] - x[1]).norm() < 1e-10 * x[0].norm());
  CHECK((x[0] - x[2]).norm() < 1e-10 * x[0].norm());
  CHECK((x[0] - x[3]).norm() < 1e-10 * x[0].norm());
  CHECK_THROWS_AS(LinearSolver::parse("pardiso"), std::invalid_argument);

  // A singular matrix (no fixed DOF, no mass) is reported by every solver.
  SparseAssembler sing;
  sing.setFixed(std::vector<char>(n, 0), SparseAssembler::Layout::Free);
  sing.assemble(laplacian(n, 10.0), nullptr, 0.0);
  for (const char* name : {"umfpack", "sparselu", "ldlt", "auto"}) {
    LinearSolver s(LinearSolver::parse(name));
    s.analyzePattern(sing.matrix());
    Vec xi(n);
    const bool ok = s.factorize(sing.matrix()) && s.solve(Vec::Ones(n), xi) &&
                    (sing.matrix() * xi - Vec::Ones(n)).norm() < 1e-6 * std::sqrt(n);
    CHECK_MESSAGE(!ok, name);
  }
}

TEST_CASE("linear solver auto: LDLT for a symmetric Jacobian, UMFPACK for an unsymmetric one") {
  const int n = 20;
  SparseAssembler a;
  a.setFixed(std::vector<char>(n, 0), SparseAssembler::Layout::Free);
  Vec mass = Vec::Constant(n, 1.0);
  a.assemble(laplacian(n, 10.0), &mass, 1.0);
  LinearSolver s(LinearSolver::Kind::Auto);
  s.analyzePattern(a.matrix());
  REQUIRE(s.factorize(a.matrix()));
  CHECK(rodsim::newton::isNumericallySymmetric(a.matrix()));
  CHECK(s.active() == LinearSolver::Kind::LDLT);
  // A friction-like unsymmetric coupling between DOFs 3 and 4.
  auto t = laplacian(n, 10.0);
  t.emplace_back(3, 4, 0.7);
  SparseAssembler u;
  u.setFixed(std::vector<char>(n, 0), SparseAssembler::Layout::Free);
  u.assemble(t, &mass, 1.0);
  s.analyzePattern(u.matrix());
  REQUIRE(s.factorize(u.matrix()));
  CHECK_FALSE(rodsim::newton::isNumericallySymmetric(u.matrix()));
  CHECK(s.active() == LinearSolver::Kind::UmfPack);
  const Vec b = Vec::LinSpaced(n, -1.0, 2.0);
  Vec x(n);
  REQUIRE(s.solve(b, x));
  CHECK((u.matrix() * x - b).norm() < 1e-10 * b.norm());
}

TEST_CASE("ldlt: the dense band, the RCM envelope and AMD SimplicialLDLT agree with UMFPACK") {
  // Random SPD matrices with structural zeros and duplicate triplets, over free DOFs:
  //  - half-bandwidth 10 in the natural order (a DER rod's): the dense band;
  //  - half-bandwidth 14 with its DOFs shuffled (two rods side by side, numbered rod after rod):
  //    reverse Cuthill-McKee recovers a narrow envelope;
  //  - the same plus one DOF coupled to every other (a hub): the envelope is too wide, AMD.
  using Method = LinearSolver::LdltMethod;
  struct Case {
    int band;
    bool shuffle, hub;
    Method expected;
  };
  for (const Case& cs : {Case{10, false, false, Method::Band}, Case{14, true, false, Method::Envelope},
                         Case{14, true, true, Method::Simplicial}}) {
    const int band = cs.band;
    CAPTURE(band);
    CAPTURE(cs.shuffle);
    CAPTURE(cs.hub);
    const int n = 100;
    std::vector<int> label(n);
    for (int i = 0; i < n; ++i) label[i] = cs.shuffle ? (i % 2 ? n / 2 + i / 2 : i / 2) : i;  // interleave
    std::vector<Eigen::Triplet<double>> t;
    unsigned state = 12345u + band;
    auto rnd = [&] { return double((state = state * 1103515245u + 12345u) >> 8) / double(1u << 24) - 0.5; };
    for (int j = 0; j < n; ++j)
      for (int i = j + 1; i <= std::min(n - 1, j + band); ++i) {
        if ((i + 2 * j) % 5 == 0) continue;  // a structural zero
        const double v = rnd();
        t.emplace_back(label[i], label[j], v);
        t.emplace_back(label[j], label[i], v);
      }
    double diag = 2.0 * band;
    if (cs.hub) {
      for (int i = 0; i + 1 < n; ++i) {  // DOF n - 1 is the hub (0 and 1 are fixed below)
        const double v = 0.1 * rnd();
        t.emplace_back(label[n - 1], label[i], v);
        t.emplace_back(label[i], label[n - 1], v);
      }
      diag += 10.0;
    }
    for (int i = 0; i < n; ++i) t.emplace_back(i, i, diag);  // diagonally dominant: SPD
    std::vector<char> fixed(n, 0);
    fixed[0] = fixed[1] = 1;
    Vec mass = Vec::Constant(n, 1.0);
    SparseAssembler a;
    a.setFixed(fixed, SparseAssembler::Layout::Free);
    a.assemble(t, &mass, 3.0);
    CHECK(a.isSymmetric());
    CHECK(a.isSymmetric() == rodsim::newton::isNumericallySymmetric(a.matrix()));
    const Vec b = Vec::LinSpaced(a.size(), -1.0, 2.0);
    Vec x_lu(a.size()), x_ldlt(a.size());
    LinearSolver lu(LinearSolver::Kind::UmfPack), ldlt(LinearSolver::Kind::LDLT);
    lu.analyzePattern(a.matrix());
    ldlt.analyzePattern(a.matrix());
    CHECK(ldlt.ldltMethod() == cs.expected);
    REQUIRE(lu.factorize(a.matrix()));
    REQUIRE(lu.solve(b, x_lu));
    for (int k = 0; k < 2; ++k) {  // refactorization on the same pattern
      REQUIRE(ldlt.factorize(a.matrix()));
      REQUIRE(ldlt.solve(b, x_ldlt));
      CHECK((x_ldlt - x_lu).norm() < 1e-12 * x_lu.norm());
      CHECK((a.matrix() * x_ldlt - b).norm() < 1e-12 * b.norm());
    }
    // An unsymmetric perturbation is seen by the assembler's symmetry test.
    t.emplace_back(5, 7, 1e-3);
    a.assemble(t, &mass, 3.0);
    CHECK_FALSE(a.isSymmetric());
    CHECK(a.isSymmetric() == rodsim::newton::isNumericallySymmetric(a.matrix()));
  }
}

// A symmetric 2100-row band of half-width 12 plus a hub row (a pattern no envelope fits, so LDLT
// takes CHOLMOD's supernodal Cholesky), diagonally dominant: positive definite.
std::vector<Eigen::Triplet<double>> wideSymmetricPattern(int n, int band) {
  unsigned state = 777u;
  auto rnd = [&] { return double((state = state * 1103515245u + 12345u) >> 8) / double(1u << 24) - 0.5; };
  std::vector<Eigen::Triplet<double>> t;
  for (int j = 0; j < n; ++j)
    for (int i = j + 1; i <= std::min(n - 1, j + band); ++i) {
      const double v = rnd();
      t.emplace_back(i, j, v);
      t.emplace_back(j, i, v);
    }
  for (int i = 0; i + 1 < n; ++i) {
    const double v = 0.05 * rnd();
    t.emplace_back(n - 1, i, v);
    t.emplace_back(i, n - 1, v);
  }
  for (int i = 0; i < n; ++i) t.emplace_back(i, i, 2.0 * band + (i == n - 1 ? 200.0 : 0.0));
  return t;
}

TEST_CASE("ldlt: CHOLMOD supernodal on large wide patterns, SimplicialLDLT when not positive definite") {
  // The wide pattern, positive definite, then with one large negative diagonal entry (indefinite,
  // nonsingular). Both agree with UMFPACK; the first takes CHOLMOD's supernodal Cholesky, the
  // second falls back on the simplicial LDLT of the same pattern.
  using Method = LinearSolver::LdltMethod;
  const int n = 2100, band = 12;
  const auto t = wideSymmetricPattern(n, band);
  for (bool indefinite : {false, true}) {
    CAPTURE(indefinite);
    std::vector<Eigen::Triplet<double>> ti = t;
    if (indefinite) ti.emplace_back(n / 2, n / 2, -60.0 * band);
    SparseAssembler a;
    a.setFixed(std::vector<char>(n, 0), SparseAssembler::Layout::Free);
    Vec mass = Vec::Constant(n, 1.0);
    a.assemble(ti, &mass, 1.0);
    REQUIRE(a.isSymmetric());
    LinearSolver lu(LinearSolver::Kind::UmfPack), ldlt(LinearSolver::Kind::LDLT);
    lu.analyzePattern(a.matrix());
    ldlt.analyzePattern(a.matrix());
    CHECK(ldlt.ldltMethod() == Method::Supernodal);
    const Vec b = Vec::LinSpaced(n, -1.0, 2.0);
    Vec x_lu(n), x_ldlt(n);
    REQUIRE(lu.factorize(a.matrix()));
    REQUIRE(lu.solve(b, x_lu));
    for (int k = 0; k < 2; ++k) {  // refactorization on the same pattern
      REQUIRE(ldlt.factorize(a.matrix()));
      REQUIRE(ldlt.solve(b, x_ldlt));
      CHECK((x_ldlt - x_lu).norm() < 1e-10 * x_lu.norm());
      CHECK((a.matrix() * x_ldlt - b).norm() < 1e-12 * b.norm());
    }
  }
}

TEST_CASE("linear solver auto: an unsymmetric J on a wide pattern takes GMRES on the Cholesky of (J + Jᵀ)/2") {
  // J = the wide positive definite pattern + a skew-symmetric coupling of DOFs i and i + 1 of size
  // `skew` (friction-like: small beside the diagonal), so (J + Jᵀ)/2 is the positive definite
  // pattern. Three cases against UMFPACK:
  // - small coupling: GMRES with the symmetric part's Cholesky, to round-off;
  // - the symmetric part made indefinite: UMFPACK at the factorization;
  // - a coupling 40x the diagonal: GMRES stalls, the solve falls back on UMFPACK, and the next
  //   factorization of the same pattern goes to UMFPACK directly.
  using Kind = LinearSolver::Kind;
  const int n = 2100, band = 12;
  struct Case {
    double skew, extra_diagonal;
    Kind factorized, solved;
  };
  for (const Case& c : {Case{0.4, 0.0, Kind::SymmetricPartGmres, Kind::SymmetricPartGmres},
                        Case{0.4, -60.0 * band, Kind::UmfPack, Kind::UmfPack},
                        Case{40.0 * 2 * band, 0.0, Kind::SymmetricPartGmres, Kind::UmfPack}}) {
    CAPTURE(c.skew);
    CAPTURE(c.extra_diagonal);
    auto t = wideSymmetricPattern(n, band);
    for (int i = 0; i + 1 < n; ++i) {
      const double v = c.skew * (i % 3 == 0 ? 1.0 : -0.5);
      t.emplace_back(i, i + 1, v);
      t.emplace_back(i + 1, i, -v);
    }
    t.emplace_back(n / 2, n / 2, c.extra_diagonal);
    SparseAssembler a;
    a.setFixed(std::vector<char>(n, 0), SparseAssembler::Layout::Free);
    Vec mass = Vec::Constant(n, 1.0);
    a.assemble(t, &mass, 1.0);
    REQUIRE_FALSE(a.isSymmetric());
    LinearSolver lu(Kind::UmfPack), solver(Kind::Auto);
    lu.analyzePattern(a.matrix());
    solver.analyzePattern(a.matrix());
    const Vec b = Vec::LinSpaced(n, -1.0, 2.0);
    Vec x_lu(n), x(n);
    REQUIRE(lu.factorize(a.matrix()));
    REQUIRE(lu.solve(b, x_lu));
    REQUIRE(solver.factorize(a.matrix(), false));
    CHECK(solver.active() == c.factorized);
    REQUIRE(solver.solve(b, x));
    CHECK(solver.active() == c.solved);
    CHECK((x - x_lu).norm() < 1e-10 * x_lu.norm());
    CHECK((a.matrix() * x - b).norm() < 1e-11 * b.norm());
    REQUIRE(solver.factorize(a.matrix(), false));  // the same pattern again
    CHECK(solver.active() == c.solved);
  }
}
TEST_CASE("linear solver auto: a one-sided coupling that makes (J + Jᵀ)/2 indefinite still takes GMRES") {
  // A sliding contact's friction-like coupling: J(i + 1, i) += c on disjoint pairs (i, i + 1), with
  // no mirror entry, c = 60 beside a diagonal of 25 (wide pattern 2 x 12 + mass 1): the 2 x 2
  // symmetric part [[25, 30], [30, 25]] is indefinite. The Cholesky of J's symmetric core (the
  // coupling left out) preconditions GMRES, which reaches round-off against UMFPACK's answer, and the
  // next factorization of the pattern takes the same path.
  using Kind = LinearSolver::Kind;
  const int n = 2100, band = 12;
  auto t = wideSymmetricPattern(n, band);
  const double c = 60.0;
  for (int i = 0; i + 1 < n; i += 3) t.emplace_back(i + 1, i, c);
  SparseAssembler a;
  a.setFixed(std::vector<char>(n, 0), SparseAssembler::Layout::Free);
  Vec mass = Vec::Constant(n, 1.0);
  a.assemble(t, &mass, 1.0);
  REQUIRE_FALSE(a.isSymmetric());
  {
    // (J + Jᵀ)/2 is indefinite: its Cholesky fails (what sent such Jacobians to UMFPACK before).
    const SpMat J = a.matrix();
    const SpMat Jt = J.transpose();
    const SpMat S = 0.5 * (J + Jt);
    Eigen::SimplicialLLT<SpMat> llt(S);
    CHECK(llt.info() != Eigen::Success);
  }
  LinearSolver lu(Kind::UmfPack), solver(Kind::Auto);
  lu.analyzePattern(a.matrix());
  solver.analyzePattern(a.matrix());
  const Vec b = Vec::LinSpaced(n, -1.0, 2.0);
  Vec x_lu(n), x(n);
  REQUIRE(lu.factorize(a.matrix()));
  REQUIRE(lu.solve(b, x_lu));
  for (int k = 0; k < 2; ++k) {
    REQUIRE(solver.factorize(a.matrix(), false));
    CHECK(solver.active() == Kind::SymmetricPartGmres);
    REQUIRE(solver.solve(b, x));
    CHECK(solver.active() == Kind::SymmetricPartGmres);
    CHECK((x - x_lu).norm() < 1e-10 * x_lu.norm());
    CHECK((a.matrix() * x - b).norm() < 1e-11 * b.norm());
  }
}

