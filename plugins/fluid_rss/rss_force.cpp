#include "rss_force.h"

#include <rodsim/capabilities.h>
#include <rodsim/rod.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numbers>
#include <utility>

#include <sched.h>

namespace rodsim::rss {

Schema RssForce::schema() {
  Schema s{"rss",
           "Stokes drag and hydrodynamic interaction by Regularized Stokeslet Segments (Tong et al. 2023, "
           "SI Appendix A): one dense operator over every segment of the rods in scope, solved once "
           "per step for the force densities from the velocities at the start of the step, applied "
           "explicitly. Zero in quasi-static solves."};
  s.required<double>("viscosity", "Dynamic viscosity eta of the fluid.").unit("Pa s").greater(0);
  s.add<double>("blob_ratio", 1.02, "Regularization eps of each rod as a multiple of its radius "
                                    "(Tong et al. 2023 use 1.02). A line of these Stokeslets drags like a "
                                    "slender body of radius eps / sqrt(e) (docs/flagella.md).")
      .greater(0);
  s.optional<std::vector<std::string>>("rods", "Rods in the fluid (default: all rods); they all "
                                              "interact through it.");
  s.add<std::string>("linear_solver", "gmres",
                     "gmres: restarted GMRES warm-started from the previous step's densities, "
                     "block-Jacobi preconditioned; lu: dense LU every step (the reference, O(n^3)).")
      .choices({"gmres", "lu"});
  s.add<double>("tolerance", 1e-6, "GMRES stopping rule |A F - 8 pi eta U| <= tolerance |8 pi eta U|. The default keeps the error of the hydrodynamic forces far below both the discretization error of RSS (about 1%) and a Newton tolerance of 1e-7 N.")
      .greater(0)
      .atMost(1e-2);
  s.add<int>("preconditioner_refresh", 3,
             "Refactor the GMRES preconditioner (each rod's self-interaction block of A) after a "
             "solve that took this many iterations more than the first solve after the last "
             "refresh; until then the factors of an earlier step are reused.")
      .range(1, 1e6);
  s.add<int>("max_iterations", 300,
                   "GMRES iterations per solve before falling back to dense LU (counted).")
      .range(1, 1e5);
  s.add<int>("threads", 1, "Threads assembling the operator and applying it in GMRES (0: all cores). More than one pays on an idle machine only: OpenMP threads spin while they wait.").range(0, 256);
  s.optional<bool>("overlap",
                   "Compute each step's hydrodynamic forces on a second thread while the solver evaluates "
                   "the rods and contacts (the solver's thread joins the assembly when it needs them). "
                   "Same results bit for bit either way. true: always; false: never; not given: measured "
                   "(with threads = 1 and at least two CPUs: a few steps each way, then the faster for "
                   "32 to 1024 steps before measuring again: it pays only while a second core is idle).");
  return s;
}

RssForce::RssForce(const Params& p)
    : Force(p),
      viscosity_(p.real("viscosity")),
      blob_ratio_(p.real("blob_ratio")),
      tolerance_(p.real("tolerance")),
      max_iterations_(static_cast<int>(p.integer("max_iterations"))),
      threads_(static_cast<int>(p.integer("threads"))),
      refresh_after_(static_cast<int>(p.integer("preconditioner_refresh"))),
      use_lu_(p.string("linear_solver") == "lu") {
  rod_names_ = p.optionalStrings("rods");
  if (p.has("overlap")) {
    overlap_ = p.boolean("overlap");
    if (overlap_ && threads_ != 1)
      throw ParamError("threads", "overlap = true runs the fluid on one thread next to the solver's; "
                                  "set threads = 1 (or overlap = false)");
  } else {
    overlap_auto_ = threads_ == 1 && availableCpus() >= 2;
  }
}

RssForce::~RssForce() {
  if (!worker_.joinable()) return;
  settle();
  job_.store(kStop, std::memory_order_release);
  job_.notify_all();
  worker_.join();
}

namespace {
// How long a thread of the overlapped step spins before it sleeps: longer than the waits of a
// step (a fraction of a millisecond), so that neither side pays a wake-up in steady running.
constexpr auto kSpinFor = std::chrono::milliseconds(2);

// Waits while `state` holds `value`: spinning first, then sleeping on the atomic.
void waitWhile(const std::atomic<int>& state, int value) {
  const auto start = std::chrono::steady_clock::now();
  for (unsigned spins = 1; state.load(std::memory_order_acquire) == value; ++spins) {
    if (spins % 256 != 0 || std::chrono::steady_clock::now() - start < kSpinFor)
      spinPause();
    else
      state.wait(value, std::memory_order_acquire);
  }
}
}  // namespace

void RssForce::settle() const { waitWhile(job_, kRunning); }

void RssForce::workerLoop() {
  using clock = std::chrono::steady_clock;
  for (;;) {
    waitWhile(job_, kIdle);
    if (job_.load(std::memory_order_acquire) == kStop) return;
    try {
      const auto t0 = clock::now();
      op_.assembleRows(0);
      op_.waitAssembled();  // the solver's thread may still write its last rows
      solveAssembled(x_, u_, 1e3 * std::chrono::duration<double>(clock::now() - t0).count());
    } catch (...) {
      worker_error_ = std::current_exception();
    }
    job_.store(kIdle, std::memory_order_release);
    job_.notify_all();
  }
}

void RssForce::readStartState(const EvalContext& ctx) {
  for (std::size_t i = 0; i < node_dof_.size(); ++i) {
    x_[i] = ctx.q_start->segment<3>(node_dof_[i]);
    u_[i] = ctx.v_start->segment<3>(node_dof_[i]);
  }
}

int RssForce::availableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  return static_cast<int>(std::thread::hardware_concurrency());
}

