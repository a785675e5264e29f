#include <rodsim/kernel/world.h>

#include <rodsim/kernel/describe.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace rodsim::kernel {

namespace {

// Builds one component; errors from the plugin point at the scene table or the offending key.
template <class T>
Bound<T> make(const TypeRegistry& registry, ComponentKind kind, const ComponentSpec& spec) {
  const ComponentType* type = registry.find(kind, spec.type);
  try {
    return Bound<T>{registry.create<T>(*type, spec.params), &spec, type->plugin};
  } catch (const ParamError& e) {
    throw InputError(fmt::format("{}: {} '{}' ({}): '{}': {}", spec.at(e.key()).text, spec.section, spec.name,
                                 spec.type, e.key(), e.what()));
  } catch (const std::exception& e) {
    throw InputError(fmt::format("{}: {} '{}' ({}): plugin '{}' failed: {}", spec.where.text, spec.section, spec.name,
                                 spec.type, type->plugin, e.what()));
  }
}

template <class T> void bindOne(World& world, const Bound<T>& c) {
  try {
    c.object->bind(world);
  } catch (const ParamError& e) {
    throw InputError(fmt::format("{}: {} '{}' ({}): '{}': {}", c.spec->at(e.key()).text, c.spec->section, c.spec->name,
                                 c.spec->type, e.key(), e.what()));
  } catch (const std::exception& e) {
    throw InputError(fmt::format("{}: {} '{}' ({}): plugin '{}' failed: {}", c.spec->where.text, c.spec->section,
                                 c.spec->name, c.spec->type, c.plugin, e.what()));
  }
}

// dst = src (same size) and dst = 0 as plain loops. GCC would turn them into memset/memcpy calls,
// i.e. rep stosb/movsb at these sizes: fast on the hardware but counted per byte by callgrind, which
// the benchmarks read (benchmarks/README.md, bench_cosserat); as vector loops they count honestly.
#if defined(__GNUC__) && !defined(__clang__)
#define RODSIM_PLAIN_LOOP [[gnu::optimize("no-tree-loop-distribute-patterns")]]
#else
#define RODSIM_PLAIN_LOOP
#endif
RODSIM_PLAIN_LOOP void zeroRange(double* __restrict p, int n) {
#pragma GCC unroll 4
  for (int i = 0; i < n; ++i) p[i] = 0.0;
}
RODSIM_PLAIN_LOOP void copyInto(Vec& dst, const Vec& src) {
  if (&dst == &src) return;  // a solver may hand the World its own vectors (swapped in)
  if (dst.size() != src.size()) dst.resize(src.size());
  double* __restrict d = dst.data();
  const double* __restrict s = src.data();
#pragma GCC unroll 4
  for (Eigen::Index i = 0; i < src.size(); ++i) d[i] = s[i];
}

}  // namespace

template <class T, class F> void KernelWorld::guarded(const Bound<T>& c, F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    throw ComponentFailure(fmt::format("{} '{}' ({}, plugin '{}'): {}", c.spec->section, c.spec->name, c.spec->type,
                                       c.plugin, e.what()));
  }
}

