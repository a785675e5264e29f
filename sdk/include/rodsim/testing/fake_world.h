// A small stand-in for the kernel, for unit tests of plugins: rodsim::testing::FakeWorld
// implements rodsim::World over rods, forces, constraints and contacts that the test owns
// through it, and SpringChain is a minimal Rod (a chain of springs, optionally with twist DOFs).
//
//   using namespace rodsim::testing;
//   FakeWorld w;
//   SpringChain::Options o;
//   o.points = line(5, Vec3(0, 0, 0), Vec3(1, 0, 0));
//   auto& rod = w.addRod<SpringChain>("beam", o);
//   w.addForce<rodsim::loads::Gravity>(makeParams(rodsim::loads::Gravity::schema(), {}));
//   w.finalize();            // offsets, initial state, bind() of everything, fixed mask
//   solver.step(w, dt);      // then inspect w.q(), w.lastResidual(), w.evaluations, ...
//
// Header-only; depends on the SDK headers only. Installed with the SDK as <rodsim/testing/fake_world.h>
// for out-of-tree plugins' tests (docs/writing-a-plugin.md, section 10).
#pragma once

#include <rodsim/sdk.h>

#include <Eigen/Geometry>

#include <cmath>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace rodsim::testing {

// Params for a component: every schema default, then the given values (keys must be declared).
inline Params makeParams(const Schema& schema,
                         std::initializer_list<std::pair<std::string, Value>> values,
                         const std::string& name = "") {
  Params p(name.empty() ? schema.type() : name);
  for (const auto& spec : schema.params())
    if (spec.fallback) p.set(spec.name, *spec.fallback);
  for (const auto& [key, value] : values) {
    if (!schema.find(key))
      throw std::invalid_argument("makeParams: '" + key + "' is not a parameter of " + schema.type());
    p.set(key, value);
  }
  return p;
}

// n equally spaced points from a to b.
inline std::vector<Vec3> line(int n, const Vec3& a, const Vec3& b) {
  std::vector<Vec3> pts;
  for (int i = 0; i < n; ++i) pts.push_back(a + (b - a) * (n == 1 ? 0.0 : double(i) / (n - 1)));
  return pts;
}

// A chain of axial springs between consecutive nodes: E = sum_e k_e s^2/2 + k3_e s^4/4 with
// s = |x_{e+1} - x_e| - L_e (linear springs for k3 = 0). Optional twist DOFs (DER layout
// x0 y0 z0 th0 x1 ... : 4 N - 1 DOFs) with energy sum kt (th_{e+1} - th_e)^2 / 2 and a material
// frame m1 = cos(th) d1 + sin(th) d2 around a reference d1 = unit(a - (a.t) t), a = z (or x when
// the edge is nearly along z). Without twist: 3 N DOFs, twistDof = -1.
class SpringChain : public Rod, public RodStiffness {
  RODSIM_INTERFACES(SpringChain, RodStiffness)

 public:
  struct Options {
    std::vector<Vec3> points;          // initial node positions (>= 2)
    std::vector<double> rest_lengths;  // per edge; empty: the initial lengths
    double stiffness = 100.0;          // k per spring, N/m
    std::vector<double> stiffnesses;   // per edge; overrides `stiffness` when not empty
    double cubic = 0.0;                // k3, N/m^3 (hardening)
    std::vector<double> masses;        // per node, kg; empty: `mass` for every node
    double mass = 0.1;
    bool twist = false;
    double twist_stiffness = 0.0;  // kt, N m/rad
    double twist_inertia = 1e-6;   // kg m^2 per edge
    double radius = 1e-3;
    Vec3 initial_velocity = Vec3::Zero();
  };

  SpringChain(const std::string& name, Options o) : Rod(Params(name)), o_(std::move(o)) {
    if (o_.points.size() < 2) throw std::invalid_argument("SpringChain needs >= 2 points");
    const int ne = numEdges();
    if (o_.rest_lengths.empty())
      for (int e = 0; e < ne; ++e) o_.rest_lengths.push_back((o_.points[e + 1] - o_.points[e]).norm());
    if (o_.stiffnesses.empty()) o_.stiffnesses.assign(ne, o_.stiffness);
    if (o_.masses.empty()) o_.masses.assign(numNodes(), o_.mass);
    x_.setZero(numDofs());
    initialDofs(x_);
  }

  const Options& options() const { return o_; }

  int numNodes() const override { return static_cast<int>(o_.points.size()); }
  int numDofs() const override { return o_.twist ? 4 * numNodes() - 1 : 3 * numNodes(); }
  int positionDof(int node) const override { return o_.twist ? 4 * node : 3 * node; }
  int twistDof(int edge) const override { return o_.twist ? 4 * edge + 3 : -1; }