// overlap not given: whether this step overlaps, from the wall time between consecutive steps
// (the whole step as the time loop sees it). Each probe runs kProbeSteps steps without, then with
// the overlap (the first step of each is a transition and not counted), compares the medians,
// and keeps the faster for a while (OverlapProbe: longer each time a probe confirms it). The
// choice changes the cost only: both ways give the same results bit for bit.
void RssForce::chooseOverlap() {
  using clock = std::chrono::steady_clock;
  const auto now = clock::now();
  const bool first = probe_.last_begin == clock::time_point{};
  const double step_s = first ? 0.0 : std::chrono::duration<double>(now - probe_.last_begin).count();
  probe_.last_begin = now;
  if (first) {
    probe_.phase = OverlapProbe::kWithout;
    probe_.count = 0;
    overlap_ = false;
    return;
  }
  auto median = [](std::array<double, OverlapProbe::kProbeSteps> v) {
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };
  switch (probe_.phase) {
    case OverlapProbe::kWithout:
    case OverlapProbe::kWith: {
      const bool with = probe_.phase == OverlapProbe::kWith;
      if (probe_.count > 0) (with ? probe_.with : probe_.without)[probe_.count - 1] = step_s;  // step 0: transition
      if (++probe_.count <= OverlapProbe::kProbeSteps) return;
      probe_.count = 0;
      if (!with) {
        probe_.phase = OverlapProbe::kWith;
        overlap_ = true;
        return;
      }
      const bool chosen = median(probe_.with) < 0.95 * median(probe_.without);
      if (probe_.decided && chosen == probe_.last_choice) {
        probe_.hold_steps = std::min(2 * probe_.hold_steps, OverlapProbe::kMaxHoldSteps);
        probe_.hold_seconds = std::min(2 * probe_.hold_seconds, OverlapProbe::kMaxHoldSeconds);
      } else {
        probe_.hold_steps = OverlapProbe::kFirstHoldSteps;
        probe_.hold_seconds = OverlapProbe::kFirstHoldSeconds;
      }
      overlap_ = probe_.last_choice = chosen;
      probe_.phase = OverlapProbe::kHold;
      probe_.hold_until =
          now + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(probe_.hold_seconds));
      probe_.decided = true;
      return;
    }
    case OverlapProbe::kHold:
      if (++probe_.count < probe_.hold_steps || now < probe_.hold_until) return;
      probe_.phase = OverlapProbe::kWithout;
      probe_.count = 0;
      overlap_ = false;
      return;
  }
}

