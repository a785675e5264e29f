#include "friction.h"

#include <rodsim/geometry/smoothed_slip.h>

#include <cmath>

namespace rodsim::spring_dashpot {

using RowVec12 = Eigen::Matrix<double, 1, 12>;
using Mat3x12 = Eigen::Matrix<double, 3, 12>;

// f(x, theta) = |c|, c = Q - P = (q0 + t e2) - (p0 + s e1). Stationarity in the interior parameters
// F: f_F(x, theta) = 0, so dF/dx = -f_FF^-1 f_Fx; f_Fx rows and f_FF as segmentDistanceHessian forms
// them (rodsim/geometry/segment_normal.h). A clamped or pinned parameter is a constant.
void closestPointJacobian(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1,
                          const geometry::SegmentNormal& sn, Eigen::Matrix<double, 2, 12>& J) {
  J.setZero();
  const int nf = int(sn.s_free) + int(sn.t_free);
  if (nf == 0) return;
  const double inv = 1.0 / sn.D;
  const Mat3 P = Mat3::Identity() - sn.n * sn.n.transpose();
  const Vec3 e1 = p1 - p0, e2 = q1 - q0;
  const Vec3 Pe1 = P * e1, Pe2 = P * e2;
  RowVec12 Bs = RowVec12::Zero(), Bt = RowVec12::Zero();
  for (int k = 0; k < 4; ++k) {
    Bs.segment<3>(3 * k) = (-sn.w[k] * inv) * Pe1.transpose();
    Bt.segment<3>(3 * k) = (sn.w[k] * inv) * Pe2.transpose();
  }
  Bs.segment<3>(0) += sn.n.transpose();
  Bs.segment<3>(3) -= sn.n.transpose();
  Bt.segment<3>(6) -= sn.n.transpose();
  Bt.segment<3>(9) += sn.n.transpose();
  const double Sss = e1.dot(Pe1) * inv, Stt = e2.dot(Pe2) * inv, Sst = -e1.dot(Pe2) * inv;
  if (nf == 1) {
    if (sn.s_free) J.row(0) = -Bs / Sss;
    else J.row(1) = -Bt / Stt;
    return;
  }
  const double det = Sss * Stt - Sst * Sst;
  J.row(0) = -(Stt * Bs - Sst * Bt) / det;
  J.row(1) = -(-Sst * Bs + Sss * Bt) / det;
}

// F_k = -mu f_n w_k phi(v_T) (friction.h). Its derivative, with theta = (s, t) moving with the nodes
// (dtheta/dq: closestPointJacobian; zero for clamped parameters):
//   dc/dq     = W + (-e1) ds/dq + e2 dt/dq,       dn/dq = (I - n n^T) dc/dq / D,
//   dv_rel/dq = (W + (u0 - u1) ds/dq + (u3 - u2) dt/dq) / dt   (W u / dt with W's weights moving),
//   df_n/dq   = -k n^T dc/dq - gamma (v_rel^T dn/dq + n^T dv_rel/dq)   (n^T dc/dq = dD/dq),
//   dv_T/dq   = (I - n n^T) dv_rel/dq - (n v_rel^T + (n . v_rel) I) dn/dq,
//   dphi/dq   = (g I + g' v_T v_T^T) dv_T/dq,
//   dF_k/dq   = -mu (w_k phi df_n/dq + f_n phi dw_k/dq + f_n w_k dphi/dq),
// dw/ds = (1, -1, 0, 0), dw/dt = (0, 0, -1, 1).
bool pairFriction(const Vec3 x[4], const Vec12& u, double dt, const geometry::SegmentNormal& sn, double rsum,
                  const ContactLaw& law, Vec12& F, Mat12* K) {
  const bool damp = law.gamma > 0;
  F.setZero();
  if (K) K->setZero();
  const Vec3& n = sn.n;
  Vec3 du = Vec3::Zero();
  for (int k = 0; k < 4; ++k) du += sn.w[k] * u.segment<3>(3 * k);
  const Vec3 vrel = du / dt;
  const double eps = rsum - sn.D;
  double fn = law.k * eps;
  if (damp) fn -= law.gamma * n.dot(vrel);
  if (!(fn > 0)) return false;
  const Mat3 P = Mat3::Identity() - n * n.transpose();
  const Vec3 vT = P * vrel;
  double g, gp;
  geometry::smoothedSlip(vT.norm(), law.inv_vs, g, gp);
  const Vec3 phi = g * vT;
  const double c = -law.mu * fn;
  for (int k = 0; k < 4; ++k) F.segment<3>(3 * k) = (c * sn.w[k]) * phi;
  if (!K) return true;

  Eigen::Matrix<double, 2, 12> J;
  closestPointJacobian(x[0], x[1], x[2], x[3], sn, J);
  const Vec3 e1 = x[1] - x[0], e2 = x[3] - x[2];
  Mat3x12 dc, dvrel;
  for (int k = 0; k < 4; ++k) dc.block<3, 3>(0, 3 * k) = sn.w[k] * Mat3::Identity();
  dvrel = dc;
  dc.noalias() += -e1 * J.row(0) + e2 * J.row(1);
  dvrel.noalias() += (u.segment<3>(0) - u.segment<3>(3)) * J.row(0) + (u.segment<3>(9) - u.segment<3>(6)) * J.row(1);
  dvrel /= dt;
  const Mat3x12 dn = (P * dc) / sn.D;
  RowVec12 dfn = -law.k * (n.transpose() * dc);
  if (damp) dfn -= law.gamma * (vrel.transpose() * dn + n.transpose() * dvrel);
  const Mat3x12 dvT = P * dvrel - (n * vrel.transpose() + n.dot(vrel) * Mat3::Identity()) * dn;
  const Mat3x12 dphi = (g * Mat3::Identity() + gp * vT * vT.transpose()) * dvT;
  const RowVec12 dw[4] = {J.row(0), -J.row(0), -J.row(1), J.row(1)};
  for (int k = 0; k < 4; ++k)
    K->block<3, 12>(3 * k, 0) = law.mu * (sn.w[k] * phi * dfn + fn * phi * dw[k] + (fn * sn.w[k]) * dphi);
  return true;
}

// F = f_n n - mu f_n phi(v_T), f_n = k (r - d) - gamma n . v > 0 (friction.h). With dn/dx = H_d
// (Obstacle::distanceHessian), the surface point s = x - d n (ds/dx = I - n n^T - d H_d) moving at
// v_s(s) (dv_s/ds = Obstacle::surfaceVelocityGradient) and v = u / dt:
//   df_n/dx  = -k n^T - gamma (n^T / dt + v^T H_d),
//   dv_T/dx  = (I - n n^T)(I / dt - G ds/dx) - (n v_rel^T + (n . v_rel) I) H_d,
//   dF/dx    = n df_n/dx + f_n H_d - mu (phi df_n/dx + f_n (g I + g' v_T v_T^T) dv_T/dx).
double nodeObstacle(const Obstacle& o, const Vec3& x, double radius, const Vec3* u, double dt, const ContactLaw& law,
                    Vec3& F, Mat3* K) {
  F.setZero();
  if (K) K->setZero();
  Vec3 n;
  const double d = o.signedDistance(x, &n);
  const double eps = radius - d;
  if (!(eps > 0)) return d - radius;
  const bool moving = u && dt > 0;
  const Vec3 v = moving ? Vec3(*u / dt) : Vec3::Zero();
  const bool damp = moving && law.gamma > 0, fric = moving && law.mu > 0;
  double fn = law.k * eps;
  if (damp) fn -= law.gamma * n.dot(v);
  if (!(fn > 0)) return d - radius;  // separating faster than the spring pushes: no pull
  F = fn * n;
  const Mat3 Hd = o.distanceHessian(x);
  Eigen::RowVector3d dfn = -law.k * n.transpose();
  if (damp) dfn -= law.gamma * (n.transpose() / dt + v.transpose() * Hd);
  Mat3 dF = n * dfn + fn * Hd;
  if (fric) {
    const Mat3 P = Mat3::Identity() - n * n.transpose();
    const Vec3 vrel = v - o.surfaceVelocity(x - d * n);
    const Vec3 vT = P * vrel;
    double g, gp;
    geometry::smoothedSlip(vT.norm(), law.inv_vs, g, gp);
    const Vec3 phi = g * vT;
    F -= law.mu * fn * phi;
    if (K) {
      const Mat3 ds = P - d * Hd;
      const Mat3 dvT = P * (Mat3::Identity() / dt - o.surfaceVelocityGradient() * ds) -
                       (n * vrel.transpose() + n.dot(vrel) * Mat3::Identity()) * Hd;
      dF -= law.mu * (phi * dfn + fn * (g * Mat3::Identity() + gp * vT * vT.transpose()) * dvT);
    }
  }
  if (K) *K = -dF;
  return d - radius;
}

}  // namespace rodsim::spring_dashpot