KernelWorld::KernelWorld(const Scene& scene, const TypeRegistry& registry)
    : pool_(std::make_unique<parallel::ThreadPool>(parallel::resolveThreadCount(scene.threads))) {
  for (const auto& s : scene.rods) rods_.push_back(make<Rod>(registry, ComponentKind::Rod, s));
  for (const auto& s : scene.forces) forces_.push_back(make<Force>(registry, ComponentKind::Force, s));
  for (const auto& s : scene.constraints) constraints_.push_back(make<Constraint>(registry, ComponentKind::Constraint, s));
  for (const auto& s : scene.contacts) contacts_.push_back(make<Contact>(registry, ComponentKind::Contact, s));
  solver_ = make<Solver>(registry, ComponentKind::Solver, scene.solver);
  checkCompatibility(registry);  // before any bind: a combination that cannot work is named as such

  auto record = [&](const ComponentSpec& s, ComponentKind kind) {
    libraries_.emplace_back(s.type, registry.find(kind, s.type)->library);
  };
  for (const auto& s : scene.rods) record(s, ComponentKind::Rod);
  for (const auto& s : scene.forces) record(s, ComponentKind::Force);
  for (const auto& s : scene.constraints) record(s, ComponentKind::Constraint);
  for (const auto& s : scene.contacts) record(s, ComponentKind::Contact);
  record(scene.solver, ComponentKind::Solver);
  std::sort(libraries_.begin(), libraries_.end());
  libraries_.erase(std::unique(libraries_.begin(), libraries_.end()), libraries_.end());

  // Global DOF layout: rods one after another.
  int n = 0;
  for (auto& r : rods_) {
    r.object->setDofOffset(n);
    n += r.object->numDofs();
  }
  q_.setZero(n);
  v_.setZero(n);
  mass_.setZero(n);
  residual_.setZero(n);
  for (auto& r : rods_) {
    Rod& rod = *r.object;
    guarded(r, [&] {
      rod.initialDofs(q_.segment(rod.dofOffset(), rod.numDofs()));
      rod.initialVelocity(v_.segment(rod.dofOffset(), rod.numDofs()));
      rod.lumpedMass(mass_.segment(rod.dofOffset(), rod.numDofs()));
      rod.setConfiguration(q_.segment(rod.dofOffset(), rod.numDofs()));
      rod.commitConfiguration();
    });
  }
  for (const auto& o : scene.obstacles) obstacles_.push_back(o.obstacle);
  for (auto& r : rods_) bindOne(*this, r);
  for (auto& f : forces_) bindOne(*this, f);
  for (int i = 0; i < static_cast<int>(forces_.size()); ++i)
    (forces_[i].object->constantInStep() ? step_constant_forces_ : varying_forces_).push_back(i);
  for (auto& c : constraints_) bindOne(*this, c);
  for (auto& c : contacts_) bindOne(*this, c);
  bindOne(*this, solver_);
  for (auto& r : rods_)
    rod_caps_.push_back({r.object->as<RodStiffness>(), r.object->as<RodVelocityForces>(),
                         r.object->as<RodRotationVectors>()});
  for (int i = 0; i < static_cast<int>(contacts_.size()); ++i) {
    if (auto* f = contacts_[i].object->as<ForceContact>()) force_contacts_.emplace_back(i, f);
    if (auto* s = contacts_[i].object->as<StepBoundContact>()) step_bound_contacts_.emplace_back(i, s);
    if (auto* s = contacts_[i].object->as<SweptContactCheck>()) swept_contacts_.emplace_back(i, s);
  }

  if (!scene.obstacles.empty() &&
      std::none_of(contacts_.begin(), contacts_.end(), [](const auto& c) { return c.object->usesObstacles(); }))
    throw InputError(fmt::format("{}: obstacle '{}': no contact model in this scene handles obstacles (add a [[contact]] "
                                 "whose type supports them; `rodsim describe TYPE` says which do)",
                                 scene.obstacles.front().where.text, scene.obstacles.front().obstacle.name));
  fixed_.assign(n, 0);
  for (const auto& c : constraints_)
    for (int dof : c.object->dofs()) fixed_.at(dof) = 1;
  fixed_list_.clear();
  for (int i = 0; i < n; ++i)
    if (fixed_[i]) fixed_list_.push_back(i);
  // Constraints may adjust the initial state (a motor at t = 0 is the identity, but a clamp
  // holds exactly what it recorded); the initial velocity of prescribed DOFs follows the motion.
  prescribe(0.0, q_);
  for (auto& r : rods_) {
    Rod& rod = *r.object;
    rod.setConfiguration(q_.segment(rod.dofOffset(), rod.numDofs()));
    rod.commitConfiguration();
  }
  for (int i = 0; i < n; ++i)
    if (fixed_[i]) v_[i] = 0.0;
  checkInitialOverlaps();
  shareRods();
}