void RssForce::beginStep(const EvalContext& ctx) {
  if (!(ctx.dt > 0)) return;
  if (overlap_auto_) chooseOverlap();
  if (!overlap_) return;
  settle();  // an earlier step's job that no addForce claimed (a quasi-static solve)
  readStartState(ctx);
  op_.prepareAssembly(x_);
  worker_error_ = nullptr;
  claimed_ = false;
  if (!worker_.joinable()) worker_ = std::thread([this] { workerLoop(); });
  job_.store(kRunning, std::memory_order_release);
  job_.notify_one();
}

void RssForce::bind(World& world) {
  const std::vector<Rod*> rods = resolveRods(world, rod_names_, "rods");
  refuseClosedRods(rods, "rods", "the rss fluid force");
  std::vector<Segment> segments;
  std::vector<double> blob;
  node_dof_.clear();
  rod_first_node_.clear();
  for (Rod* rod : rods) {
    const int first = static_cast<int>(node_dof_.size());
    rod_first_node_.push_back(first);
    for (int n = 0; n < rod->numNodes(); ++n) {
      node_dof_.push_back(rod->globalPositionDof(n));
      // A node's blob is its rod's: the segment integrals need one ε per segment.
      blob.push_back(blob_ratio_ * rod->radius(std::min(n, rod->numEdges() - 1)));
    }
    for (int e = 0; e < rod->numEdges(); ++e) segments.push_back({first + e, first + e + 1});
  }
  rod_first_node_.push_back(static_cast<int>(node_dof_.size()));
  const int n = static_cast<int>(node_dof_.size());
  op_.setTopology(n, std::move(segments), std::move(blob), rod_first_node_, threads_);
  if (overlap_ || overlap_auto_) op_.setTeam(&team_);
  x_.assign(n, Vec3::Zero());
  u_.assign(n, Vec3::Zero());
  rhs_ = Vec::Zero(3 * n);
  density_ = Vec::Zero(3 * n);
  previous_density_ = Vec::Zero(3 * n);
  guess_ = Vec::Zero(3 * n);
  nodal_force_ = Vec::Zero(3 * n);
}

