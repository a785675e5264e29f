// The "der" rod: assembly of the stencil energies of der_energies.h over a rod, reference frames
// transported in space (construction) and in time (setConfiguration), masses and torques.
#include "der_rod.h"

#include <rodsim/geometry/centerline.h>
#include <rodsim/geometry/frames.h>
#include <rodsim/geometry/rod_params.h>

#include <rodsim/plugin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <stdexcept>
#include <string>

namespace rodsim {

using der::Mat11;
using der::Vec11;

Schema DerRod::schema() {
  Schema s{"der",
           "Discrete Elastic Rod (Tong et al. 2023, Sec. 2, Eqs. 1-6; Bergou et al. 2008/2010): stretching, bending "
           "and twisting of a circular rod with exact Hessians. DOFs [x0, theta0, x1, ..., x_{N-1}]."};
  s.optional<int>("nodes",
                  "Number of nodes (edges = nodes - 1). Required for straight and helix; for polyline and points "
                  "it resamples the points uniformly by arc length (else the points are the nodes). At most 10^7: "
                  "a larger rod is refused before anything is allocated.")
      .range(2, 1e7);
  geometry::declareMaterialParams(s);
  geometry::declareCenterlineParams(s);
  return s;
}

DerRod::DerRod(const Params& p) : Rod(p) {
  x_init_ = geometry::buildCenterline(p);
  n_ = static_cast<int>(x_init_.size());
  point_masses_ = geometry::readPointMasses(p, n_);

  r_ = p.real("radius");
  rho_ = p.real("density");
  E_ = p.real("youngs_modulus");
  if (!(r_ > 0)) throw ParamError("radius", "'radius' must be > 0");
  if (!(rho_ > 0)) throw ParamError("density", "'density' must be > 0");
  if (!(E_ > 0)) throw ParamError("youngs_modulus", "'youngs_modulus' must be > 0");
  if (p.has("shear_modulus")) {
    G_ = p.real("shear_modulus");
    if (!(G_ > 0)) throw ParamError("shear_modulus", "'shear_modulus' must be > 0");
  } else {
    const double nu = p.real("poisson_ratio");
    if (!(nu > -1 && nu <= 0.5)) throw ParamError("poisson_ratio", "'poisson_ratio' must be in (-1, 0.5]");
    G_ = E_ / (2.0 * (1.0 + nu));
  }
  const double pi = std::numbers::pi;
  A_ = pi * r_ * r_;
  I_ = pi * std::pow(r_, 4) / 4.0;  // I1 = I2
  J_ = pi * std::pow(r_, 4) / 2.0;
  EA_ = E_ * A_;
  EI_ = E_ * I_;
  GJ_ = G_ * J_;
  v_init_ = p.vec3("initial_velocity");

  const int ne = n_ - 1;
  rest_len_.resize(ne);
  for (int e = 0; e < ne; ++e) rest_len_[e] = (x_init_[e + 1] - x_init_[e]).norm();
  voronoi_.assign(n_, 0.0);
  for (int e = 0; e < ne; ++e) {
    voronoi_[e] += 0.5 * rest_len_[e];
    voronoi_[e + 1] += 0.5 * rest_len_[e];
  }

  // Reference frames at t = 0: space-parallel transport along the rod from a deterministic
  // director perpendicular to the first edge. Their reference twist is zero.
  committed_.resize(ne);
  for (int e = 0; e < ne; ++e) {
    der::EdgeFrame& f = committed_[e];
    f.t = (x_init_[e + 1] - x_init_[e]).normalized();
    f.d1 = e == 0 ? geometry::anyPerpendicular(f.t) : geometry::parallelTransport(committed_[e - 1].d1, committed_[e - 1].t, f.t);
    f.d1 = (f.d1 - f.d1.dot(f.t) * f.t).normalized();
    f.d2 = f.t.cross(f.d1);
  }
  committed_twist_.assign(n_, 0.0);
  ref_twist_.assign(n_, 0.0);
  kin_.resize(ne);
  strain_grad_.resize(n_);
  band_.assign(std::size_t(kBand) * numDofs(), 0.0);
  report_force_ = Vec::Zero(numDofs());
  t_.resize(ne);
  d1_.resize(ne);
  d2_.resize(ne);
  q_ = Vec::Zero(numDofs());
  Vec q0(numDofs());
  initialDofs(q0);
  setConfiguration(q0);
  commitConfiguration();

  // Natural strains: those of the initial shape with θ = 0, or zero.
  kappa_bar_.assign(n_, der::Vec2::Zero());
  tau_bar_.assign(n_, 0.0);
  if (p.string("rest_shape") == "initial") {
    for (int i = 1; i + 1 < n_; ++i) {
      kappa_bar_[i] = materialCurvature(i);
      tau_bar_[i] = twist(i);
    }
  }
}

void DerRod::initialDofs(VecRef q) const {
  q.setZero();
  for (int i = 0; i < n_; ++i) q.segment<3>(positionDof(i)) = x_init_[i];
}

void DerRod::initialVelocity(VecRef v) const {
  v.setZero();
  for (int i = 0; i < n_; ++i) v.segment<3>(positionDof(i)) = v_init_;
}

void DerRod::lumpedMass(VecRef m) const {
  m.setZero();
  for (int i = 0; i < n_; ++i) m.segment<3>(positionDof(i)).setConstant(rho_ * A_ * voronoi_[i]);
  for (const auto& [node, mass] : point_masses_) m.segment<3>(positionDof(node)).array() += mass;
  // Twist DOF: polar moment of inertia of the edge about its axis, ρ J |ē| = ½ m_edge r².
  for (int e = 0; e + 1 < n_; ++e) m[twistDof(e)] = rho_ * J_ * rest_len_[e];
}

// --------------------------------------------------------------------------- configuration

void DerRod::setConfiguration(ConstVecRef q) {
  if (q.size() != numDofs())
    throw std::invalid_argument("DerRod::setConfiguration: expected " + std::to_string(numDofs()) + " DOFs, got " +
                                std::to_string(q.size()));
  // The same configuration again (Newton evaluates an iterate a second time when it needs its
  // stiffness after all): the kinematics, and the strain gradients addElasticForce cached, stand.
  // Compared bitwise, so that a NaN or a signed zero is never taken for another value.
  if (configured_ && std::memcmp(q_.data(), q.data(), sizeof(double) * std::size_t(q.size())) == 0) return;
  q_ = q;
  updateKinematics();
  for (int e = 0; e + 1 < n_; ++e) {
    t_[e] = kin_[e].u;    // = e/|e|
    d1_[e] = kin_[e].d1;  // time-parallel transport of the committed frame
    d2_[e] = kin_[e].d2;
  }
  for (int i = 1; i + 1 < n_; ++i)
    ref_twist_[i] = der::referenceTwistAngle(t_[i - 1], d1_[i - 1], t_[i], d1_[i], committed_twist_[i]);
  configured_ = true;
}

void DerRod::commitConfiguration() {
  for (int e = 0; e + 1 < n_; ++e) {
    der::EdgeFrame& f = committed_[e];
    f.t = t_[e];
    f.d1 = (d1_[e] - d1_[e].dot(f.t) * f.t).normalized();  // remove round-off drift
    f.d2 = f.t.cross(f.d1);
  }
  committed_twist_ = ref_twist_;  // same size: no allocation
  // The energy is now parametrized by transport from the new committed frames; the next
  // setConfiguration recomputes the frames and reference twists from them even at the same q.
  updateKinematics();
  configured_ = false;
}

void DerRod::updateKinematics() {
  for (der::StrainGradients& s : strain_grad_) s.valid = false;
  for (int e = 0; e + 1 < n_; ++e)
    kin_[e].set(q_.segment<3>(positionDof(e + 1)) - q_.segment<3>(positionDof(e)), committed_[e], q_[twistDof(e)]);
}

// Checkpoint: the committed frames (t, d1, d2 of every edge) and reference twists; everything else
// follows from the scene and q.
void DerRod::saveState(std::vector<double>& out) const {
  for (const der::EdgeFrame& f : committed_)
    for (const Vec3* v : {&f.t, &f.d1, &f.d2}) out.insert(out.end(), v->data(), v->data() + 3);
  out.insert(out.end(), committed_twist_.begin(), committed_twist_.end());
}

void DerRod::loadState(const std::vector<double>& in) {
  const std::size_t expected = 9 * committed_.size() + committed_twist_.size();
  if (in.size() != expected)
    throw std::runtime_error("checkpoint holds " + std::to_string(in.size()) + " numbers for rod '" + name() +
                             "', expected " + std::to_string(expected) + " (another number of nodes?)");
  std::size_t k = 0;
  for (der::EdgeFrame& f : committed_)
    for (Vec3* v : {&f.t, &f.d1, &f.d2})
      for (int c = 0; c < 3; ++c) (*v)[c] = in[k++];
  for (double& tw : committed_twist_) tw = in[k++];
  updateKinematics();  // the energy is parametrized by the loaded committed frames
  configured_ = false;
}

der::BendParams DerRod::bendParams(int i) const {
  der::BendParams b;
  b.EI1 = b.EI2 = EI_;
  b.kappa_bar = kappa_bar_[i];
  b.voronoi_length = voronoi_[i];  // interior node: (|ē^{i-1}| + |ē^i|)/2
  return b;
}

der::TwistParams DerRod::twistParams(int i) const { return {GJ_, tau_bar_[i], voronoi_[i]}; }

der::Vec2 DerRod::materialCurvature(int i) const {
  return der::materialCurvature(stencil(i), committed_[i - 1], committed_[i]);
}

double DerRod::twist(int i) const { return q_[twistDof(i)] - q_[twistDof(i - 1)] + ref_twist_[i]; }

// ------------------------------------------------------------------- energy and derivatives
//
// Stretching (Eq. 1) of edge e from its kinematics: E_s = ½ EA ε² |ē|, ε = |e|/|ē| - 1,
// ∂E_s/∂x_{e+1} = -∂E_s/∂x_e = EA ε u, and the 3x3 block EA (u uᵀ/|ē| + (ε/|e|)(I - u uᵀ)).

double DerRod::elasticEnergy() const {
  double E = 0;
  for (int e = 0; e + 1 < n_; ++e) {
    const double eps = kin_[e].len / rest_len_[e] - 1.0;
    E += 0.5 * EA_ * eps * eps * rest_len_[e];  // Eq. 5, E_s
  }
  for (int i = 1; i + 1 < n_; ++i) {
    const der::BendParams bp = bendParams(i);
    const der::TwistParams tp = twistParams(i);
    E += der::bendTwist(kin_[i - 1], kin_[i], &bp, &tp, ref_twist_[i], nullptr, nullptr);
  }
  return E;
}

void DerRod::addElasticForce(VecRef f) const {
  for (int e = 0; e + 1 < n_; ++e) {
    const Vec3 ge = EA_ * (kin_[e].len / rest_len_[e] - 1.0) * kin_[e].u;
    f.segment<3>(positionDof(e)) += ge;
    f.segment<3>(positionDof(e + 1)) -= ge;
  }
  for (int i = 1; i + 1 < n_; ++i) {
    const der::BendParams bp = bendParams(i);
    const der::TwistParams tp = twistParams(i);
    Vec11 g;
    der::bendTwist(kin_[i - 1], kin_[i], &bp, &tp, ref_twist_[i], &g, nullptr, &strain_grad_[i]);
    f.segment<11>(positionDof(i - 1)) -= g;
  }
}

void DerRod::addStiffness(StiffnessSink& K) const {
  const int off = dofOffset();
  // Stretching Hessian of edge e w.r.t. the edge vector (3x3).
  auto stretchHessian = [&](int e) -> Mat3 {
    const der::EdgeKinematics& k = kin_[e];
    const double eps = k.len / rest_len_[e] - 1.0;
    const Mat3 uu = k.u * k.u.transpose();
    return EA_ * (uu / rest_len_[e] + (eps / k.len) * (Mat3::Identity() - uu));
  };
  if (n_ == 2) {  // a single edge, no interior node: one 7x7 block [x0, θ0, x1]
    const Mat3 He = stretchHessian(0);
    Eigen::Matrix<double, 7, 7> H = Eigen::Matrix<double, 7, 7>::Zero();
    H.block<3, 3>(0, 0) = He;
    H.block<3, 3>(4, 4) = He;
    H.block<3, 3>(0, 4) = -He;
    H.block<3, 3>(4, 0) = -He;
    K.addContiguous(off, H);
    return;
  }
  // Node i carries bending and twisting and the stretching of edge i - 1 (its first 7 DOFs); the
  // last interior node also carries the last edge. The 11x11 blocks of neighbouring nodes overlap
  // on 7 DOFs, so they are summed in band storage and every entry of the rod's pattern is sent
  // once: 72 entries per node instead of 121 + 49 (the solver scatters every one it receives). In the
  // band, the block of the stencil starting at DOF f is an 11x11 matrix with column stride
  // kBand - 1 at band_[kBand f + kHalfBand].
  using BandBlock = Eigen::Map<Mat11, 0, Eigen::OuterStride<kBand - 1>>;
  Eigen::Map<Eigen::Matrix<double, kBand, 7>>(band_.data()).setZero();  // columns node 2 does not reach
  for (int i = 1; i + 1 < n_; ++i) {
    const int first = positionDof(i - 1);
    // Node i reaches 4 columns that no earlier node touched: zero them just before.
    Eigen::Map<Eigen::Matrix<double, kBand, 4>>(band_.data() + std::size_t(kBand) * (first + 7)).setZero();
    const der::BendParams bp = bendParams(i);
    const der::TwistParams tp = twistParams(i);
    const Mat3 He0 = stretchHessian(i - 1);
    Mat3 He1;
    if (i + 2 == n_) He1 = stretchHessian(i);
    Mat11 H;
    der::bendTwistHessian(kin_[i - 1], kin_[i], &bp, &tp, ref_twist_[i], H, &strain_grad_[i], &He0,
                          i + 2 == n_ ? &He1 : nullptr);
    BandBlock(band_.data() + std::size_t(kBand) * first + kHalfBand) += H;
  }
  // Column c is coupled to the rows of every stencil that contains it: the stencils starting at
  // DOF 4s (s = 0 .. N-3) with 4s <= c <= 4s + 10, rows 4 s_min .. 4 s_max + 10 with
  // s_min = max(0, ceil((c - 10)/4)), s_max = min(N - 3, floor(c/4)). The same entries in the
  // same order on every call.
  const int ndof = numDofs();
  for (int c = 0; c < ndof; ++c) {
    const int s_min = c <= 10 ? 0 : (c - 10 + 3) / 4, s_max = std::min(n_ - 3, c / 4);
    const double* b = band_.data() + std::size_t(kBand) * c + kHalfBand - c;  // b[r]: entry (r, c)
    for (int r = 4 * s_min; r <= 4 * s_max + 10; ++r) K.add(off + r, off + c, b[r]);
  }
}

// ------------------------------------------------------------------------ frames and torques

void DerRod::materialFrame(int edge, Vec3& t, Vec3& m1, Vec3& m2) const {
  const double th = q_[twistDof(edge)];
  const double c = std::cos(th), s = std::sin(th);
  t = t_[edge];
  m1 = c * d1_[edge] + s * d2_[edge];
  m2 = -s * d1_[edge] + c * d2_[edge];
}

double DerRod::twistForDirector(int edge, const Vec3& m1) const {
  const double current = q_[twistDof(edge)];
  const double x = m1.dot(d1_[edge]), y = m1.dot(d2_[edge]);
  if (std::hypot(x, y) <= 1e-14 * m1.norm()) return current;  // m1 along the tangent: keep θ
  // The branch closest to the current twist angle, so prescribed spins stay continuous.
  return current + geometry::wrapAngle(std::atan2(y, x) - current);
}

void DerRod::addNodeTorque(int node, const Vec3& T, VecRef f) const {
  if (node < 0 || node >= n_) throw std::out_of_range("DerRod::addNodeTorque: node " + std::to_string(node));
  const int edge = node + 1 < n_ ? node : node - 1;
  const int far = edge == node ? node + 1 : node - 1;
  const Vec3& t = t_[edge];
  const double Tt = T.dot(t);
  f[twistDof(edge)] += Tt;  // axial part: moment on the edge's twist angle
  // Perpendicular part: a force couple on the edge, F on the far node and -F on this node.
  const Vec3 r = q_.segment<3>(positionDof(far)) - q_.segment<3>(positionDof(node));
  const Vec3 F = (T - Tt * t).cross(r) / r.squaredNorm();
  f.segment<3>(positionDof(far)) += F;
  f.segment<3>(positionDof(node)) -= F;
}

}  // namespace rodsim
