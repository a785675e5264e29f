// The "cosserat" rod: discrete Cosserat rod of Gazzola et al. (2018), Sec. III.B,
// Eqs. 17-24, with an energy whose exact gradient gives the internal forces and couples (README.md,
// "Energy and forces").
#include "cosserat_rod.h"

#include "bend_twist_energy.h"
#include "shear_stretch_energy.h"

#include <rodsim/geometry/centerline.h>
#include <rodsim/geometry/frames.h>
#include <rodsim/geometry/rod_params.h>
#include <rodsim/geometry/so3.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace rodsim {

using geometry::expSO3;

// The hot loops read std::vector<Vec3> as flat arrays of 3 doubles per element.
static_assert(sizeof(Vec3) == 3 * sizeof(double), "Vec3 must be three packed doubles");

Schema CosseratRod::schema() {
  Schema s{"cosserat",
           "Shearable, extensible Cosserat rod (Gazzola et al. 2018, Sec. II-III, Eqs. 9-24): node "
           "positions and element material frames; shear/stretch S = diag(aGA, aGA, EA), bend/twist B = "
           "diag(EI1, EI2, GI3). For explicit solvers (position-verlet, pefrl) and, through the exact Hessian of its "
           "energy (force_law = energy), implicit-euler and static. DOFs [x_0 .. x_N, phi_0 .. phi_{n-1}] (phi: "
           "rotation vector of each element relative to its committed frame)."};
  s.optional<int>("nodes",
                  "Number of nodes (elements = nodes - 1). Required for straight and helix; for polyline and points "
                  "it resamples the points uniformly by arc length (else the points are the nodes). At most 10^7.")
      .range(3, 1e7);
  geometry::declareMaterialParams(s);
  s.add<double>("shear_factor", 4.0 / 3.0,
                "Shear factor alpha_c of S1 = S2 = alpha_c G A (Table I of Gazzola et al. 2018: 4/3 for circular "
                "sections).")
      .greater(0);
  s.add<double>("rotational_damping", 0.0,
                "Rotational internal friction gamma_r of Eq. 32: couple -gamma_r omega per unit length (the "
                "translational part, Eq. 31, is the `damping` force).")
      .unit("N s")
      .atLeast(0);
  s.optional<Vec3>("shear_stretch_stiffness",
                   "Overrides S = diag(S1, S2, S3) of Table I (default alpha_c G A, alpha_c G A, E A), e.g. "
                   "Gazzola et al.'s S = 1e5 (1, 1, 1) N of Fig. 3 (a nearly inextensible, unshearable rod).")
      .unit("N");
  s.optional<Vec3>("bend_twist_stiffness",
                   "Overrides B = diag(B1, B2, B3) of Table I (default E I, E I, G 2I), e.g. Gazzola et al.'s "
                   "(alpha, alpha, beta) of Fig. 3. The inertia still comes from density and radius.")
      .unit("N m^2");
  s.add<double>("inertia_ratio", 1.0,
                "Relative mass moment of inertia lambda = 2 J / (m r^2) of the cross section (Gazzola et al. 2018, "
                "Appendix F, "
                "Fig. 16e-f): J = lambda m r^2 / 2 about the axis, and the whole rotational inertia rho I of Table I is "
                "scaled by lambda (1: a solid disk, the default; 2: a thin-walled tube). The mass, the stiffnesses and "
                "the other parameters are unchanged.")
      .greater(0);
  s.add<std::string>("force_law", "energy",
                     "How the internal forces on the nodes are made. energy: the exact gradient of the elastic "
                     "energy, Qt n with n = S (sigma - sigma0), plus the forces from the bending energy's dependence "
                     "on the Voronoi length (the 1/E^3 of Eq. 10), so the conservative dynamics conserve energy "
                     "and a bent or twisted rod is pulled longer. gazzola2018: Eqs. 23-24 as Gazzola et al. 2018 and "
                     "PyElastica write "
                     "them, force Qt S sigma / e and shear couple (Q t x S sigma) l^, with no force from the bending "
                     "energy. It is not the gradient of any energy: a freely vibrating bent rod gains energy under it "
                     "(docs/validation/cosserat.md). For comparisons with codes that integrate Eq. 23 as written.")
      .choices({"energy", "gazzola2018"});
  s.add<bool>("bend_twist_rescaling", true,
              "The stretch dependence of bend and twist (Eq. 10): the incompressible section thins as the rod "
              "stretches, B = B^/E^2 and kappa = kappa^/E, so the bend/twist couples are B^ kappa^ / E^3 (E: the "
              "Voronoi dilatation). false: couples B^ kappa^ at every stretch (the linear law in the rest arc "
              "length): no twist-stretch coupling, and with force_law = energy the forces stay the exact gradient "
              "of an energy (a twisted, stretched rod then settles where Gazzola et al.'s equations keep pumping "
              "energy in: the solenoid of Fig. 9, docs/validation/cosserat.md).");
  s.add<double>("initial_twist", 0.0,
                "Twist rate of the initial frames: d1 is turned about d3 by initial_twist * s (s: rest arc length at "
                "the element centre, from the first element) after parallel transport along the centreline. The rest "
                "state stays untwisted, so the rod starts with a uniform twist couple (e.g. the localized helix of "
                "Gazzola et al.'s Fig. 3, started on Eq. 25).")
      .unit("rad/m");
  s.add<bool>("closed", false,
              "A closed rod (ring): n nodes and n elements, element n-1 joins node n-1 to node 0, and node 0 carries "
              "the curvature and bending couple between element n-1 and element 0 (Voronoi lengths and masses wrap "
              "around). With geometry `circle` the nodes go once round the circle; with `polyline` or `points` a last "
              "point equal to the first is dropped. Frames are parallel-transported and then twisted uniformly so "
              "that they close at the junction: initial_twist * L (L the rest length of the ring) is taken as a whole "
              "number k of turns 2 pi k (it must be within 0.05 turn of one), and the twist density is (2 pi k - "
              "holonomy)/L, the holonomy of the parallel transport round the centreline (0 for a plane ring). Used for "
              "Mitchell's twisted ring (Appendix E.2, Eq. E3). Contact models, rss, slender-body-drag, ground and "
              "muscle-torque walk a rod's edges as an open chain and refuse a closed rod.");
  geometry::declareCenterlineParams(s);
  return s;
}

CosseratRod::CosseratRod(const Params& p) : Rod(p) {
  x_init_ = geometry::buildCenterline(p);
  closed_ = p.boolean("closed");
  // A closed polyline may repeat its first point at the end: the ring has that node once.
  if (closed_ && x_init_.size() > 3 && (x_init_.back() - x_init_.front()).norm() <= 1e-12 * std::max(1.0, x_init_.front().norm()))
    x_init_.pop_back();
  nn_ = static_cast<int>(x_init_.size());
  if (nn_ < 3) throw ParamError("nodes", "a cosserat rod needs at least 3 nodes (2 elements); got " + std::to_string(nn_));
  ne_ = closed_ ? nn_ : nn_ - 1;
  point_masses_ = geometry::readPointMasses(p, nn_);
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
  written_force_law_ = p.string("force_law") == "gazzola2018";
  bend_twist_rescaling_ = p.boolean("bend_twist_rescaling");

  const double pi = std::numbers::pi;
  const double A = pi * r_ * r_, I = pi * std::pow(r_, 4) / 4.0;
  S_ = Vec3(alpha * G_ * A, alpha * G_ * A, E_ * A);  // Table I
  B_ = Vec3(E_ * I, E_ * I, G_ * 2.0 * I);
  J_ = rho_ * Vec3(I, I, 2.0 * I);
  // lambda = 2 J / (m r^2) (Appendix F): the default 1 multiplies by 1.0, which is exact (bit for bit).
  const double lambda = p.real("inertia_ratio");
  if (!(lambda > 0)) throw ParamError("inertia_ratio", "'inertia_ratio' must be > 0");
  J_ *= lambda;
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
    const int b = next(e);  // e + 1, or 0 for the closing element of a ring
    lhat_[e] = (x_init_[b] - x_init_[e]).norm();
    if (!(lhat_[e] > 0))
      throw ParamError("geometry.shape", "nodes " + std::to_string(e) + " and " + std::to_string(b) +
                                             " coincide: every element needs a positive rest length");
    voronoi_[e] += 0.5 * lhat_[e];
    voronoi_[b] += 0.5 * lhat_[e];
  }
  ilhat_.resize(ne_);
  for (int e = 0; e < ne_; ++e) ilhat_[e] = 1.0 / lhat_[e];
  for (int i = 1; i + 1 < nn_; ++i) Dhat_[i] = voronoi_[i];  // Eq. 19 at rest
  if (closed_) Dhat_[0] = voronoi_[0], Dhat_[nn_ - 1] = voronoi_[nn_ - 1];  // every node of a ring is interior

  // Initial frames: d3 along the tangent (no shear), d1 parallel-transported along the rod (no twist).
  // With initial_twist, d1 is then turned about t by initial_twist * s_e (s_e: rest arc length of the
  // element centre from the centre of element 0).
  ns_ = (static_cast<std::size_t>(ne_) + 7) & ~std::size_t(7);
  Qc_.assign(9 * ns_, 0.0);
  double tw = p.real("initial_twist");
  if (closed_) tw = closedTwistRate(tw);
  Vec3 d1 = Vec3::Zero(), tprev = Vec3::Zero();
  double s_e = 0;
  for (int e = 0; e < ne_; ++e) {
    const Vec3 t = (x_init_[next(e)] - x_init_[e]).normalized();
    d1 = e == 0 ? geometry::perpendicularFromZ(t) : geometry::parallelTransportExp(d1, tprev, t);
    d1 = (d1 - d1.dot(t) * t).normalized();
    if (e > 0) s_e += 0.5 * (lhat_[e - 1] + lhat_[e]);
    const Vec3 m1 = tw == 0 ? d1 : Vec3(expSO3(t * (tw * s_e)) * d1);
    Mat3 Q0;
    Q0.row(0) = m1.transpose();
    Q0.row(1) = t.cross(m1).transpose();
    Q0.row(2) = t.transpose();
    scatter(Qc_, e, Q0);
    tprev = t;
  }

  Q_ = Qc_;
  t_.assign(ne_, Vec3::Zero());
  couple_ = cn_ = t_;
  l_.assign(ne_, 0.0);
  e_.assign(ne_, 1.0);
  theta_.assign(nn_, Vec3::Zero());
  big_.assign(nn_, 0.0);
  jc_.assign(nn_, 0.0);
  redo_.assign(ne_, 0.0);
  vel_.assign(6 * static_cast<std::size_t>(ne_), 0.0);
  energy_chunks_.assign(2 * static_cast<std::size_t>((ne_ + kEnergyChunk - 1) / kEnergyChunk), 0.0);
  rotation_jacobians_.assign(ne_, cosserat::RotationDofJacobians{});
  Ebend_.assign(nn_, 0.0);
  Nf_.assign(3 * ne_, 0.0);
  Jp_.assign(3 * nn_, 0.0);
  Jn_.assign(3 * nn_, 0.0);
  g_.assign(3 * nn_, 0.0);
  sigma0_.assign(ne_, Vec3::Zero());
  theta0_.assign(nn_, Vec3::Zero());
  q_ = Vec::Zero(numDofs());
  Vec q0(numDofs());
  initialDofs(q0);
  setConfiguration(q0);
  if (p.string("rest_shape") == "initial") {
    ensureStrains();
    std::vector<Vec3> sigma(ne_);
    for (int e = 0; e < ne_; ++e) sigma[e] = shearStrain(e);
    sigma0_.assign(sigma.begin(), sigma.end());  // zero up to round-off (d3 = t, e = 1)
    theta0_ = theta_;  // intrinsic curvature D̂ κ̂°
    setConfiguration(q0);
  }
}

