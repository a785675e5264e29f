// position-verlet and pefrl on spring chains (FakeWorld): order of convergence on a linear
// oscillator, energy conservation without dissipation, the stability estimate against the exact
// highest frequency of a chain, refusal of a too large dt, NaN stops the run.
#include "explicit_solvers.h"
#include <rodsim/testing/fake_world.h>

#include <doctest/doctest.h>

#include <cmath>

using namespace rodsim;
using namespace rodsim::explicit_solver;
using rodsim::testing::FakeWorld;
using rodsim::testing::line;
using rodsim::testing::makeParams;
using rodsim::testing::SpringChain;

namespace {

// Two free masses m joined by a spring k: the stretch oscillates at omega = sqrt(2k/m).
struct Oscillator {
  FakeWorld w;
  SpringChain* rod = nullptr;
  double k = 100, m = 0.1, A = 0.05, L = 1.0;
  Oscillator() {
    SpringChain::Options o;
    o.points = line(2, Vec3(0, 0, 0), Vec3(L, 0, 0));
    o.stiffness = k;
    o.mass = m;
    rod = &w.addRod<SpringChain>("osc", o);
    w.finalize();
    w.q()[3] += A;  // stretch
  }
  double omega() const { return std::sqrt(2 * k / m); }
  double stretch() { return w.q()[3] - w.q()[0] - L; }
};

template <class S> double runOscillator(int steps, double T, double* energy_drift = nullptr) {
  Oscillator o;
  S solver(makeParams(S::schema(), {{"stability", std::string("off")}}));
  const double dt = T / steps, E0 = 0.5 * o.k * o.A * o.A;
  double worst = 0;
  for (int s = 0; s < steps; ++s) {
    REQUIRE(solver.step(o.w, dt).ok);
    const Vec& v = o.w.v();
    const double E = 0.5 * o.m * v.squaredNorm() + 0.5 * o.k * std::pow(o.stretch(), 2);
    worst = std::max(worst, std::abs(E - E0) / E0);
  }
  if (energy_drift) *energy_drift = worst;
  return std::abs(o.stretch() - o.A * std::cos(o.omega() * T));
}

}  // namespace

TEST_CASE("scheme coefficients: consistent (sum 1) and the stability bounds omega h") {
  for (const Scheme& s : {positionVerletScheme(), pefrlScheme()}) {
    double a = 0, b = 0;
    for (double x : s.drift) a += x;
    for (double x : s.kick) b += x;
    CHECK(a == doctest::Approx(1.0).epsilon(1e-14));
    CHECK(b == doctest::Approx(1.0).epsilon(1e-14));
  }
  CHECK(stabilityBound(positionVerletScheme()) == doctest::Approx(2.0).epsilon(1e-9));
  const double pefrl = stabilityBound(pefrlScheme());
  MESSAGE("pefrl stable for omega h < " << pefrl << " (" << pefrl / 4 << " per force evaluation)");
  CHECK(pefrl > 2.0);
}

TEST_CASE("pefrl converges at fourth order and position-verlet at second order on a linear oscillator") {
  const double T = 1.0;
  double prev_p = 0, prev_v = 0;
  for (int steps : {200, 400, 800, 1600}) {  // omega dt = 0.22 ... 0.028
    const double ep = runOscillator<Pefrl>(steps, T), ev = runOscillator<PositionVerlet>(steps, T);
    MESSAGE("steps " << steps << ": pefrl error " << ep << ", verlet error " << ev);
    if (prev_p > 0) {
      const double order_p = std::log2(prev_p / ep), order_v = std::log2(prev_v / ev);
      MESSAGE("  observed orders: pefrl " << order_p << ", verlet " << order_v);
      CHECK(order_p == doctest::Approx(4.0).epsilon(0.05));
      CHECK(order_v == doctest::Approx(2.0).epsilon(0.05));
    }
    prev_p = ep;
    prev_v = ev;
  }
}

