// The "cosserat" rod: discrete Cosserat rod of the Cosserat seed (Gazzola et al.), Sec. III.B,
// Eqs. 17-24, with an energy whose exact gradient gives the internal forces and couples (README.md,
// "Energy and forces").
#include "cosserat_rod.h"

#include "geometry.h"  // plugins/rod_der/geometry.h (rod_der_core)
#include "so3.h"

#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace rodsim {

using cosserat::expSO3;

namespace {

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
                  "it resamples the points uniformly by arc length (else the points are the nodes). At most 10^7.")
      .range(3, 1e7);
  der::declareMaterialParams(s);
  s.add<double>("shear_factor", 4.0 / 3.0,
                "Shear factor alpha_c of S1 = S2 = alpha_c G A (Table I of the seed: 4/3 for circular sections).")
      .greater(0);
  s.add<double>("rotational_damping", 0.0,
                "Rotational internal friction gamma_r of Eq. 32: couple -gamma_r omega per unit length (the "
                "translational part, Eq. 31, is the `damping` force).")
      .unit("N s")
      .atLeast(0);
  s.optional<Vec3>("shear_stretch_stiffness",
                   "Overrides S = diag(S1, S2, S3) of Table I (default alpha_c G A, alpha_c G A, E A), e.g. the "
                   "seed's S = 1e5 (1, 1, 1) N of Fig. 3 (a nearly inextensible, unshearable rod).")
      .unit("N");
  s.optional<Vec3>("bend_twist_stiffness",
                   "Overrides B = diag(B1, B2, B3) of Table I (default E I, E I, G 2I), e.g. the seed's "
                   "(alpha, alpha, beta) of Fig. 3. The inertia still comes from density and radius.")
      .unit("N m^2");
  s.add<double>("initial_twist", 0.0,
                "Twist rate of the initial frames: d1 is turned about d3 by initial_twist * s (s: rest arc length at "
                "the element centre, from the first element) after parallel transport along the centreline. The rest "
                "state stays untwisted, so the rod starts with a uniform twist couple (e.g. the localized helix of "
                "the seed's Fig. 3, started on Eq. 25).")
      .unit("rad/m");
  der::declareCenterlineParams(s);
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
  if (p.has("shear_stretch_stiffness")) {
    S_ = p.vec3("shear_stretch_stiffness");
    if (!(S_.minCoeff() > 0)) throw ParamError("shear_stretch_stiffness", "every entry must be > 0");
  }
  if (p.has("bend_twist_stiffness")) {
    B_ = p.vec3("bend_twist_stiffness");
    if (!(B_.minCoeff() > 0)) throw ParamError("bend_twist_stiffness", "every entry must be > 0");
  }

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
  // With initial_twist, d1 is then turned about t by initial_twist * s_e (s_e: rest arc length of the
  // element centre from the centre of element 0).
  Qc_.resize(ne_);
  const double tw = p.real("initial_twist");
  Vec3 d1 = Vec3::Zero(), tprev = Vec3::Zero();
  double s_e = 0;
  for (int e = 0; e < ne_; ++e) {
    const Vec3 t = (x_init_[e + 1] - x_init_[e]).normalized();
    d1 = e == 0 ? perpendicular(t) : transport(d1, tprev, t);
    d1 = (d1 - d1.dot(t) * t).normalized();
    if (e > 0) s_e += 0.5 * (lhat_[e - 1] + lhat_[e]);
    const Vec3 m1 = tw == 0 ? d1 : Vec3(expSO3(t * (tw * s_e)) * d1);
    Qc_[e].row(0) = m1.transpose();
    Qc_[e].row(1) = t.cross(m1).transpose();
    Qc_[e].row(2) = t.transpose();
    tprev = t;
  }

  Q_ = Qc_;
  t_.assign(ne_, Vec3::Zero());
  sigma_ = n_ = qd_ = couple_ = t_;
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
    ensureStrains();
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
//
// The hot loops below are written out in scalars on the flat per-element arrays: one polynomial
// (or one sincos) per frame update, a polynomial arcsin (no atan2) per curvature when the angle is
// below 0.1 rad, and nothing computed that the caller does not ask for (README.md, "Cost").