// The twist density of a ring's initial frames. Frames glued at the junction close only if the twist
// plus the rotation of the parallel transport round the ring (its holonomy, -writhe mod 2 pi by
// Calugareanu-White-Fuller; 0 for a plane ring) is a whole number of turns: the requested total
// initial_twist * L is rounded to 2 pi k and the density is (2 pi k - holonomy)/L, so that the relative
// twist across the junction (element n-1 to element 0) is that across every other node.
double CosseratRod::closedTwistRate(double requested) const {
  const double twoPi = 2.0 * std::numbers::pi;
  double L = 0;
  for (int e = 0; e < ne_; ++e) L += lhat_[e];
  const double turns = requested * L / twoPi, k = std::round(turns);
  if (std::abs(turns - k) > 0.05)
    throw ParamError("initial_twist",
                     "a closed rod's frames close only after a whole number of turns: initial_twist * L = " +
                         std::to_string(requested * L) + " rad is " + std::to_string(turns) +
                         " turns (L = " + std::to_string(L) + " m); use initial_twist = 2 pi k / L, e.g. " +
                         std::to_string(twoPi * k / L) + " rad/m");
  // Transport d1 of element 0 round the ring (elements 1 .. n-1 and back to 0), as the frame loop does.
  const auto tangent = [&](int e) { return Vec3((x_init_[next(e)] - x_init_[e]).normalized()); };
  const Vec3 t0 = tangent(0), d0 = geometry::perpendicularFromZ(t0);
  Vec3 d1 = d0, tprev = t0;
  for (int e = 1; e <= ne_; ++e) {
    const Vec3 t = tangent(e % ne_);
    d1 = geometry::parallelTransportExp(d1, tprev, t);
    d1 = (d1 - d1.dot(t) * t).normalized();
    tprev = t;
  }
  const double holonomy = std::atan2(d0.cross(d1).dot(t0), d0.dot(d1));  // d1 = rotation of d0 about t0
  return (twoPi * k - holonomy) / L;
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
  for (const auto& [node, mass] : point_masses_) m.segment<3>(positionDof(node)).array() += mass;
  for (int e = 0; e < ne_; ++e) m.segment<3>(rotationDof(e)) = J_ * lhat_[e];                  // Ĵ_e = ρ Î ℓ̂
}

// ----------------------------------------------------------------------------- configuration
//
// The hot loops below are free functions over flat arrays (frames structure-of-arrays, Vec3 data
// 3 per element), one pass per element or per node without branches, so that g++ vectorizes them
// across elements: one polynomial per frame update and per curvature below 0.1 rad, the closed
// forms redone afterwards for the rare larger angles, and nothing computed that the caller does not
// ask for (README.md, "Cost"). rotateFrame and orthonormalizeRows are the one-element reference
// forms (and the large-angle fix-ups).

