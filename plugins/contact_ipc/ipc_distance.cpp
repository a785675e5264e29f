#include "ipc_distance.h"

#include "ipc_barrier.h"

#include <algorithm>
#include <cmath>

namespace rodsim::ipc {

namespace {

using Mat3 = Eigen::Matrix3d;
constexpr double kParallelWeight = 0.5;  // w of the endpoint terms (see ipc_distance.h)

// D = sqrt(g) from the squared distance g over N coordinates (D > 0 wherever it is used: D > R).
template <int N>
void sqrtDistance(double g, const Eigen::Matrix<double, N, 1>& dg, const Eigen::Matrix<double, N, N>& d2g, int order,
                  double& D, Eigen::Matrix<double, N, 1>& grad, Eigen::Matrix<double, N, N>& hess) {
  D = std::sqrt(std::max(g, 0.0));
  if (order < 1) return;
  const double Ds = std::max(D, 1e-300);
  grad = dg / (2 * Ds);
  if (order < 2) return;
  hess = d2g / (2 * Ds) - grad * grad.transpose() / Ds;
}

}  // namespace

void pointSegmentDistance(const Vec3& p, const Vec3& a, const Vec3& b, int order, PointSegmentDistance& out) {
  const Vec3 e = b - a;
  const double L = e.squaredNorm();
  const double t = L > 0 ? (p - a).dot(e) / L : 0.0;
  out.grad.setZero();
  if (order >= 2) out.hess.setZero();
  if (t > 0 && t < 1) {  // Eq. 12: projection inside the segment
    out.type = DistanceType::PointEdge;
    double g;
    Vec9 dg;
    Mat9 d2g;
    imc::pointEdgeSq(p, a, b, g, order >= 1 ? &dg : nullptr, order >= 2 ? &d2g : nullptr);
    sqrtDistance<9>(g, dg, d2g, order, out.D, out.grad, out.hess);
    return;
  }
  // Eq. 11: the nearer end (a for t <= 0, b for t >= 1)
  out.type = DistanceType::PointPoint;
  const int slot = t <= 0 ? 1 : 2;
  double g;
  Eigen::Matrix<double, 6, 1> dg, grad6;
  Eigen::Matrix<double, 6, 6> d2g, hess6;
  imc::pointPointSq(p, t <= 0 ? a : b, g, order >= 1 ? &dg : nullptr, order >= 2 ? &d2g : nullptr);
  sqrtDistance<6>(g, dg, d2g, order, out.D, grad6, hess6);
  if (order < 1) return;
  out.grad.segment<3>(0) = grad6.segment<3>(0);
  out.grad.segment<3>(3 * slot) = grad6.segment<3>(3);
  if (order < 2) return;
  const int s[2] = {0, slot};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) out.hess.block<3, 3>(3 * s[i], 3 * s[j]) = hess6.block<3, 3>(3 * i, 3 * j);
}

// x = |e_a|^2 |e_b|^2 - (e_a . e_b)^2 (Lagrange's identity): polynomial, so its derivatives are
// exact and cheap.
double edgeCrossSquared(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1, Vec12* grad, Mat12* hess) {
  const Vec3 ea = p1 - p0, eb = q1 - q0;
  const double A = ea.squaredNorm(), B = eb.squaredNorm(), C = ea.dot(eb);
  const double x = A * B - C * C;
  if (grad) {
    const Vec3 ga = 2 * B * ea - 2 * C * eb, gb = 2 * A * eb - 2 * C * ea;
    *grad << -ga, ga, -gb, gb;
  }
  if (hess) {
    const Mat3 I = Mat3::Identity();
    const Mat3 Haa = 2 * B * I - 2 * eb * eb.transpose();
    const Mat3 Hbb = 2 * A * I - 2 * ea * ea.transpose();
    const Mat3 Hab = 4 * ea * eb.transpose() - 2 * eb * ea.transpose() - 2 * C * I;  // d ga / d eb
    // nodes (p0, p1) = (-ea, +ea) and (q0, q1) = (-eb, +eb)
    const double sa[2] = {-1, 1};
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) {
        const double s = sa[i] * sa[j];
        hess->block<3, 3>(3 * i, 3 * j) = s * Haa;
        hess->block<3, 3>(6 + 3 * i, 6 + 3 * j) = s * Hbb;
        hess->block<3, 3>(3 * i, 6 + 3 * j) = s * Hab;
        hess->block<3, 3>(6 + 3 * j, 3 * i) = s * Hab.transpose();
      }
  }
  return x;
}

