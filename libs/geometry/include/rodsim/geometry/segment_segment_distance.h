// Minimum distance between two segments (edges) (Tong et al. 2023, Sec. 3.2, Eqs. 10-13) with its analytic
// gradient and Hessian with respect to the 12 node coordinates (x_i, x_{i+1}, x_j, x_{j+1}); the
// cross-product measure of nearly parallel edges that IPC's mollifier takes; and the closest-point
// parameters of the alart-curnier contact frame.
//
// The pair is classified from Lumelsky's clamped closest-point parameters (Eq. 10): both
// parameters at an end of their edge -> point-point (Eq. 11), one -> point-edge (Eq. 12), none ->
// edge-edge (Eq. 13). Exactly (or numerically) parallel edges have no unique closest points; the
// classification then pins one parameter to an end, which yields point-edge or point-point, whose
// distance equals the line-line distance and stays differentiable (Eq. 13 is singular there).
//
// Every distance is computed as sqrt of a squared distance g(x) that is a rational function of
// the coordinates; D = sqrt(g), dD = dg / 2D, d2D = d2g / 2D - dD dD^T / D.
// Callers scale the coordinates by 1/h first (SI B.1); nothing here depends on units.
//
// Two closest-point routines live here, with different degenerate-case rules (each model's runs
// depend on its own, bit for bit):
//  - lumelsky(): IMC and IPC. Parallel when |d1 x d2|^2 <= parallel_tol |d1|^2 |d2|^2 (1e-8), then s
//    is pinned to 0; t from s, and s recomputed from a clamped t. Reports which ends are pinned.
//  - closestSegmentPoints(): alart-curnier. Degenerate (zero-length) edges handled first; parallel
//    when |d1 x d2|^2 <= 1e-14 |d1|^2 |d2|^2, then s = 0; s recomputed only when t leaves [0, 1].
#pragma once

#include <rodsim/geometry/distance_type.h>
#include <rodsim/geometry/point_point_distance.h>
#include <rodsim/geometry/point_segment_distance.h>
#include <rodsim/geometry/types.h>

namespace rodsim::geometry {

// Closest-point parameters s (on edge p0 p1) and t (on edge q0 q1) in [0, 1] (Lumelsky 1985,
// ref. [52] of Tong et al. 2023), and which of them sit at an end of their edge (clamped or pinned).
struct ClosestPoints {
  double s = 0, t = 0;
  bool s_end = false, t_end = false;
  bool parallel = false;
  DistanceType type() const;
};
// `parallel_tol`: edges with |e1 x e2|^2 < parallel_tol |e1|^2 |e2|^2 are treated as parallel.
ClosestPoints lumelsky(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1,
                       double parallel_tol = 1e-8);

// Distance D and, when requested, dD/dx (12) and d2D/dx2 (12 x 12) for x = (p0, p1, q0, q1).
// Entries of nodes that do not take part (point-point, point-edge) are zero.
struct EdgeDistance {
  double D = 0;
  DistanceType type = DistanceType::EdgeEdge;
  ClosestPoints cp;
  Vec12 grad = Vec12::Zero();
  Mat12 hess = Mat12::Zero();
};
// order: 0 distance only, 1 + gradient, 2 + Hessian.
void edgeDistance(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1, int order,
                  EdgeDistance& out, double parallel_tol = 1e-8);

// Squared distance of the line (a, b) to the line (c, d) (Eq. 13 squared) with gradient and
// Hessian over (a, b, c, d); singular for parallel lines. The point-point and point-line ones are in
// point_point_distance.h and point_segment_distance.h.
void edgeEdgeSq(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d, double& g, Vec12* dg, Mat12* d2g);

// Plain segment-segment distance (no derivatives), for the broad phase's narrow check.
double segmentDistance(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1);

// x = |e_a x e_b|^2 with e_a = p1 - p0, e_b = q1 - q0, gradient and Hessian over (p0, p1, q0, q1)
// (the argument of IPC's edge-edge mollifier, barrier.h).
double edgeCrossSquared(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1, Vec12* grad, Mat12* hess);

// Closest points of segments [p0, p1] and [q0, q1]: parameters s, t in [0, 1] (alart-curnier's
// rule, see above).
void closestSegmentPoints(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1, double& s, double& t);

}  // namespace rodsim::geometry