namespace {

// Q = exp(-[φ]) Qc (rows of Q are d1, d2, d3: the rotation mixes rows).
inline void rotateFrame(double px, double py, double pz, const Mat3& Qc, Mat3& Q) {
  const double x = -px, y = -py, z = -pz, t2 = x * x + y * y + z * z;
  double a, b;
  geometry::rodriguesCoefficients(t2, a, b);
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

// The frame updates of every element, Q_e = exp(-[φ_e]) Qc_e (Eq. 16), optionally re-orthonormalized
// (the commit), as one loop over flat arrays (Qc, Q: structure-of-arrays, entry k = r + 3c of
// element e at [k s + e], see CosseratRod::gather; φ: 3 per element) that g++ vectorizes across
// elements. Its body has no branch: every element takes the Taylor polynomial of the Rodrigues
// coefficients, and the few elements turned by 0.1 rad or more (never in a stable time step) are
// redone afterwards with rotateFrame's sin/cos. Of invNorm the loop takes the Newton case only (no
// vector sqrt and division per element); the rare frame whose rows are not unit to 1e-6 is redone
// afterwards too (flagged in `redo`). The results are bitwise those of rotateFrame and
// orthonormalizeRows one element at a time (same operations in the same order, no FMA contraction:
// CMakeLists.txt). Compiled for AVX-512 (x86-64-v4, 8 elements per vector),
// AVX2 (x86-64-v3) and generic x86-64 (as plugins/fluid_rss/far_field.cpp); all round alike.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define COSSERAT_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define COSSERAT_SIMD_CLONES
#endif

template <bool orthonormalize>
[[gnu::always_inline]] inline int rotateFramesLoop(const double* __restrict phi, const double* __restrict Qc,
                                                   double* __restrict F0, double* __restrict F1,
                                                   double* __restrict F2, double* __restrict F3,
                                                   double* __restrict F4, double* __restrict F5,
                                                   double* __restrict F6, double* __restrict F7,
                                                   double* __restrict F8, double* __restrict redo, std::size_t s,
                                                   int ne) {
  // The nine output streams F_k = Q + k s are separate restrict pointers: g++ cannot otherwise
  // tell that the stores of one element do not overlap another's (the stride s is only known at
  // run time), and would not vectorize.
  // s: the SoA stride (CosseratRod::gather); ne: the number of elements done here.
  int large = 0;
  for (int e = 0; e < ne; ++e) {
    const double* p = phi + 3 * e;
    const double* C = Qc + e;  // C[s * k] = Qc_e(r, c), k = r + 3c
    const double x = -p[0], y = -p[1], z = -p[2], t2 = x * x + y * y + z * z;
    bool again = t2 >= 1e-2;
    const double a = 1.0 + t2 * (-1.0 / 6.0 + t2 * (1.0 / 120.0 + t2 * (-1.0 / 5040.0 + t2 * (1.0 / 362880.0))));
    const double b = 0.5 + t2 * (-1.0 / 24.0 + t2 * (1.0 / 720.0 + t2 * (-1.0 / 40320.0 + t2 * (1.0 / 3628800.0))));
    const double d = 1.0 - b * t2;
    const double bx = b * x, by = b * y, bz = b * z, ax = a * x, ay = a * y, az = a * z;
    const double R00 = d + bx * x, R01 = bx * y - az, R02 = bx * z + ay;
    const double R10 = bx * y + az, R11 = d + by * y, R12 = by * z - ax;
    const double R20 = bx * z - ay, R21 = by * z + ax, R22 = d + bz * z;
    double q[9];  // q[r + 3 j] = Q(r, j)
    for (int j = 0; j < 3; ++j) {
      const double c0 = C[s * (3 * j)], c1 = C[s * (3 * j + 1)], c2 = C[s * (3 * j + 2)];
      q[3 * j] = R00 * c0 + R01 * c1 + R02 * c2;
      q[3 * j + 1] = R10 * c0 + R11 * c1 + R12 * c2;
      q[3 * j + 2] = R20 * c0 + R21 * c1 + R22 * c2;
    }
    if constexpr (orthonormalize) {
      // orthonormalizeRows with invNorm's Newton case only: a frame one step away from an
      // orthonormal one is unit to 1e-15, so the exact 1/sqrt (a vector sqrt and division per
      // element) is almost never needed; an element that needs it is flagged and redone below.
      double d3x = q[2], d3y = q[5], d3z = q[8];
      const double n3 = d3x * d3x + d3y * d3y + d3z * d3z;
      const double e3 = n3 - 1.0, i3 = 1.5 - 0.5 * n3;
      again |= !((e3 < 1e-6) & (e3 > -1e-6));
      d3x *= i3, d3y *= i3, d3z *= i3;
      double d1x = q[0], d1y = q[3], d1z = q[6];
      const double pr = d1x * d3x + d1y * d3y + d1z * d3z;
      d1x -= pr * d3x, d1y -= pr * d3y, d1z -= pr * d3z;
      const double n1 = d1x * d1x + d1y * d1y + d1z * d1z;
      const double e1 = n1 - 1.0, i1 = 1.5 - 0.5 * n1;
      again |= !((e1 < 1e-6) & (e1 > -1e-6));
      d1x *= i1, d1y *= i1, d1z *= i1;
      q[0] = d1x, q[3] = d1y, q[6] = d1z;
      q[1] = d3y * d1z - d3z * d1y, q[4] = d3z * d1x - d3x * d1z, q[7] = d3x * d1y - d3y * d1x;
      q[2] = d3x, q[5] = d3y, q[8] = d3z;
    }
    F0[e] = q[0], F1[e] = q[1], F2[e] = q[2], F3[e] = q[3], F4[e] = q[4], F5[e] = q[5], F6[e] = q[6];
    F7[e] = q[7], F8[e] = q[8];
    redo[e] = again ? 1.0 : 0.0;
    large |= again;
  }
  return large;
}

// The loops below run over [0, n) as whole vectors: [0, n8) with n8 = n rounded down to 8, then the
// last 8 again, [n - 8, n), instead of a scalar remainder loop (up to 7 elements one at a time cost
// more than one more vector of 8; benchmarks/README.md, "rod_cosserat"). They compute each element on
// its own from inputs they do not write, so an element done twice gets the same values.
// (Plain code, not a lambda: a lambda would not inherit the target of the AVX-512/AVX2 clone.)
inline int vectorHead(int n) { return n < 8 ? n : (n & ~7); }
inline bool vectorTail(int n) { return n >= 8 && (n & 7) != 0; }

// redo: scratch of ne (1 where the element was redone with rotateFrame and orthonormalizeRows: a
// rotation of 0.1 rad or more, or for the commit a frame that needed the exact 1/sqrt).
// s: the stride of the structure-of-arrays frames (CosseratRod::gather).
COSSERAT_SIMD_CLONES void rotateFrames(const double* __restrict phi, const double* __restrict Qc,
                                       double* __restrict Q, std::size_t s, int ne, bool orthonormalize,
                                       double* __restrict redo) {
  double *F0 = Q, *F1 = Q + s, *F2 = Q + 2 * s, *F3 = Q + 3 * s, *F4 = Q + 4 * s, *F5 = Q + 5 * s, *F6 = Q + 6 * s,
         *F7 = Q + 7 * s, *F8 = Q + 8 * s;
  int large = 0;
  for (int pass = 0; pass < 2; ++pass) {  // whole vectors: the head, then the last 8 again (vectorHead)
    if (pass == 1 && !vectorTail(ne)) break;
    const int e0 = pass == 0 ? 0 : ne - 8, n = pass == 0 ? vectorHead(ne) : 8;
    large |= orthonormalize ? rotateFramesLoop<true>(phi + 3 * e0, Qc + e0, F0 + e0, F1 + e0, F2 + e0, F3 + e0, F4 + e0,
                                                     F5 + e0, F6 + e0, F7 + e0, F8 + e0, redo + e0, s, n)
                            : rotateFramesLoop<false>(phi + 3 * e0, Qc + e0, F0 + e0, F1 + e0, F2 + e0, F3 + e0,
                                                      F4 + e0, F5 + e0, F6 + e0, F7 + e0, F8 + e0, redo + e0, s, n);
  }
  if (large == 0) return;
  for (int e = 0; e < ne; ++e) {
    const double* p = phi + 3 * e;
    if (redo[e] == 0.0) continue;
    Mat3 C, F;
    for (int k = 0; k < 9; ++k) C.data()[k] = Qc[k * s + e];
    rotateFrame(p[0], p[1], p[2], C, F);
    if (orthonormalize) orthonormalizeRows(F);
    for (int k = 0; k < 9; ++k) Q[k * s + e] = F.data()[k];
  }
}


// The copy of q in setConfiguration (twice per step: evaluation and commit), as a vector loop (clones).
COSSERAT_SIMD_CLONES void copyDofs(double* __restrict to, const double* __restrict from, int n) {
  for (int i = 0; i < n; ++i) to[i] = from[i];
}

// rebaseDofs' φ = 0 in the World's q and in the rod's copy, as a vector loop (clones).
COSSERAT_SIMD_CLONES void zeroDofs(double* __restrict a, double* __restrict b, int n) {
  for (int i = 0; i < n; ++i) a[i] = b[i] = 0.0;
}
}  // namespace

void CosseratRod::bind(World& world) {
  loops_ = worldCapability<ParallelLoops>(world);
  spread_ = loops_ && loops_->threads() > 1 && ne_ >= 2 * kSpreadGrain;
}

void CosseratRod::setConfiguration(ConstVecRef q) {
  if (q.size() != numDofs())
    throw std::invalid_argument("CosseratRod::setConfiguration: expected " + std::to_string(numDofs()) +
                                " DOFs, got " + std::to_string(q.size()));
  if (q.data() != q_.data()) {
    const double* from = q.data();
    double* to = q_.data();
    if (spread_)
      parallelForBlocks(loops_, numDofs(), 6 * kSpreadGrain, [&](int b, int e) { copyDofs(to + b, from + b, e - b); });
    else
      copyDofs(to, from, numDofs());
  }
  frames_ok_ = strains_ok_ = frames_committed_ = false;
}

void CosseratRod::commitConfiguration() {}

void CosseratRod::computeFrames() const {
  const double* phi = q_.data() + rotationDof(0);
  const double* Qc = Qc_.data();
  double* Q = Q_.data();
  double* redo = redo_.data();
  if (!spread_) {
    if (frames_committed_)  // right after rebaseDofs (φ = 0): the committed frames themselves
      copyDofs(Q, Qc, static_cast<int>(Qc_.size()));
    else
      rotateFrames(phi, Qc, Q, ns_, ne_, false, redo);
  } else if (frames_committed_) {
    parallelForBlocks(loops_, static_cast<int>(Qc_.size()), 9 * kSpreadGrain,
                      [&](int b, int e) { copyDofs(Q + b, Qc + b, e - b); });
  } else {  // each block of elements on its own (rotateFrames' elements are independent)
    parallelForBlocks(loops_, ne_, kSpreadGrain, [&](int b, int e) {
      rotateFrames(phi + 3 * b, Qc + b, Q + b, ns_, e - b, false, redo + b);
    });
  }
  frames_ok_ = true;
}

namespace {

// Strains of every element (Eqs. 9, 11): ℓ, t, e, Q d, σ_L = Q d / ℓ̂ - (0, 0, 1), n_L = Ŝ(σ - σ°),
// and straight away the element's shear/stretch terms of the elastic forces (Eqs. 23-24): Qᵀn (the
// force on its nodes) and the couple (Q d) × n, so that Q d and n are never stored (elasticEnergy and
// shearStrain recompute them, shearOf). Q: SoA frames with stride ns (CosseratRod::gather); x: node
// positions; Vec3 outputs 3 per element. One element e from node xa to node xb (xb = xa + 3 inside the
// arrays; node 0 for a ring's closing element, which computeStrains does apart so that the loop below
// keeps its unit stride).
[[gnu::always_inline]] inline void elementStrain(int e, const double* __restrict xa, const double* __restrict xb,
                                                 const double* __restrict Q, std::size_t ns,
                                                 const double* __restrict ilhat, const double* __restrict sigma0,
                                                 double S0, double S1, double S2, double* __restrict l,
                                                 double* __restrict t, double* __restrict e_out, double* __restrict Nf,
                                                 double* __restrict cn) {
  const double* F = Q + e;  // Q(r, c) = F[ns (r + 3 c)]
  const double dx = xb[0] - xa[0], dy = xb[1] - xa[1], dz = xb[2] - xa[2];
  const double le = std::sqrt(dx * dx + dy * dy + dz * dz), il = 1.0 / le, ilh = ilhat[e];  // 1 / ℓ̂
  l[e] = le;
  t[3 * e] = dx * il, t[3 * e + 1] = dy * il, t[3 * e + 2] = dz * il;
  e_out[e] = le * ilh;
  const double ax = F[0] * dx + F[3 * ns] * dy + F[6 * ns] * dz;
  const double ay = F[ns] * dx + F[4 * ns] * dy + F[7 * ns] * dz;
  const double az = F[2 * ns] * dx + F[5 * ns] * dy + F[8 * ns] * dz;
  const double sx = ax * ilh, sy = ay * ilh, sz = az * ilh - 1.0;
  const double* s0 = sigma0 + 3 * e;
  const double nx = S0 * (sx - s0[0]), ny = S1 * (sy - s0[1]), nz = S2 * (sz - s0[2]);
  // Shear/stretch: force Δh(Qᵀ n) on the nodes (Eq. 23), couple (Q d) × n on the element (Eq. 24).
  Nf[3 * e] = F[0] * nx + F[ns] * ny + F[2 * ns] * nz;
  Nf[3 * e + 1] = F[3 * ns] * nx + F[4 * ns] * ny + F[5 * ns] * nz;
  Nf[3 * e + 2] = F[6 * ns] * nx + F[7 * ns] * ny + F[8 * ns] * nz;
  cn[3 * e] = ay * nz - az * ny, cn[3 * e + 1] = az * nx - ax * nz, cn[3 * e + 2] = ax * ny - ay * nx;
}

// Elements 0 .. ne-1, element e from node e to node e+1.
COSSERAT_SIMD_CLONES void elementStrains(const double* __restrict x, const double* __restrict Q, std::size_t ns,
                                         const double* __restrict ilhat, const double* __restrict sigma0,
                                         const double* __restrict S, double* __restrict l, double* __restrict t,
                                         double* __restrict e_out, double* __restrict Nf, double* __restrict cn,
                                         int ne) {
  const double S0 = S[0], S1 = S[1], S2 = S[2];
  // Two vectors per iteration: one element is a chain of dependent operations (sqrt, division, 3x3
  // products), and with one vector of 8 elements in flight the AVX-512 loop has too little to overlap.
  // Two rather than four: four measured slower (benchmarks/README.md, "rod_cosserat").
#pragma GCC unroll 2
  for (int e = 0; e < ne; ++e)
    elementStrain(e, x + 3 * e, x + 3 * e + 3, Q, ns, ilhat, sigma0, S0, S1, S2, l, t, e_out, Nf, cn);
}

// Everything the elastic forces need from node i's curvature θ_i (with c = c(θ), the coefficient of
// the inverse Jacobians): the bending couple m = dE/dθ and energy (Eqs. 8, 10, 20: τ_L D̂-scaled, the
// 1/E³ rescaling with E = D/D̂ of the node's Voronoi domain), and at once (m is not stored) the
// couples of Eq. 24 on its two elements, exact to all orders through the inverse Jacobians of the
// exponential map (Gazzola et al.'s κ × Bκ terms are their first order): J_r⁻¹(θ) m on element i-1 and
// -J_l⁻¹(θ) m on element i, J_{r,l}⁻¹ m = m ± ½ θ×m + c θ×(θ×m), and g = dE/dℓ of each adjacent
// element (the bending energy depends on the Voronoi length D_i through the 1/E³ rescaling of Eq. 10).
// lprev: the length of the element before the node (l[i - 1]; that of element n-1 at a ring's node 0).
[[gnu::always_inline]] inline void nodeTerms(int i, double thx, double thy, double thz, double c, double lprev,
                                             const double* __restrict l, const double* __restrict Dhat,
                                             const double* __restrict theta0, const double* __restrict B,
                                             double* __restrict Ebend, double* __restrict Jp, double* __restrict Jn,
                                             double* __restrict g) {
  const double Dh = Dhat[i], Ei = 0.5 * (lprev + l[i]) / Dh;
  const double k = 1.0 / (Dh * Ei * Ei * Ei);
  const double* t0 = theta0 + 3 * i;
  const double ux = thx - t0[0], uy = thy - t0[1], uz = thz - t0[2];
  const double mx = k * B[0] * ux, my = k * B[1] * uy, mz = k * B[2] * uz;
  const double E = 0.5 * (ux * mx + uy * my + uz * mz);
  Ebend[i] = E;
  const double tx = thy * mz - thz * my, ty = thz * mx - thx * mz, tz = thx * my - thy * mx;  // θ × m
  const double vx = thy * tz - thz * ty, vy = thz * tx - thx * tz, vz = thx * ty - thy * tx;
  const double Ax = mx + c * vx, Ay = my + c * vy, Az = mz + c * vz;
  Jp[3 * i] = Ax + 0.5 * tx, Jp[3 * i + 1] = Ay + 0.5 * ty, Jp[3 * i + 2] = Az + 0.5 * tz;
  Jn[3 * i] = Ax - 0.5 * tx, Jn[3 * i + 1] = Ay - 0.5 * ty, Jn[3 * i + 2] = Az - 0.5 * tz;
  // g three times (once per component), so that elasticForces' g t terms are a flat loop over the
  // components of all nodes (elasticForces, interiorForces).
  const double gi = -3.0 * E / (lprev + l[i]);
  g[3 * i] = gi, g[3 * i + 1] = gi, g[3 * i + 2] = gi;
}

// Curvatures of the interior nodes i = 1 .. ne-1: θ_i = log(Q_{i-1} Q_iᵀ) = D̂ κ̂_L (Eq. 20), as
// geometry::logSO3Curvature computes it, without a branch so that the loop vectorizes across nodes:
// every node takes logSO3's small-angle polynomial (sin²θ < 1e-2, cosθ > 0) and, in the `wide`
// variant, the wide polynomials of 0.1 to 0.46 rad too, selected per node. Returns bit 0 when some
// node is beyond what the variant covers (big[i] = 1 there; the caller redoes these nodes with
// logSO3Curvature) and bit 1 when some node is at 0.1 rad or more. Same operations in the same order
// as logSO3Curvature: bitwise its results, whichever variant ran.
// Two loops: the curvature θ and the coefficient c(θ) of every node (into theta and jc), then the
// bending terms (nodeTerms). Not one loop doing both: each node is a long chain of dependent
// operations (3x3 product, two Horner polynomials, cross products), and a loop body that long leaves
// the processor too few nodes in flight to overlap their chains (benchmarks/README.md, "rod_cosserat").
template <bool wide>
[[gnu::always_inline]] inline int nodeCurvaturesLoop(const double* __restrict Q, std::size_t ns,
                                                     const double* __restrict l, const double* __restrict Dhat,
                                                     const double* __restrict theta0, const double* __restrict B,
                                                     double* __restrict theta, double* __restrict jc,
                                                     double* __restrict Ebend, double* __restrict Jp,
                                                     double* __restrict Jn, double* __restrict g,
                                                     double* __restrict big, int i0, int i1) {
  int large = 0, mid = 0;
  for (int i = i0; i < i1; ++i) {
    const double* P = Q + (i - 1);  // P(a, c) = P[ns (a + 3 c)], element i-1
    const double* F = Q + i;        // element i
    double R[9];                    // R(a, b) = R[3 a + b] = Σ_c P(a, c) F(b, c)
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b)
        R[3 * a + b] = P[ns * a] * F[ns * b] + P[ns * (a + 3)] * F[ns * (b + 3)] + P[ns * (a + 6)] * F[ns * (b + 6)];
    const double wx = R[7] - R[5], wy = R[2] - R[6], wz = R[3] - R[1];  // 2 sinθ u
    const double s2 = 0.25 * (wx * wx + wy * wy + wz * wz);              // sin²θ
    const double tr = R[0] + R[4] + R[8];
    const bool small = (s2 < 1e-2) & (tr > 1.0);
    mid |= !small;
    double f = geometry::asinOverSin(s2), c;
    bool b;
    if constexpr (wide) {
      const double fw = geometry::asinOverSinWide(s2);
      f = small ? f : fw;
      const double t2 = s2 * f * f;
      const double cs = geometry::invJacobianCoefficientSmall(t2), cw = geometry::invJacobianCoefficientWide(t2);
      c = small ? cs : cw;
      b = !((s2 < geometry::kWideS2) & (tr > 1.0));
    } else {
      c = geometry::invJacobianCoefficientSmall(s2 * f * f);
      b = !small;
    }
    large |= b;
    big[i] = b ? 1.0 : 0.0;  // the caller redoes these nodes
    const double h = 0.5 * f, thx = h * wx, thy = h * wy, thz = h * wz;
    theta[3 * i] = thx, theta[3 * i + 1] = thy, theta[3 * i + 2] = thz;
    jc[i] = c;
  }
  for (int i = i0; i < i1; ++i)
    nodeTerms(i, theta[3 * i], theta[3 * i + 1], theta[3 * i + 2], jc[i], l[i - 1], l, Dhat, theta0, B, Ebend, Jp,
              Jn, g);
  return (large ? 1 : 0) | (mid ? 2 : 0);
}

COSSERAT_SIMD_CLONES int nodeCurvatures(const double* __restrict Q, std::size_t ns, const double* __restrict l,
                                        const double* __restrict Dhat, const double* __restrict theta0,
                                        const double* __restrict B, double* __restrict theta,
                                        double* __restrict jc, double* __restrict Ebend, double* __restrict Jp,
                                        double* __restrict Jn, double* __restrict g, double* __restrict big,
                                        int first, int end, bool wide) {
  // nodes first .. end-1 (1 .. ne-1 on one thread; a block of them when spread) in whole vectors (vectorHead)
  int flags = 0;
  const int n = end - first;
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1 && !vectorTail(n)) break;
    const int i0 = pass == 0 ? first : end - 8, i1 = pass == 0 ? first + vectorHead(n) : end;
    flags |= wide ? nodeCurvaturesLoop<true>(Q, ns, l, Dhat, theta0, B, theta, jc, Ebend, Jp, Jn, g, big, i0, i1)
                  : nodeCurvaturesLoop<false>(Q, ns, l, Dhat, theta0, B, theta, jc, Ebend, Jp, Jn, g, big, i0, i1);
  }
  return flags;
}

}  // namespace