void pairBarrier(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1, double R, double d_hat,
                 double eps_x, int order, PairBarrier& out) {
  // The distance alone first: most candidate pairs lie beyond d_hat, and for them the derivatives
  // of the distance (a 12 x 12 Hessian) would be thrown away.
  imc::EdgeDistance dist;
  imc::edgeDistance(p0, p1, q0, q1, 0, dist);
  out.gap = dist.D - R;
  out.type = dist.type;
  out.E = 0;
  out.grad.setZero();
  if (order >= 2) out.hess.setZero();
  out.active = out.gap < d_hat;
  if (!out.active) {
    out.mollifier = 1;
    return;
  }
  if (order >= 1) imc::edgeDistance(p0, p1, q0, q1, order, dist);
  // Edge-edge (full segment distance) term: b(D - R), grad b' dD, Hess b'' dD dD^T + b' d2D.
  const Scalar2 bf = barrier(out.gap, d_hat);
  Vec12 cross_grad;
  Mat12 cross_hess;
  const double x = edgeCrossSquared(p0, p1, q0, q1, order >= 1 ? &cross_grad : nullptr, order >= 2 ? &cross_hess : nullptr);
  const Scalar2 m = mollifier(x, eps_x);
  out.mollifier = m.v;
  if (m.v >= 1) {  // not nearly parallel: plain barrier on the segment distance
    out.E = bf.v;
    if (order >= 1) out.grad = bf.d1 * dist.grad;
    if (order >= 2) out.hess = bf.d2 * dist.grad * dist.grad.transpose() + bf.d1 * dist.hess;
    return;
  }
  // Endpoint terms: p0, p1 against segment q; q0, q1 against segment p.
  const Vec3* nodes[4] = {&p0, &p1, &q0, &q1};
  double Ep = 0;
  Vec12 gp = Vec12::Zero();
  Mat12 hp = Mat12::Zero();
  PointSegmentDistance ps;
  for (int k = 0; k < 4; ++k) {
    const int a = k < 2 ? 2 : 0;  // first node of the other segment
    pointSegmentDistance(*nodes[k], *nodes[a], *nodes[a + 1], order, ps);
    const Scalar2 bk = barrier(ps.D - R, d_hat);
    if (bk.v == 0 && bk.d1 == 0) continue;
    Ep += bk.v;
    if (order < 1) continue;
    const int slot[3] = {k, a, a + 1};
    for (int i = 0; i < 3; ++i) gp.segment<3>(3 * slot[i]) += bk.d1 * ps.grad.segment<3>(3 * i);
    if (order < 2) continue;
    const Mat9 h = bk.d2 * ps.grad * ps.grad.transpose() + bk.d1 * ps.hess;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) hp.block<3, 3>(3 * slot[i], 3 * slot[j]) += h.block<3, 3>(3 * i, 3 * j);
  }
  Ep *= kParallelWeight;
  gp *= kParallelWeight;
  hp *= kParallelWeight;
  // E = m Ef + (1 - m) Ep, product rule with dm = m' dx, d2m = m'' dx dx^T + m' d2x.
  out.E = m.v * bf.v + (1 - m.v) * Ep;
  if (order < 1) return;
  const Vec12 gf = bf.d1 * dist.grad;
  const Vec12 dm = m.d1 * cross_grad;
  out.grad = m.v * gf + (1 - m.v) * gp + (bf.v - Ep) * dm;
  if (order < 2) return;
  const Mat12 hf = bf.d2 * dist.grad * dist.grad.transpose() + bf.d1 * dist.hess;
  const Mat12 d2m = m.d2 * cross_grad * cross_grad.transpose() + m.d1 * cross_hess;
  const Vec12 dg = gf - gp;
  out.hess = m.v * hf + (1 - m.v) * hp + dm * dg.transpose() + dg * dm.transpose() + (bf.v - Ep) * d2m;
}

}  // namespace rodsim::ipc
