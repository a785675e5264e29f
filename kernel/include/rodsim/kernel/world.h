// The kernel's World: rods laid out in one global DOF vector, and the components acting on them.
#pragma once

#include <rodsim/kernel/scene.h>

#include <rodsim/plugin.h>

#include <rodsim/parallel/thread_pool.h>

#include <csignal>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace rodsim::kernel {

// A component together with what the kernel needs to report about it.
template <class T> struct Bound {
  std::shared_ptr<T> object;
  const ComponentSpec* spec = nullptr;
  std::string plugin;  // plugin that made it
};

// Component errors during a run name the component and its plugin.
class ComponentFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class KernelWorld final : public World, public ContactFreeEvaluation, public StopRequests, public ContactExtrapolation, public ParallelLoops {
 public:
  // Creates and binds every component of the scene. Throws InputError (with the scene location)
  // for any ParamError or exception a plugin raises while constructing or binding.
  KernelWorld(const Scene& scene, const TypeRegistry& registry);

  // World
  int numRods() const override { return static_cast<int>(rods_.size()); }
  Rod& rod(int i) override { return *rods_[i].object; }
  Rod* findRod(const std::string& name) override;
  int numDofs() const override { return static_cast<int>(q_.size()); }
  int numContacts() const override { return static_cast<int>(contacts_.size()); }
  Contact& contact(int i) override { return *contacts_[i].object; }
  int numObstacles() const override { return static_cast<int>(obstacles_.size()); }
  const Obstacle& obstacle(int i) const override { return obstacles_[i]; }
  double time() const override { return t_; }
  Vec& q() override { return q_; }
  Vec& v() override { return v_; }
  const Vec& mass() const override { return mass_; }
  const std::vector<char>& fixedMask() const override { return fixed_; }
  void beginStep(double dt) override;
  void prescribe(double t, Vec& q) override;
  void evaluate(const EvalContext& ctx, Vec& force, StiffnessSink* stiffness) override;
  bool hasStepConstantForces() const override { return !step_constant_forces_.empty(); }
  void evaluateVarying(const EvalContext& ctx, Vec& force, StiffnessSink* stiffness) override;
  void addStepConstantForces(const EvalContext& ctx, Vec& force) override;
  void evaluateVelocityForces(const EvalContext& ctx, Vec& force) override;
  // ContactFreeEvaluation
  void evaluateWithoutContacts(const EvalContext& ctx, Vec& force) override;
  // StopRequests: the flag the program's signal handler sets (rodsim run: SIGINT, SIGTERM), or none.
  bool stopRequested() const override { return stop_flag_ && *stop_flag_ != 0; }
  void watchStopFlag(const volatile std::sig_atomic_t* flag) { stop_flag_ = flag; }
  // ParallelLoops: the scene's [simulation] threads (0 resolved to the hardware threads).
  int threads() const override { return pool_->threads(); }
  void forBlocks(int n, int grain, void (*body)(void* context, int begin, int end), void* context) override;
  // ContactExtrapolation: the force contacts at q_s + s (q - q_s) (sdk capabilities.h, SDK 1.9).
  void setContactExtrapolation(double s) override;
  double contactExtrapolation() const override { return contact_scale_; }
  double potentialEnergy(const EvalContext& ctx) override;
  double maxStepFraction(const Vec& q, const Vec& dq) override;
  void commitStep(double t, const Vec& q, const Vec& v, const Vec& residual) override;

  // For output and probes: the last committed residual on the prescribed DOFs (the constraints'
  // reactions), 0 on the free ones.
  const Vec& residual() const { return residual_; }
  double kineticEnergy() const;
  double elasticEnergy();  // at the committed configuration
  ContactStats contactStats() const;
  // Contact models' extra columns ("<name>.<column>") and their current values.
  // The report columns of the contacts, then of the forces ("<name>.<column>"), and their values.
  std::vector<std::string> reportColumns() const;
  int numContactReportColumns() const;
  void reportValues(std::vector<double>& out) const;
  Solver& solver() { return *solver_.object; }
  const std::vector<Bound<Rod>>& rods() const { return rods_; }
  const std::vector<Bound<Constraint>>& constraints() const { return constraints_; }
  // Checkpoint support: per-component states in a fixed order (rods, forces, constraints,
  // contacts, solver), and the restore of a committed state.
  std::vector<std::vector<double>> saveStates() const;
  // The same into `out`, reusing its vectors (no allocation once warm).
  void saveStates(std::vector<std::vector<double>>& out) const;
  void restore(double t, const Vec& q, const Vec& v, const Vec& residual, const std::vector<std::vector<double>>& states);
  // Every component with its scene table (rods, forces, constraints, contacts, solver), so that a
  // caller between steps can find one by section and name and ask for its capabilities (the Python
  // module's steering: AdjustableParameters).
  std::vector<std::pair<const ComponentSpec*, Component*>> components();
  // type -> library of every component in use, for summary.json.
  std::vector<std::pair<std::string, std::string>> pluginsInUse() const;
  // Calls f and turns a plugin exception into ComponentFailure naming the component.
  template <class T, class F> void guarded(const Bound<T>& c, F&& f);
  // Every requirement a component of the scene declares (Schema::require) against what the others
  // provide; throws InputError naming both components and what is missing.
  void checkCompatibility(const TypeRegistry& registry) const;
  // Smallest gap (m, < 0) of the overlaps in the initial configuration that the contacts allow
  // (allow_initial_overlap = true); +infinity when the rods start apart. Step 0's min_gap.
  double initialOverlapGap() const { return initial_overlap_gap_; }
  // The continuous check of a step by the contacts offering SweptContactCheck (SDK 1.2); nothing
  // when none does. keepStepStart() before the solver's step keeps the start state (t, q, v,
  // residual, component states; copied into kept buffers: no allocation once warm);
  // rejectCrossedStep() after an accepted step asks each such contact whether two of its rods (or
  // a rod and an obstacle) passed through each other between the kept q and the current one, and on
  // the first crossing restores the kept state and returns true: the crossing in `out`, the
  // contact ("contact 'name' (type)") in `who`. The time loop and the benchmarks call both.
  bool hasSweptChecks() const { return !swept_contacts_.empty(); }
  void keepStepStart();
  bool rejectCrossedStep(Crossing& out, std::string& who);

