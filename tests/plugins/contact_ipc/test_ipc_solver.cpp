// The ipc contact inside the implicit-euler solver (solver_newton): a rod thrown at a held rod
// whose predictor q_n + dt v_n would cross it. The solver shortens the predictor by CCD and caps
// every line search by maxStepFraction, so every committed configuration keeps a positive gap and
// the rod is stopped by the barrier.
#include <rodsim/geometry/segment_segment_distance.h>  // segmentDistance: an independent check of the gap
#include <rodsim/testing/fake_world.h>
#include "ipc_contact.h"
#include "newton_solvers.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

using namespace rodsim;
using namespace rodsim::testing;
using rodsim::ipc::IpcContact;

namespace {

// Holds every node of a rod where it starts (test-local: no constraint plugin needed).
class HoldRod : public Constraint {
 public:
  explicit HoldRod(Rod& rod) : Constraint(Params("hold")), rod_(rod) {}
  void bind(World& world) override {
    for (int n = 0; n < rod_.numNodes(); ++n) {
      const int x = rod_.globalPositionDof(n);
      position_dofs_.push_back(x);
      for (int i = 0; i < 3; ++i) {
        dofs_.push_back(x + i);
        values_.push_back(world.q()[x + i]);
      }
    }
  }
  const std::vector<int>& dofs() const override { return dofs_; }
  const std::vector<int>& positionDofs() const override { return position_dofs_; }
  void prescribe(double, Vec& q) override {
    for (std::size_t k = 0; k < dofs_.size(); ++k) q[dofs_[k]] = values_[k];
  }

 private:
  Rod& rod_;
  std::vector<int> dofs_, position_dofs_;
  std::vector<double> values_;
};

}  // namespace

TEST_CASE("implicit-euler + ipc: a rod thrown through another stops at a positive gap") {
  const double r = 1e-3, L = 4e-3, d_hat = 1e-4, dt = 1e-3, v0 = 1.0, gap0 = 2e-4;
  FakeWorld w;
  SpringChain::Options a, b;
  a.points = line(5, Vec3(-2 * L, 0, 0), Vec3(2 * L, 0, 0));
  a.mass = 1e-2;
  a.radius = r;
  b.points = line(5, Vec3(0.3 * L, -2.3 * L, 2 * r + gap0), Vec3(0.3 * L, 1.7 * L, 2 * r + gap0));
  b.mass = 1e-2;
  b.radius = r;
  b.initial_velocity = Vec3(0.2, 0, -v0);  // the predictor moves it by 1 mm: 5 gaps through rod a
  auto& rod_a = w.addRod<SpringChain>("a", a);
  auto& rod_b = w.addRod<SpringChain>("b", b);
  w.addConstraint(std::make_unique<HoldRod>(rod_a));
  auto& c = w.addContact<IpcContact>(makeParams(IpcContact::schema(), {{"d_hat", d_hat}, {"friction", 0.2}}));
  w.finalize();
  newton::ImplicitEulerSolver solver(makeParams(newton::ImplicitEulerSolver::schema(), {}));
  auto gap = [&] {
    double g = 1e300;
    for (int i = 0; i + 1 < 5; ++i)
      for (int j = 0; j + 1 < 5; ++j) {
        const Vec3 p0 = w.q().segment<3>(rod_a.globalPositionDof(i)), p1 = w.q().segment<3>(rod_a.globalPositionDof(i + 1));
        const Vec3 q0 = w.q().segment<3>(rod_b.globalPositionDof(j)), q1 = w.q().segment<3>(rod_b.globalPositionDof(j + 1));
        g = std::min(g, geometry::segmentDistance(p0, p1, q0, q1) - 2 * r);
      }
    return g;
  };
  double min_gap = gap0, max_iterations = 0;
  for (int step = 0; step < 30; ++step) {
    CAPTURE(step);
    const StepReport rep = solver.step(w, dt);
    REQUIRE_MESSAGE(rep.ok, rep.message);
    const double g = gap();
    CHECK(g > 0);
    min_gap = std::min(min_gap, g);
    max_iterations = std::max(max_iterations, double(rep.iterations));
  }
  const double vz = w.v()[rod_b.globalPositionDof(2) + 2];
  MESSAGE("smallest gap ", min_gap, " m (d_hat ", d_hat, "), kappa ", c.kappa(), " N/m, final v_z ", vz,
          " m/s, at most ", max_iterations, " iterations per step");
  CHECK(min_gap > 0);
  CHECK(min_gap < d_hat);  // the barrier, not luck, stopped it
  CHECK(vz > -0.05 * v0);  // stopped (or bouncing back)
}
