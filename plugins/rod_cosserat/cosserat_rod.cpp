// The "cosserat" rod: discrete Cosserat rod of the Cosserat seed (Gazzola et al.), Sec. III.B,
// Eqs. 17-24, with an energy whose exact gradient gives the internal forces and couples (README.md,
// "Energy and forces").
#include "cosserat_rod.h"

#include "geometry.h"  // plugins/rod_der/geometry.h, compiled into this plugin by path
#include "so3.h"

#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace rodsim {

using cosserat::expSO3;
using cosserat::invLeftJacobianTimes;
using cosserat::invRightJacobianTimes;
using cosserat::logSO3;

namespace {

// Rows d1, d2, d3 re-orthonormalized (Gram-Schmidt from d3), against round-off drift.
void orthonormalize(Mat3& Q) {
  Vec3 d3 = Q.row(2).transpose().normalized();
  Vec3 d1 = Q.row(0).transpose();
  d1 = (d1 - d1.dot(d3) * d3).normalized();
  Q.row(0) = d1.transpose();
  Q.row(1) = d3.cross(d1).transpose();
  Q.row(2) = d3.transpose();
}

// A deterministic unit vector perpendicular to t.
Vec3 perpendicular(const Vec3& t) {
  const Vec3 a = std::abs(t.z()) < 0.9 ? Vec3::UnitZ() : Vec3::UnitX();
  return (a - a.dot(t) * t).normalized();
}

// Parallel transport of u from tangent a to tangent b (rotation about a×b by the angle between them).
Vec3 transport(const Vec3& u, const Vec3& a, const Vec3& b) {
  const Vec3 axis = a.cross(b);
  const double s = axis.norm(), c = a.dot(b);
  if (s < 1e-14) return u;
  return expSO3(axis * (std::atan2(s, c) / s)) * u;
}

}  // namespace

Schema CosseratRod::schema() {
  Schema s{"cosserat",
           "Shearable, extensible Cosserat rod (Gazzola et al., the Cosserat seed, Sec. II-III, Eqs. 9-24): node "
           "positions and element material frames; shear/stretch S = diag(aGA, aGA, EA), bend/twist B = "
           "diag(EI1, EI2, GI3). For explicit solvers (position-verlet, pefrl): no stiffness matrix. DOFs [x_0 .. "
           "x_N, phi_0 .. phi_{n-1}] (phi: rotation vector of each element relative to its committed frame)."};
  s.optional<int>("nodes",
                  "Number of nodes (elements = nodes - 1). Required for straight and helix; for polyline and points "
                  "it resamples the points uniformly by arc length (else the points are the nodes).")
      .atLeast(3);
  s.required<double>("radius", "Cross-section radius r.").unit("m").greater(0);
  s.add<double>("density", 1000.0, "Mass density rho.").unit("kg/m^3").greater(0);
  s.required<double>("youngs_modulus", "Young's modulus E.").unit("Pa").greater(0);
  s.add<double>("poisson_ratio", 0.5, "Poisson ratio nu: G = E / (2 (1 + nu)) unless shear_modulus is given.")
      .greater(-1)
      .atMost(0.5);
  s.optional<double>("shear_modulus", "Shear modulus G; overrides poisson_ratio.").unit("Pa").greater(0);
  s.add<double>("shear_factor", 4.0 / 3.0,
                "Shear factor alpha_c of S1 = S2 = alpha_c G A (Table I of the seed: 4/3 for circular sections).")
      .greater(0);
  s.add<double>("rotational_damping", 0.0,
                "Rotational internal friction gamma_r of Eq. 32: couple -gamma_r omega per unit length (the "
                "translational part, Eq. 31, is the `damping` force).")
      .unit("N s")
      .atLeast(0);
  s.required<std::string>("geometry.shape", "Initial centerline (same keys as the der model).")
      .choices({"straight", "helix", "polyline", "points"});
  s.optional<Vec3>("geometry.start", "straight: position of the first node.").unit("m");
  s.optional<Vec3>("geometry.end", "straight: position of the last node.").unit("m");
  s.add<Vec3>("geometry.origin", Vec3(0, 0, 0), "helix: point on the axis where the rod starts.").unit("m");
  s.add<Vec3>("geometry.axis", Vec3(0, 0, 1), "helix: axis direction, pointing from the start to the end.");
  s.optional<double>("geometry.helix_radius", "helix: radius of the helix.").unit("m").greater(0);
  s.optional<double>("geometry.pitch", "helix: axial advance per turn.").unit("m").greater(0);
  s.optional<double>("geometry.axial_length", "helix: axial extent of the helical part.").unit("m").greater(0);
  s.add<std::string>("geometry.handedness", "right", "helix: handedness.").choices({"right", "left"});
  s.add<double>("geometry.lead", 0.0, "helix: straight segment on the axis before the helix (see der).")
      .unit("m")
      .atLeast(0);
  s.optional<std::vector<Vec3>>("geometry.points", "polyline: the points [[x, y, z], ...].").unit("m");
  s.optional<std::string>("geometry.file", "points: CSV file of x,y,z rows (optional header line).").path();
  s.add<std::string>("rest_shape", "initial",
                     "initial: the initial shape is stress free (intrinsic curvature and strain from it); straight: "
                     "naturally straight and untwisted (rest lengths from the initial shape).")
      .choices({"initial", "straight"});
  s.add<Vec3>("initial_velocity", Vec3(0, 0, 0), "Initial velocity of every node.").unit("m/s");
  return s;
}