namespace {

// Q = exp(-[φ]) Qc (rows of Q are d1, d2, d3: the rotation mixes rows).
inline void rotateFrame(double px, double py, double pz, const Mat3& Qc, Mat3& Q) {
  const double x = -px, y = -py, z = -pz, t2 = x * x + y * y + z * z;
  double a, b;
  cosserat::rodriguesCoefficients(t2, a, b);
  const double d = 1.0 - b * t2;
  const double bx = b * x, by = b * y, bz = b * z, ax = a * x, ay = a * y, az = a * z;
  const double R00 = d + bx * x, R01 = bx * y - az, R02 = bx * z + ay;
  const double R10 = bx * y + az, R11 = d + by * y, R12 = by * z - ax;
  const double R20 = bx * z - ay, R21 = by * z + ax, R22 = d + bz * z;
  for (int j = 0; j < 3; ++j) {
    const double c0 = Qc(0, j), c1 = Qc(1, j), c2 = Qc(2, j);
    Q(0, j) = R00 * c0 + R01 * c1 + R02 * c2;
    Q(1, j) = R10 * c0 + R11 * c1 + R12 * c2;
    Q(2, j) = R20 * c0 + R21 * c1 + R22 * c2;
  }
}

// 1/sqrt(n2) for n2 = |d|² of a vector that is unit up to round-off: one Newton step from 1
// (error 3/8 (n2 - 1)², below 1e-30 for the 1e-15 drift of one step), the exact value otherwise.
inline double invNorm(double n2) { return std::abs(n2 - 1.0) < 1e-6 ? 1.5 - 0.5 * n2 : 1.0 / std::sqrt(n2); }

// Rows d1, d2, d3 re-orthonormalized (Gram-Schmidt from d3), against round-off drift.
inline void orthonormalizeRows(Mat3& Q) {
  double d3x = Q(2, 0), d3y = Q(2, 1), d3z = Q(2, 2);
  const double i3 = invNorm(d3x * d3x + d3y * d3y + d3z * d3z);
  d3x *= i3, d3y *= i3, d3z *= i3;
  double d1x = Q(0, 0), d1y = Q(0, 1), d1z = Q(0, 2);
  const double p = d1x * d3x + d1y * d3y + d1z * d3z;
  d1x -= p * d3x, d1y -= p * d3y, d1z -= p * d3z;
  const double i1 = invNorm(d1x * d1x + d1y * d1y + d1z * d1z);
  d1x *= i1, d1y *= i1, d1z *= i1;
  Q(0, 0) = d1x, Q(0, 1) = d1y, Q(0, 2) = d1z;
  Q(1, 0) = d3y * d1z - d3z * d1y, Q(1, 1) = d3z * d1x - d3x * d1z, Q(1, 2) = d3x * d1y - d3y * d1x;
  Q(2, 0) = d3x, Q(2, 1) = d3y, Q(2, 2) = d3z;
}

}  // namespace

void CosseratRod::setConfiguration(ConstVecRef q) {
  if (q.size() != numDofs())
    throw std::invalid_argument("CosseratRod::setConfiguration: expected " + std::to_string(numDofs()) +
                                " DOFs, got " + std::to_string(q.size()));
  q_ = q;
  frames_ok_ = strains_ok_ = false;
}

void CosseratRod::commitConfiguration() {}

void CosseratRod::computeFrames() const {
  const double* phi = q_.data() + rotationDof(0);
  for (int e = 0; e < ne_; ++e, phi += 3) rotateFrame(phi[0], phi[1], phi[2], Qc_[e], Q_[e]);
  frames_ok_ = true;
}

