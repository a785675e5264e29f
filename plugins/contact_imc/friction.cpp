#include "friction.h"

#include <rodsim/geometry/smoothed_slip.h>

#include <cmath>

namespace rodsim::imc {

namespace {
using Mat3 = Eigen::Matrix3d;
constexpr double kTiny = 1e-300;
}  // namespace

void pairFriction(const Vec12& f, const Vec12& v, double mu, double K2, bool jacobian, FrictionResult& out) {
  out.force.setZero();
  if (jacobian) {
    out.d_dv.setZero();
    out.d_df.setZero();
  }
  out.slip = 0;
  out.gamma = 0;
  if (mu <= 0) return;
  const Vec3 f1 = f.segment<3>(0), f2 = f.segment<3>(3), f3 = f.segment<3>(6), f4 = f.segment<3>(9);
  const Vec3 A = f1 + f2, B = f3 + f4;
  const double na = A.norm(), nb = B.norm();
  if (na <= kTiny || nb <= kTiny) return;
  const double fm[4] = {f1.norm(), f2.norm(), f3.norm(), f4.norm()};
  const Vec3 n = A / na;                                 // Eq. 14
  const double bi = fm[1] / na, bj = fm[3] / nb;         // Eq. 20
  const Vec3 v1 = v.segment<3>(0), v2 = v.segment<3>(3), v3 = v.segment<3>(6), v4 = v.segment<3>(9);
  const Vec3 vrel = (1 - bi) * v1 + bi * v2 - (1 - bj) * v3 - bj * v4;  // Eq. 15
  const Mat3 P = Mat3::Identity() - n * n.transpose();
  const Vec3 vT = P * vrel;                                            // Eq. 16
  const double tau = vT.norm();
  double g, gp;
  geometry::smoothedSlip(tau, 0.5 * K2, g, gp);
  const Vec3 phi = g * vT;  // gamma * unit(v_T), Eq. 17
  out.slip = tau;
  out.gamma = g * tau;
  out.normal = n;
  const double sgn[4] = {1, 1, -1, -1};
  for (int m = 0; m < 4; ++m) out.force.segment<3>(3 * m) = -sgn[m] * mu * fm[m] * phi;  // Eq. 18
  if (!jacobian) return;

  const Mat3 Dphi = g * Mat3::Identity() + gp * vT * vT.transpose();  // d phi / d v_T
  const Mat3 DphiP = Dphi * P;
  const double w[4] = {1 - bi, bi, -(1 - bj), -bj};
  // d phi / d F^c: through n (f1, f2) and through beta_i, beta_j (Eq. 20).
  const Mat3 Tn = -(n * vrel.transpose() + n.dot(vrel) * Mat3::Identity());  // d v_T / d n
  const Mat3 Nn = P / na;                                                      // d n / d f1 = d n / d f2
  const Vec3 fh2 = fm[1] > kTiny ? Vec3(f2 / fm[1]) : Vec3::Zero();
  const Vec3 fh4 = fm[3] > kTiny ? Vec3(f4 / fm[3]) : Vec3::Zero();
  const Eigen::RowVector3d dbi_df1 = -fm[1] / (na * na * na) * A.transpose();
  const Eigen::RowVector3d dbi_df2 = fh2.transpose() / na + dbi_df1;
  const Eigen::RowVector3d dbj_df3 = -fm[3] / (nb * nb * nb) * B.transpose();
  const Eigen::RowVector3d dbj_df4 = fh4.transpose() / nb + dbj_df3;
  const Vec3 Pdi = P * (v2 - v1), Pdj = P * (v3 - v4);
  Mat3 dphi_df[4];
  dphi_df[0] = Dphi * (Tn * Nn + Pdi * dbi_df1);
  dphi_df[1] = Dphi * (Tn * Nn + Pdi * dbi_df2);
  dphi_df[2] = Dphi * (Pdj * dbj_df3);
  dphi_df[3] = Dphi * (Pdj * dbj_df4);
  for (int m = 0; m < 4; ++m) {
    const double c = -sgn[m] * mu;
    const Vec3 fhm = fm[m] > kTiny ? Vec3(f.segment<3>(3 * m) / fm[m]) : Vec3::Zero();
    for (int kk = 0; kk < 4; ++kk) {
      out.d_dv.block<3, 3>(3 * m, 3 * kk) = (c * fm[m] * w[kk]) * DphiP;
      Mat3 J = c * fm[m] * dphi_df[kk];
      if (m == kk) J += c * phi * fhm.transpose();
      out.d_df.block<3, 3>(3 * m, 3 * kk) = J;
    }
  }
}

void nodeFriction(double fn, const Vec3& n, const Vec3& v, double mu, double K2, Vec3& force, Eigen::Matrix3d* d_dv,
                  Vec3* d_dfn, Eigen::Matrix3d* d_dn) {
  const Mat3 P = Mat3::Identity() - n * n.transpose();
  const Vec3 vT = P * v;
  double g, gp;
  geometry::smoothedSlip(vT.norm(), 0.5 * K2, g, gp);
  const Vec3 phi = g * vT;
  force = -mu * fn * phi;
  const Mat3 Dphi = g * Mat3::Identity() + gp * vT * vT.transpose();  // d phi / d v_T
  if (d_dv) *d_dv = -mu * fn * Dphi * P;
  if (d_dfn) *d_dfn = -mu * phi;
  // d v_T / d n = -(n v^T + (n.v) I)
  if (d_dn) *d_dn = mu * fn * Dphi * (n * v.transpose() + n.dot(v) * Mat3::Identity());
}

}  // namespace rodsim::imc
