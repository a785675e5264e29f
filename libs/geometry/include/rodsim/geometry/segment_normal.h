// Closest points of two segments with the unit normal between them and the weights of the
// distance's gradient, for penalty contact laws that need the force but not the Hessian in their
// hot loop (the Cosserat seed's spring-dashpot self-contact, Sec. IV.4, Eqs. 36-37).
//
// With Lumelsky's clamped closest-point parameters s (on p0 p1) and t (on q0 q1) (lumelsky(), seed
// 002 Eq. 10), the closest points are P = p0 + s (p1 - p0), Q = q0 + t (q1 - q0), the distance
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
};

inline void segmentNormal(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1, SegmentNormal& out,
                          double parallel_tol = 1e-8) {
  const ClosestPoints cp = lumelsky(p0, p1, q0, q1, parallel_tol);
  out.s = cp.s;
  out.t = cp.t;
  const Vec3 d = (q0 + cp.t * (q1 - q0)) - (p0 + cp.s * (p1 - p0));
  out.D = d.norm();
  if (out.D > 0) {
    out.n = d / out.D;
  } else {
    const Vec3 c = (p1 - p0).cross(q1 - q0);
    const double cn = c.norm();
    out.n = cn > 0 ? Vec3(c / cn) : anyPerpendicular(p1 - p0);
  }
  out.w[0] = -(1 - cp.s);
  out.w[1] = -cp.s;
  out.w[2] = 1 - cp.t;
  out.w[3] = cp.t;
}

}  // namespace rodsim::geometry