  void initialDofs(VecRef q) const override {
    q.setZero();
    for (int n = 0; n < numNodes(); ++n) q.segment<3>(positionDof(n)) = o_.points[n];
  }
  void initialVelocity(VecRef v) const override {
    v.setZero();
    for (int n = 0; n < numNodes(); ++n) v.segment<3>(positionDof(n)) = o_.initial_velocity;
  }
  void lumpedMass(VecRef m) const override {
    for (int n = 0; n < numNodes(); ++n) m.segment<3>(positionDof(n)).setConstant(o_.masses[n]);
    for (int e = 0; e < numEdges(); ++e)
      if (twistDof(e) >= 0) m[twistDof(e)] = o_.twist_inertia;
  }

  double radius(int) const override { return o_.radius; }
  double nodeRadius(int) const override { return o_.radius; }
  double restVoronoiLength(int node) const override {
    double l = 0;
    if (node > 0) l += 0.5 * o_.rest_lengths[node - 1];
    if (node < numEdges()) l += 0.5 * o_.rest_lengths[node];
    return l;
  }

  void setConfiguration(ConstVecRef q) override {
    x_ = q;
    ++set_count;
  }
  void commitConfiguration() override { ++commit_count; }

  Vec3 node(int n) const { return x_.segment<3>(positionDof(n)); }
  double theta(int e) const { return o_.twist ? x_[twistDof(e)] : 0.0; }

  double elasticEnergy() const override {
    double E = 0;
    for (int e = 0; e < numEdges(); ++e) {
      const double s = (node(e + 1) - node(e)).norm() - o_.rest_lengths[e];
      E += 0.5 * o_.stiffnesses[e] * s * s + 0.25 * o_.cubic * s * s * s * s;
    }
    if (o_.twist)
      for (int e = 0; e + 1 < numEdges(); ++e)
        E += 0.5 * o_.twist_stiffness * std::pow(theta(e + 1) - theta(e), 2);
    return E;
  }

  void addElasticForce(VecRef f) const override {
    for (int e = 0; e < numEdges(); ++e) {
      const Vec3 d = node(e + 1) - node(e);
      const double len = d.norm(), s = len - o_.rest_lengths[e];
      const Vec3 g = (o_.stiffnesses[e] * s + o_.cubic * s * s * s) * d / len;  // dE/dx_{e+1}
      f.segment<3>(positionDof(e + 1)) -= g;
      f.segment<3>(positionDof(e)) += g;
    }
    if (o_.twist)
      for (int e = 0; e + 1 < numEdges(); ++e) {
        const double m = o_.twist_stiffness * (theta(e + 1) - theta(e));
        f[twistDof(e + 1)] -= m;
        f[twistDof(e)] += m;
      }
  }

  void addStiffness(StiffnessSink& K) const override {
    const int off = dofOffset();
    for (int e = 0; e < numEdges(); ++e) {
      const Vec3 d = node(e + 1) - node(e);
      const double len = d.norm(), s = len - o_.rest_lengths[e];
      const double T = o_.stiffnesses[e] * s + o_.cubic * s * s * s;
      const double dT = o_.stiffnesses[e] + 3 * o_.cubic * s * s;
      const Vec3 u = d / len;
      const Mat3 H = dT * u * u.transpose() + (T / len) * (Mat3::Identity() - u * u.transpose());
      const int a = off + positionDof(e), b = off + positionDof(e + 1);
      K.addBlock(std::vector<int>{a, a + 1, a + 2}, H);
      K.addBlock(std::vector<int>{b, b + 1, b + 2}, H);
      for (int c = 0; c < 3; ++c)
        for (int r = 0; r < 3; ++r) {
          K.add(a + r, b + c, -H(r, c));
          K.add(b + r, a + c, -H(r, c));
        }
    }
    if (o_.twist)
      for (int e = 0; e + 1 < numEdges(); ++e) {
        const int i = off + twistDof(e), j = off + twistDof(e + 1);
        const double kt = o_.twist_stiffness;
        K.add(i, i, kt);
        K.add(j, j, kt);
        K.add(i, j, -kt);
        K.add(j, i, -kt);
      }
  }

  // Reference director of an edge (a function of its tangent only).
  static Vec3 referenceDirector(const Vec3& t) {
    const Vec3 a = std::abs(t.z()) > 0.9 ? Vec3::UnitX() : Vec3::UnitZ();
    return (a - a.dot(t) * t).normalized();
  }

