#include "ipc_friction.h"

#include <rodsim/geometry/segment_segment_distance.h>

#include <algorithm>
#include <cmath>

namespace rodsim::ipc {

double frictionF0(double y, double eps_u) {
  if (y >= eps_u) return y;
  return -y * y * y / (3 * eps_u * eps_u) + y * y / eps_u + eps_u / 3;
}

double frictionF1(double y, double eps_u) {
  if (y >= eps_u) return 1.0;
  return 2 * y / eps_u - y * y / (eps_u * eps_u);
}

double frictionF1OverY(double y, double eps_u) {
  if (y >= eps_u) return 1.0 / y;
  return 2 / eps_u - y / (eps_u * eps_u);
}

double frictionF1OverYDerivOverY(double y, double eps_u) {
  if (y >= eps_u) return -1.0 / (y * y * y);
  return -1.0 / (eps_u * eps_u * y);
}

FrictionLag lagEdgeEdge(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1, double parallel_tol) {
  FrictionLag lag;
  const Vec3 ea = p1 - p0, eb = q1 - q0;
  const double A = ea.squaredNorm(), B = eb.squaredNorm();
  const bool parallel = A > 0 && B > 0 && ea.cross(eb).squaredNorm() <= parallel_tol * A * B;
  if (parallel) {
    // Overlap of the projections of q0, q1 on edge a, in its parameter.
    const double sa = (q0 - p0).dot(ea) / A, sb = (q1 - p0).dot(ea) / A;
    const double lo = std::max(0.0, std::min(sa, sb)), hi = std::min(1.0, std::max(sa, sb));
    lag.s = lo <= hi ? 0.5 * (lo + hi) : (std::max(sa, sb) < 0 ? 0.0 : 1.0);
    lag.t = std::clamp((p0 + lag.s * ea - q0).dot(eb) / B, 0.0, 1.0);
  } else {
    const geometry::ClosestPoints cp = geometry::lumelsky(p0, p1, q0, q1);
    lag.s = cp.s;
    lag.t = cp.t;
  }
  const Vec3 d = (p0 + lag.s * ea) - (q0 + lag.t * eb);
  const double len = d.norm();
  lag.n = len > 0 ? Vec3(d / len) : Vec3(ea.unitOrthogonal());
  return lag;
}

}  // namespace rodsim::ipc