void CosseratRod::computeStrains() const {
  ensureFrames();  // Q = exp(-[φ]) Q_committed, a vectorized pass of its own
  const std::size_t ns = ns_;
  // A ring's closing element (its second node is node 0) is done by closeStrains below.
  const int open_elements = closed_ ? ne_ - 1 : ne_;
  if (!spread_) {
    elementStrains(q_.data(), Q_.data(), ns, ilhat_.data(), sigma0_.front().data(), S_.data(), l_.data(),
                   t_.front().data(), e_.data(), Nf_.data(), cn_.front().data(), open_elements);
  } else {  // blocks of elements (each element reads its own frame and its two nodes only)
    parallelForBlocks(loops_, open_elements, kSpreadGrain, [&](int b, int e) {
      elementStrains(q_.data() + 3 * b, Q_.data() + b, ns, ilhat_.data() + b, sigma0_.front().data() + 3 * b,
                     S_.data(), l_.data() + b, t_.front().data() + 3 * b, e_.data() + b, Nf_.data() + 3 * b,
                     cn_.front().data() + 3 * b, e - b);
    });
  }
  if (closed_) closeStrains();
  // The wide variant (polynomials to 0.46 rad) when the last evaluation had curvatures of 0.1 rad or
  // more (a bent rod, the snake); the plain one otherwise. Either gives the same values (the nodes
  // a variant does not cover are redone below with logSO3Curvature): only the cost differs.
  auto curvatures = [&](int first, int end) {
    return nodeCurvatures(Q_.data(), ns, l_.data(), Dhat_.data(), theta0_.front().data(), B_.data(),
                          theta_.front().data(), jc_.data(), Ebend_.data(), Jp_.data(), Jn_.data(), g_.data(),
                          big_.data(), first, end, wide_curvatures_);
  };
  int flags = 0;
  if (!spread_) {
    flags = curvatures(1, ne_);
  } else {  // blocks of nodes 1 .. ne-1 (node i reads the frames and lengths of elements i-1 and i); flags ORed
    std::atomic<int> any{0};
    parallelForBlocks(loops_, ne_ - 1, kSpreadGrain,
                      [&](int b, int e) { any.fetch_or(curvatures(1 + b, 1 + e), std::memory_order_relaxed); });
    flags = any.load(std::memory_order_relaxed);
  }
  wide_curvatures_ = (flags & 2) != 0;
  if (flags & 1) {
    // Curvatures beyond the variant's polynomials: logSO3Curvature (the wide polynomials below 0.46 rad,
    // the closed forms above).
    for (int i = 1; i < ne_; ++i) {
      if (big_[i] == 0.0) continue;  // done by nodeCurvatures
      const Mat3 P = gather(Q_, i - 1), F = gather(Q_, i);
      Mat3 R;  // as nodeCurvatures sums it
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) R(a, b) = P(a, 0) * F(b, 0) + P(a, 1) * F(b, 1) + P(a, 2) * F(b, 2);
      double c;
      const Vec3 th = geometry::logSO3Curvature(R, c);
      theta_[i] = th;
      nodeTerms(i, th.x(), th.y(), th.z(), c, l_[i - 1], l_.data(), Dhat_.data(), theta0_.front().data(), B_.data(),
                Ebend_.data(), Jp_.data(), Jn_.data(), g_.data());
    }
  }
  if (!bend_twist_rescaling_) removeBendTwistRescaling();
  if (written_force_law_) applyWrittenForceLaw();
  frames_ok_ = strains_ok_ = true;
}

