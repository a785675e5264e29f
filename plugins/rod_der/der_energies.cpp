// Discrete Elastic Rods stencil energies with exact gradients and Hessians (see der_energies.h).
//
// Derivation outline (all derived here; notation of the IMC seed, section 2):
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

#include <cmath>
#include <numbers>

namespace rodsim::der {

namespace {

using Vec4 = Eigen::Vector4d;
using Mat4 = Eigen::Matrix4d;
using Vec8 = Eigen::Matrix<double, 8, 1>;
using Mat8 = Eigen::Matrix<double, 8, 8>;
using Mat34 = Eigen::Matrix<double, 3, 4>;
using Mat38 = Eigen::Matrix<double, 3, 8>;

Mat3 skew(const Vec3& v) {
  Mat3 m;
  m << 0, -v.z(), v.y(), v.z(), 0, -v.x(), -v.y(), v.x(), 0;
  return m;
}

// Kinematics of one edge of a stencil relative to its committed frame.
struct EdgeKin {
  Vec3 e, u, T, Tu;  // edge, unit tangent, committed tangent, T + u
  Mat3 P;            // I - u uᵀ
  double len = 0, gamma = 0;  // |e|, 1 + T·u

  EdgeKin(const Vec3& edge, const EdgeFrame& f) : e(edge), T(f.t) {
    len = e.norm();
    u = e / len;
    Tu = T + u;
    gamma = 1.0 + T.dot(u);
    P = Mat3::Identity() - u * u.transpose();
  }
  // Time-parallel transport of a vector a ⟂ T onto the current tangent.
  Vec3 transport(const Vec3& a) const { return a - (u.dot(a) / gamma) * Tu; }
  // d Tr(u, a) / du.
  Mat3 dTransport(const Vec3& a) const {
    const double al = u.dot(a);
    return -(Tu * a.transpose()) / gamma - (al / gamma) * Mat3::Identity() +
           (al / (gamma * gamma)) * Tu * T.transpose();
  }
  // ∂/∂u of f = v·Tr(u, a) for fixed v, a.
  Vec3 fu(const Vec3& a, const Vec3& v) const {
    const double al = u.dot(a), be = v.dot(Tu);
    return -(be * a + al * v) / gamma + (al * be / (gamma * gamma)) * T;
  }
  // ∂²/∂u² of f = v·Tr(u, a).
  Mat3 fuu(const Vec3& a, const Vec3& v) const {
    const double al = u.dot(a), be = v.dot(Tu);
    const Vec3 w = be * a + al * v;
    const double g2 = gamma * gamma;
    return -(a * v.transpose() + v * a.transpose()) / gamma +
           (w * T.transpose() + T * w.transpose()) / g2 - (2.0 * al * be / (g2 * gamma)) * T * T.transpose();
  }
  // Hessian w.r.t. e of g(u(e)), u = e/|e|, given ∂g/∂u and ∂²g/∂u².
  Mat3 hessE(const Vec3& gu, const Mat3& guu) const {
    const Mat3 I = Mat3::Identity();
    return (P * guu * P - (gu * u.transpose() + u * gu.transpose() + gu.dot(u) * (I - 3.0 * u * u.transpose()))) /
           (len * len);
  }
};

// Director m = Tr(u, a(θ)) of one edge with a' = da/dθ (a'' = -a): value m, Jacobian J w.r.t.
// (e, θ) and the Hessian Hv of v·m w.r.t. (e, θ) for fixed v.
void directorDerivatives(const EdgeKin& k, const Vec3& a, const Vec3& ap, const Vec3& v, Vec3& m, Mat34& J,
                         Mat4& Hv) {
  m = k.transport(a);
  J.leftCols<3>() = k.dTransport(a) * k.P / k.len;
  J.col(3) = k.transport(ap);
  Hv.topLeftCorner<3, 3>() = k.hessE(k.fu(a, v), k.fuu(a, v));
  const Vec3 het = k.P * k.fu(ap, v) / k.len;
  Hv.block<3, 1>(0, 3) = het;
  Hv.block<1, 3>(3, 0) = het.transpose();
  Hv(3, 3) = -v.dot(m);
}

// Curvature binormal (Eq. 2) and its derivatives in the reduced variables y (e0 at 0..2, e1 at 4..6).
struct BinormalKin {
  Vec3 kb;
  double chi = 0;
  Vec8 dchi = Vec8::Zero();
  Mat8 d2chi = Mat8::Zero();
  Mat38 J = Mat38::Zero();  // d(κb)/dy
  const EdgeKin& k0;
  const EdgeKin& k1;

