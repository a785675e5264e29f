// The base of every object a plugin makes, and the World it is bound to.
#pragma once

#include <rodsim/linalg.h>
#include <rodsim/obstacle.h>
#include <rodsim/params.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace rodsim {

class Rod;
class Contact;
class World;

// Every rod, force, contact, constraint, solver and probe is a Component. It is built from
// validated Params, then bound once to the World (where it looks up rods by name and checks
// node indexes against them: throw ParamError(key, ...) for a bad value).
class Component {
 public:
  explicit Component(const Params& p) : name_(p.componentName()) {}
  virtual ~Component() = default;
  Component(const Component&) = delete;
  Component& operator=(const Component&) = delete;

  const std::string& name() const { return name_; }
  // Called once after every component exists, before the first step.
  virtual void bind(World& /*world*/) {}

  // Checkpoints: the state a component carries from one step to the next that is neither in the
  // scene nor in the World's q and v (DER: the committed reference frames; a contact model: warm
  // starts; a static solver: the load level reached). Appended as plain numbers (integers are
  // exact up to 2^53); loadState receives exactly what saveState wrote, after bind(). A restart
  // must continue bit for bit, so save everything later steps read. Default: no state.
  virtual void saveState(std::vector<double>& /*out*/) const {}
  virtual void loadState(const std::vector<double>& /*in*/) {}
  // Extra per-step quantities of contacts and forces (solver residuals, iterations, ...): the
  // kernel writes them to timeseries.csv as columns "<component name>.<column>" and their mean
  // over the steps to summary.json ("contact_report", "force_report"). Column names are fixed
  // after bind(); reportValues appends the values of the last step in the same order.
  virtual std::vector<std::string> reportColumns() const { return {}; }
  virtual void reportValues(std::vector<double>& /*out*/) const {}

  // Optional capabilities (the gz-plugin QueryInterface model): a component that implements a
  // capability interface (rod.h, contact.h: RodStiffness, ForceContact, ...) derives from it and
  // names it in RODSIM_INTERFACES(...); callers ask with as<Interface>(). A capability added to the
  // SDK later is a new interface with a new id, so components built before it simply do not answer.
  virtual void* queryInterface(std::string_view /*interface_id*/) { return nullptr; }
  template <class I> I* as() { return static_cast<I*>(queryInterface(I::kInterfaceId)); }
  template <class I> const I* as() const {
    return static_cast<const I*>(const_cast<Component*>(this)->queryInterface(I::kInterfaceId));
  }

 private:
  std::string name_;
};

// The answer of RODSIM_INTERFACES: `self` as the interface whose id is `id`, or nullptr.
template <class Self, class... Interfaces> void* findInterface(Self* self, std::string_view id) {
  void* found = nullptr;
  (void)((id == Interfaces::kInterfaceId ? (found = static_cast<Interfaces*>(self), true) : false) || ...);
  return found;
}

}  // namespace rodsim

// Inside a component class that also derives from capability interfaces, e.g.
//   class ImcContact final : public Contact, public ForceContact { RODSIM_INTERFACES(ImcContact, ForceContact) ... };
#define RODSIM_INTERFACES(Self, ...)                                            \
 public:                                                                        \
  void* queryInterface(std::string_view id) override {                          \
    return ::rodsim::findInterface<Self, __VA_ARGS__>(this, id);                \
  }                                                                             \
                                                                                \
 private:

namespace rodsim {

// What an evaluation of forces needs besides the configuration. Velocities are implicit:
// v = (q - q_start) / dt (backward Euler); quasi-static solves set `quasi_static` and v = 0.
struct EvalContext {
  double t = 0;           // time at the end of the step, s
  double dt = 0;          // step, s
  bool quasi_static = false;
  double load_scale = 1;  // the static solver ramps external loads by this factor in [0, 1]
  const Vec* q = nullptr;        // configuration being evaluated (global DOFs)
  const Vec* q_start = nullptr;  // configuration at the start of the step
  const Vec* v_start = nullptr;  // velocity at the start of the step

  // Implicit velocity of global DOF i, and its derivative d v_i / d q_i.
  double velocity(int i) const { return quasi_static ? 0.0 : ((*q)[i] - (*q_start)[i]) / dt; }
  double velocityDerivative() const { return quasi_static ? 0.0 : 1.0 / dt; }
};

// The assembled mechanical system, implemented by the kernel. Components see it at bind time;
// solvers drive it every step.
class World {
 public:
  virtual ~World() = default;