// force_law = "gazzola2018": Eqs. 23-24 as written. The nodal force is Δh(QᵀŜσ/e) and the shear couple
// (Q t × Ŝσ) ℓ̂, i.e. the element force Qᵀn and couple (Q d) × n = e ℓ̂ (Q t × n) that computeStrains
// prepared, both divided by the dilatation; no force from the bending energy (g = dE/dℓ left out).
// The missing g is what makes the law gain energy (docs/validation/cosserat.md, the released arc).
// Not in the vectorized passes: the default law must not pay for it.
void CosseratRod::applyWrittenForceLaw() const {
  for (int e = 0; e < ne_; ++e) {
    const double inv_e = 1.0 / e_[e];
    for (int k = 0; k < 3; ++k) Nf_[3 * e + k] *= inv_e;
    cn_[e] *= inv_e;
  }
  std::fill(g_.begin(), g_.end(), 0.0);
}

// bend_twist_rescaling = false: the couple m = B̂ (θ - θ°) / D̂ at every stretch instead of Eq. 10's
// B̂ (θ - θ°) / (D̂ E³). nodeTerms' outputs are linear in m (the energy ½ (θ - θ°)ᵀ m, the couples
// J⁻¹ m), so multiplying them by E³ gives the unrescaled ones; the energy then does not depend on
// the lengths, so g = 0. After the vectorized passes, like applyWrittenForceLaw.
void CosseratRod::removeBendTwistRescaling() const {
  for (int i = closed_ ? 0 : 1; i < ne_; ++i) {  // the nodes with a curvature
    const double E = 0.5 * (l_[i == 0 ? ne_ - 1 : i - 1] + l_[i]) / Dhat_[i], E3 = E * E * E;
    Ebend_[i] *= E3;
    for (int k = 0; k < 3; ++k) Jp_[3 * i + k] *= E3, Jn_[3 * i + k] *= E3;
  }
  std::fill(g_.begin(), g_.end(), 0.0);
}

// A ring: strains of the closing element n-1 (node n-1 to node 0) and the curvature at the junction
// node 0 between element n-1 and element 0, θ_0 = log(Q_{n-1} Q_0ᵀ) (Eq. 20), with the bending couple
// of Eqs. 8, 10 on the Voronoi length of node 0 (the two wrapped half elements). The same formulas as
// the vectorized loops, for one element and one node; logSO3 in full (any angle).
void CosseratRod::closeStrains() const {
  const std::size_t ns = ns_;
  const int e = ne_ - 1;
  elementStrain(e, q_.data() + 3 * e, q_.data(), Q_.data(), ns, ilhat_.data(), sigma0_.front().data(), S_[0], S_[1],
                S_[2], l_.data(), t_.front().data(), e_.data(), Nf_.data(), cn_.front().data());
  const Mat3 P = gather(Q_, e), F = gather(Q_, 0);
  double c;
  const Vec3 th = geometry::logSO3(P * F.transpose(), &c);
  theta_[0] = th;
  nodeTerms(0, th.x(), th.y(), th.z(), c, l_[e], l_.data(), Dhat_.data(), theta0_.front().data(), B_.data(),
            Ebend_.data(), Jp_.data(), Jn_.data(), g_.data());
}

void CosseratRod::rebaseDofs(VecRef q, VecRef /*v*/) {
  // The committed frames become the current ones, re-orthonormalized against round-off drift, and
  // φ = 0. (The kernel calls setConfiguration(q) right before, so the frames are stale: computing
  // them here again, in the same vectorized pass as the Gram-Schmidt, costs nothing extra.) The new
  // frames are swapped into Qc_ instead of copied; the current frames, equal to them while φ = 0, are
  // copied from them only if something asks before the next setConfiguration (computeFrames).
  const int r0 = rotationDof(0);
  double* phi = q.data() + r0;
  double* phi_own = q_.data() + r0;
  if (!spread_) {
    rotateFrames(phi, Qc_.data(), Q_.data(), ns_, ne_, true, redo_.data());
  } else {  // blocks of elements, each on its own as in computeFrames
    parallelForBlocks(loops_, ne_, kSpreadGrain, [&](int b, int e) {
      rotateFrames(phi + 3 * b, Qc_.data() + b, Q_.data() + b, ns_, e - b, true, redo_.data() + b);
      zeroDofs(phi + 3 * b, phi_own + 3 * b, 3 * (e - b));  // φ is read above, element by element, before
    });
  }
  Qc_.swap(Q_);
  if (!spread_) zeroDofs(phi, phi_own, 3 * ne_);
  frames_ok_ = strains_ok_ = false;
  frames_committed_ = true;
}

void CosseratRod::drift(VecRef q, ConstVecRef v, const double* free, double h) const {
  const int r0 = rotationDof(0);
  if (spread_) {  // the same per DOF and per element, in blocks
    parallelForBlocks(loops_, r0, 6 * kSpreadGrain, [&](int b, int e) {
      for (int k = b; k < e; ++k) q[k] += h * v[k] * free[k];
    });
    parallelForBlocks(loops_, ne_, kSpreadGrain, [&](int b, int e) { driftRotations(q, v, free, h, b, e); });
    return;
  }
  for (int k = 0; k < r0; ++k) q[k] += h * v[k] * free[k];
  driftRotations(q, v, free, h, 0, ne_);
}

void CosseratRod::driftRotations(VecRef q, ConstVecRef v, const double* free, double h, int first, int end) const {
  const int r0 = rotationDof(0);
  for (int e = first; e < end; ++e) {
    const int r = r0 + 3 * e;
    if (free[r] == 0 || free[r + 1] == 0 || free[r + 2] == 0) {  // partly held: per component
      for (int k = r; k < r + 3; ++k) q[k] += h * v[k] * free[k];
      continue;
    }
    const Vec3 phi = q.segment<3>(r), dphi = h * v.segment<3>(r);
    q.segment<3>(r) = geometry::logSO3(geometry::expSO3(phi) * geometry::expSO3(dphi));
  }
}

