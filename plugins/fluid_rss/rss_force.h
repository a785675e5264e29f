// The "rss" force: viscous drag and hydrodynamic interaction of rods through a Stokes fluid,
// by Regularized Stokeslet Segments (Tong et al. 2023, SI Appendix A). Applied explicitly, once per step,
// from the state at the start of the step (the paper's SI Algorithm 2): the force densities F
// solve 8πη U = A F (Eq. A.8) for the node velocities U, and node i feels -F_i l_i (l_i: its
// current Voronoi length). No Jacobian enters the Newton iteration.
#pragma once

#include "stokeslet_operator.h"

#include <rodsim/force.h>

#include <array>
#include <atomic>
#include <chrono>
#include <exception>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace rodsim::rss {

class RssForce final : public Force {
 public:
  static Schema schema();
  explicit RssForce(const Params& p);
  ~RssForce() override;

  void bind(World& world) override;
  // overlap = true: hands the step's solve to the worker thread, which runs while the solver
  // evaluates the rods and contacts; the first addForce of the step helps with the assembly and
  // waits for the rest. The densities are the same as without overlap, bit for bit.
  void beginStep(const EvalContext& ctx) override;
  void addForce(const EvalContext& ctx, Vec& f) override;
  bool constantInStep() const override { return true; }  // explicit: from the start state only
  // The iterative solver's state (warm start, preconditioner), so that a restart continues bit
  // for bit: the last two densities, the solve count, the refresh baseline, and the positions
  // the preconditioner was factored at (loadState factors it again from them).
  void saveState(std::vector<double>& out) const override;
  void loadState(const std::vector<double>& in) override;
  // Per step in timeseries.csv: GMRES iterations (0 with lu), the relative residual reached, and
  // the wall milliseconds of the assembly and of the solve.
  std::vector<std::string> reportColumns() const override {
    return {"gmres_iterations", "relative_residual", "assembly_ms", "solve_ms"};
  }
  void reportValues(std::vector<double>& out) const override {
    settle();
    out.insert(out.end(), {double(last_.iterations), last_.relative_residual, last_.assembly_ms, last_.solve_ms});
  }

  // --- inspection (tests, benchmark)
  struct Counters {
    long long solves = 0, gmres_iterations = 0, lu_fallbacks = 0, preconditioner_refreshes = 0;
    double assembly_s = 0, solve_s = 0;
  };
  const Counters& counters() const {
    settle();
    return counters_;
  }
  // Force densities (N/m, exerted on the fluid) and nodal forces (N, on the rods) of the last
  // solve, in the operator's node order; global x DOF of each node.
  const Vec& densities() const {
    settle();
    return density_;
  }
  const Vec& nodalForces() const {
    settle();
    return nodal_force_;
  }
  const std::vector<int>& nodeDofs() const { return node_dof_; }
  // Solve for the force densities of the node positions x and velocities u (in the operator's
  // node order) and update nodalForces(). Used by addForce once per step.
  void solve(const std::vector<Vec3>& x, const std::vector<Vec3>& u);

 private:
  // The densities for u on the assembled operator, and the nodal forces at x; assembly_ms: how
  // long the assembly took (reported).
  void solveAssembled(const std::vector<Vec3>& x, const std::vector<Vec3>& u, double assembly_ms);
  // overlap: the worker's loop; settle() waits until no job is running (results readable).
  void workerLoop();
  // Refactor the GMRES preconditioner from the operator of positions x (remembered for restarts).
  void refreshPreconditioner(const std::vector<Vec3>& x);
  void settle() const;
  // x_, u_: the positions and velocities of the step's start state, in the operator's node order.
  void readStartState(const EvalContext& ctx);

  // overlap not given: measure each way and keep the faster (chooseOverlap).
  void chooseOverlap();
  static int availableCpus();

  double viscosity_, blob_ratio_, tolerance_;
  int max_iterations_, threads_, refresh_after_;
  bool use_lu_;
  bool overlap_ = false;       // this step's fluid runs on the worker thread
  bool overlap_auto_ = false;  // overlap not given: chooseOverlap decides step by step
  struct OverlapProbe {
    static constexpr int kProbeSteps = 7;
    // How long a choice holds: from 32 steps and 0.05 s, doubled each time a probe confirms it (up
    // to 1024 steps and 2 s), back to the start when a probe reverses it.
    static constexpr int kFirstHoldSteps = 32, kMaxHoldSteps = 1024;
    static constexpr double kFirstHoldSeconds = 0.05, kMaxHoldSeconds = 2.0;
    enum Phase { kWithout, kWith, kHold } phase = kWithout;
    int count = 0;
    int hold_steps = kFirstHoldSteps;
    double hold_seconds = kFirstHoldSeconds;
    std::array<double, kProbeSteps> without{}, with{};  // wall seconds per step
    bool decided = false, last_choice = false;  // a probe has chosen; what it chose
    std::chrono::steady_clock::time_point last_begin{}, hold_until{};
  } probe_;
  std::optional<std::vector<std::string>> rod_names_;

  StokesletOperator op_;
  std::vector<int> node_dof_;         // global x DOF of every node in scope
  std::vector<int> rod_first_node_;   // first operator node of each rod, plus the end
  std::vector<Vec3> x_, u_;
  Vec rhs_, density_, previous_density_, guess_, nodal_force_;
  int baseline_iterations_ = -1;  // GMRES iterations of the first solve after a refresh
  std::vector<Vec3> refresh_x_;    // positions of the operator the preconditioner was factored from
  double solved_for_t_ = -1, solved_for_dt_ = -1;  // the step whose start state was solved
  Counters counters_;
  // overlap: job_ is kIdle, kRunning (the worker owns x_, u_, the operator and the results), or
  // kStop; claimed_ is false from beginStep until the step's first addForce took the result.
  enum : int { kIdle = 0, kRunning = 1, kStop = 2 };
  mutable std::atomic<int> job_{kIdle};
  bool claimed_ = true;
  std::exception_ptr worker_error_;
  TwoThreadTeam team_;  // the worker drives GMRES; the solver's thread helps while it waits
  std::thread worker_;
  struct LastSolve {
    int iterations = 0;
    double relative_residual = 0, assembly_ms = 0, solve_ms = 0;
  } last_;
};

}  // namespace rodsim::rss