CosseratRod::CosseratRod(const Params& p) : Rod(p) {
  x_init_ = der::buildCenterline(p);
  nn_ = static_cast<int>(x_init_.size());
  if (nn_ < 3) throw ParamError("nodes", "a cosserat rod needs at least 3 nodes (2 elements); got " + std::to_string(nn_));
  ne_ = nn_ - 1;
  r_ = p.real("radius");
  rho_ = p.real("density");
  E_ = p.real("youngs_modulus");
  if (!(r_ > 0)) throw ParamError("radius", "'radius' must be > 0");
  if (!(rho_ > 0)) throw ParamError("density", "'density' must be > 0");
  if (!(E_ > 0)) throw ParamError("youngs_modulus", "'youngs_modulus' must be > 0");
  if (p.has("shear_modulus")) {
    G_ = p.real("shear_modulus");
  } else {
    const double nu = p.real("poisson_ratio");
    if (!(nu > -1 && nu <= 0.5)) throw ParamError("poisson_ratio", "'poisson_ratio' must be in (-1, 0.5]");
    G_ = E_ / (2.0 * (1.0 + nu));
  }
  if (!(G_ > 0)) throw ParamError("shear_modulus", "'shear_modulus' must be > 0");
  const double alpha = p.real("shear_factor");
  if (!(alpha > 0)) throw ParamError("shear_factor", "'shear_factor' must be > 0");
  gamma_r_ = p.real("rotational_damping");
  if (!(gamma_r_ >= 0)) throw ParamError("rotational_damping", "'rotational_damping' must be >= 0");
  v_init_ = p.vec3("initial_velocity");

  const double pi = std::numbers::pi;
  const double A = pi * r_ * r_, I = pi * std::pow(r_, 4) / 4.0;
  S_ = Vec3(alpha * G_ * A, alpha * G_ * A, E_ * A);  // Table I
  B_ = Vec3(E_ * I, E_ * I, G_ * 2.0 * I);
  J_ = rho_ * Vec3(I, I, 2.0 * I);

  lhat_.resize(ne_);
  voronoi_.assign(nn_, 0.0);
  Dhat_.assign(nn_, 0.0);
  for (int e = 0; e < ne_; ++e) {
    lhat_[e] = (x_init_[e + 1] - x_init_[e]).norm();
    if (!(lhat_[e] > 0))
      throw ParamError("geometry.shape", "nodes " + std::to_string(e) + " and " + std::to_string(e + 1) +
                                             " coincide: every element needs a positive rest length");
    voronoi_[e] += 0.5 * lhat_[e];
    voronoi_[e + 1] += 0.5 * lhat_[e];
  }
  for (int i = 1; i + 1 < nn_; ++i) Dhat_[i] = voronoi_[i];  // Eq. 19 at rest

  // Initial frames: d3 along the tangent (no shear), d1 parallel-transported along the rod (no twist).
  Qc_.resize(ne_);
  Vec3 d1 = Vec3::Zero(), tprev = Vec3::Zero();
  for (int e = 0; e < ne_; ++e) {
    const Vec3 t = (x_init_[e + 1] - x_init_[e]).normalized();
    d1 = e == 0 ? perpendicular(t) : transport(d1, tprev, t);
    d1 = (d1 - d1.dot(t) * t).normalized();
    Qc_[e].row(0) = d1.transpose();
    Qc_[e].row(1) = t.cross(d1).transpose();
    Qc_[e].row(2) = t.transpose();
    tprev = t;
  }

  Q_ = Qc_;
  t_.assign(ne_, Vec3::Zero());
  sigma_ = n_ = couple_ = t_;
  l_.assign(ne_, 0.0);
  e_.assign(ne_, 1.0);
  theta_.assign(nn_, Vec3::Zero());
  m_ = theta_;
  Ebend_.assign(nn_, 0.0);
  jc_.assign(nn_, 1.0 / 12.0);
  sigma0_.assign(ne_, Vec3::Zero());
  theta0_.assign(nn_, Vec3::Zero());
  q_ = Vec::Zero(numDofs());
  Vec q0(numDofs());
  initialDofs(q0);
  setConfiguration(q0);
  if (p.string("rest_shape") == "initial") {
    sigma0_ = sigma_;  // zero up to round-off (d3 = t, e = 1)
    theta0_ = theta_;  // intrinsic curvature D̂ κ̂°
    setConfiguration(q0);
  }
}