Vec3 CosseratRod::curvature(int i) const {
  if (i < (closed_ ? 0 : 1) || i >= ne_) throw std::out_of_range("CosseratRod::curvature: node " + std::to_string(i) + " is not interior");
  ensureStrains();
  return theta_[i] / Dhat_[i];
}

void CosseratRod::saveState(std::vector<double>& out) const {
  for (int e = 0; e < ne_; ++e) {  // 9 numbers per element, column-major (a Mat3's data: the checkpoint format)
    const Mat3 Q = gather(Qc_, e);
    out.insert(out.end(), Q.data(), Q.data() + 9);
  }
}

void CosseratRod::loadState(const std::vector<double>& in) {
  if (in.size() != 9 * static_cast<std::size_t>(ne_))
    throw std::runtime_error("checkpoint holds " + std::to_string(in.size()) + " numbers for rod '" + name() +
                             "', expected " + std::to_string(9 * ne_) + " (another number of nodes?)");
  for (int e = 0; e < ne_; ++e) {
    Mat3 Q;
    std::copy(in.begin() + 9 * e, in.begin() + 9 * e + 9, Q.data());
    scatter(Qc_, e, Q);
  }
  frames_ok_ = strains_ok_ = frames_committed_ = false;
}

// ------------------------------------------------------------------------ energy and forces

// σ_L and n_L of element e, with the operations of elementStrain (bitwise its values).
void CosseratRod::shearOf(int e, Vec3& sigma, Vec3& n) const {
  ensureStrains();
  const std::size_t ns = ns_;
  const double* F = Q_.data() + e;
  const double* xa = q_.data() + 3 * e;
  const double* xb = q_.data() + 3 * next(e);
  const double dx = xb[0] - xa[0], dy = xb[1] - xa[1], dz = xb[2] - xa[2];
  const double ilh = ilhat_[e];
  const double ax = F[0] * dx + F[3 * ns] * dy + F[6 * ns] * dz;
  const double ay = F[ns] * dx + F[4 * ns] * dy + F[7 * ns] * dz;
  const double az = F[2 * ns] * dx + F[5 * ns] * dy + F[8 * ns] * dz;
  const double sx = ax * ilh, sy = ay * ilh, sz = az * ilh - 1.0;
  const Vec3& s0 = sigma0_[e];
  sigma = Vec3(sx, sy, sz);
  n = Vec3(S_[0] * (sx - s0[0]), S_[1] * (sy - s0[1]), S_[2] * (sz - s0[2]));
}

Vec3 CosseratRod::shearStrain(int e) const {
  Vec3 sigma, n;
  shearOf(e, sigma, n);
  return sigma;
}

double CosseratRod::elasticEnergy() const {
  ensureStrains();
  double E = 0;
  if (ne_ <= kEnergyChunk) {
    for (int e = 0; e < ne_; ++e) {
      Vec3 sigma, n;
      shearOf(e, sigma, n);
      E += 0.5 * lhat_[e] * (sigma - sigma0_[e]).dot(n);
    }
    for (int i = 1; i < ne_; ++i) E += Ebend_[i];
  } else {
    // A long rod sums chunks of kEnergyChunk elements (nodes) on their own, each in order, then the
    // chunks in order: a fixed order whatever the thread count, so the chunks may be spread over the
    // threads and the energy stays bit for bit that of one thread.
    const int chunks = (ne_ + kEnergyChunk - 1) / kEnergyChunk;
    double* partial = energy_chunks_.data();  // shear/stretch of chunk c at [c], bend/twist at [chunks + c]
    auto sum = [&](int c0, int c1) {
      for (int c = c0; c < c1; ++c) {
        const int e0 = c * kEnergyChunk, e1 = std::min(ne_, e0 + kEnergyChunk);
        double s = 0, b = 0;
        for (int e = e0; e < e1; ++e) {
          Vec3 sigma, n;
          shearOf(e, sigma, n);
          s += 0.5 * lhat_[e] * (sigma - sigma0_[e]).dot(n);
        }
        for (int i = std::max(e0, 1); i < e1; ++i) b += Ebend_[i];
        partial[c] = s;
        partial[chunks + c] = b;
      }
    };
    if (spread_)
      parallelForBlocks(loops_, chunks, 1, sum);
    else
      sum(0, chunks);
    for (int c = 0; c < chunks; ++c) E += partial[c];
    for (int c = 0; c < chunks; ++c) E += partial[chunks + c];
  }
  if (closed_) E += Ebend_[0];  // the junction of a ring
  return E;
}


namespace {

// The forces on the nodes that have all their neighbours (elasticForces): entries i0 .. i1-1 of f, i.e.
// components of nodes i0/3 .. i1/3 - 1, as one flat loop over the components. Every array holds 3
// numbers per node or element (g: dE/dℓ once per component), so entry i of node j reads entries i and
// i ± 3 only: no component mixing, no shuffles in the vector loop (interleaved x, y, z are read as they
// are stored). The same sums, in the same order, as elasticForces' node(j).
[[gnu::always_inline]] inline void interiorForces(const double* __restrict t, const double* __restrict Nf,
                                                  const double* __restrict g, double* __restrict f, int i0, int i1) {
#pragma GCC unroll 2
  for (int i = i0; i < i1; ++i)
    f[i] = ((((f[i] - Nf[i - 3]) + Nf[i]) - g[i - 3] * t[i - 3]) - g[i] * (t[i - 3] - t[i])) + g[i + 3] * t[i];
}

// The elastic forces and couples (Eqs. 23-24) as passes over elements and nodes that vectorize:
// first the per-element and per-node terms into scratch arrays, then each node's force and each
// element's couple gathered from its neighbours, summed in the order of a scatter loop over elements
// and then nodes (element e's terms before element e+1's, then node i's before node i+1's), so
// bitwise the sums of that plain loop (cosserat_reference.cpp adds the same terms in its own order).
// The end nodes and elements, which lack some neighbours, are done apart (adding a zero instead
// would turn -0 into +0).
COSSERAT_SIMD_CLONES void elasticForces(const double* __restrict t, const double* __restrict Nf,
                                        const double* __restrict cn, const double* __restrict Jp,
                                        const double* __restrict Jn, const double* __restrict g,
                                        double* __restrict couple, double* __restrict f, double* __restrict fr, int ne,
                                        bool closed, bool interiors) {
  // Shear/stretch: Nf = Qᵀn and cn = (Q d) × n per element (elementStrains); bend/twist: J_r⁻¹m,
  // J_l⁻¹m and g = dE/dℓ per node (nodeCurvatures, nodeTerms).
  // Couples: element e takes -J_l⁻¹m of node e, then J_r⁻¹m of node e+1. On an open rod the first
  // element has no node 0 term and the last no node ne term; on a ring (closed) node 0 is the
  // junction: the first element takes its -J_l⁻¹m, the last element its J_r⁻¹m.
  // The couple is stored (addVelocityForce multiplies it by e - 1) and added to fr in the same pass.
  if (closed) {
    for (int k = 0; k < 3; ++k) couple[k] = (cn[k] - Jn[k]) + Jp[3 + k];
  } else {
    for (int k = 0; k < 3; ++k) couple[k] = cn[k] + Jp[3 + k];
  }
  for (int k = 0; k < 3; ++k) fr[k] += couple[k];
  if (interiors)  // (else the caller does elements 1 .. ne-2 in blocks: interiorCouples)
    for (int i = 3; i < 3 * (ne - 1); ++i) {  // elements 1 .. ne-2, flat over their components
      const double c = (cn[i] - Jn[i]) + Jp[i + 3];
      couple[i] = c;
      fr[i] += c;
    }
  const int last = 3 * (ne - 1);
  if (closed) {
    for (int k = 0; k < 3; ++k) couple[last + k] = (cn[last + k] - Jn[last + k]) + Jp[k];
  } else {
    for (int k = 0; k < 3; ++k) couple[last + k] = cn[last + k] - Jn[last + k];
  }
  for (int k = 0; k < 3; ++k) fr[last + k] += couple[last + k];
  // Forces: node j takes -Qᵀn of element j-1, Qᵀn of element j, then the bending terms of nodes
  // j-1 (-g t_{j-1}), j (-g (t_{j-1} - t_j)) and j+1 (g t_j). g is stored once per component
  // (nodeTerms), so component k of node j only reads entries 3j + k and 3j + k ± 3 of every array.
  auto node = [&](int j) {  // any node, neighbours checked
    for (int k = 0; k < 3; ++k) {
      const int i = 3 * j + k;
      double v = f[i];
      if (j >= 1) v -= Nf[i - 3];
      if (j < ne) v += Nf[i];
      if (j - 1 >= 1) v -= g[i - 3] * t[i - 3];
      if (j >= 1 && j < ne) v -= g[i] * (t[i - 3] - t[i]);
      if (j + 1 < ne) v += g[i + 3] * t[i];
      f[i] = v;
    }
  };
  if (closed) {
    // A ring has ne nodes, each between elements j-1 and j (indices mod ne), with curvature nodes
    // j-1, j and j+1 around it: the loop does nodes 1 .. ne-2, the two next to the junction wrap.
    auto wrapped = [&](int j) {
      const int jm = (j + ne - 1) % ne, jp = (j + 1) % ne;
      for (int k = 0; k < 3; ++k)
        f[3 * j + k] = ((((f[3 * j + k] - Nf[3 * jm + k]) + Nf[3 * j + k]) - g[3 * jm + k] * t[3 * jm + k]) -
                        g[3 * j + k] * (t[3 * jm + k] - t[3 * j + k])) +
                       g[3 * jp + k] * t[3 * j + k];
    };
    wrapped(0);
    if (interiors) interiorForces(t, Nf, g, f, 3, 3 * (ne - 1));
    wrapped(ne - 1);
    return;
  }
  node(0);
  node(1);
  if (interiors) interiorForces(t, Nf, g, f, 6, 3 * (ne - 1));
  if (ne - 1 > 1) node(ne - 1);
  node(ne);
}

// elasticForces' two interior loops on entries i0 .. i1-1 (a block of elements, spread over threads):
// the couples of elements 1 .. ne-2 and the forces of the interior nodes, with the same operations.
COSSERAT_SIMD_CLONES void interiorCouples(const double* __restrict cn, const double* __restrict Jn,
                                          const double* __restrict Jp, double* __restrict couple,
                                          double* __restrict fr, int i0, int i1) {
  for (int i = i0; i < i1; ++i) {
    const double c = (cn[i] - Jn[i]) + Jp[i + 3];
    couple[i] = c;
    fr[i] += c;
  }
}
COSSERAT_SIMD_CLONES void interiorNodeForces(const double* __restrict t, const double* __restrict Nf,
                                             const double* __restrict g, double* __restrict f, int i0, int i1) {
  interiorForces(t, Nf, g, f, i0, i1);
}

}  // namespace