void KernelWorld::shareRods() {
  // Blocks of consecutive rods (up to 4 per thread), block k ending at the first rod where the DOFs so
  // far reach (k + 1) / parts of the total. Used when the largest block stays within 15 % of a thread's
  // even share (else one rod is too long to share out: it spreads its own passes).
  rod_blocks_.clear();
  const int threads = pool_->threads(), rods = numRods();
  if (threads < 2 || rods < 2) return;
  const int parts = std::min(pool_->maxParts(), rods);
  const double total = static_cast<double>(q_.size());
  std::vector<int> blocks{0};
  long long dofs = 0;
  int r = 0;
  for (int k = 1; k < parts; ++k) {
    while (r < rods && (dofs < total * k / parts || r == blocks.back())) dofs += rods_[r++].object->numDofs();
    blocks.push_back(r);
  }
  blocks.push_back(rods);
  long long largest = 0;
  for (int k = 0; k < parts; ++k) {
    long long d = 0;
    for (int i = blocks[k]; i < blocks[k + 1]; ++i) d += rods_[i].object->numDofs();
    largest = std::max(largest, d);
  }
  if (largest <= 1.15 * total / threads) rod_blocks_ = std::move(blocks);
}

void KernelWorld::forBlocks(int n, int grain, void (*body)(void* context, int begin, int end), void* context) {
  if (n <= 0) return;
  const int parts = std::clamp(n / std::max(grain, 1), 1, pool_->maxParts());
  if (parts == 1 || parallel::ThreadPool::insideTask()) {  // one block, or a loop inside a block: here, whole
    body(context, 0, n);
    return;
  }
  struct Blocks {
    int n, parts;
    void (*body)(void*, int, int);
    void* context;
  } blocks{n, parts, body, context};
  pool_->run(parts, [](void* p, int k) {
    const Blocks& b = *static_cast<const Blocks*>(p);
    const auto [begin, end] = parallel::blockRange(b.n, b.parts, k, 8);
    if (begin < end) b.body(b.context, begin, end);
  }, &blocks);
}

template <class F> void KernelWorld::forEachRod(F&& f) {
  const int rods = numRods();
  if (rod_blocks_.empty() || parallel::ThreadPool::insideTask()) {
    for (int r = 0; r < rods; ++r) f(r);
    return;
  }
  struct Rods {
    const std::vector<int>* blocks;
    std::remove_reference_t<F>* f;
  } each{&rod_blocks_, &f};
  pool_->run(static_cast<int>(rod_blocks_.size()) - 1, [](void* p, int k) {
    const Rods& e = *static_cast<const Rods*>(p);
    for (int r = (*e.blocks)[k]; r < (*e.blocks)[k + 1]; ++r) (*e.f)(r);
  }, &each);
}

void KernelWorld::zeroForce(Vec& force) {
  const Eigen::Index n = q_.size();
  if (force.size() != n) force.resize(n);
  double* f = force.data();
  // zeroFill's loop over each block (bitwise zeros either way)
  parallelForBlocks(this, static_cast<int>(n), 8192, [f](int b, int e) { zeroRange(f + b, e - b); });
}

namespace {

// A length for an overlap message, in mm ("7 mm", "0.0025 mm").
std::string mm(double metres) { return fmt::format("{:.3g} mm", 1e3 * metres); }

// What an overlap's gap compares the distance with: the sum of the two edges' radii, or the node's
// radius against an obstacle; 0 when the rods or indexes are not the world's (a plugin's mistake).
double overlapRadii(World& world, const Overlap& o) {
  Rod* a = world.findRod(o.rod_a);
  if (o.edge_b < 0) return a && o.edge_a >= 0 && o.edge_a < a->numNodes() ? a->nodeRadius(o.edge_a) : 0.0;
  Rod* b = world.findRod(o.rod_b);
  if (!(a && b && o.edge_a >= 0 && o.edge_a < a->numEdges() && o.edge_b >= 0 && o.edge_b < b->numEdges())) return 0.0;
  return a->radius(o.edge_a) + b->radius(o.edge_b);
}

// Rods placed exactly touching (a rod resting on a plane, a knot pulled tight) overlap by round-off;
// an overlap deeper than this fraction of the radii is a real one.
constexpr double kOverlapRoundOff = 1e-9;

// One overlap in words, with the distance and the radii it compares.
std::string describeOverlap(World& world, const Overlap& o) {
  const double r = overlapRadii(world, o);
  if (o.edge_b < 0) {  // a node of rod_a inside obstacle rod_b
    if (!(r > 0)) return fmt::format("rod '{}' node {} is inside obstacle '{}' by {}", o.rod_a, o.edge_a, o.rod_b, mm(-o.gap));
    return fmt::format("rod '{}' node {} is inside obstacle '{}' by {} (signed distance of the centre line from the "
                       "surface {}, radius {})",
                       o.rod_a, o.edge_a, o.rod_b, mm(-o.gap), mm(o.gap + r), mm(r));
  }
  const std::string who = o.rod_a == o.rod_b ? fmt::format("rod '{}' edges {} and {}", o.rod_a, o.edge_a, o.edge_b)
                                             : fmt::format("rods '{}' edge {} and '{}' edge {}", o.rod_a, o.edge_a,
                                                           o.rod_b, o.edge_b);
  if (!(r > 0)) return fmt::format("{} overlap by {}", who, mm(-o.gap));
  return fmt::format("{} overlap by {} (distance between centre lines {}, radii sum {})", who, mm(-o.gap),
                     mm(o.gap + r), mm(r));
}

}  // namespace

