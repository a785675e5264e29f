// A solver that breaks the state on purpose (test plugin): it commits the World's state unchanged,
// except that from step `at_step` on one entry of q or v is NaN or infinite, and it reports success
// all the same. The kernel's own check after every step must stop the run (test_reliability.cpp).
#include <rodsim/plugin.h>

#include <cmath>
#include <limits>

namespace {

class BrokenSolver final : public rodsim::Solver {
 public:
  static rodsim::Schema schema() {
    rodsim::Schema s{"test-broken-state", "Commits a NaN or an infinity into the state and reports success (test plugin)."};
    s.add<int>("at_step", 3, "The first step whose committed state is broken.").atLeast(1);
    s.add<std::string>("entry", "q-nan", "What breaks: q-nan, v-inf.");
    return s;
  }
  explicit BrokenSolver(const rodsim::Params& p)
      : Solver(p), at_step_(p.integer("at_step")), entry_(p.string("entry")) {}
  rodsim::StepReport step(rodsim::World& world, double dt) override {
    rodsim::Vec q = world.q(), v = world.v();
    const rodsim::Vec residual = rodsim::Vec::Zero(q.size());
    world.beginStep(dt);
    if (++steps_ >= at_step_) {
      if (entry_ == "v-inf") v[v.size() - 1] = std::numeric_limits<double>::infinity();
      else q[q.size() / 2] = std::numeric_limits<double>::quiet_NaN();
    }
    world.commitStep(world.time() + dt, q, v, residual);
    return {};
  }

 private:
  int at_step_;
  std::string entry_;
  int steps_ = 0;
};

}  // namespace

RODSIM_PLUGIN("test_broken_state", "1.0.0", registry) { registry.addSolver<BrokenSolver>(); }