void CosseratRod::addElasticForce(VecRef fv) const {
  ensureStrains();
  double* f = fv.data();
  double* fr = f + rotationDof(0);
  elasticForces(t_.front().data(), Nf_.data(), cn_.front().data(), Jp_.data(), Jn_.data(), g_.data(),
                couple_.front().data(), f, fr, ne_, closed_, !spread_);
  if (!spread_) return;
  // The interior elements' couples and nodes' forces in blocks of elements: each entry is written by
  // one block, from the per-element and per-node terms computeStrains prepared.
  const int first_node = closed_ ? 1 : 2;  // elasticForces did nodes 0, 1 (open) or 0 (ring) itself
  parallelForBlocks(loops_, ne_, kSpreadGrain, [&](int b, int e) {
    const int end = std::min(e, ne_ - 1);
    if (std::max(b, 1) < end)
      interiorCouples(cn_.front().data(), Jn_.data(), Jp_.data(), couple_.front().data(), fr, 3 * std::max(b, 1), 3 * end);
    if (std::max(b, first_node) < end)
      interiorNodeForces(t_.front().data(), Nf_.data(), g_.data(), f, 3 * std::max(b, first_node), 3 * end);
  });
}

namespace {

// The couples of addVelocityForce on element e (vectorized across elements): w = ω and dv = v_b - v_a
// (the velocities of its nodes a and b), each already (q - qs) (1/dt), with the roundings of that
// per-element expression (velocityCouples); fe: the element's three rotation DOFs. `damped` (γ_r != 0) adds the rotational damping of Eq. 32:
// without it the term is -(+0 ω), which leaves every sum as it is (bar an exactly -0 sum: see
// velocityCouples), so it is not computed.
template <bool damped>
[[gnu::always_inline]] inline void velocityCouple(double wx, double wy, double wz, double dvx, double dvy, double dvz,
                                                  double J0, double J1, double J2, double gamma_r, double lh,
                                                  double ee, const double* __restrict t, const double* __restrict C,
                                                  double* __restrict fe) {
  const double tx = t[0], ty = t[1], tz = t[2];
  const double edot = (tx * dvx + ty * dvy + tz * dvz) / lh;
  const double Jx = lh * J0 * wx, Jy = lh * J1 * wy, Jz = lh * J2 * wz;  // Ĵ ω
  const double cd = edot / ee, em1 = ee - 1.0;
  const double Cx = C[0], Cy = C[1], Cz = C[2];
  if constexpr (damped) {
    const double gr = gamma_r * lh * ee * ee;
    fe[0] += em1 * Cx + (Jy * wz - Jz * wy) + cd * Jx - gr * wx;
    fe[1] += em1 * Cy + (Jz * wx - Jx * wz) + cd * Jy - gr * wy;
    fe[2] += em1 * Cz + (Jx * wy - Jy * wx) + cd * Jz - gr * wz;
  } else {
    fe[0] += em1 * Cx + (Jy * wz - Jz * wy) + cd * Jx;
    fe[1] += em1 * Cy + (Jz * wx - Jx * wz) + cd * Jy;
    fe[2] += em1 * Cz + (Jx * wy - Jy * wx) + cd * Jz;
  }
}

// Elements 0 .. ne-1, element e from node e to node e+1. q, qs: the rod's DOFs now and at the start of
// the evaluation (x from index 0, φ from r0); f: the rotation DOFs; vel: scratch of 6 ne.
// First, as flat loops over the components (unit stride, no shuffles), the angular velocities
// w = (q_φ - qs_φ) (1/dt) and the node velocity differences dv = ((q_b - qs_b) - (q_a - qs_a)) (1/dt)
// (b = a + 3: entry i and i + 3), with the operations of the per-element expressions; then the
// per-element loop reads two interleaved arrays instead of the six of q and qs (reading those would
// take deinterleaving shuffles, more instructions than the arithmetic: benchmarks/README.md). The damping term is skipped when γ_r = 0: that changes a
// sum only if it is exactly -0 (it would become +0), i.e. never in practice.
COSSERAT_SIMD_CLONES void velocityCouples(const double* __restrict q, const double* __restrict qs, int r0,
                                          double idt, const double* __restrict J, double gamma_r,
                                          const double* __restrict lhat, const double* __restrict ee_,
                                          const double* __restrict t, const double* __restrict couple,
                                          double* __restrict f, double* __restrict vel, int ne) {
  const double J0 = J[0], J1 = J[1], J2 = J[2];
  double* __restrict w = vel;
  double* __restrict dv = vel + 3 * ne;
  const double* __restrict qr = q + r0;
  const double* __restrict qsr = qs + r0;
#pragma GCC unroll 2
  for (int i = 0; i < 3 * ne; ++i) w[i] = (qr[i] - qsr[i]) * idt;
#pragma GCC unroll 2
  for (int i = 0; i < 3 * ne; ++i) dv[i] = ((q[i + 3] - qs[i + 3]) - (q[i] - qs[i])) * idt;
  if (gamma_r != 0.0) {
#pragma GCC unroll 2  // two vectors in flight, as elementStrains
    for (int e = 0; e < ne; ++e)
      velocityCouple<true>(w[3 * e], w[3 * e + 1], w[3 * e + 2], dv[3 * e], dv[3 * e + 1], dv[3 * e + 2], J0, J1, J2,
                           gamma_r, lhat[e], ee_[e], t + 3 * e, couple + 3 * e, f + 3 * e);
  } else {
#pragma GCC unroll 2  // two vectors in flight, as elementStrains
    for (int e = 0; e < ne; ++e)
      velocityCouple<false>(w[3 * e], w[3 * e + 1], w[3 * e + 2], dv[3 * e], dv[3 * e + 1], dv[3 * e + 2], J0, J1, J2,
                            gamma_r, lhat[e], ee_[e], t + 3 * e, couple + 3 * e, f + 3 * e);
  }
}

}  // namespace

// Eq. 24 multiplied by e (the rotational inertia is Ĵ/e, the lumped mass is Ĵ):
//   Ĵ dω/dt = e C + (Ĵω) × ω + Ĵ ω ė / e,
// so besides the elastic couple C (addElasticForce) this adds (e - 1) C, the Lagrangian transport
// (gyroscopic) term, the unsteady dilatation term and the rotational damping of Eq. 32.
void CosseratRod::addVelocityForce(const EvalContext& ctx, VecRef fv) const {
  if (ctx.quasi_static || !(ctx.dt > 0)) return;
  ensureStrains();
  // ctx.velocity(i) = (q_i - q_start_i) / dt, read in place.
  const int off = dofOffset(), r0 = rotationDof(0);
  const double* q = ctx.q->data() + off;
  const double* qs = ctx.q_start->data() + off;
  const double idt = 1.0 / ctx.dt;
  double* fr = fv.data() + r0;
  const int open_elements = closed_ ? ne_ - 1 : ne_;
  if (!spread_) {
    velocityCouples(q, qs, r0, idt, J_.data(), gamma_r_, lhat_.data(), e_.data(), t_.front().data(),
                    couple_.front().data(), fr, vel_.data(), open_elements);
  } else {  // blocks of elements: element e reads its rotation DOFs and its two nodes, writes its couple
    double* vel = vel_.data();
    parallelForBlocks(loops_, open_elements, kSpreadGrain, [&](int b, int e) {
      velocityCouples(q + 3 * b, qs + 3 * b, r0, idt, J_.data(), gamma_r_, lhat_.data() + b, e_.data() + b,
                      t_.front().data() + 3 * b, couple_.front().data() + 3 * b, fr + 3 * b, vel + 6 * b, e - b);
    });
  }
  if (closed_) {  // the closing element of a ring, node n-1 to node 0
    const int e = ne_ - 1, a = 3 * e, r = r0 + 3 * e;
    const double wx = (q[r] - qs[r]) * idt, wy = (q[r + 1] - qs[r + 1]) * idt, wz = (q[r + 2] - qs[r + 2]) * idt;
    const double dvx = ((q[0] - qs[0]) - (q[a] - qs[a])) * idt;
    const double dvy = ((q[1] - qs[1]) - (q[a + 1] - qs[a + 1])) * idt;
    const double dvz = ((q[2] - qs[2]) - (q[a + 2] - qs[a + 2])) * idt;
    if (gamma_r_ != 0.0)
      velocityCouple<true>(wx, wy, wz, dvx, dvy, dvz, J_[0], J_[1], J_[2], gamma_r_, lhat_[e], e_[e],
                           t_.front().data() + 3 * e, couple_.front().data() + 3 * e, fr + 3 * e);
    else
      velocityCouple<false>(wx, wy, wz, dvx, dvy, dvz, J_[0], J_[1], J_[2], gamma_r_, lhat_[e], e_[e],
                            t_.front().data() + 3 * e, couple_.front().data() + 3 * e, fr + 3 * e);
  }
}

