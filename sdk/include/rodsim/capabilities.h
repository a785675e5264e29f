// Capability interfaces: what a component may offer beyond its core interface (the gz-plugin
// QueryInterface model). A class implements one by deriving from it and listing it in
// RODSIM_INTERFACES(Class, ...); callers ask with component.as<Interface>(), which is nullptr when
// the component does not offer it. What a type provides is derived from these base classes at
// registration, so `rodsim describe` and the kernel's compatibility check need no second list.
//
// Versioning (docs/writing-a-plugin.md): this file grows by appending interfaces, each with its own
// id, and each addition raises RODSIM_SDK_MINOR. An interface never changes once released: a new
// version is a new interface with a new id. Plugins built for an older minor version keep loading.
#pragma once

#include <rodsim/contact.h>
#include <rodsim/rod.h>

#include <Eigen/SparseCore>

#include <string>
#include <type_traits>
#include <vector>

namespace rodsim {

// ------------------------------------------------------------------------- SDK 1.0: rods

// Capability: the Hessian of the elastic energy, for implicit and static solvers.
class RodStiffness {
 public:
  static constexpr const char* kInterfaceId = "rod-stiffness";
  virtual ~RodStiffness() = default;
  // K += d2E/dq2 at the last configuration set, in GLOBAL indexing (add dofOffset()); symmetric.
  virtual void addStiffness(StiffnessSink& K) const = 0;
};

// Capability: velocity-dependent generalized forces that belong to the model itself (Cosserat
// gyroscopic and Lagrangian-transport terms), at ctx.q with velocities ctx.velocity(i). Force only:
// solvers treat them explicitly (World::evaluateVelocityForces integrates them over explicit kicks).
class RodVelocityForces {
 public:
  static constexpr const char* kInterfaceId = "rod-velocity-forces";
  virtual ~RodVelocityForces() = default;
  virtual void addVelocityForce(const EvalContext& ctx, VecRef f_local) const = 0;
};

// Capability: DOFs that are rotation vectors relative to the committed frames (Cosserat).
class RodRotationVectors {
 public:
  static constexpr const char* kInterfaceId = "rod-rotation-vectors";
  virtual ~RodRotationVectors() = default;
  // Called by the kernel right after commitConfiguration with the committed local DOFs and
  // velocities: the rotation vectors are rewritten relative to the new committed frames (to zero)
  // and the velocities re-expressed.
  virtual void rebaseDofs(VecRef q_local, VecRef v_local) = 0;
  // One drift of an explicit splitting scheme: the local DOFs move for a time h at the velocities
  // v, on the DOFs with free_local[i] = 1 (0: a constraint sets the DOF). Rotations compose on
  // SO(3): adding rotation vectors is exact only for rotations about one axis, and the O(h^2)
  // commutator error of each drift would hold a fourth-order scheme at second order.
  virtual void drift(VecRef q_local, ConstVecRef v_local, const double* free_local, double h) const = 0;
};

// ----------------------------------------------------------------------- SDK 1.0: contact

// The linear system a Newton iteration of an implicit solver would solve, restricted to free DOFs
// mapped back to global indexing: A dq = b (A = M/dt^2 + K, b = -residual), fixed DOFs have dq = 0.
struct LinearizedSystem {
  const Eigen::SparseMatrix<double>* A = nullptr;  // global, N/m
  const Vec* b = nullptr;                          // global, N
  const std::vector<char>* fixed = nullptr;
  const EvalContext* ctx = nullptr;
};

// Capability: contact (and friction) forces at ctx.q with K = -dF/dq, like a Force.
class ForceContact {
 public:
  static constexpr const char* kInterfaceId = "contact-force";
  virtual ~ForceContact() = default;
  // Adds the contact forces at ctx.q to f. `non_contact` is the generalized force of the rods and
  // forces at the same configuration without any contact (models that scale their stiffness with
  // the rest of the residual read it: IMC Eq. B.5, the IPC barrier stiffness).
  virtual void addForce(const EvalContext& ctx, const Vec& non_contact, Vec& f) = 0;
  // K = -dF/dq of the contact forces at ctx.q (global indexing). Implicit solvers add it to their
  // Jacobian; explicit solvers bound their stable step with it.
  virtual void addStiffness(const EvalContext& ctx, StiffnessSink& K) = 0;
  // Contact energy (J) at ctx.q, for energy-based line searches.
  virtual double energy(const EvalContext& ctx) const = 0;
};

// Capability: the largest fraction of a step that keeps every pair apart (CCD).
class StepBoundContact {
 public:
  static constexpr const char* kInterfaceId = "contact-step-bound";
  virtual ~StepBoundContact() = default;
  virtual double maxStepFraction(const Vec& q, const Vec& dq) = 0;
};

// Capability: contact impulses solved with an implicit solver's linearized system.
class LinearizedImpulseContact {
 public:
  static constexpr const char* kInterfaceId = "contact-linearized-impulse";
  virtual ~LinearizedImpulseContact() = default;
  // Solve sys with contact impulses; write the step into dq (global). False if the contact solver
  // did not converge; failureReason() then says why in one line (it goes into the step's failure
  // message and summary.json).
  virtual bool solveLinearized(const LinearizedSystem& sys, Vec& dq) = 0;
  virtual std::string failureReason() const = 0;
};

// ----------------------------------------------------------------------- SDK 1.1: contact

// The velocity-level problem of an explicit step (Moreau-Jean): without contact the step would end
// with velocities v_free; contact impulses P change them to v = v_free + M^-1 H^T P with the lumped
// mass M, such that the contacts at q (the configuration the step detects them in) satisfy Signorini
// and Coulomb at the velocity level. After q the positions move for `drift` seconds at v (Moreau's
// midpoint scheme in position-verlet: q is the mid-step configuration, drift = dt/2), so a model can
// keep the end-of-step gap closed: gap(q) + drift u_N >= 0 (the predicted gap).
struct VelocityContactProblem {
  const Vec* q = nullptr;       // configuration where contacts are detected (global)
  const Vec* v_free = nullptr;  // velocities without contact impulses (global)
  const Vec* mass = nullptr;    // lumped mass (global)
  const std::vector<char>* fixed = nullptr;  // 1: prescribed DOF (infinite mass)
  double t = 0, dt = 0;
  double drift = 0;             // s, time the positions still move at v after q (0: q is the end state)
};

// Capability: contact impulses at the velocity level, for explicit solvers.
class VelocityImpulseContact {
 public:
  static constexpr const char* kInterfaceId = "contact-velocity-impulse";
  virtual ~VelocityImpulseContact() = default;
  // dv (global, zero on fixed DOFs) = M^-1 H^T P: the velocity change of the contact impulses.
  // False if the contact solver did not converge; failureReason() says why.
  virtual bool solveVelocity(const VelocityContactProblem& problem, Vec& dv) = 0;
  virtual std::string failureReason() const = 0;
};

// ----------------------------------------------------------------------- SDK 1.2: contact

// Two rods (or a rod and an obstacle) that passed through each other within a step: what
// SweptContactCheck::findCrossing reports. Edge indexes are each rod's own, as in Overlap.
struct Crossing {
  std::string rod_a, rod_b;      // rod names; rod_b is the obstacle's name for a rod-obstacle crossing
  int edge_a = -1, edge_b = -1;  // edge of rod_a; edge of rod_b (-1 for an obstacle: edge_a is then a node)
  double time_fraction = 0;      // in [0, 1]: when, along the step, the crossing happens
  double distance = 0;           // m, centre-line distance (node-surface distance) at the start of the step
};

// Capability: a continuous check of a step a solver has accepted, for models whose contact is
// detected at discrete configurations (a fast rod can cross another between two steps). The
// kernel calls it after every accepted step with the step's start and end configurations (global);
// true (and `out`) when two of the model's edges, or a node and an obstacle, crossed along the
// linear motion q_start + t (q_end - q_start), t in [0, 1]. The kernel then rejects the step.
class SweptContactCheck {
 public:
  static constexpr const char* kInterfaceId = "contact-swept-check";
  virtual ~SweptContactCheck() = default;
  virtual bool findCrossing(const Vec& q_start, const Vec& q_end, Crossing& out) = 0;
};

// ---------------------------------------------------------------------- SDK 1.3: steering

// Capability: parameters that a program driving the run (rodsim's Python module: a controller, an
// optimizer) may change between two steps, such as a load's force or a motor's angular velocity. Keys
// are the component's own scene keys; values are numbers (a 3-vector is three, a scalar one). A new
// value acts from the next step on; the component keeps the continuity its motion needs (a motor's
// angle goes on from where it is, it does not jump to the new rate times t). A component that was
// changed saves the changed values in its checkpoint state, so a restart continues with them.
class AdjustableParameters {
 public:
  static constexpr const char* kInterfaceId = "adjustable-parameters";
  virtual ~AdjustableParameters() = default;
  // The keys that setParameter accepts.
  virtual std::vector<std::string> adjustableParameters() const = 0;
  // The current value of `key`; ParamError(key, ...) for a key not in adjustableParameters().
  virtual std::vector<double> parameter(const std::string& key) const = 0;
  // Between steps, at the committed time t (s). ParamError(key, why) for an unknown key or a bad value
  // (wrong count of numbers, out of range); the component is then unchanged.
  virtual void setParameter(const std::string& key, const std::vector<double>& value, double t) = 0;
};

// ---------------------------------------------------------------------------- SDK 1.4: rods

// Capability: a rod whose centre line may be closed into a ring. A closed rod has one element more
// than the open chain that numEdges() counts (element numNodes() - 1 joins the last node to node 0),
// and restArcLengths(), which assumes two free ends, does not describe it. A component that walks a
// rod's edges (a contact model, a fluid, a drag or ground force) and does not handle that element
// refuses closed rods when it binds (refuseClosedRods below) rather than miss it silently.
class RodClosedCenterline {
 public:
  static constexpr const char* kInterfaceId = "rod-closed-centerline";
  virtual ~RodClosedCenterline() = default;
  // Fixed when the rod is built.
  virtual bool closedCenterline() const = 0;
};

// True when `rod` is closed into a ring.
inline bool isClosedRod(const Rod& rod) {
  const RodClosedCenterline* c = rod.as<RodClosedCenterline>();
  return c && c->closedCenterline();
}

// ParamError(key, ...) naming the first closed rod of `rods`, for a component (`what`, e.g. "the ipc
// contact model") that treats every rod as an open chain of numEdges() edges.
inline void refuseClosedRods(const std::vector<Rod*>& rods, const std::string& key, const std::string& what) {
  for (const Rod* rod : rods)
    if (isClosedRod(*rod))
      throw ParamError(key, "rod '" + rod->name() + "' is closed into a ring: " + what +
                                " treats a rod as an open chain of edges and would miss the element that closes "
                                "it; closed rods are not supported there");
}

// --------------------------------------------------------------------------- SDK 1.5: world

// Capability of the World (the kernel's implements it), found with worldCapability<I>(world): the
// forces of World::evaluate without the force contacts' forces, for solvers that treat contact in a
// step of its own. The explicit solvers kick with these forces and then solve the force contacts
// implicitly with the lumped mass (plugins/solver_explicit/README.md, "Contact"), so that a stiff
// penalty or barrier does not bound their step. The World is not a Component: a solver asks for a
// capability of it with dynamic_cast, which compares the interface's type by name across libraries.
class ContactFreeEvaluation {
 public:
  static constexpr const char* kInterfaceId = "world-contact-free-evaluation";
  virtual ~ContactFreeEvaluation() = default;
  // World::evaluate(ctx, force, nullptr) without the ForceContact models: the rods, the forces and
  // the velocity-dependent terms at ctx.q. (`force` is resized and overwritten.)
  virtual void evaluateWithoutContacts(const EvalContext& ctx, Vec& force) = 0;
};

// The World's capability I, or nullptr when this World does not offer it (an older kernel, a test's
// fake world).
template <class I> I* worldCapability(World& world) { return dynamic_cast<I*>(&world); }

// --------------------------------------------------------------------------- SDK 1.6: world

// Capability of the World (the kernel's implements it), found with worldCapability<I>(world): whether
// the program running the World was asked to stop (SIGINT or SIGTERM to `rodsim run`). The kernel acts
// on a stop between steps; a solver whose step can take long (many Newton iterations, each a sparse
// factorization) checks it between its linear solves and, once it is set, returns a failed step whose
// message says "stopped on request", committing nothing. The kernel then ends the run as for a stop
// between steps: everything up to the last committed step stays written, with a checkpoint there.
class StopRequests {
 public:
  static constexpr const char* kInterfaceId = "world-stop-requests";
  virtual ~StopRequests() = default;
  // True once a stop was requested; safe to call as often as once per linear solve (a load of a flag).
  virtual bool stopRequested() const = 0;
};

// True when `world` offers StopRequests and a stop was requested (false for an older kernel or a
// test's fake world).
inline bool stopRequested(World& world) {
  const StopRequests* s = worldCapability<StopRequests>(world);
  return s && s->stopRequested();
}

// ---------------------------------------------------------------------------- SDK 1.7: rods

// Capability: what a rod's model knows of its own deformation and internal loads, for output (the
// Python module's readings, the stretch, curvature, internal-force, internal-couple and
// constraint-torque probes). Every query refers to the last configuration set (setConfiguration) and
// changes nothing a solver sees. Arrays are filled in the rod's order; a nullptr output is skipped.
//
// Elements are the edges (numEdges(); one more on a ring, RodClosedCenterline). Junctions are the
// nodes between two elements, where the model measures curvature and twist: nodes 1 .. numNodes()-2
// of an open rod, every node of a ring; junctionNode(k) names the node of junction k.
class RodStrainReport {
 public:
  static constexpr const char* kInterfaceId = "rod-strain-report";
  virtual ~RodStrainReport() = default;
  virtual int numStrainElements() const = 0;
  virtual int numJunctions() const = 0;
  virtual int junctionNode(int k) const = 0;
  // True when the model has shear strains (Cosserat); false for a Kirchhoff rod (DER), whose shear
  // output is then (0, 0, stretch).
  virtual bool shearable() const = 0;
  // Per element e:
  //   stretch[e]        |x_b - x_a| / (rest length) - 1, dimensionless;
  //   shear[3e .. 3e+2] the shear/stretch strain σ = Q(e t) - d3 in the element's material frame
  //                     (d1, d2, d3): shears, then the axial strain of d3;
  //   force[3e .. 3e+2] N, world frame: the internal force the part of the rod after the element (its
  //                     second node onwards) exerts on the part before it (tension along +d3 positive).
  //                     At equilibrium it balances every external load on the nodes before the element.
  virtual void reportElements(double* stretch, double* shear, double* force) const = 0;
  // Per junction k:
  //   curvature[3k .. 3k+2] 1/m: the curvature vector in material components (bending about d1, about
  //                         d2, twist about d3) per rest Voronoi length of the junction's node;
  //   couple[3k .. 3k+2]    N m, same components: the elastic couple the part of the rod after the
  //                         junction exerts on the part before it (stiffness times curvature minus the
  //                         natural curvature).
  virtual void reportJunctions(double* curvature, double* couple) const = 0;
  // The torque (N m, world frame) that generalized forces `g` on the frame DOFs of `edge`
  // (Rod::frameDofs(edge), in that order) exert on the edge's material frame: how a constraint's
  // reaction on those DOFs becomes a torque.
  virtual Vec3 frameTorque(int edge, const double* g) const = 0;
};

// ------------------------------------------------------------------------- SDK 1.8: contact

// One active contact with its forces, as ContactPairReport gives it. Rods and edges are named as in
// Overlap and Crossing.
struct ContactRecord {
  std::string rod_a, rod_b;      // rod names; rod_b is the obstacle's name for a rod-obstacle contact
  int edge_a = -1, edge_b = -1;  // edge of rod_a; edge of rod_b (-1 for an obstacle: edge_a is then a node)
  bool obstacle = false;         // rod_b names an obstacle
  double gap = 0;                // m, distance minus the radii (< 0: the surfaces overlap)
  Vec3 normal = Vec3::Zero();    // unit, from b towards a
  Vec3 normal_force = Vec3::Zero();    // N, on rod_a (b takes the opposite)
  Vec3 friction_force = Vec3::Zero();  // N, on rod_a (b takes the opposite)
  // The nodes the contact's forces act on and the force on each (normal plus friction, N): global x
  // DOFs, a's nodes first; -1 for an unused slot.
  int node_dofs[4] = {-1, -1, -1, -1};
  Vec3 node_forces[4] = {Vec3::Zero(), Vec3::Zero(), Vec3::Zero(), Vec3::Zero()};
};

// Capability: the contacts of a model with their forces, for output (the Python module's contact
// pairs and contact forces). Called between steps at the committed configuration (ctx.q, with
// ctx.velocity the committed velocities); it appends the contacts active there, with the forces the
// model would apply at that configuration, to `out`, and changes nothing the next step sees.
class ContactPairReport {
 public:
  static constexpr const char* kInterfaceId = "contact-pair-report";
  virtual ~ContactPairReport() = default;
  virtual void contactPairs(const EvalContext& ctx, std::vector<ContactRecord>& out) const = 0;
};

// --------------------------------------------------------------------------- SDK 1.9: world

// Capability of the World (the kernel's implements it), found with worldCapability<I>(world): the
// force contacts taken at a configuration extrapolated along the step, for a solver that evaluates
// contact at another point of its step than the other forces. implicit-midpoint solves for the
// midpoint q_m and takes the contacts at the step's end q_{n+1} = 2 q_m - q_n (s = 2), as the
// contact-stabilized schemes do (Deuflhard, Krause & Ertel 2008): a contact force evaluated at the
// midpoint lets the extrapolated end point pass through the obstacle.
//
// With a factor s set, every evaluation at ctx.q (evaluate, evaluateVarying, potentialEnergy) takes
// the force contacts at
//     q_c = q_s + s (q - q_s),   q_s = ctx.q_start,
// over a step of s ctx.dt that ends at ctx.t + (s - 1) ctx.dt (so that their friction velocities are
// (q_c - q_s) / (s dt) = (q - q_s) / dt), and adds F_c(q_c) to the force, s K_c(q_c) to the stiffness
// and E_c(q_c) / s to the potential energy: the first and second derivatives of E_c(q_c) / s with
// respect to q, so that a line search on the total energy stays consistent. maxStepFraction(q, dq)
// bounds the contacts' own step (q_c, s dq), q_s being the state of the last beginStep, and
// beginStep(dt) begins the contacts' step with s dt. s = 1, the default, is the plain evaluation;
// a solver that sets another factor resets it to 1 before its step returns.
class ContactExtrapolation {
 public:
  static constexpr const char* kInterfaceId = "world-contact-extrapolation";
  virtual ~ContactExtrapolation() = default;
  virtual void setContactExtrapolation(double s) = 0;  // s >= 1
  virtual double contactExtrapolation() const = 0;
};

// ---------------------------------------------------------------------------- SDK 1.10: world

// Capability of the World (the kernel's implements it), found with worldCapability<I>(world): the
// threads a run may use ([simulation] threads, rodsim run --threads; 1 unless asked) and a loop that
// spreads a range of items over them. The split is fixed before the loop runs: [0, n) in contiguous
// blocks of near-equal size whose inner boundaries are multiples of 8 items (whole cache lines of a
// double array), up to 4 per thread, each run once by whichever thread claims it. A component that spreads a loop
// computes each item from inputs no other item of the loop writes, and combines per-block results
// (flags, sums) only in ways that do not depend on the blocks, so that its results are bit for bit
// those of one thread whatever the count. A loop started from inside a block (a rod's element loop
// while the World spreads its rods over the threads) runs whole on the calling thread.
class ParallelLoops {
 public:
  static constexpr const char* kInterfaceId = "world-parallel-loops";
  virtual ~ParallelLoops() = default;
  // The threads of the run, >= 1.
  virtual int threads() const = 0;
  // Calls body(context, begin, end) once per block of [0, n): min(4 threads(), n / grain) blocks (at
  // least one), so that no block is smaller than `grain` items, the smallest amount of work worth a
  // thread. Returns when every block has ended; an exception of a block is rethrown here (that of
  // the first block that threw) after every block has ended. Allocates nothing.
  virtual void forBlocks(int n, int grain, void (*body)(void* context, int begin, int end), void* context) = 0;
};

// forBlocks with a callable f(begin, end); f(0, n) on the calling thread when `loops` is nullptr (an
// older kernel, a test's fake world) or has one thread.
template <class F> void parallelForBlocks(ParallelLoops* loops, int n, int grain, F&& f) {
  if (!loops || loops->threads() <= 1 || n < 2 * grain) {
    if (n > 0) f(0, n);
    return;
  }
  using Callable = std::remove_reference_t<F>;
  loops->forBlocks(
      n, grain, [](void* c, int begin, int end) { (*static_cast<Callable*>(c))(begin, end); },
      const_cast<void*>(static_cast<const void*>(&f)));
}

// ------------------------------------------------------------------------------------------

// The capability interfaces this SDK defines, by id. Registry::add derives what a component type
// provides from the interfaces its class derives from (so it is declared once, by inheritance).
template <class T> std::vector<std::string> providedInterfaces() {
  std::vector<std::string> ids;
  auto probe = [&]<class I>(I*) {
    if constexpr (std::is_base_of_v<I, T>) ids.emplace_back(I::kInterfaceId);
  };
  probe(static_cast<RodStiffness*>(nullptr));
  probe(static_cast<RodVelocityForces*>(nullptr));
  probe(static_cast<RodRotationVectors*>(nullptr));
  probe(static_cast<ForceContact*>(nullptr));
  probe(static_cast<StepBoundContact*>(nullptr));
  probe(static_cast<LinearizedImpulseContact*>(nullptr));
  probe(static_cast<VelocityImpulseContact*>(nullptr));
  probe(static_cast<SweptContactCheck*>(nullptr));
  probe(static_cast<AdjustableParameters*>(nullptr));
  probe(static_cast<RodClosedCenterline*>(nullptr));
  probe(static_cast<RodStrainReport*>(nullptr));
  probe(static_cast<ContactPairReport*>(nullptr));
  return ids;
}

}  // namespace rodsim
