// Discrete Elastic Rods stencil energies with exact gradients and Hessians (see der_energies.h).
//
// Derivation outline (all derived here; notation of Tong et al. (2023), section 2):
//  * Every bending/twisting stencil is written in the reduced variables
//      y = [e^{i-1}, θ^{i-1}, e^i, θ^i] ∈ R^8,   e^{i-1} = x_i - x_{i-1}, e^i = x_{i+1} - x_i,
//    and mapped back to the 11 stencil DOFs by the constant matrix B (q ↦ y): g_q = Bᵀ g_y,
//    H_q = Bᵀ H_y B.
//  * Material director of an edge with committed frame (t̂, d̂1, d̂2), current unit tangent u and
//    twist θ:  m_k = Tr(u, a_k(θ)),  Tr(u, a) = a - (u·a)/(1 + t̂·u) (t̂ + u), a_1 = cos θ d̂1 +
//    sin θ d̂2, a_2 = -sin θ d̂1 + cos θ d̂2. Tr is a rational function of u and linear in a, so the
//    first and second derivatives of v·m_k (v fixed) follow by the chain rule through u = e/|e|.
//  * (κb) of Eq. 2 = 2 N/χ with N = e^{i-1}×e^i, χ = |e^{i-1}||e^i| + e^{i-1}·e^i.
//  * Reference twist (Eq. 4): its variation is the classic κb·(δe^{i-1}/(2|e^{i-1}|) +
//    δe^i/(2|e^i|)) (holonomy of infinitesimal transport, exact) plus the rotation about the
//    tangent of each finitely transported frame, δψ = -(t̂×u)·δe / (|e| (1 + t̂·u)) (solid angle of
//    the spherical triangle t̂, u, u + δu). The Hessian is the exact Jacobian of that gradient.
#include "der_energies.h"

#include <rodsim/geometry/frames.h>
#include <rodsim/geometry/skew.h>

#include <cmath>
#include <numbers>