void KernelWorld::checkInitialOverlaps() {
  constexpr std::size_t kListed = 5;
  for (const auto& c : contacts_) {
    std::vector<Overlap> overlaps;
    guarded(c, [&] { c.object->findOverlaps(q_, overlaps); });
    std::erase_if(overlaps, [&](const Overlap& o) { return !(o.gap < -kOverlapRoundOff * overlapRadii(*this, o)); });
    if (overlaps.empty()) continue;
    const auto deepest = std::min_element(overlaps.begin(), overlaps.end(),
                                          [](const Overlap& x, const Overlap& y) { return x.gap < y.gap; });
    const Params& p = c.spec->params;
    if (p.has("allow_initial_overlap") && p.boolean("allow_initial_overlap")) {
      initial_overlap_gap_ = std::min(initial_overlap_gap_, deepest->gap);
      continue;
    }
    std::string list;
    for (std::size_t i = 0; i < overlaps.size() && i < kListed; ++i) list += "\n  " + describeOverlap(*this, overlaps[i]);
    if (overlaps.size() > kListed) list += fmt::format("\n  ... and {} more", overlaps.size() - kListed);
    throw InputError(fmt::format(
        "{}: {} '{}' ({}): the rods start interpenetrated: {} overlap{} in the initial configuration (distance below "
        "the sum of the radii):{}\n  deepest: {}\nMove the rods apart, or set allow_initial_overlap = true in "
        "[[contact]] '{}' to let the model push them apart",
        c.spec->where.text, c.spec->section, c.spec->name, c.spec->type, overlaps.size(),
        overlaps.size() == 1 ? "" : "s", list, describeOverlap(*this, *deepest), c.spec->name));
  }
}

namespace {
// One component of the scene as the compatibility check sees it.
struct Participant {
  const Component* object;
  const ComponentSpec* spec;
  const Schema* schema;
  ComponentKind kind;
};

}  // namespace

void KernelWorld::checkCompatibility(const TypeRegistry& registry) const {
  std::vector<Participant> all;
  auto collect = [&](const auto& bound, ComponentKind kind) {
    for (const auto& b : bound)
      all.push_back({b.object.get(), b.spec, &registry.find(kind, b.spec->type)->schema, kind});
  };
  collect(rods_, ComponentKind::Rod);
  collect(forces_, ComponentKind::Force);
  collect(constraints_, ComponentKind::Constraint);
  collect(contacts_, ComponentKind::Contact);
  all.push_back({solver_.object.get(), solver_.spec, &registry.find(ComponentKind::Solver, solver_.spec->type)->schema,
                 ComponentKind::Solver});
  // What a type provides is derived from its base classes; it must also answer for them.
  for (const Participant& p : all)
    for (const std::string& id : p.schema->provides())
      if (!const_cast<Component*>(p.object)->queryInterface(id))
        throw InputError(fmt::format("{}: {} '{}' ({}): the plugin's class derives from the capability '{}' but does "
                                     "not answer for it: list it in RODSIM_INTERFACES(...)",
                                     p.spec->where.text, p.spec->section, p.spec->name, p.spec->type, id));
  for (const Participant& needer : all)
    for (const Participant& other : all) {
      if (&other == &needer) continue;
      const std::string why = incompatibility(*needer.schema, *other.schema, other.kind);
      if (why.empty()) continue;
      std::string advice;
      for (const Requirement& r : needer.schema->requirements())
        if (r.from == other.kind) advice = r.why;
      throw InputError(fmt::format("{}: {} '{}' ({}) cannot work with {} '{}' ({}): {}. {}", needer.spec->where.text,
                                   needer.spec->section, needer.spec->name, needer.spec->type, other.spec->section,
                                   other.spec->name, other.spec->type, why, advice));
    }
}

