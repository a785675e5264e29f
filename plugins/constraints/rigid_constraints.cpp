#include "rigid_constraints.h"

#include <Eigen/Geometry>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace rodsim::constraints {

// ------------------------------------------------------------------------------------- base

RigidMotionConstraint::RigidMotionConstraint(const Params& p)
    : Constraint(p), rod_name_(p.string("rod")), node_params_(p.integers("nodes")) {
  if (node_params_.empty()) throw ParamError("nodes", "list at least one node");
}

void RigidMotionConstraint::declareCommon(Schema& s) {
  s.required<std::string>("rod", "Rod whose nodes are prescribed.");
  s.required<std::vector<int>>(
      "nodes", "Node indexes (negative count from the end). The material frame of every edge whose "
               "two nodes are both listed is prescribed too (its frame DOFs: the twist of a der edge, "
               "the three rotation DOFs of a cosserat element).");
}

void RigidMotionConstraint::bind(World& world) {
  rod_ = &resolveRod(world, rod_name_, "rod");
  const int nn = rod_->numNodes();
  nodes_.clear();
  for (long long np : node_params_) {
    const int n = rod_->resolveNode(np);
    if (n < 0)
      throw ParamError("nodes", "node " + std::to_string(np) + " is out of range for rod '" +
                                    rod_name_ + "' with " + std::to_string(nn) + " nodes: valid " +
                                    std::to_string(-nn) + " to " + std::to_string(nn - 1));
    nodes_.push_back(n);
  }
  std::sort(nodes_.begin(), nodes_.end());
  nodes_.erase(std::unique(nodes_.begin(), nodes_.end()), nodes_.end());

  const int off = rod_->dofOffset();
  Vec& q = world.q();
  rod_->setConfiguration(q.segment(off, rod_->numDofs()));

  edges_.clear();
  const bool all = held_[0] && held_[1] && held_[2];
  for (std::size_t i = 0; i + 1 < nodes_.size(); ++i)
    if (all && nodes_[i + 1] == nodes_[i] + 1 && !rod_->frameDofs(nodes_[i]).empty())
      edges_.push_back(nodes_[i]);

  p0_.clear();
  dofs_.clear();
  position_dofs_.clear();
  for (int n : nodes_) {
    const int g = rod_->globalPositionDof(n);
    p0_.push_back(q.segment<3>(g));
    position_dofs_.push_back(g);
    for (int k = 0; k < 3; ++k)
      if (held_[k]) dofs_.push_back(g + k);
  }
  m1_0_.clear();
  theta_last_.clear();
  held_dofs_.clear();
  held_values_.clear();
  twist_dofs_.clear();
  for (int e : edges_) {
    Vec3 t, m1, m2;
    rod_->materialFrame(e, t, m1, m2);
    m1_0_.push_back(m1);
    // The twist (if the model has one) follows R m1_0 through twistForDirector; the other frame DOFs
    // (a cosserat element's two bending rotations) keep the values they have now.
    const std::vector<int> frame = rod_->frameDofs(e);
    int tw = rod_->twistDof(e);
    if (std::find(frame.begin(), frame.end(), tw) == frame.end()) tw = -1;
    for (int d : frame) {
      if (d == tw) continue;
      held_dofs_.push_back(off + d);
      held_values_.push_back(q[off + d]);
    }
    twist_dofs_.push_back(tw);
    if (tw < 0) {
      theta_last_.push_back(0.0);
      continue;
    }
    const int g = off + tw;
    theta_last_.push_back(q[g]);
    dofs_.push_back(g);
  }
  dofs_.insert(dofs_.end(), held_dofs_.begin(), held_dofs_.end());
}