namespace rodsim::der {

namespace {

using Vec8 = Eigen::Matrix<double, 8, 1>;
using Mat8 = Eigen::Matrix<double, 8, 8>;

using geometry::skew;

// x ↦ P x with P = I - u uᵀ (the derivative of u = e/|e| is P/|e|).
[[gnu::always_inline]] inline Vec3 project(const EdgeKinematics& k, const Vec3& x) { return x - k.u.dot(x) * k.u; }

// Director m = Tr(u, a) of an edge and a fixed vector v (the binormal): f = v·Tr(u, a) as a function
// of u, with α = u·a, β = v·s, s = t̂ + u, γ = 1 + t̂·u:
//   f_u  = -(β a + α v)/γ + (αβ/γ²) t̂
//   f_uu = -(a vᵀ + v aᵀ)/γ + (w t̂ᵀ + t̂ wᵀ)/γ² - (2αβ/γ³) t̂ t̂ᵀ,   w = β a + α v,
// and through u = e/|e|:  ∂f/∂e = P f_u/|e|,
//   ∂²f/∂e² = (P f_uu P - (f_u uᵀ + u f_uᵀ + (f_u·u)(I - 3 u uᵀ)))/|e|².
Vec3 directorGradU(const EdgeKinematics& k, const Vec3& a, const Vec3& v) {
  const double al = k.u.dot(a), be = v.dot(k.s);
  return -(be * a + al * v) / k.gamma + (al * be / (k.gamma * k.gamma)) * k.T;
}

// ∂/∂e of v·Tr(u, a).
Vec3 directorGradE(const EdgeKinematics& k, const Vec3& a, const Vec3& v) {
  return project(k, directorGradU(k, a, v)) / k.len;
}

// ∂²/∂e² of v·Tr(u, a). With x = P a, y = P v, z = P t̂ (and P w = β x + α y), P f_uu P is the
// symmetric part of 2 [x (-y/γ + β z/γ²)ᵀ + z (α y/γ² - (αβ/γ³) z)ᵀ]: with the -(f_u uᵀ + u f_uᵀ)
// term as -u f_uᵀ, one 3x3 sum of outer products M, and H |e|² = M + Mᵀ - (f_u·u)(I - 3 u uᵀ).
Mat3 directorHessE(const EdgeKinematics& k, const Vec3& a, const Vec3& v) {
  const double al = k.u.dot(a), be = v.dot(k.s), g = k.gamma, ig = 1.0 / g, ig2 = ig * ig;
  const Vec3 fu = -(be * a + al * v) * ig + (al * be * ig2) * k.T;
  const Vec3 x = project(k, a), y = project(k, v), z = project(k, k.T);
  Mat3 M = x * (be * ig2 * z - ig * y).transpose();
  M.noalias() += z * ((al * ig2) * y - (al * be * ig2 * ig) * z).transpose();
  M.noalias() -= k.u * fu.transpose();
  Mat3 H = M + M.transpose();
  const double fuu = fu.dot(k.u);
  H.noalias() += (3.0 * fuu) * k.u * k.u.transpose();
  H.diagonal().array() -= fuu;
  return H / (k.len * k.len);
}

// d Tr(u, a)/de = (-(s aᵀ)/γ - (α/γ) I + (α/γ²) s t̂ᵀ) P/|e|.
Mat3 transportJacobianE(const EdgeKinematics& k, const Vec3& a) {
  const double al = k.u.dot(a), g = k.gamma;
  const Vec3 Pa = project(k, a), PT = project(k, k.T);
  Mat3 J = (k.s * ((al / g) * PT - Pa).transpose()) / g;
  J.diagonal().array() -= al / g;
  J += (al / g) * k.u * k.u.transpose();  // -(α/γ) P = -(α/γ) I + (α/γ) u uᵀ
  return J / k.len;
}

// Holonomy term of ∂m_ref/∂e: h(e) = t̂×e / q, q = |e|(|e| + t̂·e), and its Jacobian
// [t̂]×/q - (t̂×e) ∂qᵀ/q², ∂q/∂e = 2e + (t̂·e) u + |e| t̂.
Vec3 holonomy(const EdgeKinematics& k) {
  return k.T.cross(k.e) / (k.len * k.len + k.len * k.T.dot(k.e));
}
Mat3 holonomyJacobian(const EdgeKinematics& k) {
  const double Te = k.T.dot(k.e);
  const double q = k.len * k.len + k.len * Te;
  const Vec3 dq = 2.0 * k.e + Te * k.u + k.len * k.T;
  return skew(k.T) / q - k.T.cross(k.e) * dq.transpose() / (q * q);
}

// The curvature binormal of Eq. 2 and what its derivatives need, for the edges e0 = e^{i-1},
// e1 = e^i:  κb = 2 N/χ,  N = e0×e1,  χ = |e0||e1| + e0·e1,
//   ∂χ/∂e0 = |e1| u0 + e1,  ∂χ/∂e1 = |e0| u1 + e0,
//   ∂κb/∂e0 = (-2 [e1]× - κb ∂χ/∂e0ᵀ)/χ,  ∂κb/∂e1 = (2 [e0]× - κb ∂χ/∂e1ᵀ)/χ.
struct Binormal {
  Vec3 kb, dchi0, dchi1;
  double chi = 0;
  Binormal(const EdgeKinematics& k0, const EdgeKinematics& k1) {
    chi = k0.len * k1.len + k0.e.dot(k1.e);
    kb = 2.0 * k0.e.cross(k1.e) / chi;
    dchi0 = k1.len * k0.u + k1.e;
    dchi1 = k0.len * k1.u + k0.e;
  }
  // (∂κb/∂e0)ᵀ W and (∂κb/∂e1)ᵀ W for a fixed W, given kW = κb·W.
  Vec3 gradW0(const EdgeKinematics& k1, const Vec3& W, double kW) const {
    return (2.0 * k1.e.cross(W) - kW * dchi0) / chi;
  }
  Vec3 gradW1(const EdgeKinematics& k0, const Vec3& W, double kW) const {
    return (2.0 * W.cross(k0.e) - kW * dchi1) / chi;
  }
};

// ∂κb/∂e0 and ∂κb/∂e1 (3x3).
void binormalJacobians(const EdgeKinematics& k0, const EdgeKinematics& k1, const Binormal& b, Mat3& Jkb0,
                       Mat3& Jkb1) {
  Jkb0 = (-2.0 * skew(k1.e) - b.kb * b.dchi0.transpose()) / b.chi;
  Jkb1 = (2.0 * skew(k0.e) - b.kb * b.dchi1.transpose()) / b.chi;
}

// Gradient of the reference twist m_ref in y (θ entries zero):
//   ∂m_ref/∂e0 = κb/(2|e0|) + h(e0),   ∂m_ref/∂e1 = κb/(2|e1|) - h(e1)   (holonomy h, see header).
Vec8 referenceTwistGrad(const EdgeKinematics& k0, const EdgeKinematics& k1, const Binormal& b) {
  Vec8 g;
  g.segment<3>(0) = b.kb / (2.0 * k0.len) + holonomy(k0);
  g[3] = 0.0;
  g.segment<3>(4) = b.kb / (2.0 * k1.len) - holonomy(k1);
  g[7] = 0.0;
  return g;
}

// Adds c times the Hessian of m_ref (the Jacobian of the gradient above, symmetrized: it is
// symmetric up to round-off; θ rows are zero) to the upper triangle of H.
void addReferenceTwistHess(const EdgeKinematics& k0, const EdgeKinematics& k1, const Binormal& b, const Mat3& Jkb0,
                           const Mat3& Jkb1, double c, Mat8& H) {
  const Mat3 M00 = Jkb0 / (2.0 * k0.len) - b.kb * k0.u.transpose() / (2.0 * k0.len * k0.len) + holonomyJacobian(k0);
  const Mat3 M11 = Jkb1 / (2.0 * k1.len) - b.kb * k1.u.transpose() / (2.0 * k1.len * k1.len) - holonomyJacobian(k1);
  H.block<3, 3>(0, 0) += (0.5 * c) * (M00 + M00.transpose());
  H.block<3, 3>(4, 4) += (0.5 * c) * (M11 + M11.transpose());
  H.block<3, 3>(0, 4) += (0.5 * c) * (Jkb1 / (2.0 * k0.len) + Jkb0.transpose() / (2.0 * k1.len));
}

// Gradient in y of the material curvature κ = ½ κb·(Tr(u0, a^0) + Tr(u1, a^1)) (Eq. 3), given
// the directors m^j = Tr(u_j, a^j) and their θ-derivatives mp^j = Tr(u_j, da^j/dθ).
Vec8 curvatureGrad(const EdgeKinematics& k0, const EdgeKinematics& k1, const Binormal& b, const Vec3& a0,
                   const Vec3& m0, const Vec3& mp0, const Vec3& a1, const Vec3& m1, const Vec3& mp1) {
  const Vec3 W = m0 + m1;
  const double kW = b.kb.dot(W);
  Vec8 g;
  g.segment<3>(0) = 0.5 * (b.gradW0(k1, W, kW) + directorGradE(k0, a0, b.kb));
  g[3] = 0.5 * b.kb.dot(mp0);
  g.segment<3>(4) = 0.5 * (b.gradW1(k0, W, kW) + directorGradE(k1, a1, b.kb));
  g[7] = 0.5 * b.kb.dot(mp1);
  return g;
}

// The map y = B q is 0/±1 (y = [e0, θ0, e1, θ1] with e0 = x1 - x0, e1 = x2 - x1): apply Bᵀ(·) and
// Bᵀ(·)B with block additions instead of a dense 11x8x11 product (which Eigen runs through its
// GEMM kernel).
template <class In, class Out> void applyBt(const In& y, Out&& q) {  // rows: y-space -> stencil
  q.template middleRows<3>(0) = -y.template middleRows<3>(0);
  q.row(3) = y.row(3);
  q.template middleRows<3>(4) = y.template middleRows<3>(0) - y.template middleRows<3>(4);
  q.row(7) = y.row(7);
  q.template middleRows<3>(8) = y.template middleRows<3>(4);
}

// Stencil Hessian Bᵀ H B of a y-space Hessian whose upper triangle is valid (H symmetric).
void hessToStencil(Mat8& Hy, Mat11& hess) {
  Hy.triangularView<Eigen::StrictlyLower>() = Hy.transpose();
  Eigen::Matrix<double, 11, 8> BtH;
  applyBt(Hy, BtH);
  applyBt(BtH.transpose(), hess.transpose());  // (Bᵀ H B)ᵀ = Bᵀ (Bᵀ H)ᵀ, symmetric anyway
}

}  // namespace

// ---------------------------------------------------------------------------------------------

void transportFrame(const EdgeFrame& f, const Vec3& t, Vec3& d1, Vec3& d2) {
  const Vec3 s = f.t + t;
  const double g = 1.0 + f.t.dot(t);
  d1 = f.d1 - (t.dot(f.d1) / g) * s;
  d2 = f.d2 - (t.dot(f.d2) / g) * s;
}

double referenceTwistAngle(const Vec3& t0, const Vec3& d1_0, const Vec3& t1, const Vec3& d1_1,
                           double committed) {
  const Vec3 p = geometry::parallelTransport(d1_0, t0, t1);
  const double angle = geometry::signedAngle(p, d1_1, t1);
  return committed + geometry::wrapAngle(angle - committed);
}

// --------------------------------------------------------------------------------- stretching

double stretching(const Vec6& q, const StretchParams& p, Vec6* grad, Mat6* hess) {
  const Vec3 e = q.segment<3>(3) - q.segment<3>(0);
  const double len = e.norm();
  const double eps = len / p.rest_length - 1.0;  // Eq. 1
  if (grad) {
    const Vec3 ge = p.EA * eps * (e / len);
    grad->segment<3>(0) = -ge;
    grad->segment<3>(3) = ge;
  }
  if (hess) {
    const Vec3 u = e / len;
    const Mat3 uu = u * u.transpose();
    const Mat3 He = p.EA * (uu / p.rest_length + (eps / len) * (Mat3::Identity() - uu));
    hess->block<3, 3>(0, 0) = He;
    hess->block<3, 3>(3, 3) = He;
    hess->block<3, 3>(0, 3) = -He;
    hess->block<3, 3>(3, 0) = -He;
  }
  return 0.5 * p.EA * eps * eps * p.rest_length;  // Eq. 5, E_s
}

double stretchingEnergy(const Vec6& q, const StretchParams& p) { return stretching(q, p, nullptr, nullptr); }
Vec6 stretchingGradient(const Vec6& q, const StretchParams& p) {
  Vec6 g;
  stretching(q, p, &g, nullptr);
  return g;
}
Mat6 stretchingHessian(const Vec6& q, const StretchParams& p) {
  Mat6 H;
  stretching(q, p, nullptr, &H);
  return H;
}

// ------------------------------------------------------------------------ bending + twisting

void EdgeKinematics::set(const Vec3& edge, const EdgeFrame& f, double th) {
  e = edge;
  len = e.norm();
  u = e / len;
  T = f.t;
  s = T + u;
  gamma = 1.0 + T.dot(u);
  theta = th;
  d1 = transport(f.d1);
  d2 = transport(f.d2);
  const double c = std::cos(th), sn = std::sin(th);
  a1 = c * f.d1 + sn * f.d2;
  a2 = -sn * f.d1 + c * f.d2;
  m1 = transport(a1);
  m2 = transport(a2);
}

// Notation: y = [e0, θ0, e1, θ1] (stencil map B above); c_k = EI_k/Δl̄, Δκ_k = κ^(k) - κ̄^(k),
// g_k = ∂κ^(k)/∂y, c_t = GJ/Δl̄, Δτ = τ - τ̄, g_τ = ∂τ/∂y.
//   E = ½ c1 Δκ1² + ½ c2 Δκ2² + ½ c_t Δτ²
//   ∂E/∂y = c1 Δκ1 g1 + c2 Δκ2 g2 + c_t Δτ g_τ
//   ∂²E/∂y² = c1 g1 g1ᵀ + c2 g2 g2ᵀ + c_t g_τ g_τᵀ + ∇²Φ + c_t Δτ ∇²m_ref,
// where Φ = c1 Δκ1 κ^(1) + c2 Δκ2 κ^(2) with the weights w_k = c_k Δκ_k held fixed. Because Tr(u, a)
// is linear in a, Φ = ½ κb·(Tr(u0, A^0) + Tr(u1, A^1)) with A^j = w1 a2^j + w2 a1^j: the two
// curvatures' second derivatives (binormal Hessian, binormal × director cross terms and director
// Hessians) are computed once, for one combined director per edge.
namespace {
// bendTwist in y: energy, gradient gy (if grad) and the upper triangle of the Hessian Hy (if hess).
double bendTwistY(const EdgeKinematics& k0, const EdgeKinematics& k1, const BendParams* bend,
                  const TwistParams* twist, double m_ref, bool grad, bool hess, StrainGradients* cache, Vec8& gy,
                  Mat8& Hy) {
  const Binormal b(k0, k1);
  const bool derivs = grad || hess;
  StrainGradients local;
  StrainGradients& sg = cache ? *cache : local;
  const bool have_sg = sg.valid;
  if (derivs && !have_sg) sg.valid = true;  // filled below
  double E = 0;
  gy.setZero();
  // Hy: only the upper triangle is accumulated (and the full diagonal 3x3 blocks).
  Mat3 Jkb0, Jkb1;
  if (hess) {
    Hy.setZero();
    binormalJacobians(k0, k1, b, Jkb0, Jkb1);
  }
  auto H00 = Hy.block<3, 3>(0, 0);
  auto H01 = Hy.block<3, 3>(0, 4);
  auto H11 = Hy.block<3, 3>(4, 4);

  if (bend) {
    const double c1 = bend->EI1 / bend->voronoi_length, c2 = bend->EI2 / bend->voronoi_length;
    // Eq. 3: κ^(1) = ½ κb·(m2^{i-1} + m2^i), κ^(2) = ½ κb·(m1^{i-1} + m1^i).
    const double dk1 = 0.5 * b.kb.dot(k0.m2 + k1.m2) - bend->kappa_bar[0];
    const double dk2 = 0.5 * b.kb.dot(k0.m1 + k1.m1) - bend->kappa_bar[1];
    E += 0.5 * (c1 * dk1 * dk1 + c2 * dk2 * dk2);  // Eq. 5, E_b
    if (derivs) {
      if (!have_sg) {
        // κ^(1): a = a2, da/dθ = -a1; κ^(2): a = a1, da/dθ = a2.
        sg.g1 = curvatureGrad(k0, k1, b, k0.a2, k0.m2, -k0.m1, k1.a2, k1.m2, -k1.m1);
        sg.g2 = curvatureGrad(k0, k1, b, k0.a1, k0.m1, k0.m2, k1.a1, k1.m1, k1.m2);
      }
      const Vec8& g1 = sg.g1;
      const Vec8& g2 = sg.g2;
      const double w1 = c1 * dk1, w2 = c2 * dk2;
      gy = w1 * g1 + w2 * g2;
      if (hess) {
        Hy.noalias() += c1 * g1 * g1.transpose();
        Hy.noalias() += c2 * g2 * g2.transpose();
        // ∇²Φ = ½ [∂²(W·κb) + C + Cᵀ + diag(∂²(κb·M^0), ∂²(κb·M^1))], W = M^0 + M^1 fixed in the
        // first term, κb fixed in the last, C = (∂κb/∂y)ᵀ ∂W/∂y; M^j = Tr(u_j, A^j).
        const Vec3 A0 = w1 * k0.a2 + w2 * k0.a1, A1 = w1 * k1.a2 + w2 * k1.a1;
        const Vec3 Ap0 = -w1 * k0.a1 + w2 * k0.a2, Ap1 = -w1 * k1.a1 + w2 * k1.a2;  // dA/dθ
        const Vec3 M0 = w1 * k0.m2 + w2 * k0.m1, M1 = w1 * k1.m2 + w2 * k1.m1;
        const Vec3 Mp0 = -w1 * k0.m1 + w2 * k0.m2, Mp1 = -w1 * k1.m1 + w2 * k1.m2;  // Tr(u, dA/dθ)
        const Vec3 W = M0 + M1;
        const double kW = b.kb.dot(W);
        // ∂²(W·κb): with N = W·(e0×e1) = ½ χ κb·W and G_j = (∂κb/∂e_j)ᵀ W, the quotient rule
        // 2 ∂²N/χ - 2(∂N ∂χᵀ + ∂χ ∂Nᵀ)/χ² + 4N ∂χ ∂χᵀ/χ³ - 2N ∂²χ/χ² reduces to
        //   e0e0: -(G0 ∂χ0ᵀ + ∂χ0 G0ᵀ)/χ - (κb·W)(|e1|/|e0|) P0/χ
        //   e0e1: -2[W]×/χ - (G0 ∂χ1ᵀ + ∂χ0 G1ᵀ)/χ - (κb·W)(I + u0 u1ᵀ)/χ
        //   e1e1: -(G1 ∂χ1ᵀ + ∂χ1 G1ᵀ)/χ - (κb·W)(|e0|/|e1|) P1/χ
        const Vec3 G0 = b.gradW0(k1, W, kW), G1 = b.gradW1(k0, W, kW);
        const Mat3 uu0 = k0.u * k0.u.transpose(), uu1 = k1.u * k1.u.transpose();
        const double h = 0.5 / b.chi;  // the ½ of ∇²Φ folded in
        Mat3 X00 = -(G0 * b.dchi0.transpose()) * h;
        Mat3 X11 = -(G1 * b.dchi1.transpose()) * h;
        Mat3 X01 = -(G0 * b.dchi1.transpose() + b.dchi0 * G1.transpose() + 2.0 * skew(W)) * h;
        X01 -= (kW * h) * (Mat3::Identity() + k0.u * k1.u.transpose());
        // Cross terms (C + Cᵀ)/2 with ∂M^j/∂e_j from the transport.
        const Mat3 JM0 = transportJacobianE(k0, A0), JM1 = transportJacobianE(k1, A1);
        X00 += 0.5 * (Jkb0.transpose() * JM0);
        X11 += 0.5 * (Jkb1.transpose() * JM1);
        X01 += 0.5 * (Jkb0.transpose() * JM1 + JM0.transpose() * Jkb1);
        H00 += X00 + X00.transpose();
        H11 += X11 + X11.transpose();
        H00 -= (kW * h * k1.len / k0.len) * (Mat3::Identity() - uu0);
        H11 -= (kW * h * k0.len / k1.len) * (Mat3::Identity() - uu1);
        H01 += X01;
        Hy.block<3, 1>(0, 3) += 0.5 * (Jkb0.transpose() * Mp0 + directorGradE(k0, Ap0, b.kb));
        Hy.block<3, 1>(0, 7) += 0.5 * (Jkb0.transpose() * Mp1);
        Hy.block<1, 3>(3, 4) += 0.5 * (Jkb1.transpose() * Mp0).transpose();
        Hy.block<3, 1>(4, 7) += 0.5 * (Jkb1.transpose() * Mp1 + directorGradE(k1, Ap1, b.kb));
        // Director Hessians with κb fixed (∂²/∂θ² Tr(u, A) = -Tr(u, A) since A'' = -A).
        H00 += 0.5 * directorHessE(k0, A0, b.kb);
        H11 += 0.5 * directorHessE(k1, A1, b.kb);
        Hy(3, 3) -= 0.5 * b.kb.dot(M0);
        Hy(7, 7) -= 0.5 * b.kb.dot(M1);
      }
    }
  }

  if (twist) {
    const double ct = twist->GJ / twist->voronoi_length;
    const double dtau = k1.theta - k0.theta + m_ref - twist->tau_bar;  // Eq. 4 minus natural twist
    E += 0.5 * ct * dtau * dtau;                                       // Eq. 5, E_t
    if (derivs) {
      if (!have_sg) {
        sg.gt = referenceTwistGrad(k0, k1, b);
        sg.gt[3] = -1.0;  // τ = θ^i - θ^{i-1} + m_ref
        sg.gt[7] = 1.0;
      }
      const Vec8& gt = sg.gt;
      gy += (ct * dtau) * gt;
      if (hess) {
        Hy.noalias() += ct * gt * gt.transpose();
        addReferenceTwistHess(k0, k1, b, Jkb0, Jkb1, ct * dtau, Hy);
      }
    }
  }
  return E;
}
}  // namespace

double bendTwist(const EdgeKinematics& k0, const EdgeKinematics& k1, const BendParams* bend,
                 const TwistParams* twist, double m_ref, Vec11* grad, Mat11* hess, StrainGradients* cache) {
  Vec8 gy;
  Mat8 Hy;
  const double E = bendTwistY(k0, k1, bend, twist, m_ref, grad, hess, cache, gy, Hy);
  if (grad) applyBt(gy, *grad);
  if (hess) hessToStencil(Hy, *hess);
  return E;
}

void bendTwistHessian(const EdgeKinematics& k0, const EdgeKinematics& k1, const BendParams* bend,
                      const TwistParams* twist, double m_ref, Mat11& H, StrainGradients* cache,
                      const Mat3* extra0, const Mat3* extra1) {
  Vec8 gy;
  Mat8 Hy;
  bendTwistY(k0, k1, bend, twist, m_ref, false, true, cache, gy, Hy);
  if (extra0) Hy.block<3, 3>(0, 0) += *extra0;
  if (extra1) Hy.block<3, 3>(4, 4) += *extra1;
  hessToStencil(Hy, H);
}

// The stencil free functions: edge kinematics from the 11 DOFs and the committed frames.
namespace {
void stencilKinematics(const Vec11& q, const EdgeFrame& f0, const EdgeFrame& f1, EdgeKinematics& k0,
                       EdgeKinematics& k1) {
  k0.set(q.segment<3>(4) - q.segment<3>(0), f0, q[3]);
  k1.set(q.segment<3>(8) - q.segment<3>(4), f1, q[7]);
}
}  // namespace

Vec2 materialCurvature(const Vec11& q, const EdgeFrame& f0, const EdgeFrame& f1) {
  EdgeKinematics k0, k1;
  stencilKinematics(q, f0, f1, k0, k1);
  const Binormal b(k0, k1);  // the same expressions as bendTwist, so a rest shape is exactly stress free
  return {0.5 * b.kb.dot(k0.m2 + k1.m2), 0.5 * b.kb.dot(k0.m1 + k1.m1)};  // Eq. 3
}

double bending(const Vec11& q, const EdgeFrame& f0, const EdgeFrame& f1, const BendParams& p, Vec11* grad,
               Mat11* hess) {
  EdgeKinematics k0, k1;
  stencilKinematics(q, f0, f1, k0, k1);
  return bendTwist(k0, k1, &p, nullptr, 0.0, grad, hess);
}

double bendingEnergy(const Vec11& q, const EdgeFrame& f0, const EdgeFrame& f1, const BendParams& p) {
  return bending(q, f0, f1, p, nullptr, nullptr);
}
Vec11 bendingGradient(const Vec11& q, const EdgeFrame& f0, const EdgeFrame& f1, const BendParams& p) {
  Vec11 g;
  bending(q, f0, f1, p, &g, nullptr);
  return g;
}
Mat11 bendingHessian(const Vec11& q, const EdgeFrame& f0, const EdgeFrame& f1, const BendParams& p) {
  Mat11 H;
  bending(q, f0, f1, p, nullptr, &H);
  return H;
}

double referenceTwist(const Vec11& q, const EdgeFrame& f0, const EdgeFrame& f1, double committed_twist) {
  EdgeKinematics k0, k1;
  stencilKinematics(q, f0, f1, k0, k1);
  return referenceTwistAngle(k0.u, k0.d1, k1.u, k1.d1, committed_twist);
}

void referenceTwistDerivatives(const Vec11& q, const EdgeFrame& f0, const EdgeFrame& f1, Vec11& grad,
                               Mat11& hess) {
  EdgeKinematics k0, k1;
  stencilKinematics(q, f0, f1, k0, k1);
  const Binormal b(k0, k1);
  Mat3 Jkb0, Jkb1;
  binormalJacobians(k0, k1, b, Jkb0, Jkb1);
  Mat8 H = Mat8::Zero();
  addReferenceTwistHess(k0, k1, b, Jkb0, Jkb1, 1.0, H);
  applyBt(referenceTwistGrad(k0, k1, b), grad);
  hessToStencil(H, hess);
}

double twisting(const Vec11& q, const EdgeFrame& f0, const EdgeFrame& f1, double committed_twist,
                const TwistParams& p, Vec11* grad, Mat11* hess) {
  EdgeKinematics k0, k1;
  stencilKinematics(q, f0, f1, k0, k1);
  const double m = referenceTwistAngle(k0.u, k0.d1, k1.u, k1.d1, committed_twist);
  return bendTwist(k0, k1, nullptr, &p, m, grad, hess);
}

double twistingEnergy(const Vec11& q, const EdgeFrame& f0, const EdgeFrame& f1, double committed_twist,
                      const TwistParams& p) {
  return twisting(q, f0, f1, committed_twist, p, nullptr, nullptr);
}
Vec11 twistingGradient(const Vec11& q, const EdgeFrame& f0, const EdgeFrame& f1, double committed_twist,
                       const TwistParams& p) {
  Vec11 g;
  twisting(q, f0, f1, committed_twist, p, &g, nullptr);
  return g;
}
Mat11 twistingHessian(const Vec11& q, const EdgeFrame& f0, const EdgeFrame& f1, double committed_twist,
                      const TwistParams& p) {
  Mat11 H;
  twisting(q, f0, f1, committed_twist, p, nullptr, &H);
  return H;
}

}  // namespace rodsim::der
