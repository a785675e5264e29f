// Distance from a point to a segment, with its gradient and Hessian over the 9 coordinates
// (p, a, b) (Tong et al. 2023, Sec. 3.2: point-edge Eq. 12 inside, point-point Eq. 11 at an end).
//
// Distances are sqrt of a squared distance g: D = sqrt(g), dD = dg / 2D, d2D = d2g / 2D - dD dD^T / D.
// Units: those of the coordinates (callers may scale them, as contact_imc does by 1/h).
#pragma once

#include <rodsim/geometry/distance_type.h>
#include <rodsim/geometry/types.h>

namespace rodsim::geometry {

// Squared distance from p to the line through (a, b) (Eq. 12 squared), g = |w|^2 - (w.e)^2/|e|^2
// with w = p - a, e = b - a, and dg (9), d2g (9 x 9) over (p, a, b) when the pointers are given.
// Requires a != b.
void pointEdgeSq(const Vec3& p, const Vec3& a, const Vec3& b, double& g, Vec9* dg, Mat9* d2g);

// Distance from point p to segment (a, b) and, with order >= 1 / 2, its gradient and Hessian over
// (p, a, b): point-point to the nearer end when the projection falls outside, point-line inside.
// Entries of the end that does not take part are zero.
struct PointSegmentDistance {
  double D = 0;
  DistanceType type = DistanceType::PointEdge;
  Vec9 grad = Vec9::Zero();
  Mat9 hess = Mat9::Zero();
};
void pointSegmentDistance(const Vec3& p, const Vec3& a, const Vec3& b, int order, PointSegmentDistance& out);

}  // namespace rodsim::geometry