// ------------------------------------------------------------------------ frames and torques

void CosseratRod::materialFrame(int edge, Vec3& t, Vec3& m1, Vec3& m2) const {
  ensureFrames();
  // Rows d1, d2, d3 of the frame, read from the structure-of-arrays store (gather) directly.
  const double* F = Q_.data() + edge;  // Q(r, c) = F[s (r + 3 c)]
  const std::size_t s = ns_;
  m1 = Vec3(F[0], F[3 * s], F[6 * s]);
  m2 = Vec3(F[s], F[4 * s], F[7 * s]);
  t = Vec3(F[2 * s], F[5 * s], F[8 * s]);  // d3 (not exactly the tangent when the rod shears)
}

double CosseratRod::twistForDirector(int edge, const Vec3& m1) const {
  ensureFrames();
  const double current = q_[twistDof(edge)];
  const Mat3 Q = gather(Q_, edge);
  const Vec3 d1 = Q.row(0).transpose(), d2 = Q.row(1).transpose();
  const double x = m1.dot(d1), y = m1.dot(d2);
  if (std::hypot(x, y) <= 1e-14 * m1.norm()) return current;
  // A rotation δ about d3 of the current frame changes the d3 component of φ by δ (exactly when the
  // other two components are zero, as after every step).
  return current + std::atan2(y, x);
}

// ------------------------------------------------------------------------------------ stiffness

// The Hessian of U = Σ_e U_shear,e + Σ_i U_bend,i, one term at a time (shear_stretch_energy.h,
// bend_twist_energy.h), with respect to the DOFs as setConfiguration reads them: a rotation vector φ
// that Newton has moved off 0 is differentiated through the Jacobians of the exponential map. Every
// entry of each term's block is sent (the solver's assembly sums repeated entries), in the same order
// on every call, so its pattern stays cached.
void CosseratRod::addStiffness(StiffnessSink& K) const {
  if (written_force_law_)
    throw ParamError(
        "force_law",
        "force_law = \"gazzola2018\" (Eqs. 23-24 as written) is not the gradient of an energy, so the "
        "cosserat rod has no stiffness matrix for it: use force_law = \"energy\" with the implicit-euler and "
        "static solvers, or an explicit solver (position-verlet, pefrl)");
  ensureFrames();
  const int off = dofOffset();
  for (int e = 0; e < ne_; ++e) rotation_jacobians_[e] = cosserat::rotationDofJacobians(q_.segment<3>(rotationDof(e)));
  auto x = [&](int node) { return Vec3(q_.segment<3>(positionDof(node))); };
  // Shear/stretch of element e over [x_a, x_b, φ_e] (Eqs. 9, 11).
  for (int e = 0; e < ne_; ++e) {
    const int a = e, b = next(e), r = off + rotationDof(e);
    const cosserat::ShearStretchElement element{lhat_[e], S_, sigma0_[e]};
    cosserat::Mat9 H;
    cosserat::shearStretchEnergy(x(a), x(b), gather(Q_, e), rotation_jacobians_[e], element, nullptr, &H);
    const int pa = off + positionDof(a), pb = off + positionDof(b);
    const int dofs[9] = {pa, pa + 1, pa + 2, pb, pb + 1, pb + 2, r, r + 1, r + 2};
    K.addBlock(dofs, H);
  }
  // Bend/twist of node i between element p and element i over [x_p, x_i, x_next, φ_p, φ_i] (Eqs. 8, 10,
  // 20); without the rescaling only the φ block is not zero.
  for (int i = closed_ ? 0 : 1; i < ne_; ++i) {
    const int p = i == 0 ? ne_ - 1 : i - 1, j = next(i);
    const cosserat::BendTwistNode node{Dhat_[i], B_, theta0_[i], bend_twist_rescaling_};
    cosserat::Mat15 H;
    cosserat::bendTwistEnergy(x(p), x(i), x(j), gather(Q_, p), gather(Q_, i), rotation_jacobians_[p],
                              rotation_jacobians_[i], node, nullptr, &H);
    const int rp = off + rotationDof(p), ri = off + rotationDof(i);
    if (!bend_twist_rescaling_) {
      const int dofs[6] = {rp, rp + 1, rp + 2, ri, ri + 1, ri + 2};
      K.addBlock(dofs, H.block<6, 6>(9, 9));
      continue;
    }
    const int xp = off + positionDof(p), xi = off + positionDof(i), xj = off + positionDof(j);
    const int dofs[15] = {xp, xp + 1, xp + 2, xi, xi + 1, xi + 2, xj, xj + 1, xj + 2,
                          rp, rp + 1, rp + 2, ri, ri + 1, ri + 2};
    K.addBlock(dofs, H);
  }
}

void CosseratRod::addElasticForceOfDofs(VecRef f) const {
  // The couples C_e of addElasticForce are -∂U/∂a for Q_e -> exp(-[a]) Q_e; a change δ of φ_e is
  // a = J_r(φ_e) δ, so -∂U/∂φ_e = J_r(φ_e)ᵀ C_e = J_l(φ_e) C_e.
  addElasticForce(f);
  for (int e = 0; e < ne_; ++e) {
    const int r = rotationDof(e);
    const Vec3 C = couple_[e];
    const Mat3 Jl = cosserat::matrixOf(cosserat::leftJacobianCoefficients(q_.segment<3>(r).squaredNorm()), q_.segment<3>(r));
    f.segment<3>(r) += Jl * C - C;
  }
}

namespace {

// addNodeTorque for elements 0 .. n-1 (node k's torque on element k), one pass vectorized across
// elements with addNodeTorque's operations in its order (bitwise its sums).
COSSERAT_SIMD_CLONES void addElementTorques(const double* __restrict Q, std::size_t s, const double* __restrict ee_,
                                            const double* __restrict T, double* __restrict fr, int n) {
  for (int e = 0; e < n; ++e) {
    const double* F = Q + e;
    const double ee = ee_[e], T0 = T[3 * e], T1 = T[3 * e + 1], T2 = T[3 * e + 2];
    double* f = fr + 3 * e;
    f[0] += ((ee * F[0]) * T0 + (ee * F[3 * s]) * T1) + (ee * F[6 * s]) * T2;
    f[1] += ((ee * F[s]) * T0 + (ee * F[4 * s]) * T1) + (ee * F[7 * s]) * T2;
    f[2] += (ee * F[2 * s]) * T0 + ((ee * F[5 * s]) * T1 + (ee * F[8 * s]) * T2);
  }
}

}  // namespace

void CosseratRod::addNodeTorques(const double* T, VecRef f) const {
  // Nodes 0 .. numEdges()-1 = nn_-2 act on elements 0 .. nn_-2 (addNodeTorque's element of a node);
  // a ring's closing element nn_-1 takes no torque here, as with addNodeTorque over those nodes.
  ensureStrains();
  addElementTorques(Q_.data(), ns_, e_.data(), T, f.data() + rotationDof(0), numEdges());
}

void CosseratRod::addNodeTorque(int node, const Vec3& T, VecRef f) const {
  if (node < 0 || node >= nn_) throw std::out_of_range("CosseratRod::addNodeTorque: node " + std::to_string(node));
  const int e = node < ne_ ? node : ne_ - 1;
  ensureStrains();
  // External couple C_L = Q T on the element, times e as in addVelocityForce, read from the
  // structure-of-arrays frames without gathering a Mat3. The roundings are those of the Eigen
  // expression e * (Q * T) (Eigen 3.4, SSE2: e folded into Q, rows 0 and 1 summed left to right as
  // one packet, row 2 as a reduction), so results are bitwise that expression's.
  const double* F = Q_.data() + e;  // Q(r, c) = F[s (r + 3 c)]
  const std::size_t s = ns_;
  const double ee = e_[e], T0 = T[0], T1 = T[1], T2 = T[2];
  double* fr = f.data() + rotationDof(e);
  fr[0] += ((ee * F[0]) * T0 + (ee * F[3 * s]) * T1) + (ee * F[6 * s]) * T2;
  fr[1] += ((ee * F[s]) * T0 + (ee * F[4 * s]) * T1) + (ee * F[7 * s]) * T2;
  fr[2] += (ee * F[2 * s]) * T0 + ((ee * F[5 * s]) * T1 + (ee * F[8 * s]) * T2);
}

}  // namespace rodsim
