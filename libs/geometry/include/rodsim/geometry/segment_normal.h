// Closest points of two segments with the unit normal between them and the weights of the
// distance's gradient, for penalty contact laws that need the force but not the Hessian in their
// hot loop (Gazzola et al.'s spring-dashpot self-contact, Sec. IV.4, Eqs. 36-37).
//
// With Lumelsky's clamped closest-point parameters s (on p0 p1) and t (on q0 q1) (lumelsky(), Tong
// et al. 2023, Eq. 10), the closest points are P = p0 + s (p1 - p0), Q = q0 + t (q1 - q0), the distance
// D = |Q - P| and the unit normal n = (Q - P)/D points from the first segment to the second. Since D
// is the minimum over (s, t) in [0, 1]^2 of |Q - P|, its gradient with respect to the 12 node
// coordinates (p0, p1, q0, q1) is the partial gradient at the minimizer (envelope theorem), for
// clamped and interior parameters alike:
//     dD/dp0 = -(1 - s) n,  dD/dp1 = -s n,  dD/dq0 = (1 - t) n,  dD/dq1 = t n,
// i.e. dD/dx_k = w_k n with w = (-(1 - s), -s, 1 - t, t). This equals edgeDistance()'s gradient
// (same lumelsky() classification; tests/libs/geometry/test_segment_normal.cpp) at a fraction of
// its cost. The rate of change of the distance is then dD/dt = sum_k w_k n . v_k (the normal
// velocity of Q relative to P).
//
// Centre lines that intersect (D = 0) have no normal: n is then the unit vector along
// (p1 - p0) x (q1 - q0), or perpendicular to p1 - p0 when the segments are also parallel; D = 0
// is kept (a penalty law sees the full overlap).
#pragma once

#include <rodsim/geometry/frames.h>
#include <rodsim/geometry/segment_segment_distance.h>
#include <rodsim/geometry/types.h>

#include <cmath>

namespace rodsim::geometry {

struct SegmentNormal {
  double D = 0;     // distance between the closest points
  double s = 0, t = 0;
  Vec3 n = Vec3::UnitX();  // unit normal, from the first segment to the second
  double w[4] = {0, 0, 0, 0};  // dD/dx_k = w[k] n for the nodes p0, p1, q0, q1
  bool s_free = false, t_free = false;  // the parameter is interior (not at an end, not pinned)
};

inline void segmentNormal(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1, SegmentNormal& out,
                          double parallel_tol = 1e-8) {
  const ClosestPoints cp = lumelsky(p0, p1, q0, q1, parallel_tol);
  out.s = cp.s;
  out.t = cp.t;
  const Vec3 d = (q0 + cp.t * (q1 - q0)) - (p0 + cp.s * (p1 - p0));
  out.D = d.norm();
  if (out.D > 0) {
    out.n = d * (1.0 / out.D);
  } else {
    const Vec3 c = (p1 - p0).cross(q1 - q0);
    const double cn = c.norm();
    out.n = cn > 0 ? Vec3(c / cn) : anyPerpendicular(p1 - p0);
  }
  out.s_free = !cp.s_end;
  out.t_free = !cp.t_end;
  out.w[0] = -(1 - cp.s);
  out.w[1] = -cp.s;
  out.w[2] = 1 - cp.t;
  out.w[3] = cp.t;
}

// The Hessian d2D/dx2 (12 x 12, nodes p0, p1, q0, q1) at the closest points `sn` of the same segments
// (D > 0), in closed form: with c(x, theta) = Q - P, theta = (s, t), D = min |c| and P_n = I - n n^T,
//   f_xx = (w w^T) (x) P_n / D   (c is linear in x at fixed theta),
//   f_{x_k s} = (w_k / D) P_n (-e1) + n (delta_k0 - delta_k1),  f_{x_k t} = (w_k / D) P_n e2 + n (delta_k3 - delta_k2),
//   f_ss = e1^T P_n e1 / D, f_tt = e2^T P_n e2 / D, f_st = -e1^T P_n e2 / D   (e1 = p1 - p0, e2 = q1 - q0),
// and the interior parameters F eliminated: d2D/dx2 = f_xx - f_xF f_FF^-1 f_Fx (implicit function theorem
// on f_theta = 0; clamped or pinned parameters are constants). Equal to edgeDistance()'s Hessian (same
// classification; tests/libs/geometry/test_segment_normal.cpp) at a tenth of its cost.
inline void segmentDistanceHessian(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1,
                                   const SegmentNormal& sn, Mat12& H) {
  const double inv = 1.0 / sn.D;
  const Mat3 P = Mat3::Identity() - sn.n * sn.n.transpose();
  for (int k = 0; k < 4; ++k)
    for (int l = 0; l < 4; ++l) H.block<3, 3>(3 * k, 3 * l) = (sn.w[k] * sn.w[l] * inv) * P;
  const int nf = int(sn.s_free) + int(sn.t_free);
  if (nf == 0) return;
  const Vec3 e1 = p1 - p0, e2 = q1 - q0;
  const Vec3 Pe1 = P * e1, Pe2 = P * e2;
  // rows of f_Fx (one per interior parameter) and f_FF
  Eigen::Matrix<double, 2, 12> B;
  double S[2][2];
  int r = 0;
  if (sn.s_free) {
    for (int k = 0; k < 4; ++k) B.block<1, 3>(r, 3 * k) = (-sn.w[k] * inv) * Pe1.transpose();
    B.block<1, 3>(r, 0) += sn.n.transpose();
    B.block<1, 3>(r, 3) -= sn.n.transpose();
    ++r;
  }
  if (sn.t_free) {
    for (int k = 0; k < 4; ++k) B.block<1, 3>(r, 3 * k) = (sn.w[k] * inv) * Pe2.transpose();
    B.block<1, 3>(r, 6) -= sn.n.transpose();
    B.block<1, 3>(r, 9) += sn.n.transpose();
    ++r;
  }
  if (nf == 1) {
    const double f = sn.s_free ? e1.dot(Pe1) * inv : e2.dot(Pe2) * inv;
    H.noalias() -= (1.0 / f) * B.row(0).transpose() * B.row(0);
    return;
  }
  S[0][0] = e1.dot(Pe1) * inv;
  S[1][1] = e2.dot(Pe2) * inv;
  S[0][1] = S[1][0] = -e1.dot(Pe2) * inv;
  const double det = S[0][0] * S[1][1] - S[0][1] * S[1][0];
  const double i00 = S[1][1] / det, i11 = S[0][0] / det, i01 = -S[0][1] / det;
  H.noalias() -= i00 * B.row(0).transpose() * B.row(0) + i11 * B.row(1).transpose() * B.row(1) +
                 i01 * (B.row(0).transpose() * B.row(1) + B.row(1).transpose() * B.row(0));
}

}  // namespace rodsim::geometry