Rod* KernelWorld::findRod(const std::string& name) {
  for (auto& r : rods_)
    if (r.object->name() == name) return r.object.get();
  return nullptr;
}

void KernelWorld::beginStep(double dt) {
  EvalContext ctx;
  ctx.t = t_;
  ctx.dt = dt;
  ctx.q = &q_;
  // Forces copy what they need of the start state during the call: no copy of ours is needed.
  ctx.q_start = &q_;
  ctx.v_start = &v_;
  for (auto& f : forces_) guarded(f, [&] { f.object->beginStep(ctx); });
  // Contact models keep the start-of-step state (through this context): without them, skip the
  // two full-vector copies (they are a visible share of a cheap explicit step).
  if (contacts_.empty()) return;
  q_start_ = q_;
  v_start_ = v_;
  ctx.q_start = &q_start_;
  ctx.v_start = &v_start_;
  ctx.dt = contact_scale_ * dt;  // ContactExtrapolation: the contacts' step is s dt
  for (auto& c : contacts_) guarded(c, [&] { c.object->beginStep(ctx); });
}

void KernelWorld::setContactExtrapolation(double s) {
  if (!(s >= 1) || !std::isfinite(s))
    throw std::invalid_argument(fmt::format("contact extrapolation factor must be >= 1 and finite, got {}", s));
  contact_scale_ = s;
}

const EvalContext& KernelWorld::contactContext(const EvalContext& ctx, EvalContext& scaled) {
  if (contact_scale_ == 1.0) return ctx;
  if (!ctx.q_start) throw std::logic_error("contact extrapolation needs the step's start configuration (ctx.q_start)");
  const double s = contact_scale_;
  const Vec& q = *ctx.q;
  const Vec& q_s = *ctx.q_start;
  q_contact_.resize(q.size());
  q_contact_ = q_s + s * (q - q_s);
  scaled = ctx;
  scaled.q = &q_contact_;
  scaled.t = ctx.t + (s - 1) * ctx.dt;
  scaled.dt = s * ctx.dt;
  return scaled;
}

void KernelWorld::prescribe(double t, Vec& q) {
  for (auto& c : constraints_) guarded(c, [&] { c.object->prescribe(t, q); });
}

void KernelWorld::evaluate(const EvalContext& ctx, Vec& force, StiffnessSink* stiffness) {
  evaluateVarying(ctx, force, stiffness);
  addStepConstantForces(ctx, force);
}

void KernelWorld::addStepConstantForces(const EvalContext& ctx, Vec& force) {
  for (int i : step_constant_forces_) guarded(forces_[i], [&] { forces_[i].object->addForce(ctx, force); });
}

void KernelWorld::evaluateWithoutContacts(const EvalContext& ctx, Vec& force) {
  evaluateRodsAndForces(ctx, force, nullptr);
  addStepConstantForces(ctx, force);
}

void KernelWorld::evaluateVarying(const EvalContext& ctx, Vec& force, StiffnessSink* stiffness) {
  evaluateRodsAndForces(ctx, force, stiffness);
  if (force_contacts_.empty()) return;
  copyInto(non_contact_, force);
  EvalContext scaled;
  const EvalContext& contact_ctx = contactContext(ctx, scaled);
  // (pairs, not structured bindings: clang 14 cannot capture those in a lambda)
  for (const auto& fc : force_contacts_) {
    ForceContact* contact = fc.second;
    guarded(contacts_[fc.first], [&] {
      contact->addForce(contact_ctx, non_contact_, force);
      if (!stiffness) return;
      if (contact_scale_ == 1.0) {
        contact->addStiffness(contact_ctx, *stiffness);
        return;
      }
      // d F_c(q_c) / dq = s dF_c/dq_c (ContactExtrapolation)
      contact_stiffness_.clear();
      contact->addStiffness(contact_ctx, contact_stiffness_);
      for (const auto& e : contact_stiffness_.entries()) stiffness->add(e.row(), e.col(), contact_scale_ * e.value());
    });
  }
}

