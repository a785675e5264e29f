// Barrier energy of one edge-edge pair of rods, with its gradient and Hessian with respect to the
// 12 node coordinates x = (p0, p1, q0, q1), for unit barrier stiffness.
//
// The distance D is the minimum segment-segment distance of rodsim::geometry (libs/geometry,
// segment_segment_distance.h: Lumelsky classification into point-point, point-edge and edge-edge,
// Tong et al. 2023, Eqs. 10-13), and the gap is d = D - R,
// R = r_a + r_b the sum of the two edge radii. The pair energy is the clamped log barrier b(d)
// (Tong et al. 2023, Eq. 8 written on the gap, see rodsim/geometry/barrier.h).
//
// Nearly parallel edges: D is not differentiable at exactly parallel overlapping edges (rotating
// one edge in their common plane brings one end or the other closer, a |theta| kink), and its
// edge-edge formula is singular there. As in IPC, the edge-edge term is multiplied by the
// mollifier m(x), x = |e_a x e_b|^2, which vanishes quadratically in the angle; unlike IPC (whose
// point-triangle pairs carry parallel contact on meshes), rods have no other primitive, so the
// weight 1 - m goes to the endpoint terms: the barrier of each of the four end nodes against the
// other segment (point-segment distances, smooth for parallel edges):
//     E = m b(D - R) + (1 - m) w sum_k b(D_k - R),  w = 1/2
// (two overlapping parallel edges of a bundle have two or four end nodes over the other edge:
// w = 1/2 gives one to two times the single-pair barrier). Since D_k >= D every term is finite
// whenever d > 0, and E = b(D - R) exactly once x >= eps_x.
#pragma once

#include <rodsim/geometry/barrier.h>
#include <rodsim/geometry/point_segment_distance.h>
#include <rodsim/geometry/segment_segment_distance.h>

#include <Eigen/Core>

namespace rodsim::ipc {

using Vec3 = Eigen::Vector3d;
using Vec9 = Eigen::Matrix<double, 9, 1>;
using Mat9 = Eigen::Matrix<double, 9, 9>;
using Vec12 = Eigen::Matrix<double, 12, 1>;
using Mat12 = Eigen::Matrix<double, 12, 12>;
using geometry::DistanceType;
using geometry::PointSegmentDistance;
using geometry::Scalar2;
using geometry::barrier;
using geometry::edgeCrossSquared;
using geometry::mollifier;
using geometry::pointSegmentDistance;

struct PairBarrier {
  double E = 0;          // unit-stiffness barrier energy (m^2)
  double gap = 0;        // D - R (m): the true segment gap
  double mollifier = 1;  // m(x)
  DistanceType type = DistanceType::EdgeEdge;  // classification of D
  bool active = false;   // gap < d_hat: E, grad, hess may be nonzero
  Vec12 grad = Vec12::Zero();
  Mat12 hess = Mat12::Zero();
};

// order 0: E and gap; 1: + gradient; 2: + Hessian. eps_x: mollifier threshold on |e_a x e_b|^2.
// Requires gap > 0 when gap < d_hat (the barrier is undefined otherwise).
void pairBarrier(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1, double R, double d_hat,
                 double eps_x, int order, PairBarrier& out);

}  // namespace rodsim::ipc