  void materialFrame(int edge, Vec3& t, Vec3& m1, Vec3& m2) const override {
    t = (node(edge + 1) - node(edge)).normalized();
    const Vec3 d1 = referenceDirector(t), d2 = t.cross(d1);
    const double th = theta(edge);
    m1 = std::cos(th) * d1 + std::sin(th) * d2;
    m2 = t.cross(m1);
  }
  double twistForDirector(int edge, const Vec3& m1) const override {
    const Vec3 t = (node(edge + 1) - node(edge)).normalized();
    const Vec3 d1 = referenceDirector(t), d2 = t.cross(d1);
    return std::atan2(m1.dot(d2), m1.dot(d1));
  }
  // A torque as the force couple on the adjacent edge (its component normal to the edge) plus,
  // with twist DOFs, its axial component on the twist angle.
  void addNodeTorque(int n, const Vec3& torque, VecRef f) const override {
    const int e = n < numEdges() ? n : n - 1;
    const Vec3 d = node(e + 1) - node(e);
    const Vec3 F = torque.cross(d) / d.squaredNorm();
    f.segment<3>(positionDof(e + 1)) += F;
    f.segment<3>(positionDof(e)) -= F;
    if (o_.twist) f[twistDof(e)] += torque.dot(d.normalized());
  }

  int set_count = 0, commit_count = 0;

 private:
  Options o_;
  Vec x_;  // last configuration set (local)
};

// The kernel's World, reduced to what plugins call. Evaluation order: rods (set configuration,
// elastic force, stiffness), forces, penalty and barrier contacts.
class FakeWorld : public World {
 public:
  template <class R, class... Args> R& addRod(Args&&... args) {
    auto p = std::make_unique<R>(std::forward<Args>(args)...);
    R& ref = *p;
    rods_.push_back(std::move(p));
    return ref;
  }
  template <class T> T& addForce(const Params& p) { return add<T>(forces_, p); }
  template <class T> T& addConstraint(const Params& p) { return add<T>(constraints_, p); }
  template <class T> T& addContact(const Params& p) { return add<T>(contacts_, p); }
  // Already constructed components (for test-local classes with other constructors).
  Force& addForce(std::unique_ptr<Force> f) { forces_.push_back(std::move(f)); return *forces_.back(); }
  Constraint& addConstraint(std::unique_ptr<Constraint> c) {
    constraints_.push_back(std::move(c));
    return *constraints_.back();
  }
  Contact& addContact(std::unique_ptr<Contact> c) { contacts_.push_back(std::move(c)); return *contacts_.back(); }

  // DOF offsets, initial state and mass, then bind() of rods, forces, constraints and contacts,
  // then the fixed mask. Call once after adding everything.
  void finalize() {
    int off = 0;
    for (auto& r : rods_) {
      r->setDofOffset(off);
      off += r->numDofs();
    }
    q_.setZero(off);
    v_.setZero(off);
    mass_.setZero(off);
    residual_.setZero(off);
    for (auto& r : rods_) {
      r->initialDofs(q_.segment(r->dofOffset(), r->numDofs()));
      r->initialVelocity(v_.segment(r->dofOffset(), r->numDofs()));
      r->lumpedMass(mass_.segment(r->dofOffset(), r->numDofs()));
      r->setConfiguration(q_.segment(r->dofOffset(), r->numDofs()));
    }
    for (auto& r : rods_) r->bind(*this);
    for (auto& f : forces_) f->bind(*this);
    for (auto& c : constraints_) c->bind(*this);
    for (auto& c : contacts_) c->bind(*this);
    fixed_.assign(off, 0);
    for (auto& c : constraints_)
      for (int d : c->dofs()) fixed_[d] = 1;
  }

  // --- World
  int numRods() const override { return static_cast<int>(rods_.size()); }
  Rod& rod(int i) override { return *rods_.at(i); }
  Rod* findRod(const std::string& name) override {
    for (auto& r : rods_)
      if (r->name() == name) return r.get();
    return nullptr;
  }
  int numDofs() const override { return static_cast<int>(q_.size()); }
  int numContacts() const override { return static_cast<int>(contacts_.size()); }
  Contact& contact(int i) override { return *contacts_.at(i); }

  double time() const override { return time_; }
  Vec& q() override { return q_; }
  Vec& v() override { return v_; }
  const Vec& mass() const override { return mass_; }
  const std::vector<char>& fixedMask() const override { return fixed_; }

