#include "cosserat_clamp.h"

#include <rodsim/geometry/so3.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>

namespace rodsim {

Schema CosseratClamp::schema() {
  Schema s{"cosserat-clamp",
           "Holds node positions and the whole material frames of elements of a cosserat rod at their initial "
           "values (Gazzola et al.'s clamped boundary: position and directors). The generic `clamp` on two adjacent "
           "nodes holds their element's frame too; this one also holds frames of elements whose nodes move or are free, "
           "and turns whole frames with `angular_velocity`."};
  s.required<std::string>("rod", "Cosserat rod whose nodes and frames are held.");
  s.add<std::vector<int>>("nodes", std::vector<int>{}, "Node indexes whose positions are held (negative: from the end).");
  s.add<std::vector<int>>("elements", std::vector<int>{},
                          "Element indexes whose frames (d1, d2, d3) are held (negative: from the end).");
  s.add<Vec3>("velocity", Vec3(0, 0, 0),
              "Optional rigid motion: velocity of the held nodes between `start` and `stop`.")
      .unit("m/s");
  s.add<Vec3>("angular_velocity", Vec3(0, 0, 0),
              "Optional rigid motion: angular velocity (axis times rate, right-hand rule) of the held nodes "
              "and frames about `center` between `start` and `stop`: p = c + R (p0 - c) + v tau, "
              "d_k = R d_k0, R = exp(omega tau), tau = clamp(t - start, 0, stop - start).")
      .unit("rad/s");
  s.add<Vec3>("center", Vec3(0, 0, 0), "A point on the rotation axis.").unit("m");
  s.add<double>("start", 0.0, "Time the rigid motion starts (held before).").unit("s");
  s.optional<double>("stop", "Time the rigid motion stops (held in its final pose after; default: never).")
      .unit("s");
  return s;
}

CosseratClamp::CosseratClamp(const Params& p)
    : Constraint(p), rod_name_(p.string("rod")), node_params_(p.integers("nodes")),
      element_params_(p.integers("elements")) {
  if (node_params_.empty() && element_params_.empty())
    throw ParamError("nodes", "list at least one node or element to hold");
  velocity_ = p.vec3("velocity");
  omega_ = p.vec3("angular_velocity");
  center_ = p.vec3("center");
  start_ = p.real("start");
  stop_ = p.has("stop") ? p.real("stop") : std::numeric_limits<double>::infinity();
  if (!(stop_ >= start_)) throw ParamError("stop", "stop is before start");
}

void CosseratClamp::bind(World& world) {
  rod_ = dynamic_cast<CosseratRod*>(&resolveRod(world, rod_name_, "rod"));
  if (!rod_) throw ParamError("rod", "rod '" + rod_name_ + "' is not a cosserat rod; use `clamp` for other models");
  const int off = rod_->dofOffset();
  rod_->setConfiguration(world.q().segment(off, rod_->numDofs()));
  dofs_.clear();
  position_dofs_.clear();
  p0_.clear();
  for (long long np : node_params_) {
    const int n = rod_->resolveNode(np);
    if (n < 0)
      throw ParamError("nodes", "node " + std::to_string(np) + " is out of range for rod '" + rod_name_ + "' with " +
                                    std::to_string(rod_->numNodes()) + " nodes");
    const int g = rod_->globalPositionDof(n);
    if (std::find(position_dofs_.begin(), position_dofs_.end(), g) != position_dofs_.end()) continue;
    position_dofs_.push_back(g);
    p0_.push_back(world.q().segment<3>(g));
    for (int k = 0; k < 3; ++k) dofs_.push_back(g + k);
  }
  elements_.clear();
  Q0_.clear();
  const int ne = rod_->numElements();
  for (long long ep : element_params_) {
    const int e = ep < 0 ? int(ne + ep) : int(ep);
    if (e < 0 || e >= ne)
      throw ParamError("elements", "element " + std::to_string(ep) + " is out of range for rod '" + rod_name_ +
                                       "' with " + std::to_string(ne) + " elements");
    if (std::find(elements_.begin(), elements_.end(), e) != elements_.end()) continue;
    elements_.push_back(e);
    Q0_.push_back(rod_->frame(e));
    for (int k = 0; k < 3; ++k) dofs_.push_back(off + rod_->rotationDof(e) + k);
  }
  // A clamp at rest (zero velocity and angular velocity, the usual case) prescribes the same R and
  // positions at every call: prescribe's expressions with tau = 1 give them (a zero times any tau >= 0
  // is the same zero), so they are computed once here. Only φ changes (the committed frames move).
  at_rest_ = (omega_.array() == 0.0).all() && (velocity_.array() == 0.0).all();
  R_rest_ = geometry::expSO3(omega_ * 1.0);
  p_rest_.clear();
  for (const Vec3& p0 : p0_) p_rest_.push_back(center_ + R_rest_ * (p0 - center_) + velocity_ * 1.0);
  Qc_last_.assign(elements_.size(), Mat3::Zero());
  phi_last_.assign(elements_.size(), Vec3::Zero());
  cached_.assign(elements_.size(), 0);
}

namespace {
// a and b hold the same nine doubles, bit for bit (so a function of them gives the same result).
bool sameBits(const Mat3& a, const Mat3& b) {
  std::uint64_t d = 0;
  for (int k = 0; k < 9; ++k) d |= std::bit_cast<std::uint64_t>(a.data()[k]) ^ std::bit_cast<std::uint64_t>(b.data()[k]);
  return d == 0;
}
}  // namespace

void CosseratClamp::prescribe(double t, Vec& q) {
  const double tau = std::clamp(t - start_, 0.0, stop_ - start_);
  const Mat3 R = at_rest_ ? R_rest_ : Mat3(geometry::expSO3(omega_ * tau));  // identity for a plain clamp
  for (std::size_t i = 0; i < p0_.size(); ++i)
    q.segment<3>(position_dofs_[i]) = at_rest_ ? p_rest_[i] : Vec3(center_ + R * (p0_[i] - center_) + velocity_ * tau);
  // Directors d_k = R d_k0, i.e. Q = Q0 R^T (rows d1, d2, d3); φ with exp(-[φ]) Q_committed = Q is
  // φ = log(Q_committed Q^T) = log(Q_committed R Q0^T) (zero once committed when at rest).
  // At rest φ depends on the committed frame alone: it is recomputed only when that frame's bits
  // changed since the last call (twice per step, and a held frame soon stops changing at all), which
  // gives bitwise the same φ.
  const int off = rod_->dofOffset();
  for (std::size_t i = 0; i < elements_.size(); ++i) {
    const Mat3 Qc = rod_->committedFrame(elements_[i]);
    if (at_rest_ && cached_[i] && sameBits(Qc, Qc_last_[i])) {
      q.segment<3>(off + rod_->rotationDof(elements_[i])) = phi_last_[i];
      continue;
    }
    const Vec3 phi = geometry::logSO3(Qc * R * Q0_[i].transpose());
    q.segment<3>(off + rod_->rotationDof(elements_[i])) = phi;
    Qc_last_[i] = Qc;
    phi_last_[i] = phi;
    cached_[i] = 1;
  }
}

}  // namespace rodsim
