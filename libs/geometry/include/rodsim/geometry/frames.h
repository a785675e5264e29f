// Frame geometry of rods: angles, perpendicular vectors, parallel transport, the curvature
// binormal. Used by rod_der (reference frames, Eqs. 2 and 4 of Tong et al. (2023), Sec. 2), rod_cosserat
// (initial material frames) and centerline.cpp.
//
// Two perpendicular-vector conventions and two parallel transports exist because the two rod
// models were built on different ones and their runs depend on them bit for bit; each function
// names its convention. Vectors are unit vectors where it says so; nothing here has units.
#pragma once

#include <rodsim/geometry/types.h>

namespace rodsim::geometry {

// Wraps an angle into [-π, π].
double wrapAngle(double a);

// Deterministic unit vector perpendicular to the unit vector t (projection of the coordinate axis
// least aligned with t). The der rod's first director and the helix/circle builders' b1.
Vec3 anyPerpendicular(const Vec3& t);

// Deterministic unit vector perpendicular to the unit vector t: the projection of e_z, or of e_x
// when |t_z| >= 0.9. The cosserat rod's first director d1.
Vec3 perpendicularFromZ(const Vec3& t);

// Space/time parallel transport (minimal rotation taking unit a to unit b) of v ⟂ a, by the
// rational formula R v = v - ((a+b)·v)/(1+a·b) (a+b) + 2 (a·v) b (der rod). Singular for b = -a.
Vec3 parallelTransport(const Vec3& v, const Vec3& a, const Vec3& b);

// The same minimal rotation as exp([θ]x) u with θ along a×b by the angle atan2(|a×b|, a·b)
// (cosserat rod); u itself when |a×b| < 1e-14.
Vec3 parallelTransportExp(const Vec3& u, const Vec3& a, const Vec3& b);

// Signed angle from u to v about the unit axis n (u, v ⟂ n), in [-π, π].
double signedAngle(const Vec3& u, const Vec3& v, const Vec3& n);

// Curvature binormal (κb)_i of Eq. 2 from the edges e^{i-1}, e^i: 2 e0×e1 / (|e0||e1| + e0·e1).
Vec3 curvatureBinormal(const Vec3& e0, const Vec3& e1);

}  // namespace rodsim::geometry
