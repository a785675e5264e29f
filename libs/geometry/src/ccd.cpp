#include <rodsim/geometry/ccd.h>
#include <rodsim/geometry/segment_segment_distance.h>

#include <algorithm>
#include <cmath>

namespace rodsim::geometry {

CcdResult edgeEdgeCcd(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1, const Vec3& dp0,
                      const Vec3& dp1, const Vec3& dq0, const Vec3& dq1, double R, const CcdOptions& opt) {
  CcdResult r;
  r.gap0 = segmentDistance(p0, p1, q0, q1) - R;
  if (!(r.gap0 > 0)) {
    r.t = 0;
    return r;
  }
  const double V = std::max({(dp0 - dq0).norm(), (dp0 - dq1).norm(), (dp1 - dq0).norm(), (dp1 - dq1).norm()});
  const double target = opt.gap_fraction * r.gap0;
  if (!(V > 0) || r.gap0 - target >= V) return r;  // cannot close the margin within the step
  const double stop = opt.tolerance * (r.gap0 - target);
  double t = 0, g = r.gap0;
  while (r.iterations < opt.max_iterations) {
    ++r.iterations;
    const double t_next = t + (g - target) / V;  // the gap stays >= target on [t, t_next]
    if (t_next >= 1) return r;                   // r.t = 1
    t = t_next;
    g = segmentDistance(p0 + t * dp0, p1 + t * dp1, q0 + t * dq0, q1 + t * dq1) - R;
    if (g - target <= stop) break;
  }
  r.t = t;
  return r;
}

CcdResult nodePlaneCcd(const Vec3& x, const Vec3& dx, const Vec3& origin, const Vec3& n, double r_node,
                       const CcdOptions& opt) {
  CcdResult r;
  r.gap0 = (x - origin).dot(n) - r_node;
  if (!(r.gap0 > 0)) {
    r.t = 0;
    return r;
  }
  const double rate = dx.dot(n);  // gap(t) = gap0 + t rate
  if (rate >= 0) return r;
  r.iterations = 1;
  r.t = std::min(1.0, (1 - opt.gap_fraction) * r.gap0 / -rate);
  return r;
}

CcdResult nodeRoundCcd(const Vec3& x, const Vec3& dx, const Vec3& center, const Vec3& axis, double R, double r_node,
                       const CcdOptions& opt) {
  // a + t b: the node's offset from the center across the axis; the gap reaches its target when
  // |a + t b| = rho = R + r + gap_fraction gap0, a quadratic b.b t^2 + 2 a.b t + (a.a - rho^2) = 0.
  const Vec3 a = (x - center) - (x - center).dot(axis) * axis, b = dx - dx.dot(axis) * axis;
  CcdResult r;
  r.gap0 = a.norm() - R - r_node;
  if (!(r.gap0 > 0)) {
    r.t = 0;
    return r;
  }
  const double rho = R + r_node + opt.gap_fraction * r.gap0;
  const double ab = a.dot(b), c = a.squaredNorm() - rho * rho, disc = ab * ab - b.squaredNorm() * c;
  if (ab >= 0 || disc < 0) return r;  // moving away, or passing by outside the target
  r.iterations = 1;
  r.t = std::min(1.0, c / (-ab + std::sqrt(disc)));  // the smaller root, without cancellation
  return r;
}

}  // namespace rodsim::geometry
