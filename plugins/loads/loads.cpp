#include "loads.h"

#include <cmath>
#include <limits>

namespace rodsim::loads {

namespace {

std::optional<Vec3> optionalVec3(const Params& p, const std::string& key) {
  if (!p.has(key)) return std::nullopt;
  return p.vec3(key);
}

// A 3-vector given to setParameter: three finite numbers.
Vec3 adjustedVec3(const std::string& key, const std::vector<double>& value) {
  if (value.size() != 3) throw ParamError(key, "expected 3 numbers, got " + std::to_string(value.size()));
  for (double x : value)
    if (!std::isfinite(x)) throw ParamError(key, "expected finite numbers");
  return {value[0], value[1], value[2]};
}

std::vector<double> numbers(const Vec3& v) { return {v[0], v[1], v[2]}; }

}  // namespace

// -------------------------------------------------------------------------------------- gravity

Schema Gravity::schema() {
  Schema s{"gravity", "Uniform gravitational field: force m_i g on every node (lumped masses), "
                      "scaled by the static solver's load ramp."};
  s.add<Vec3>("g", Vec3(0, 0, -9.81), "Gravitational acceleration.").unit("m/s^2");
  s.optional<std::vector<std::string>>("rods", "Rods it acts on (default: all rods).");
  return s;
}

Gravity::Gravity(const Params& p)
    : Force(p), g_(p.vec3("g")), rod_names_(p.optionalStrings("rods")) {}

void Gravity::bind(World& world) {
  world_ = &world;
  node_dofs_.clear();
  for (Rod* rod : resolveRods(world, rod_names_, "rods"))
    for (int n = 0; n < rod->numNodes(); ++n) node_dofs_.push_back(rod->globalPositionDof(n));
  runs_.clear();
  for (int d : node_dofs_) {
    if (!runs_.empty() && runs_.back().first + 3 * runs_.back().second == d) ++runs_.back().second;
    else runs_.push_back({d, 1});
  }
}

void Gravity::addForce(const EvalContext& ctx, Vec& f) {
  const Vec& m = world_->mass();
  const Vec3 g = ctx.load_scale * g_;
  const double g0 = g[0], g1 = g[1], g2 = g[2];
  for (const auto& [d, count] : runs_) {
    double* __restrict fd = f.data() + d;
    const double* __restrict md = m.data() + d;
    for (int j = 0; j < 3 * count; j += 3) {
      fd[j] += md[j] * g0;
      fd[j + 1] += md[j + 1] * g1;
      fd[j + 2] += md[j + 2] * g2;
    }
  }
}

double Gravity::potentialEnergy(const EvalContext& ctx) const {
  const Vec& m = world_->mass();
  const Vec& q = *ctx.q;
  double e = 0;
  for (int d : node_dofs_)
    for (int k = 0; k < 3; ++k) e -= m[d + k] * g_[k] * q[d + k];
  return ctx.load_scale * e;
}

std::vector<double> Gravity::parameter(const std::string& key) const {
  if (key != "g") throw ParamError(key, "gravity adjusts only `g`");
  return numbers(g_);
}

void Gravity::setParameter(const std::string& key, const std::vector<double>& value, double) {
  if (key != "g") throw ParamError(key, "gravity adjusts only `g`");
  g_ = adjustedVec3(key, value);
  adjusted_ = true;
}

void Gravity::saveState(std::vector<double>& out) const {
  if (adjusted_) out.insert(out.end(), g_.data(), g_.data() + 3);
}

void Gravity::loadState(const std::vector<double>& in) {
  if (in.size() != 3) return;  // not adjusted: the scene's value
  g_ = Vec3(in[0], in[1], in[2]);
  adjusted_ = true;
}

// ----------------------------------------------------------------------------------- point-load

Schema PointLoad::schema() {
  Schema s{"point-load", "A dead force and/or torque at one node, scaled by the static solver's "
                         "load ramp. At least one of `force` and `torque` is required. In dynamics it can "
                         "start late, ramp up smoothly and be harmonic (start, ramp, frequency)."};
  s.required<std::string>("rod", "Rod the load acts on.");
  s.required<int>("node", "Node index; negative counts from the end (-1 is the last node).");
  s.optional<Vec3>("force", "Force applied at the node.").unit("N");
  s.optional<Vec3>("torque", "Torque applied at the node (through the rod's material frames).")
      .unit("N m");
  s.optional<double>("frequency", "Harmonic load: force and torque times sin(2 pi frequency (t - start)) "
                                  "(absent: constant).").unit("Hz").atLeast(0);
  s.add<double>("start", 0.0, "Time at which the load is switched on (zero before).").unit("s");
  s.add<double>("ramp", 0.0, "Smooth switch-on: the load is also multiplied by (1 - cos(pi (t - start) / ramp)) / 2 "
                             "until t = start + ramp; 0: a step.").unit("s").atLeast(0);
  return s;
}

PointLoad::PointLoad(const Params& p)
    : Force(p),
      rod_name_(p.string("rod")),
      node_param_(p.integer("node")),
      force_(optionalVec3(p, "force")),
      torque_(optionalVec3(p, "torque")),
      frequency_(p.has("frequency") ? p.real("frequency") : -1.0),
      start_(p.real("start")),
      ramp_(p.real("ramp")) {
  if (!force_ && !torque_)
    throw ParamError("force", "point-load needs `force` (N) and/or `torque` (N m); neither is given");
}

void PointLoad::bind(World& world) {
  rod_ = &resolveRod(world, rod_name_, "rod");
  node_ = rod_->resolveNode(node_param_);
  if (node_ < 0)
    throw ParamError("node", "node " + std::to_string(node_param_) + " is out of range for rod '" +
                                 rod_name_ + "' with " + std::to_string(rod_->numNodes()) +
                                 " nodes: valid " + std::to_string(-rod_->numNodes()) + " to " +
                                 std::to_string(rod_->numNodes() - 1));
}

double PointLoad::factor(const EvalContext& ctx) const {
  // Quasi-static solves ignore the time dependence (they ramp load_scale instead).
  if (ctx.quasi_static) return ctx.load_scale;
  constexpr double kPi = 3.14159265358979323846;
  const double tau = ctx.t - start_;
  if (tau < 0) return 0.0;
  double s = ctx.load_scale;
  if (tau < ramp_) s *= 0.5 * (1 - std::cos(kPi * tau / ramp_));
  if (frequency_ >= 0) s *= std::sin(2 * kPi * frequency_ * tau);
  return s;
}

void PointLoad::addForce(const EvalContext& ctx, Vec& f) {
  const double s = factor(ctx);
  if (s == 0.0) return;
  if (force_) f.segment<3>(rod_->globalPositionDof(node_)) += s * *force_;
  if (torque_)
    rod_->addNodeTorque(node_, s * *torque_, f.segment(rod_->dofOffset(), rod_->numDofs()));
}

double PointLoad::potentialEnergy(const EvalContext& ctx) const {
  if (!force_) return 0.0;
  return -factor(ctx) * force_->dot(ctx.q->segment<3>(rod_->globalPositionDof(node_)));
}

std::vector<double> PointLoad::parameter(const std::string& key) const {
  if (key == "force") return numbers(force_.value_or(Vec3::Zero()));
  if (key == "torque") return numbers(torque_.value_or(Vec3::Zero()));
  throw ParamError(key, "point-load adjusts `force` and `torque`");
}

void PointLoad::setParameter(const std::string& key, const std::vector<double>& value, double) {
  if (key != "force" && key != "torque") throw ParamError(key, "point-load adjusts `force` and `torque`");
  (key == "force" ? force_ : torque_) = adjustedVec3(key, value);
  adjusted_ = true;
}

// Once adjusted: presence and value of the force, then of the torque (8 numbers).
void PointLoad::saveState(std::vector<double>& out) const {
  if (!adjusted_) return;
  for (const auto* v : {&force_, &torque_}) {
    out.push_back(v->has_value() ? 1.0 : 0.0);
    const Vec3 x = v->value_or(Vec3::Zero());
    out.insert(out.end(), x.data(), x.data() + 3);
  }
}

void PointLoad::loadState(const std::vector<double>& in) {
  if (in.size() != 8) return;  // not adjusted: the scene's values
  force_ = in[0] != 0 ? std::optional<Vec3>(Vec3(in[1], in[2], in[3])) : std::nullopt;
  torque_ = in[4] != 0 ? std::optional<Vec3>(Vec3(in[5], in[6], in[7])) : std::nullopt;
  adjusted_ = true;
}

// -------------------------------------------------------------------------------------- damping

Schema Damping::schema() {
  Schema s{"damping", "Viscous damping per unit length: F_i = -c lbar_i v_i on every node "
                      "(lbar_i: rest Voronoi length), implicit through its Jacobian c lbar_i / dt. "
                      "Zero in quasi-static solves."};
  s.required<double>("coefficient", "Damping coefficient c per unit rod length.")
      .unit("N s/m^2").atLeast(0);
  s.optional<std::vector<std::string>>("rods", "Rods it acts on (default: all rods).");
  s.optional<double>("stop",
                     "Dynamics: the damping acts only while t < stop (t: the time of the evaluation), e.g. to settle a "
                     "prestressed initial state before an undamped run. Default: always.")
      .unit("s");
  return s;
}

Damping::Damping(const Params& p)
    : Force(p),
      c_(p.real("coefficient")),
      stop_(p.has("stop") ? p.real("stop") : std::numeric_limits<double>::infinity()),
      rod_names_(p.optionalStrings("rods")) {}

void Damping::bind(World& world) {
  loops_ = worldCapability<ParallelLoops>(world);
  dofs_.clear();
  coef_.clear();
  for (Rod* rod : resolveRods(world, rod_names_, "rods"))
    for (int n = 0; n < rod->numNodes(); ++n) {
      const double c = c_ * rod->restVoronoiLength(n);
      for (int k = 0; k < 3; ++k) {
        dofs_.push_back(rod->globalPositionDof(n) + k);
        coef_.push_back(c);
      }
    }
  runs_.clear();
  for (std::size_t i = 0; i < dofs_.size(); ++i) {
    if (!runs_.empty() && runs_.back().dof + runs_.back().length == dofs_[i]) ++runs_.back().length;
    else runs_.push_back({dofs_[i], static_cast<int>(i), 1});
  }
}

namespace {

// f -= c (q - qs) / dt over one run of consecutive DOFs (the damping force with the implicit
// velocity of EvalContext::velocity, same operations), compiled for AVX-512, AVX2 and generic x86-64 (this
// file is compiled without FMA contraction, so both clones round as the scalar loop did).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
void dampRun(double* __restrict f, const double* __restrict q, const double* __restrict qs,
             const double* __restrict c, double dt, int n) {
  for (int i = 0; i < n; ++i) f[i] -= c[i] * ((q[i] - qs[i]) / dt);
}

}  // namespace

void Damping::addForce(const EvalContext& ctx, Vec& f) {
  if (ctx.quasi_static || !(ctx.dt > 0) || !(ctx.t < stop_)) return;
  const double* q = ctx.q->data();
  const double* qs = ctx.q_start->data();
  auto run = [&](const Run& r, int b, int e) {
    dampRun(f.data() + r.dof + b, q + r.dof + b, qs + r.dof + b, coef_.data() + r.index + b, ctx.dt, e - b);
  };
  if (runs_.size() == 1)  // one rod: blocks of its DOFs
    parallelForBlocks(loops_, runs_[0].length, 8192, [&](int b, int e) { run(runs_[0], b, e); });
  else  // blocks of rods
    parallelForBlocks(loops_, static_cast<int>(runs_.size()), 8, [&](int b, int e) {
      for (int i = b; i < e; ++i) run(runs_[i], 0, runs_[i].length);
    });
}

void Damping::addStiffness(const EvalContext& ctx, StiffnessSink& K) {
  // Same entries in every call (zero when quasi-static) so the pattern stays cached.
  const double dvdq = (ctx.quasi_static || !(ctx.dt > 0) || !(ctx.t < stop_)) ? 0.0 : ctx.velocityDerivative();
  for (std::size_t i = 0; i < dofs_.size(); ++i) K.add(dofs_[i], dofs_[i], coef_[i] * dvdq);
}

}  // namespace rodsim::loads