void CosseratRod::initialDofs(VecRef q) const {
  q.setZero();
  for (int i = 0; i < nn_; ++i) q.segment<3>(positionDof(i)) = x_init_[i];
}

void CosseratRod::initialVelocity(VecRef v) const {
  v.setZero();
  for (int i = 0; i < nn_; ++i) v.segment<3>(positionDof(i)) = v_init_;
}

void CosseratRod::lumpedMass(VecRef m) const {
  const double rhoA = rho_ * std::numbers::pi * r_ * r_;
  for (int i = 0; i < nn_; ++i) m.segment<3>(positionDof(i)).setConstant(rhoA * voronoi_[i]);  // m_i
  for (int e = 0; e < ne_; ++e) m.segment<3>(rotationDof(e)) = J_ * lhat_[e];                  // Ĵ_e = ρ Î ℓ̂
}

// ----------------------------------------------------------------------------- configuration

void CosseratRod::setConfiguration(ConstVecRef q) {
  if (q.size() != numDofs())
    throw std::invalid_argument("CosseratRod::setConfiguration: expected " + std::to_string(numDofs()) +
                                " DOFs, got " + std::to_string(q.size()));
  q_ = q;
  for (int e = 0; e < ne_; ++e) {
    Q_[e] = expSO3(-q_.segment<3>(rotationDof(e))) * Qc_[e];  // Q = exp(-[φ]) Q_committed
    const Vec3 d = q_.segment<3>(positionDof(e + 1)) - q_.segment<3>(positionDof(e));
    l_[e] = d.norm();
    t_[e] = d / l_[e];
    e_[e] = l_[e] / lhat_[e];
    sigma_[e] = Q_[e] * d / lhat_[e];  // σ_L = Q(e t - d3) (Eq. 9): Q d3 = (0, 0, 1)
    sigma_[e].z() -= 1.0;
    n_[e] = S_.cwiseProduct(sigma_[e] - sigma0_[e]);  // n_L (Eq. 11, Table I)
  }
  for (int i = 1; i < ne_; ++i) {
    theta_[i] = logSO3(Q_[i - 1] * Q_[i].transpose(), &jc_[i]);  // D̂ κ̂_L (Eq. 20): Q_i = exp(-[θ]) Q_{i-1}
    const double Ei = 0.5 * (l_[i - 1] + l_[i]) / Dhat_[i];
    const Vec3 dth = theta_[i] - theta0_[i];
    const Vec3 Bd = B_.cwiseProduct(dth) / (Dhat_[i] * Ei * Ei * Ei);  // τ_L D̂-scaled, Eqs. 8, 10
    m_[i] = Bd;
    Ebend_[i] = 0.5 * dth.dot(Bd);
  }
}

void CosseratRod::commitConfiguration() {}

void CosseratRod::rebaseDofs(VecRef q, VecRef /*v*/) {
  for (int e = 0; e < ne_; ++e) {
    auto phi = q.segment<3>(rotationDof(e));
    // The kernel calls setConfiguration(q) right before: reuse its frames when φ is the same.
    if (phi == q_.segment<3>(rotationDof(e)))
      Qc_[e] = Q_[e];
    else
      Qc_[e] = expSO3(-Vec3(phi)) * Qc_[e];
    orthonormalize(Qc_[e]);
    Q_[e] = Qc_[e];
    phi.setZero();
    q_.segment<3>(rotationDof(e)).setZero();
  }
}

Vec3 CosseratRod::curvature(int i) const {
  if (i < 1 || i >= ne_) throw std::out_of_range("CosseratRod::curvature: node " + std::to_string(i) + " is not interior");
  return theta_[i] / Dhat_[i];
}

// ------------------------------------------------------------------------ energy and forces

double CosseratRod::elasticEnergy() const {
  double E = 0;
  for (int e = 0; e < ne_; ++e) E += 0.5 * lhat_[e] * (sigma_[e] - sigma0_[e]).dot(n_[e]);
  for (int i = 1; i < ne_; ++i) E += Ebend_[i];
  return E;
}