void KernelWorld::evaluateRodsAndForces(const EvalContext& ctx, Vec& force, StiffnessSink* stiffness) {
  zeroForce(force);
  const Vec& q = *ctx.q;
  auto one = [&](int r) {
    Rod& rod = *rods_[r].object;
    const RodCapabilities& caps = rod_caps_[r];
    guarded(rods_[r], [&] {
      rod.setConfiguration(q.segment(rod.dofOffset(), rod.numDofs()));
      rod.addElasticForce(force.segment(rod.dofOffset(), rod.numDofs()));
      if (caps.velocity_forces) caps.velocity_forces->addVelocityForce(ctx, force.segment(rod.dofOffset(), rod.numDofs()));
      // checkCompatibility refused solvers that need stiffness with rods that have none
      if (stiffness && caps.stiffness) caps.stiffness->addStiffness(*stiffness);
    });
  };
  // The stiffness sink takes the rods' entries in their order: with a sink, the rods one after another.
  if (stiffness)
    for (int r = 0; r < numRods(); ++r) one(r);
  else
    forEachRod(one);
  for (int i : varying_forces_)
    guarded(forces_[i], [&] {
      forces_[i].object->addForce(ctx, force);
      if (stiffness) forces_[i].object->addStiffness(ctx, *stiffness);
    });
}

void KernelWorld::evaluateVelocityForces(const EvalContext& ctx, Vec& force) {
  zeroForce(force);
  forEachRod([&](int r) {
    Rod& rod = *rods_[r].object;
    if (RodVelocityForces* vf = rod_caps_[r].velocity_forces)
      guarded(rods_[r], [&] { vf->addVelocityForce(ctx, force.segment(rod.dofOffset(), rod.numDofs())); });
  });
  for (auto& f : forces_)
    if (f.object->velocityDependent()) guarded(f, [&] { f.object->addForce(ctx, force); });
}

double KernelWorld::potentialEnergy(const EvalContext& ctx) {
  double e = 0;
  const Vec& q = *ctx.q;
  for (auto& r : rods_) {
    Rod& rod = *r.object;
    guarded(r, [&] {
      rod.setConfiguration(q.segment(rod.dofOffset(), rod.numDofs()));
      e += rod.elasticEnergy();
    });
  }
  for (auto& f : forces_) guarded(f, [&] { e += f.object->potentialEnergy(ctx); });
  EvalContext scaled;
  const EvalContext& contact_ctx = force_contacts_.empty() ? ctx : contactContext(ctx, scaled);
  for (const auto& fc : force_contacts_) {
    ForceContact* contact = fc.second;
    // E_c(q_c) / s: its gradient in q is F_c(q_c), as evaluate() adds (ContactExtrapolation)
    guarded(contacts_[fc.first], [&] { e += contact->energy(contact_ctx) / contact_scale_; });
  }
  return e;
}

double KernelWorld::maxStepFraction(const Vec& q, const Vec& dq) {
  double alpha = 1.0;
  if (step_bound_contacts_.empty()) return alpha;
  const Vec* q_c = &q;
  const Vec* dq_c = &dq;
  if (contact_scale_ != 1.0) {  // the contacts' own step: (q_s + s (q - q_s), s dq) (ContactExtrapolation)
    q_contact_.resize(q.size());
    q_contact_ = q_start_ + contact_scale_ * (q - q_start_);
    dq_contact_.resize(dq.size());
    dq_contact_ = contact_scale_ * dq;
    q_c = &q_contact_;
    dq_c = &dq_contact_;
  }
  for (const auto& sb : step_bound_contacts_) {
    StepBoundContact* contact = sb.second;
    guarded(contacts_[sb.first], [&] { alpha = std::min(alpha, contact->maxStepFraction(*q_c, *dq_c)); });
  }
  return alpha;
}