void CosseratRod::computeStrains() const {
  const bool frames = !frames_ok_;
  const double* x = q_.data();
  const double* phi = q_.data() + rotationDof(0);
  const double S0 = S_.x(), S1 = S_.y(), S2 = S_.z(), B0 = B_.x(), B1 = B_.y(), B2 = B_.z();
  for (int e = 0; e < ne_; ++e, x += 3, phi += 3) {
    Mat3& Q = Q_[e];
    if (frames) rotateFrame(phi[0], phi[1], phi[2], Qc_[e], Q);  // Q = exp(-[φ]) Q_committed
    const double dx = x[3] - x[0], dy = x[4] - x[1], dz = x[5] - x[2];
    const double l = std::sqrt(dx * dx + dy * dy + dz * dz), il = 1.0 / l, ilh = 1.0 / lhat_[e];
    l_[e] = l;
    t_[e] = Vec3(dx * il, dy * il, dz * il);
    e_[e] = l * ilh;
    // σ_L = Q(e t - d3) = Q d / ℓ̂ - (0, 0, 1) (Eq. 9); n_L = Ŝ(σ - σ°) (Eq. 11, Table I)
    const Vec3 Qd(Q(0, 0) * dx + Q(0, 1) * dy + Q(0, 2) * dz, Q(1, 0) * dx + Q(1, 1) * dy + Q(1, 2) * dz,
                  Q(2, 0) * dx + Q(2, 1) * dy + Q(2, 2) * dz);
    qd_[e] = Qd;
    const Vec3 sg(Qd.x() * ilh, Qd.y() * ilh, Qd.z() * ilh - 1.0);
    sigma_[e] = sg;
    const Vec3& s0 = sigma0_[e];
    n_[e] = Vec3(S0 * (sg.x() - s0.x()), S1 * (sg.y() - s0.y()), S2 * (sg.z() - s0.z()));
    if (e == 0) continue;
    // Node i = e between elements e-1 and e: θ = log(Q_{i-1} Q_iᵀ) = D̂ κ̂_L (Eq. 20).
    const int i = e;
    const Mat3& P = Q_[e - 1];
    Mat3 R;
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) R(a, b) = P(a, 0) * Q(b, 0) + P(a, 1) * Q(b, 1) + P(a, 2) * Q(b, 2);
    const Vec3 th = cosserat::logSO3(R, &jc_[i]);
    theta_[i] = th;
    const double Dh = Dhat_[i], Ei = 0.5 * (l_[i - 1] + l) / Dh;
    const double k = 1.0 / (Dh * Ei * Ei * Ei);  // τ_L D̂-scaled, Eqs. 8, 10
    const Vec3& t0 = theta0_[i];
    const double ux = th.x() - t0.x(), uy = th.y() - t0.y(), uz = th.z() - t0.z();
    const Vec3 m(k * B0 * ux, k * B1 * uy, k * B2 * uz);
    m_[i] = m;
    Ebend_[i] = 0.5 * (ux * m.x() + uy * m.y() + uz * m.z());
  }
  frames_ok_ = strains_ok_ = true;
}

void CosseratRod::rebaseDofs(VecRef q, VecRef /*v*/) {
  const int r0 = rotationDof(0);
  for (int e = 0; e < ne_; ++e) {
    double* phi = q.data() + r0 + 3 * e;
    double* mine = q_.data() + r0 + 3 * e;
    // The kernel calls setConfiguration(q) right before: reuse the frames when φ is the same.
    if (!(frames_ok_ && phi[0] == mine[0] && phi[1] == mine[1] && phi[2] == mine[2]))
      rotateFrame(phi[0], phi[1], phi[2], Qc_[e], Q_[e]);
    orthonormalizeRows(Q_[e]);
    Qc_[e] = Q_[e];
    phi[0] = phi[1] = phi[2] = 0.0;
    mine[0] = mine[1] = mine[2] = 0.0;
  }
  frames_ok_ = true;
  strains_ok_ = false;  // on demand, from the rebased frames
}