  BinormalKin(const EdgeKin& a, const EdgeKin& b) : k0(a), k1(b) {
    const Vec3& e0 = k0.e;
    const Vec3& e1 = k1.e;
    chi = k0.len * k1.len + e0.dot(e1);
    kb = 2.0 * e0.cross(e1) / chi;
    dchi.segment<3>(0) = k1.len * k0.u + e1;
    dchi.segment<3>(4) = k0.len * k1.u + e0;
    d2chi.block<3, 3>(0, 0) = (k1.len / k0.len) * k0.P;
    d2chi.block<3, 3>(4, 4) = (k0.len / k1.len) * k1.P;
    d2chi.block<3, 3>(0, 4) = k0.u * k1.u.transpose() + Mat3::Identity();
    d2chi.block<3, 3>(4, 0) = k1.u * k0.u.transpose() + Mat3::Identity();
    J.block<3, 3>(0, 0) = (-2.0 * skew(e1) - kb * dchi.segment<3>(0).transpose()) / chi;
    J.block<3, 3>(0, 4) = (2.0 * skew(e0) - kb * dchi.segment<3>(4).transpose()) / chi;
  }
  // Hessian of w·κb for fixed w.
  Mat8 hess(const Vec3& w) const {
    const double N = w.dot(k0.e.cross(k1.e));
    Vec8 dN = Vec8::Zero();
    dN.segment<3>(0) = k1.e.cross(w);
    dN.segment<3>(4) = w.cross(k0.e);
    Mat8 d2N = Mat8::Zero();
    d2N.block<3, 3>(0, 4) = -skew(w);
    d2N.block<3, 3>(4, 0) = skew(w);
    const double c2 = chi * chi;
    return 2.0 * d2N / chi - 2.0 * (dN * dchi.transpose() + dchi * dN.transpose()) / c2 +
           (4.0 * N / (c2 * chi)) * dchi * dchi.transpose() - (2.0 * N / c2) * d2chi;
  }
};

// The map y = B q is 0/±1 (y = [e0, θ0, e1, θ1] with e0 = x1 - x0, e1 = x2 - x1): apply Bᵀ(·) and
// Bᵀ(·)B with block additions instead of a dense 11x8x11 product (which Eigen runs through its
// GEMM kernel: a quarter of a Newton step when it did).
template <class In, class Out> void applyBt(const In& y, Out&& q) {  // rows: y-space -> stencil
  q.template middleRows<3>(0) = -y.template middleRows<3>(0);
  q.row(3) = y.row(3);
  q.template middleRows<3>(4) = y.template middleRows<3>(0) - y.template middleRows<3>(4);
  q.row(7) = y.row(7);
  q.template middleRows<3>(8) = y.template middleRows<3>(4);
}

void toStencil(const Vec8* gy, const Mat8* Hy, Vec11* grad, Mat11* hess) {
  if (grad && gy) applyBt(*gy, *grad);
  if (hess && Hy) {
    const Mat8 Hs = 0.5 * (*Hy + Hy->transpose());  // exact Hessian is symmetric; drop round-off
    Eigen::Matrix<double, 11, 8> BtH;
    applyBt(Hs, BtH);
    applyBt(BtH.transpose(), hess->transpose());  // (Bᵀ H B)ᵀ = Bᵀ (Bᵀ H)ᵀ, symmetric anyway
  }
}

void rotatedDirectors(const EdgeFrame& f, double theta, Vec3& a1, Vec3& a2) {
  const double c = std::cos(theta), s = std::sin(theta);
  a1 = c * f.d1 + s * f.d2;
  a2 = -s * f.d1 + c * f.d2;
}

// Gradient of h(e) = t̂×e / (|e|(|e| + t̂·e)) (the transport holonomy term of ∂m/∂e) and its Jacobian.
void holonomyTerm(const EdgeKin& k, Vec3& h, Mat3& Jh) {
  const double Te = k.T.dot(k.e);
  const double q = k.len * k.len + k.len * Te;
  const Vec3 Txe = k.T.cross(k.e);
  const Vec3 dq = 2.0 * k.e + Te * k.u + k.len * k.T;
  h = Txe / q;
  Jh = skew(k.T) / q - Txe * dq.transpose() / (q * q);
}

// Reference twist gradient and Hessian in y (θ entries zero).
void referenceTwistY(const EdgeKin& k0, const EdgeKin& k1, const BinormalKin& b, Vec8& g, Mat8& H) {
  Vec3 h0, h1;
  Mat3 Jh0, Jh1;
  holonomyTerm(k0, h0, Jh0);
  holonomyTerm(k1, h1, Jh1);
  g.setZero();
  g.segment<3>(0) = b.kb / (2.0 * k0.len) + h0;
  g.segment<3>(4) = b.kb / (2.0 * k1.len) - h1;
  H.setZero();
  const Mat3 Jkb0 = b.J.block<3, 3>(0, 0), Jkb1 = b.J.block<3, 3>(0, 4);
  H.block<3, 3>(0, 0) = Jkb0 / (2.0 * k0.len) - b.kb * k0.u.transpose() / (2.0 * k0.len * k0.len) + Jh0;
  H.block<3, 3>(0, 4) = Jkb1 / (2.0 * k0.len);
  H.block<3, 3>(4, 0) = Jkb0 / (2.0 * k1.len);
  H.block<3, 3>(4, 4) = Jkb1 / (2.0 * k1.len) - b.kb * k1.u.transpose() / (2.0 * k1.len * k1.len) - Jh1;
}

double referenceTwistValue(const EdgeKin& k0, const EdgeKin& k1, const EdgeFrame& f0, const EdgeFrame& f1,
                           double committed) {
  return referenceTwistAngle(k0.u, k0.transport(f0.d1), k1.u, k1.transport(f1.d1), committed);
}

}  // namespace

// ---------------------------------------------------------------------------------------------

double wrapAngle(double a) {
  constexpr double twoPi = 2.0 * std::numbers::pi;
  return a - twoPi * std::round(a / twoPi);
}

Vec3 anyPerpendicular(const Vec3& t) {
  int k = 0;
  if (std::abs(t.y()) < std::abs(t[k])) k = 1;
  if (std::abs(t.z()) < std::abs(t[k])) k = 2;
  Vec3 v = Vec3::Unit(k);
  v -= v.dot(t) * t;
  return v.normalized();
}

Vec3 parallelTransport(const Vec3& v, const Vec3& a, const Vec3& b) {
  // Minimal rotation R taking a to b: R v = v - ((a+b)·v)/(1+a·b) (a+b) + 2 (a·v) b.
  const Vec3 s = a + b;
  return v - (s.dot(v) / (1.0 + a.dot(b))) * s + 2.0 * a.dot(v) * b;
}

void transportFrame(const EdgeFrame& f, const Vec3& t, Vec3& d1, Vec3& d2) {
  const Vec3 s = f.t + t;
  const double g = 1.0 + f.t.dot(t);
  d1 = f.d1 - (t.dot(f.d1) / g) * s;
  d2 = f.d2 - (t.dot(f.d2) / g) * s;
}

double signedAngle(const Vec3& u, const Vec3& v, const Vec3& n) {
  return std::atan2(n.dot(u.cross(v)), u.dot(v));
}

Vec3 curvatureBinormal(const Vec3& e0, const Vec3& e1) {
  return 2.0 * e0.cross(e1) / (e0.norm() * e1.norm() + e0.dot(e1));  // Eq. 2
}

double referenceTwistAngle(const Vec3& t0, const Vec3& d1_0, const Vec3& t1, const Vec3& d1_1,
                           double committed) {
  const Vec3 p = parallelTransport(d1_0, t0, t1);
  const double angle = signedAngle(p, d1_1, t1);
  return committed + wrapAngle(angle - committed);
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

// ------------------------------------------------------------------------------------ bending

Vec2 materialCurvature(const Vec11& q, const EdgeFrame& f0, const EdgeFrame& f1) {
  const EdgeKin k0(q.segment<3>(4) - q.segment<3>(0), f0);
  const EdgeKin k1(q.segment<3>(8) - q.segment<3>(4), f1);
  const Vec3 kb = curvatureBinormal(k0.e, k1.e);
  Vec3 a1_0, a2_0, a1_1, a2_1;
  rotatedDirectors(f0, q[3], a1_0, a2_0);
  rotatedDirectors(f1, q[7], a1_1, a2_1);
  const Vec3 m1 = k0.transport(a1_0) + k1.transport(a1_1);
  const Vec3 m2 = k0.transport(a2_0) + k1.transport(a2_1);
  return {0.5 * m2.dot(kb), 0.5 * m1.dot(kb)};  // Eq. 3
}

double bending(const Vec11& q, const EdgeFrame& f0, const EdgeFrame& f1, const BendParams& p, Vec11* grad,
               Mat11* hess) {
  const EdgeKin k0(q.segment<3>(4) - q.segment<3>(0), f0);
  const EdgeKin k1(q.segment<3>(8) - q.segment<3>(4), f1);
  Vec3 a1_0, a2_0, a1_1, a2_1;
  rotatedDirectors(f0, q[3], a1_0, a2_0);
  rotatedDirectors(f1, q[7], a1_1, a2_1);
  const double inv_l = 1.0 / p.voronoi_length;

  if (!grad && !hess) {
    const Vec3 kb = curvatureBinormal(k0.e, k1.e);
    const double dk1 = 0.5 * kb.dot(k0.transport(a2_0) + k1.transport(a2_1)) - p.kappa_bar[0];
    const double dk2 = 0.5 * kb.dot(k0.transport(a1_0) + k1.transport(a1_1)) - p.kappa_bar[1];
    return 0.5 * inv_l * (p.EI1 * dk1 * dk1 + p.EI2 * dk2 * dk2);  // Eq. 5, E_b
  }

  const BinormalKin b(k0, k1);
  // κ = ½ κb·(m^{i-1} + m^i) for the directors generated by (a, a') on each edge: value,
  // gradient and Hessian in y.
  auto curvature = [&](const Vec3& a0, const Vec3& ap0, const Vec3& a1, const Vec3& ap1, Vec8& g, Mat8& H) {
    Vec3 m0, m1;
    Mat34 J0, J1;
    Mat4 H0, H1;
    directorDerivatives(k0, a0, ap0, b.kb, m0, J0, H0);
    directorDerivatives(k1, a1, ap1, b.kb, m1, J1, H1);
    const Vec3 W = m0 + m1;
    Mat38 Jm = Mat38::Zero();  // d(m^{i-1} + m^i)/dy
    Jm.leftCols<4>() = J0;
    Jm.rightCols<4>() = J1;
    g = 0.5 * (b.J.transpose() * W + Jm.transpose() * b.kb);
    const Mat8 C = b.J.transpose() * Jm;
    H = 0.5 * (b.hess(W) + C + C.transpose());
    H.topLeftCorner<4, 4>() += 0.5 * H0;
    H.bottomRightCorner<4, 4>() += 0.5 * H1;
    return 0.5 * b.kb.dot(W);
  };
  Vec8 g1, g2;
  Mat8 H1, H2;
  // κ^(1) uses m2 (a = a2, a' = -a1); κ^(2) uses m1 (a = a1, a' = a2). Eq. 3.
  const double dk1 = curvature(a2_0, -a1_0, a2_1, -a1_1, g1, H1) - p.kappa_bar[0];
  const double dk2 = curvature(a1_0, a2_0, a1_1, a2_1, g2, H2) - p.kappa_bar[1];
  const double c1 = p.EI1 * inv_l, c2 = p.EI2 * inv_l;
  Vec8 gy;
  Mat8 Hy;
  if (grad) gy = c1 * dk1 * g1 + c2 * dk2 * g2;
  if (hess) Hy = c1 * (g1 * g1.transpose() + dk1 * H1) + c2 * (g2 * g2.transpose() + dk2 * H2);
  toStencil(&gy, &Hy, grad, hess);
  return 0.5 * (c1 * dk1 * dk1 + c2 * dk2 * dk2);
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

// ----------------------------------------------------------------------------------- twisting

double referenceTwist(const Vec11& q, const EdgeFrame& f0, const EdgeFrame& f1, double committed_twist) {
  const EdgeKin k0(q.segment<3>(4) - q.segment<3>(0), f0);
  const EdgeKin k1(q.segment<3>(8) - q.segment<3>(4), f1);
  return referenceTwistValue(k0, k1, f0, f1, committed_twist);
}

void referenceTwistDerivatives(const Vec11& q, const EdgeFrame& f0, const EdgeFrame& f1, Vec11& grad,
                               Mat11& hess) {
  const EdgeKin k0(q.segment<3>(4) - q.segment<3>(0), f0);
  const EdgeKin k1(q.segment<3>(8) - q.segment<3>(4), f1);
  const BinormalKin b(k0, k1);
  Vec8 g;
  Mat8 H;
  referenceTwistY(k0, k1, b, g, H);
  toStencil(&g, &H, &grad, &hess);
}

double twisting(const Vec11& q, const EdgeFrame& f0, const EdgeFrame& f1, double committed_twist,
                const TwistParams& p, Vec11* grad, Mat11* hess) {
  const EdgeKin k0(q.segment<3>(4) - q.segment<3>(0), f0);
  const EdgeKin k1(q.segment<3>(8) - q.segment<3>(4), f1);
  const double m = referenceTwistValue(k0, k1, f0, f1, committed_twist);
  const double dtau = q[7] - q[3] + m - p.tau_bar;  // Eq. 4 minus natural twist
  const double c = p.GJ / p.voronoi_length;
  if (grad || hess) {
    const BinormalKin b(k0, k1);
    Vec8 gm;
    Mat8 Hm;
    referenceTwistY(k0, k1, b, gm, Hm);
    Vec8 gtau = gm;
    gtau[3] = -1.0;
    gtau[7] = 1.0;
    Vec8 gy;
    Mat8 Hy;
    if (grad) gy = c * dtau * gtau;
    if (hess) Hy = c * (gtau * gtau.transpose() + dtau * Hm);
    toStencil(&gy, &Hy, grad, hess);
  }
  return 0.5 * c * dtau * dtau;  // Eq. 5, E_t
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