void CosseratRod::addElasticForce(VecRef f) const {
  for (int e = 0; e < ne_; ++e) {
    // Shear/stretch: force Δh(Q^T n) on the nodes (Eq. 23), couple (Q ℓ) × n on the element (Eq. 24).
    const Vec3 N = Q_[e].transpose() * n_[e];
    f.segment<3>(positionDof(e + 1)) -= N;
    f.segment<3>(positionDof(e)) += N;
    const Vec3 d = q_.segment<3>(positionDof(e + 1)) - q_.segment<3>(positionDof(e));
    couple_[e] = (Q_[e] * d).cross(n_[e]);
  }
  for (int i = 1; i < ne_; ++i) {
    // Bend/twist: couples Δh and Ah of Eq. 24, exact to all orders through the inverse Jacobians of
    // the exponential map (the seed's κ × Bκ terms are their first order).
    couple_[i - 1] += invRightJacobianTimes(theta_[i], m_[i], jc_[i]);
    couple_[i] -= invLeftJacobianTimes(theta_[i], m_[i], jc_[i]);
    // The 1/E³ rescaling of Eq. 10 makes the bending energy depend on the Voronoi length D_i.
    const double g = -3.0 * Ebend_[i] / (l_[i - 1] + l_[i]);  // dE/dℓ of each adjacent element
    f.segment<3>(positionDof(i - 1)) += g * t_[i - 1];
    f.segment<3>(positionDof(i)) -= g * (t_[i - 1] - t_[i]);
    f.segment<3>(positionDof(i + 1)) -= g * t_[i];
  }
  for (int e = 0; e < ne_; ++e) f.segment<3>(rotationDof(e)) += couple_[e];
}

void CosseratRod::addStiffness(StiffnessSink&) const {
  throw std::logic_error(
      "the cosserat rod provides no stiffness matrix: use an explicit solver (position-verlet or pefrl), not an "
      "implicit or static one");
}

// Eq. 24 multiplied by e (the rotational inertia is Ĵ/e, the lumped mass is Ĵ):
//   Ĵ dω/dt = e C + (Ĵω) × ω + Ĵ ω ė / e,
// so besides the elastic couple C (addElasticForce) this adds (e - 1) C, the Lagrangian transport
// (gyroscopic) term, the unsteady dilatation term and the rotational damping of Eq. 32.
void CosseratRod::addVelocityForce(const EvalContext& ctx, VecRef f) const {
  if (ctx.quasi_static || !(ctx.dt > 0)) return;
  const int off = dofOffset();
  for (int e = 0; e < ne_; ++e) {
    const int r = off + rotationDof(e), a = off + positionDof(e), b = off + positionDof(e + 1);
    const Vec3 w(ctx.velocity(r), ctx.velocity(r + 1), ctx.velocity(r + 2));
    const Vec3 dv(ctx.velocity(b) - ctx.velocity(a), ctx.velocity(b + 1) - ctx.velocity(a + 1),
                  ctx.velocity(b + 2) - ctx.velocity(a + 2));
    const double ee = e_[e], edot = t_[e].dot(dv) / lhat_[e];
    const Vec3 Jw = lhat_[e] * J_.cwiseProduct(w);
    f.segment<3>(rotationDof(e)) +=
        (ee - 1.0) * couple_[e] + Jw.cross(w) + (edot / ee) * Jw - gamma_r_ * lhat_[e] * ee * ee * w;
  }
}

// ------------------------------------------------------------------------ frames and torques

void CosseratRod::materialFrame(int edge, Vec3& t, Vec3& m1, Vec3& m2) const {
  m1 = Q_[edge].row(0).transpose();
  m2 = Q_[edge].row(1).transpose();
  t = Q_[edge].row(2).transpose();  // d3 (not exactly the tangent when the rod shears)
}

double CosseratRod::twistForDirector(int edge, const Vec3& m1) const {
  const double current = q_[twistDof(edge)];
  const Vec3 d1 = Q_[edge].row(0).transpose(), d2 = Q_[edge].row(1).transpose();
  const double x = m1.dot(d1), y = m1.dot(d2);
  if (std::hypot(x, y) <= 1e-14 * m1.norm()) return current;
  // A rotation δ about d3 of the current frame changes the d3 component of φ by δ (exactly when the
  // other two components are zero, as after every step).
  return current + std::atan2(y, x);
}

void CosseratRod::addNodeTorque(int node, const Vec3& T, VecRef f) const {
  if (node < 0 || node >= nn_) throw std::out_of_range("CosseratRod::addNodeTorque: node " + std::to_string(node));
  const int e = node < ne_ ? node : ne_ - 1;
  // External couple C_L = Q T on the element, times e as in addVelocityForce.
  f.segment<3>(rotationDof(e)) += e_[e] * (Q_[e] * T);
}

}  // namespace rodsim