Vec3 CosseratRod::curvature(int i) const {
  if (i < 1 || i >= ne_) throw std::out_of_range("CosseratRod::curvature: node " + std::to_string(i) + " is not interior");
  ensureStrains();
  return theta_[i] / Dhat_[i];
}

void CosseratRod::saveState(std::vector<double>& out) const {
  for (const Mat3& Q : Qc_) out.insert(out.end(), Q.data(), Q.data() + 9);
}

void CosseratRod::loadState(const std::vector<double>& in) {
  if (in.size() != 9 * Qc_.size())
    throw std::runtime_error("checkpoint holds " + std::to_string(in.size()) + " numbers for rod '" + name() +
                             "', expected " + std::to_string(9 * Qc_.size()) + " (another number of nodes?)");
  for (std::size_t e = 0; e < Qc_.size(); ++e) std::copy(in.begin() + 9 * e, in.begin() + 9 * e + 9, Qc_[e].data());
  frames_ok_ = strains_ok_ = false;
}

// ------------------------------------------------------------------------ energy and forces

double CosseratRod::elasticEnergy() const {
  ensureStrains();
  double E = 0;
  for (int e = 0; e < ne_; ++e) E += 0.5 * lhat_[e] * (sigma_[e] - sigma0_[e]).dot(n_[e]);
  for (int i = 1; i < ne_; ++i) E += Ebend_[i];
  return E;
}