void RigidMotionConstraint::prescribe(double t, Vec& q) {
  Mat3 R;
  Vec3 b;
  motion(t, R, b);
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const Vec3 p = R * p0_[i] + b;
    for (int k = 0; k < 3; ++k)
      if (held_[k]) q[position_dofs_[i] + k] = p[k];
  }
  if (edges_.empty()) return;
  // The frame DOFs other than the twist keep their recorded values (a cosserat element's bending
  // rotations: zero, i.e. d3 stays where the committed frame has it).
  for (std::size_t j = 0; j < held_dofs_.size(); ++j) q[held_dofs_[j]] = held_values_[j];
  // The twist that realises m1 = R m1_0 depends on the new reference frames: positions (and the held
  // frame DOFs) first.
  const int off = rod_->dofOffset();
  rod_->setConfiguration(q.segment(off, rod_->numDofs()));
  constexpr double two_pi = 2 * std::numbers::pi;
  for (std::size_t i = 0; i < edges_.size(); ++i) {
    const int tw = twist_dofs_[i];
    if (tw < 0) continue;  // a model without a twist among its frame DOFs: all held (none so far)
    const int g = off + tw;
    double theta = rod_->twistForDirector(edges_[i], R * m1_0_[i]);
    // twistForDirector knows the angle modulo 2 pi: continue from the incoming value (the
    // solver's predictor) so that a spinning edge accumulates its turns.
    const double ref = std::isfinite(q[g]) ? q[g] : theta_last_[i];
    theta += two_pi * std::round((ref - theta) / two_pi);
    q[g] = theta;
    theta_last_[i] = theta;
  }
}

// -------------------------------------------------------------------------------------- clamp

Schema Clamp::schema() {
  Schema s{"clamp", "Fixes node positions, and the material frames of the edges between listed nodes "
                    "(their frame DOFs: the twist of a der edge, the three rotation DOFs of a cosserat "
                    "element), at their initial values: a clamped end on every rod model."};
  declareCommon(s);
  s.add<std::string>("components", "xyz",
                     "Position components held: any non-empty subset of \"xyz\" (e.g. \"xy\": the "
                     "nodes slide freely along z). A single listed node is a pin: its position is held, "
                     "the frames around it rotate freely (DER and cosserat). With fewer than three "
                     "components no frame is held.");
  return s;
}

Clamp::Clamp(const Params& p) : RigidMotionConstraint(p) {
  const std::string& c = p.string("components");
  bool seen[3] = {false, false, false};
  for (char ch : c) {
    if (ch < 'x' || ch > 'z' || seen[ch - 'x'])
      throw ParamError("components", "'" + c + "' is not a subset of \"xyz\" (each of x, y, z at most once)");
    seen[ch - 'x'] = true;
  }
  if (c.empty()) throw ParamError("components", "hold at least one of x, y, z");
  for (int k = 0; k < 3; ++k) held_[k] = seen[k];
}

void Clamp::motion(double, Mat3& R, Vec3& b) const {
  R.setIdentity();
  b.setZero();
}

// ------------------------------------------------------------------------------------- rotate

Schema Rotate::schema() {
  Schema s{"rotate", "Nodes (and the material frames of the edges between them) rotate rigidly "
                     "about an axis through a center: p(t) = c + R(omega (t - start)+) (p0 - c). "
                     "A clamped edge lying on the axis spins about itself (flagellum motor). On a "
                     "cosserat rod an element between listed nodes must lie along the axis (its bending "
                     "rotations are held)."};
  declareCommon(s);
  s.required<Vec3>("axis", "Rotation axis (normalized; must be nonzero).");
  s.add<Vec3>("center", Vec3(0, 0, 0), "A point on the axis.").unit("m");
  s.required<double>("angular_velocity", "Rotation rate about the axis (right-hand rule).")
      .unit("rad/s");
  s.add<double>("start", 0.0, "Time the rotation starts; held at the initial pose before.")
      .unit("s");
  return s;
}