 private:
  // evaluateVarying without the force contacts: the rods, then the forces that vary in a step.
  void evaluateRodsAndForces(const EvalContext& ctx, Vec& force, StiffnessSink* stiffness);
  // f(r) for every rod r: on one thread in order, or with the rods of rod_blocks_ spread over the
  // threads (each rod writes only its own slice of the global vectors; its exceptions are rethrown
  // as one thread would meet them first: the lowest block's).
  template <class F> void forEachRod(F&& f);
  // force = 0 over every DOF, resized to numDofs() (in blocks over the threads for long vectors).
  void zeroForce(Vec& force);
  // Sets rod_blocks_ (constructor, after the layout).
  void shareRods();
  // The threads of the run (one thread: no worker), made before any component binds.
  std::unique_ptr<parallel::ThreadPool> pool_;
  // Contiguous blocks of rods of near-equal DOF counts, up to 4 per thread, claimed by the threads in
  // order: block k is rods rod_blocks_[k] .. rod_blocks_[k+1]-1. Empty with one thread, one rod, or
  // rods too unequal to share out evenly (one long rod among short ones): the rods then run one after
  // another, a long one spreading its own element passes over the threads.
  std::vector<int> rod_blocks_;
  // kineticEnergy of more DOFs than this sums chunks of this many (a fixed order).
  static constexpr Eigen::Index kEnergyChunk = 8192;
  mutable Vec energy_chunks_;
  std::vector<double> rod_energy_;  // elasticEnergy's per-rod terms
  std::vector<Bound<Rod>> rods_;
  std::vector<Bound<Force>> forces_;
  // Indexes into forces_ of the step-constant ones (added last) and of the others.
  std::vector<int> step_constant_forces_, varying_forces_;
  std::vector<Bound<Constraint>> constraints_;
  std::vector<Bound<Contact>> contacts_;
  Bound<Solver> solver_;
  std::vector<Obstacle> obstacles_;
  std::vector<std::pair<std::string, std::string>> libraries_;
  // Capabilities of the components, queried once at construction (nullptr: not offered).
  struct RodCapabilities {
    RodStiffness* stiffness = nullptr;
    RodVelocityForces* velocity_forces = nullptr;
    RodRotationVectors* rotation_vectors = nullptr;
  };
  std::vector<RodCapabilities> rod_caps_;
  std::vector<std::pair<int, ForceContact*>> force_contacts_;       // (index into contacts_, interface)
  std::vector<std::pair<int, StepBoundContact*>> step_bound_contacts_;
  std::vector<std::pair<int, SweptContactCheck*>> swept_contacts_;
  // Every contact's findOverlaps at the initial configuration: an InputError for a contact that
  // does not allow them (the rods, edges and depths, and the fix); the rest set initial_overlap_gap_.
  void checkInitialOverlaps();
  double initial_overlap_gap_ = std::numeric_limits<double>::infinity();
  Vec non_contact_;  // the force of rods and forces before the contacts add theirs (ForceContact::addForce)

  double t_ = 0;
  Vec q_, v_, mass_, residual_;
  std::vector<char> fixed_;
  const volatile std::sig_atomic_t* stop_flag_ = nullptr;  // watchStopFlag
  std::vector<int> fixed_list_;  // the DOFs fixed_ marks, in order
  Vec q_start_, v_start_;
  // ContactExtrapolation: the factor s, and the contacts' configuration q_c with its context.
  double contact_scale_ = 1.0;
  Vec q_contact_, dq_contact_;
  StiffnessSink contact_stiffness_;
  const EvalContext& contactContext(const EvalContext& ctx, EvalContext& scaled);
  // keepStepStart's copy of the state
  double kept_t_ = 0;
  Vec kept_q_, kept_v_, kept_residual_;
  std::vector<std::vector<double>> kept_states_;
};

}  // namespace rodsim::kernel