  void beginStep(double dt) override {
    ++begin_steps;
    EvalContext ctx;
    ctx.t = time_ + dt;
    ctx.dt = dt;
    ctx.q = &q_;
    ctx.q_start = &q_;
    ctx.v_start = &v_;
    for (auto& f : forces_) f->beginStep(ctx);
    for (auto& c : contacts_) c->beginStep(ctx);
  }
  void prescribe(double t, Vec& q) override {
    for (auto& c : constraints_) c->prescribe(t, q);
  }
  void evaluate(const EvalContext& ctx, Vec& force, StiffnessSink* K) override {
    evaluateVarying(ctx, force, K);
    addStepConstantForces(ctx, force);
  }
  bool hasStepConstantForces() const override {
    for (auto& f : forces_)
      if (f->constantInStep()) return true;
    return false;
  }
  void addStepConstantForces(const EvalContext& ctx, Vec& force) override {
    for (auto& f : forces_)
      if (f->constantInStep()) f->addForce(ctx, force);
  }
  void evaluateVarying(const EvalContext& ctx, Vec& force, StiffnessSink* K) override {
    ++evaluations;
    if (K) ++stiffness_evaluations;
    force.setZero(numDofs());
    const Vec& q = *ctx.q;
    for (auto& r : rods_) {
      r->setConfiguration(q.segment(r->dofOffset(), r->numDofs()));
      r->addElasticForce(force.segment(r->dofOffset(), r->numDofs()));
      if (K)
        if (auto* s = r->as<RodStiffness>()) s->addStiffness(*K);
    }
    for (auto& f : forces_) {
      if (f->constantInStep()) continue;
      f->addForce(ctx, force);
      if (K) f->addStiffness(ctx, *K);
    }
    if (contacts_.empty()) return;
    non_contact_ = force;
    for (auto& c : contacts_) {
      auto* fc = c->as<ForceContact>();
      if (!fc) continue;
      fc->addForce(ctx, non_contact_, force);
      if (K) fc->addStiffness(ctx, *K);
    }
  }
  void evaluateVelocityForces(const EvalContext& ctx, Vec& force) override {
    force.setZero(numDofs());
    for (auto& r : rods_)
      if (auto* vf = r->as<RodVelocityForces>()) vf->addVelocityForce(ctx, force.segment(r->dofOffset(), r->numDofs()));
    for (auto& f : forces_)
      if (f->velocityDependent()) f->addForce(ctx, force);
  }
  double potentialEnergy(const EvalContext& ctx) override {
    const Vec& q = *ctx.q;
    double e = 0;
    for (auto& r : rods_) {
      r->setConfiguration(q.segment(r->dofOffset(), r->numDofs()));
      e += r->elasticEnergy();
    }
    for (auto& f : forces_) e += f->potentialEnergy(ctx);
    for (auto& c : contacts_)
      if (auto* fc = c->as<ForceContact>()) e += fc->energy(ctx);
    return e;
  }
  double maxStepFraction(const Vec& q, const Vec& dq) override {
    double f = 1.0;
    for (auto& c : contacts_)
      if (auto* sb = c->as<StepBoundContact>()) f = std::min(f, sb->maxStepFraction(q, dq));
    return f;
  }
  void commitStep(double t, const Vec& q, const Vec& v, const Vec& residual) override {
    ++commits;
    time_ = t;
    q_ = q;
    v_ = v;
    residual_ = residual;
    for (auto& r : rods_) {
      r->setConfiguration(q_.segment(r->dofOffset(), r->numDofs()));
      r->commitConfiguration();
      // as the kernel: rotation-vector DOFs are rebased onto the committed frames
      if (auto* rv = r->as<RodRotationVectors>())
        rv->rebaseDofs(q_.segment(r->dofOffset(), r->numDofs()), v_.segment(r->dofOffset(), r->numDofs()));
    }
  }

  // --- inspection
  const Vec& lastResidual() const { return residual_; }  // passed to the last commitStep
  void setTime(double t) { time_ = t; }
  // Total energy: kinetic + elastic + potential of the forces at the committed state.
  double kineticEnergy() const { return 0.5 * v_.dot(mass_.cwiseProduct(v_)); }
  double elasticEnergy() const {
    double e = 0;
    for (auto& r : rods_) e += r->elasticEnergy();
    return e;
  }
  // Sum of Force::potentialEnergy at the committed state.
  double loadPotential(double load_scale = 1.0) {
    EvalContext ctx;
    ctx.t = time_;
    ctx.q = &q_;
    ctx.q_start = &q_;
    ctx.v_start = &v_;
    ctx.load_scale = load_scale;
    double e = 0;
    for (auto& f : forces_) e += f->potentialEnergy(ctx);
    return e;
  }

  int evaluations = 0, stiffness_evaluations = 0, commits = 0, begin_steps = 0;

 private:
  template <class T, class Base> T& add(std::vector<std::unique_ptr<Base>>& list, const Params& p) {
    auto c = std::make_unique<T>(p);
    T& ref = *c;
    list.push_back(std::move(c));
    return ref;
  }

  std::vector<std::unique_ptr<Rod>> rods_;
  std::vector<std::unique_ptr<Force>> forces_;
  std::vector<std::unique_ptr<Constraint>> constraints_;
  std::vector<std::unique_ptr<Contact>> contacts_;
  Vec q_, v_, mass_, residual_, non_contact_;
  std::vector<char> fixed_;
  double time_ = 0;
};

}  // namespace rodsim::testing
