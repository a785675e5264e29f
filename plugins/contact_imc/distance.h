// Minimum distance between two edges (seed 002, Sec. 3.2, Eqs. 10-13) with its analytic gradient
// and Hessian with respect to the 12 node coordinates (x_i, x_{i+1}, x_j, x_{j+1}).
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
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>

namespace rodsim::imc {

using Vec3 = Eigen::Vector3d;
using Vec12 = Eigen::Matrix<double, 12, 1>;
using Mat12 = Eigen::Matrix<double, 12, 12>;

enum class DistanceType { PointPoint, PointEdge, EdgeEdge };
const char* distanceTypeName(DistanceType t);

// Closest-point parameters s (on edge p0 p1) and t (on edge q0 q1) in [0, 1] (Lumelsky 1985,
// seed ref. [52]), and which of them sit at an end of their edge (clamped or pinned).
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

// The three primitive squared distances with gradient and Hessian over their own nodes
// (exposed for tests). g = |a - b|^2 over (a, b); point p to the line through (a, b) over
// (p, a, b); line (a, b) to line (c, d) over (a, b, c, d).
void pointPointSq(const Vec3& a, const Vec3& b, double& g, Eigen::Matrix<double, 6, 1>* dg,
                  Eigen::Matrix<double, 6, 6>* d2g);
void pointEdgeSq(const Vec3& p, const Vec3& a, const Vec3& b, double& g, Eigen::Matrix<double, 9, 1>* dg,
                 Eigen::Matrix<double, 9, 9>* d2g);
void edgeEdgeSq(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d, double& g, Vec12* dg, Mat12* d2g);

// Plain segment-segment distance (no derivatives), for the broad phase's narrow check.
double segmentDistance(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1);

}  // namespace rodsim::imc