void RssForce::solve(const std::vector<Vec3>& x, const std::vector<Vec3>& u) {
  settle();
  const auto t0 = std::chrono::steady_clock::now();
  op_.assemble(x);
  solveAssembled(x, u, 1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

void RssForce::solveAssembled(const std::vector<Vec3>& x, const std::vector<Vec3>& u, double assembly_ms) {
  using clock = std::chrono::steady_clock;
  const auto t1 = clock::now();
  const double scale = 8.0 * std::numbers::pi * viscosity_;  // Eq. A.8: 8πη U = A F
  for (std::size_t i = 0; i < u.size(); ++i) rhs_.segment<3>(3 * i) = scale * u[i];
  bool solved = false;
  if (!use_lu_) {
    // Warm start: the densities extrapolated linearly from the last two steps (the motion is
    // smooth on the time step), which removes the first-order change of the right-hand side.
    if (counters_.solves >= 2) {
      guess_ = 2.0 * density_ - previous_density_;
      previous_density_ = density_;
      density_ = guess_;
    } else {
      previous_density_ = density_;
    }
    if (!op_.hasPreconditioner()) refreshPreconditioner(x);
    const GmresResult r = op_.solveGmres(rhs_, density_, tolerance_, max_iterations_);
    counters_.gmres_iterations += r.iterations;
    last_.iterations = r.iterations;
    last_.relative_residual = r.relative_residual;
    solved = r.converged;
    // Refresh the preconditioner once the geometry has drifted from the factored blocks: when a
    // solve takes clearly more iterations than the first one after the last refresh.
    if (baseline_iterations_ < 0) baseline_iterations_ = r.iterations;
    if (r.iterations > baseline_iterations_ + refresh_after_) {
      refreshPreconditioner(x);
      baseline_iterations_ = -1;
    }
    if (!solved) ++counters_.lu_fallbacks;  // never accept a short solve: fall back to the reference
  }
  if (!solved) {
    op_.solveLu(rhs_, density_);
    last_.iterations = 0;
    last_.relative_residual = 0;  // LU: to round-off
  }
  ++counters_.solves;
  last_.assembly_ms = assembly_ms;
  last_.solve_ms = 1e3 * std::chrono::duration<double>(clock::now() - t1).count();
  counters_.assembly_s += 1e-3 * last_.assembly_ms;
  counters_.solve_s += 1e-3 * last_.solve_ms;

  // Nodal force on the rods: minus the density times the node's Voronoi length (half of each
  // adjacent edge), the quadrature of the hat functions the densities interpolate with.
  for (std::size_t r = 0; r + 1 < rod_first_node_.size(); ++r)
    for (int i = rod_first_node_[r]; i < rod_first_node_[r + 1]; ++i) {
      double len = 0;
      if (i > rod_first_node_[r]) len += 0.5 * (x[i] - x[i - 1]).norm();
      if (i + 1 < rod_first_node_[r + 1]) len += 0.5 * (x[i + 1] - x[i]).norm();
      nodal_force_.segment<3>(3 * i) = -len * density_.segment<3>(3 * i);
    }
}

void RssForce::refreshPreconditioner(const std::vector<Vec3>& x) {
  op_.refreshPreconditioner();
  refresh_x_ = x;
  ++counters_.preconditioner_refreshes;
}

void RssForce::addForce(const EvalContext& ctx, Vec& f) {
  if (ctx.quasi_static || !(ctx.dt > 0)) return;
  if (!claimed_) {  // overlap: the job beginStep started; help with its assembly, then wait
    op_.assembleRows(1);
    team_.help([this] { return job_.load(std::memory_order_acquire) != kRunning; });
    claimed_ = true;
    solved_for_t_ = ctx.t;
    solved_for_dt_ = ctx.dt;
    if (worker_error_) std::rethrow_exception(std::exchange(worker_error_, nullptr));
  } else if (ctx.t != solved_for_t_ || ctx.dt != solved_for_dt_) {  // a new step (or a retried one)
    readStartState(ctx);
    solve(x_, u_);
    solved_for_t_ = ctx.t;
    solved_for_dt_ = ctx.dt;
  }
  for (std::size_t i = 0; i < node_dof_.size(); ++i) f.segment<3>(node_dof_[i]) += nodal_force_.segment<3>(3 * i);
}

void RssForce::saveState(std::vector<double>& out) const {
  settle();
  out.insert(out.end(), density_.data(), density_.data() + density_.size());
  out.insert(out.end(), previous_density_.data(), previous_density_.data() + previous_density_.size());
  out.push_back(static_cast<double>(counters_.solves));
  out.push_back(baseline_iterations_);
  out.push_back(refresh_x_.empty() ? 0.0 : 1.0);
  for (const Vec3& p : refresh_x_) out.insert(out.end(), {p.x(), p.y(), p.z()});
}

void RssForce::loadState(const std::vector<double>& in) {
  settle();
  const std::size_t n = density_.size();
  if (in.size() == n) {  // checkpoints written before the solver state was saved: densities only
    density_ = Eigen::Map<const Vec>(in.data(), n);
    return;
  }
  if (in.size() != 2 * n + 3 && in.size() != 3 * n + 3) return;  // not ours (the kernel checks the scene)
  density_ = Eigen::Map<const Vec>(in.data(), n);
  previous_density_ = Eigen::Map<const Vec>(in.data() + n, n);
  counters_.solves = static_cast<long long>(in[2 * n]);
  baseline_iterations_ = static_cast<int>(in[2 * n + 1]);
  if (in[2 * n + 2] != 0 && in.size() == 3 * n + 3) {
    // The same operator, hence the same preconditioner bit for bit, as when it was factored.
    refresh_x_.resize(n / 3);
    for (std::size_t i = 0; i < refresh_x_.size(); ++i) refresh_x_[i] = Vec3(in[2 * n + 3 + 3 * i], in[2 * n + 4 + 3 * i], in[2 * n + 5 + 3 * i]);
    op_.assemble(refresh_x_);
    op_.refreshPreconditioner();
  }
}

}  // namespace rodsim::rss