TEST_CASE("position-verlet conserves energy without dissipation: bounded O((omega dt)^2) error, no drift") {
  Oscillator o;
  const double dt = 0.1 / o.omega();  // omega dt = 0.1
  double drift_short = 0, drift_long = 0;
  runOscillator<PositionVerlet>(1000, 1000 * dt, &drift_short);
  runOscillator<PositionVerlet>(100000, 100000 * dt, &drift_long);
  MESSAGE("max relative energy error over 1e3 steps " << drift_short << ", over 1e5 steps " << drift_long);
  CHECK(drift_long < 0.26 * 0.1 * 0.1);  // about (omega dt)^2 / 4 for Verlet (modified energy)
  CHECK(drift_long < 1.01 * drift_short + 1e-12);       // no secular growth
}

TEST_CASE("stability estimate: the highest frequency of a free spring chain, refusal above it naming a safe dt") {
  const int n = 20;
  const double k = 1e4, m = 0.01;
  auto make = [&](FakeWorld& w) {
    SpringChain::Options o;
    o.points = line(n, Vec3(0, 0, 0), Vec3(1, 0, 0));
    o.stiffness = k;
    o.mass = m;
    w.addRod<SpringChain>("chain", o);
    w.finalize();
  };
  // exact: lambda_max = 4 k/m sin^2((n-1) pi / 2n) for the axial modes of a free chain
  const double wmax = 2 * std::sqrt(k / m) * std::sin((n - 1) * M_PI / (2 * n));
  {
    FakeWorld w;
    make(w);
    PositionVerlet s(makeParams(PositionVerlet::schema(), {{"power_iterations", 400}}));
    REQUIRE(s.step(w, 1e-5).ok);
    const double est = 2.0 / s.criticalTimeStep();
    MESSAGE("omega_max estimate " << est << " exact " << wmax);
    CHECK(est <= wmax * (1 + 1e-6));  // a Rayleigh quotient never exceeds it
    CHECK(est >= 0.97 * wmax);
  }
  {
    FakeWorld w;
    make(w);
    PositionVerlet s(makeParams(PositionVerlet::schema(), {}));
    const StepReport r = s.step(w, 1.5 * 2.0 / wmax);
    CHECK_FALSE(r.ok);
    CHECK(r.message.find("exceeds the explicit stability limit") != std::string::npos);
    CHECK(r.message.find("use dt <=") != std::string::npos);
    CHECK(w.evaluations > 0);
  }
  {  // between safety x the limit and the limit: the message says it is the margin that is exceeded
    FakeWorld w;
    make(w);
    PositionVerlet s(makeParams(PositionVerlet::schema(), {{"power_iterations", 400}}));
    REQUIRE(s.step(w, 1e-5).ok);
    const double limit = s.criticalTimeStep();  // within 3 % of the exact 2 / wmax (above)
    FakeWorld w2;
    make(w2);
    PositionVerlet s2(makeParams(PositionVerlet::schema(), {{"power_iterations", 400}}));
    const StepReport r = s2.step(w2, 0.95 * limit);
    CHECK_FALSE(r.ok);
    CHECK(r.message.find("exceeds safety = 0.9 x the explicit stability limit") != std::string::npos);
    CHECK(r.message.find("solver.safety") != std::string::npos);
  }
  {  // warn: goes on
    FakeWorld w;
    make(w);
    PositionVerlet s(makeParams(PositionVerlet::schema(), {{"stability", std::string("warn")}}));
    CHECK(s.step(w, 1.5 * 2.0 / wmax).ok);
  }
}

TEST_CASE("a non-finite force stops the run with a reason") {
  struct NanForce : Force {
    NanForce() : Force(Params("nan")) {}
    void addForce(const EvalContext&, Vec& f) override { f[0] = std::nan(""); }
  };
  FakeWorld w;
  SpringChain::Options o;
  o.points = line(3, Vec3(0, 0, 0), Vec3(1, 0, 0));
  w.addRod<SpringChain>("c", o);
  w.addForce(std::make_unique<NanForce>());
  w.finalize();
  PositionVerlet s(makeParams(PositionVerlet::schema(), {{"stability", std::string("off")}}));
  const StepReport r = s.step(w, 1e-3);
  CHECK_FALSE(r.ok);
  CHECK(r.message.find("non-finite") != std::string::npos);
}

TEST_CASE("bad parameters: the schema bounds safety and power_iterations") {
  const Schema s = PositionVerlet::schema();
  CHECK(s.find("safety")->max.value() == 1.0);
  Params p = makeParams(s, {{"safety", 1.5}});
  CHECK_THROWS_AS(PositionVerlet{p}, ParamError);
}