void KernelWorld::commitStep(double t, const Vec& q, const Vec& v, const Vec& residual) {
  t_ = t;
  // An explicit solver swaps its state into q() and v() and passes them back: no copy then.
  copyInto(q_, q);
  copyInto(v_, v);
  // Of the residual the World keeps the reactions, its entries on the prescribed DOFs, and 0 on the
  // free ones: that is all its readers use (constraint-force probes, checkpoints), and a copy of
  // every entry was one more pass over the DOFs per step (benchmarks/README.md, bench_cosserat).
  if (residual.size() != residual_.size())
    throw std::runtime_error(fmt::format("the solver committed a residual of {} entries for {} degrees of freedom",
                                         residual.size(), residual_.size()));
  for (int i : fixed_list_) residual_[i] = residual[i];
  forEachRod([&](int r) {
    Rod& rod = *rods_[r].object;
    RodRotationVectors* rv = rod_caps_[r].rotation_vectors;
    guarded(rods_[r], [&] {
      rod.setConfiguration(q_.segment(rod.dofOffset(), rod.numDofs()));
      rod.commitConfiguration();
      if (rv) rv->rebaseDofs(q_.segment(rod.dofOffset(), rod.numDofs()), v_.segment(rod.dofOffset(), rod.numDofs()));
    });
  });
}

double KernelWorld::kineticEnergy() const {
  const Eigen::Index n = v_.size();
  if (n <= kEnergyChunk) return 0.5 * v_.dot(mass_.cwiseProduct(v_));
  // Longer state vectors: the dot product of each chunk of kEnergyChunk DOFs on its own, then the
  // chunks in order. The order is fixed whatever the thread count, so the chunks may be spread over
  // the threads and the energy stays bit for bit that of one thread.
  const int chunks = static_cast<int>((n + kEnergyChunk - 1) / kEnergyChunk);
  energy_chunks_.resize(chunks);
  auto sum = [&](int c0, int c1) {
    for (int c = c0; c < c1; ++c) {
      const Eigen::Index b = c * kEnergyChunk, len = std::min<Eigen::Index>(kEnergyChunk, n - b);
      energy_chunks_[c] = v_.segment(b, len).dot(mass_.segment(b, len).cwiseProduct(v_.segment(b, len)));
    }
  };
  // (forBlocks changes nothing of the World: it only runs the loop)
  parallelForBlocks(const_cast<KernelWorld*>(this), chunks, 1, sum);
  double e = 0;
  for (int c = 0; c < chunks; ++c) e += energy_chunks_[c];
  return 0.5 * e;
}

double KernelWorld::elasticEnergy() {
  // Each rod's energy (its strains at the committed configuration, computed on demand) in the rods'
  // blocks over the threads, then summed in the rods' order as on one thread.
  rod_energy_.resize(rods_.size());
  forEachRod([&](int r) { rod_energy_[r] = rods_[r].object->elasticEnergy(); });
  double e = 0;
  for (double x : rod_energy_) e += x;
  return e;
}

ContactStats KernelWorld::contactStats() const {
  ContactStats total;
  for (const auto& c : contacts_) {
    ContactStats s = c.object->stats();
    total.active += s.active;
    total.min_gap = std::min(total.min_gap, s.min_gap);
  }
  return total;
}

std::vector<std::pair<std::string, std::string>> KernelWorld::pluginsInUse() const { return libraries_; }

namespace {
template <class T> void appendColumns(const std::vector<T>& bound, std::vector<std::string>& out) {
  for (const auto& b : bound)
    for (const auto& col : b.object->reportColumns()) out.push_back(b.spec->name + "." + col);
}
template <class T> void appendValues(const std::vector<T>& bound, std::vector<double>& out) {
  for (const auto& b : bound) {
    const std::size_t before = out.size();
    b.object->reportValues(out);
    out.resize(before + b.object->reportColumns().size(), std::numeric_limits<double>::quiet_NaN());
  }
}
}  // namespace

std::vector<std::string> KernelWorld::reportColumns() const {
  std::vector<std::string> out;
  appendColumns(contacts_, out);
  appendColumns(forces_, out);
  return out;
}

int KernelWorld::numContactReportColumns() const {
  std::vector<std::string> out;
  appendColumns(contacts_, out);
  return static_cast<int>(out.size());
}

