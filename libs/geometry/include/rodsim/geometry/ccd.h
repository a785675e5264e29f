// Continuous collision detection for linear motion (a Newton step, or a time step's motion from
// q_start to q_end; moved here from contact_ipc/ipc_ccd.*, arithmetic unchanged): how far along x + t dx,
// t in [0, 1], every gap stays above a fraction of its starting value. Conservative by
// construction: the returned t is never later than the true time the gap reaches the target,
// hence never later than the time of impact (gap = 0).
//
// Edge-edge: conservative advancement. Every point of segment a moves as a convex combination of
// its end velocities, so the relative velocity of any two points of the segments is a convex
// combination of the four differences dp_i - dq_j, and the segment distance D(t) (a minimum of
// such distances) is Lipschitz in t with constant V = max_ij |dp_i - dq_j|. From a time t_k with
// gap g_k > target, the gap cannot reach the target before t_k + (g_k - target)/V: that is the
// next iterate, and each iterate is safe. The iteration stops when t reaches 1, when the gap is
// within `tolerance` (relative to g_0 - target) of the target, or after `max_iterations`.
// Node-plane: the signed distance is linear in t, so the crossing time is exact. Node-sphere and
// node-cylinder: the distance to the center (axis) is the root of a quadratic in t: exact too.
#pragma once

#include <rodsim/geometry/types.h>

namespace rodsim::geometry {

struct CcdOptions {
  double gap_fraction = 0.1;  // target: the gap may shrink to gap_fraction g_0 within the step
  double tolerance = 1e-2;    // stop when g - target < tolerance (g_0 - target)
  int max_iterations = 200;   // safe to stop at any iterate
};

struct CcdResult {
  double t = 1;         // conservative time in [0, 1] at which the gap reaches the target (1: never)
  double gap0 = 0;      // gap at t = 0 (m)
  int iterations = 0;
};

// Segments (p0, p1) moving by (dp0, dp1) and (q0, q1) by (dq0, dq1); contact when the segment
// distance equals R. A gap <= 0 at t = 0 gives t = 0.
CcdResult edgeEdgeCcd(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1, const Vec3& dp0,
                      const Vec3& dp1, const Vec3& dq0, const Vec3& dq1, double R, const CcdOptions& opt);

// A node x of radius r moving by dx against the plane through `origin` with unit normal n.
CcdResult nodePlaneCcd(const Vec3& x, const Vec3& dx, const Vec3& origin, const Vec3& n, double r,
                       const CcdOptions& opt);

// A node x of radius r moving by dx outside a sphere (axis = 0) or an infinite cylinder (unit axis)
// of radius R around `center`.
CcdResult nodeRoundCcd(const Vec3& x, const Vec3& dx, const Vec3& center, const Vec3& axis, double R, double r,
                       const CcdOptions& opt);

}  // namespace rodsim::geometry