  // --- the rods and their place in the global DOF vector
  virtual int numRods() const = 0;
  virtual Rod& rod(int i) = 0;
  // The rod named `name`, or nullptr.
  virtual Rod* findRod(const std::string& name) = 0;
  virtual int numDofs() const = 0;
  virtual int numContacts() const = 0;
  virtual Contact& contact(int i) = 0;
  // Rigid obstacles of the scene ([[obstacle]]), for contact models that support them.
  virtual int numObstacles() const { return 0; }
  virtual const Obstacle& obstacle(int i) const;

  // --- state (global DOFs; twist DOFs in rad, positions in m)
  virtual double time() const = 0;
  virtual Vec& q() = 0;
  virtual Vec& v() = 0;
  // Lumped diagonal mass (kg for positions, kg m^2 for twist angles).
  virtual const Vec& mass() const = 0;
  // 1 for a DOF that a constraint prescribes, 0 for a free DOF.
  virtual const std::vector<char>& fixedMask() const = 0;

  // --- what a solver calls, in this order, every step
  // Start a step from the committed state: contacts build candidate sets.
  virtual void beginStep(double dt) = 0;
  // Write every constraint's prescribed values at time t into q (it may update rod frames).
  virtual void prescribe(double t, Vec& q) = 0;
  // Generalized force F(q) (N, N m) of rods, forces and penalty/barrier contacts at ctx.q, and,
  // if `stiffness` is given, K = -dF/dq. Rod frames are updated to ctx.q first.
  virtual void evaluate(const EvalContext& ctx, Vec& force, StiffnessSink* stiffness) = 0;
  // evaluate() in two parts, for solvers that factorize their Jacobian while a step-constant
  // force (Force::constantInStep) finishes on another thread: evaluateVarying() is evaluate()
  // without the step-constant forces (they have no stiffness), addStepConstantForces() adds them.
  // The two give evaluate()'s F bit for bit.
  virtual bool hasStepConstantForces() const = 0;
  virtual void evaluateVarying(const EvalContext& ctx, Vec& force, StiffnessSink* stiffness) = 0;
  virtual void addStepConstantForces(const EvalContext& ctx, Vec& force) = 0;
  // Only the velocity-dependent part of evaluate(): the rods' addVelocityForce and the forces whose
  // velocityDependent() is true, at the velocities ctx.velocity(i), for the configuration of the
  // last evaluate() (ctx.q must be the same). For explicit kicks that integrate these terms.
  virtual void evaluateVelocityForces(const EvalContext& ctx, Vec& force) = 0;
  // Total potential energy (J) at ctx.q: elastic energy of the rods, potentials of the forces
  // (scaled loads included) and contact energies. A merit function for static solves.
  virtual double potentialEnergy(const EvalContext& ctx) = 0;
  // Largest fraction in (0, 1] of the step dq from q that the contacts allow (barrier CCD).
  virtual double maxStepFraction(const Vec& q, const Vec& dq) = 0;
  // Accept (q, v) at time t. `residual` = M a - F at every DOF: on prescribed DOFs it is the
  // reaction force that the constraints exert.
  virtual void commitStep(double t, const Vec& q, const Vec& v, const Vec& residual) = 0;
};

inline const Obstacle& World::obstacle(int) const { throw std::out_of_range("this world has no obstacles"); }

// The world's obstacle names, quoted and comma-separated, for error messages.
inline std::string obstacleNames(const World& world) {
  std::string names;
  for (int i = 0; i < world.numObstacles(); ++i) names += (i ? ", '" : "'") + world.obstacle(i).name + "'";
  return names.empty() ? std::string("(none: the scene has no [[obstacle]])") : names;
}

// Indexes of the obstacles named by an optional list parameter (`key`); every obstacle when it is
// absent or empty (the contract's `obstacles = []`). Unknown or repeated names are ParamErrors.
inline std::vector<int> resolveObstacles(const World& world, const std::optional<std::vector<std::string>>& names,
                                         const std::string& key) {
  std::vector<int> found;
  if (!names || names->empty()) {
    for (int i = 0; i < world.numObstacles(); ++i) found.push_back(i);
    return found;
  }
  for (const auto& n : *names) {
    int index = -1;
    for (int i = 0; i < world.numObstacles(); ++i)
      if (world.obstacle(i).name == n) index = i;
    if (index < 0) throw ParamError(key, "no obstacle named '" + n + "'; valid obstacles: " + obstacleNames(world));
    for (int i : found)
      if (i == index) throw ParamError(key, "obstacle '" + n + "' is listed twice");
    found.push_back(index);
  }
  return found;
}

}  // namespace rodsim