void CosseratRod::addElasticForce(VecRef fv) const {
  ensureStrains();
  double* f = fv.data();
  double* fr = f + rotationDof(0);
  // Shear/stretch: force Δh(Qᵀ n) on the nodes (Eq. 23), couple (Q d) × n on the element (Eq. 24).
  for (int e = 0; e < ne_; ++e) {
    const Mat3& Q = Q_[e];
    const Vec3& n = n_[e];
    const Vec3& a = qd_[e];
    const double Nx = Q(0, 0) * n.x() + Q(1, 0) * n.y() + Q(2, 0) * n.z();
    const double Ny = Q(0, 1) * n.x() + Q(1, 1) * n.y() + Q(2, 1) * n.z();
    const double Nz = Q(0, 2) * n.x() + Q(1, 2) * n.y() + Q(2, 2) * n.z();
    double* fa = f + 3 * e;
    fa[0] += Nx, fa[1] += Ny, fa[2] += Nz;
    fa[3] -= Nx, fa[4] -= Ny, fa[5] -= Nz;
    couple_[e] = Vec3(a.y() * n.z() - a.z() * n.y(), a.z() * n.x() - a.x() * n.z(), a.x() * n.y() - a.y() * n.x());
  }
  // Bend/twist: couples Δh and Ah of Eq. 24, exact to all orders through the inverse Jacobians of
  // the exponential map (the seed's κ × Bκ terms are their first order): J_r⁻¹(θ) m on element
  // i-1 and -J_l⁻¹(θ) m on element i, J_{r,l}⁻¹ m = m ± ½ θ×m + c θ×(θ×m).
  for (int i = 1; i < ne_; ++i) {
    const Vec3& th = theta_[i];
    const Vec3& m = m_[i];
    const double c = jc_[i];
    const double tx = th.y() * m.z() - th.z() * m.y(), ty = th.z() * m.x() - th.x() * m.z(),
                 tz = th.x() * m.y() - th.y() * m.x();  // θ × m
    const double ux = th.y() * tz - th.z() * ty, uy = th.z() * tx - th.x() * tz, uz = th.x() * ty - th.y() * tx;
    const double Ax = m.x() + c * ux, Ay = m.y() + c * uy, Az = m.z() + c * uz;
    Vec3& cp = couple_[i - 1];
    Vec3& cn = couple_[i];
    cp.x() += Ax + 0.5 * tx, cp.y() += Ay + 0.5 * ty, cp.z() += Az + 0.5 * tz;
    cn.x() -= Ax - 0.5 * tx, cn.y() -= Ay - 0.5 * ty, cn.z() -= Az - 0.5 * tz;
    // The 1/E³ rescaling of Eq. 10 makes the bending energy depend on the Voronoi length D_i.
    const double g = -3.0 * Ebend_[i] / (l_[i - 1] + l_[i]);  // dE/dℓ of each adjacent element
    const Vec3 &ta = t_[i - 1], &tb = t_[i];
    double* fi = f + 3 * i;
    fi[-3] += g * ta.x(), fi[-2] += g * ta.y(), fi[-1] += g * ta.z();
    fi[0] -= g * (ta.x() - tb.x()), fi[1] -= g * (ta.y() - tb.y()), fi[2] -= g * (ta.z() - tb.z());
    fi[3] -= g * tb.x(), fi[4] -= g * tb.y(), fi[5] -= g * tb.z();
  }
  for (int e = 0; e < ne_; ++e) {
    fr[3 * e] += couple_[e].x();
    fr[3 * e + 1] += couple_[e].y();
    fr[3 * e + 2] += couple_[e].z();
  }
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
void CosseratRod::addVelocityForce(const EvalContext& ctx, VecRef fv) const {
  if (ctx.quasi_static || !(ctx.dt > 0)) return;
  ensureStrains();
  // ctx.velocity(i) = (q_i - q_start_i) / dt, read in place.
  const int off = dofOffset();
  const double *q = ctx.q->data() + off, *qs = ctx.q_start->data() + off, idt = 1.0 / ctx.dt;
  const int r0 = rotationDof(0);
  double* f = fv.data() + r0;
  const double J0 = J_.x(), J1 = J_.y(), J2 = J_.z();
  for (int e = 0; e < ne_; ++e) {
    const int r = r0 + 3 * e, a = 3 * e;
    const double wx = (q[r] - qs[r]) * idt, wy = (q[r + 1] - qs[r + 1]) * idt, wz = (q[r + 2] - qs[r + 2]) * idt;
    const double dvx = ((q[a + 3] - qs[a + 3]) - (q[a] - qs[a])) * idt;
    const double dvy = ((q[a + 4] - qs[a + 4]) - (q[a + 1] - qs[a + 1])) * idt;
    const double dvz = ((q[a + 5] - qs[a + 5]) - (q[a + 2] - qs[a + 2])) * idt;
    const double lh = lhat_[e], ee = e_[e];
    const Vec3& t = t_[e];
    const double edot = (t.x() * dvx + t.y() * dvy + t.z() * dvz) / lh;
    const double Jx = lh * J0 * wx, Jy = lh * J1 * wy, Jz = lh * J2 * wz;  // Ĵ ω
    const double cd = edot / ee, gr = gamma_r_ * lh * ee * ee, em1 = ee - 1.0;
    const Vec3& C = couple_[e];
    double* fe = f + 3 * e;
    fe[0] += em1 * C.x() + (Jy * wz - Jz * wy) + cd * Jx - gr * wx;
    fe[1] += em1 * C.y() + (Jz * wx - Jx * wz) + cd * Jy - gr * wy;
    fe[2] += em1 * C.z() + (Jx * wy - Jy * wx) + cd * Jz - gr * wz;
  }
}

// ------------------------------------------------------------------------ frames and torques

void CosseratRod::materialFrame(int edge, Vec3& t, Vec3& m1, Vec3& m2) const {
  ensureFrames();
  m1 = Q_[edge].row(0).transpose();
  m2 = Q_[edge].row(1).transpose();
  t = Q_[edge].row(2).transpose();  // d3 (not exactly the tangent when the rod shears)
}

double CosseratRod::twistForDirector(int edge, const Vec3& m1) const {
  ensureFrames();
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
  ensureStrains();
  // External couple C_L = Q T on the element, times e as in addVelocityForce.
  f.segment<3>(rotationDof(e)) += e_[e] * (Q_[e] * T);
}

}  // namespace rodsim