void KernelWorld::reportValues(std::vector<double>& out) const {
  out.clear();
  appendValues(contacts_, out);
  appendValues(forces_, out);
}

namespace {
template <class F> void forEachComponent(const std::vector<Bound<Rod>>& rods, const std::vector<Bound<Force>>& forces,
                                         const std::vector<Bound<Constraint>>& constraints,
                                         const std::vector<Bound<Contact>>& contacts, const Bound<Solver>& solver, F&& f) {
  for (const auto& c : rods) f(*c.object, *c.spec);
  for (const auto& c : forces) f(*c.object, *c.spec);
  for (const auto& c : constraints) f(*c.object, *c.spec);
  for (const auto& c : contacts) f(*c.object, *c.spec);
  f(*solver.object, *solver.spec);
}
}  // namespace

std::vector<std::pair<const ComponentSpec*, Component*>> KernelWorld::components() {
  std::vector<std::pair<const ComponentSpec*, Component*>> out;
  auto add = [&](const auto& bound) { out.emplace_back(bound.spec, bound.object.get()); };
  for (const auto& c : rods_) add(c);
  for (const auto& c : forces_) add(c);
  for (const auto& c : constraints_) add(c);
  for (const auto& c : contacts_) add(c);
  add(solver_);
  return out;
}

std::vector<std::vector<double>> KernelWorld::saveStates() const {
  std::vector<std::vector<double>> out;
  forEachComponent(rods_, forces_, constraints_, contacts_, solver_, [&](const Component& c, const ComponentSpec&) {
    out.emplace_back();
    c.saveState(out.back());
  });
  return out;
}

void KernelWorld::saveStates(std::vector<std::vector<double>>& out) const {
  std::size_t k = 0;
  forEachComponent(rods_, forces_, constraints_, contacts_, solver_, [&](const Component& c, const ComponentSpec&) {
    if (k == out.size()) out.emplace_back();
    out[k].clear();
    c.saveState(out[k++]);
  });
  out.resize(k);
}

void KernelWorld::keepStepStart() {
  if (swept_contacts_.empty()) return;
  kept_t_ = t_;
  kept_q_ = q_;
  kept_v_ = v_;
  kept_residual_ = residual_;
  saveStates(kept_states_);
}

bool KernelWorld::rejectCrossedStep(Crossing& out, std::string& who) {
  for (const auto& sc : swept_contacts_) {
    const int i = sc.first;
    SweptContactCheck* check = sc.second;
    bool found = false;
    guarded(contacts_[i], [&] { found = check->findCrossing(kept_q_, q_, out); });
    if (found) {
      who = fmt::format("{} '{}' ({})", contacts_[i].spec->section, contacts_[i].spec->name, contacts_[i].spec->type);
      restore(kept_t_, kept_q_, kept_v_, kept_residual_, kept_states_);
      return true;
    }
  }
  return false;
}

void KernelWorld::restore(double t, const Vec& q, const Vec& v, const Vec& residual,
                          const std::vector<std::vector<double>>& states) {
  if (q.size() != q_.size() || v.size() != v_.size() || residual.size() != residual_.size())
    throw InputError(fmt::format("the checkpoint has {} degrees of freedom, this scene {}", q.size(), q_.size()));
  std::size_t k = 0;
  forEachComponent(rods_, forces_, constraints_, contacts_, solver_, [&](Component& c, const ComponentSpec& spec) {
    if (k >= states.size()) throw InputError("the checkpoint has fewer components than this scene");
    try {
      c.loadState(states[k++]);
    } catch (const std::exception& e) {
      throw InputError(fmt::format("{}: {} '{}': cannot restore its checkpointed state: {}", spec.where.text,
                                   spec.section, spec.name, e.what()));
    }
  });
  if (k != states.size()) throw InputError("the checkpoint has more components than this scene");
  t_ = t;
  q_ = q;
  v_ = v;
  for (Eigen::Index i = 0; i < residual.size(); ++i) residual_[i] = fixed_[i] ? residual[i] : 0.0;
  for (auto& r : rods_) r.object->setConfiguration(q_.segment(r.object->dofOffset(), r.object->numDofs()));
}

}  // namespace rodsim::kernel