Rotate::Rotate(const Params& p)
    : RigidMotionConstraint(p),
      axis_(p.vec3("axis")),
      center_(p.vec3("center")),
      omega_(p.real("angular_velocity")),
      start_(p.real("start")) {
  const double len = axis_.norm();
  if (!(len > 0) || !std::isfinite(len))
    throw ParamError("axis", "rotation axis must be a nonzero vector");
  axis_ /= len;
}

void Rotate::bind(World& world) {
  RigidMotionConstraint::bind(world);
  if (heldFrameDofs().empty()) return;  // DER: the twist and the nodes give the whole frame
  for (int e : edges()) {
    Vec3 d3, m1, m2;
    rod().materialFrame(e, d3, m1, m2);
    if (axis_.cross(d3).norm() > 1e-9)
      throw ParamError("axis", "edge " + std::to_string(e) + " of rod '" + rod().name() +
                                   "' (both its nodes are listed) is not along the axis: on this rod model "
                                   "`rotate` spins its frame about its d3 and holds its bending rotations, "
                                   "which is a rigid rotation only about d3; list the nodes alone (their "
                                   "frames free), or hold and turn whole frames with `cosserat-clamp` "
                                   "(`angular_velocity`)");
  }
}

double Rotate::angle(double t) const {
  const double a = omega_ * std::max(0.0, t - start_);
  return adjusted_ ? angle0_ + a : a;  // unadjusted: exactly the scene's omega (t - start)+
}

void Rotate::motion(double t, Mat3& R, Vec3& b) const {
  R = Eigen::AngleAxisd(angle(t), axis_).toRotationMatrix();
  b = center_ - R * center_;
}

std::vector<double> Rotate::parameter(const std::string& key) const {
  if (key != "angular_velocity") throw ParamError(key, "rotate adjusts only `angular_velocity`");
  return {omega_};
}

void Rotate::setParameter(const std::string& key, const std::vector<double>& value, double t) {
  if (key != "angular_velocity") throw ParamError(key, "rotate adjusts only `angular_velocity`");
  if (value.size() != 1 || !std::isfinite(value[0])) throw ParamError(key, "expected one finite number (rad/s)");
  if (t > start_) {  // already turning: go on from the angle reached now
    angle0_ = angle(t);
    start_ = t;
  }
  omega_ = value[0];
  adjusted_ = true;
}

void Rotate::saveState(std::vector<double>& out) const {
  if (adjusted_) out.insert(out.end(), {omega_, start_, angle0_});
}

void Rotate::loadState(const std::vector<double>& in) {
  if (in.size() != 3) return;  // not adjusted: the scene's motion
  omega_ = in[0];
  start_ = in[1];
  angle0_ = in[2];
  adjusted_ = true;
}

// ---------------------------------------------------------------------------------- translate

Schema Translate::schema() {
  Schema s{"translate", "Nodes move rigidly at a constant velocity from `start` to `stop` and are "
                        "held still otherwise: p(t) = p0 + v clamp(t - start, 0, stop - start); "
                        "the material frames keep their initial orientation."};
  declareCommon(s);
  s.required<Vec3>("velocity", "Velocity of the nodes while moving.").unit("m/s");
  s.add<double>("start", 0.0, "Time the motion starts.").unit("s");
  s.optional<double>("stop", "Time the motion stops (default: never).").unit("s");
  return s;
}

Translate::Translate(const Params& p)
    : RigidMotionConstraint(p), velocity_(p.vec3("velocity")), start_(p.real("start")) {
  if (p.has("stop")) {
    stop_ = p.real("stop");
    if (*stop_ < start_)
      throw ParamError("stop", "stop (" + std::to_string(*stop_) + " s) is before start (" +
                                   std::to_string(start_) + " s)");
  }
}

void Translate::motion(double t, Mat3& R, Vec3& b) const {
  R.setIdentity();
  double s = std::max(0.0, t - start_);
  if (stop_) s = std::min(s, *stop_ - start_);
  b = velocity_ * s;
}

}  // namespace rodsim::constraints
