// The parts of the "spring-dashpot" contact beyond the paper's rod-rod Eq. 37: node-obstacle contact with
// the same spring-dashpot law on the node's overlap with the obstacle, and regularized Coulomb friction
// for rod-rod pairs and node-obstacle contacts, each with its exact Jacobian K = -dF/dq (velocities
// v = (q - q_start)/dt). Pure functions of one pair or node, so the tests check each term against
// finite differences. See README.md, "Obstacles" and "Friction".
#pragma once

#include <rodsim/geometry/segment_normal.h>
#include <rodsim/obstacle.h>

namespace rodsim::spring_dashpot {

using geometry::Mat12;
using geometry::Vec12;

// The constants of the law: spring k (N/m), dashpot gamma (kg/s), Coulomb mu, 1 / slip velocity (s/m).
struct ContactLaw {
  double k = 0, gamma = 0, mu = 0, inv_vs = 0;
};

// The regularized Coulomb direction phi(v_T) = tanh(|v_T| / v_s) v_T / |v_T| is
// rodsim::geometry::smoothedSlip with a = 1 / v_s (libs/geometry/smoothed_slip.h).

// d(s, t)/dx of the closest-point parameters of two segments (rows 0 and 1; zero for a clamped or
// pinned parameter) at their closest points sn (D > 0): -f_FF^-1 f_Fx by the implicit function
// theorem on the stationarity of |c(x, s, t)| in the interior parameters, with the f_Fx and f_FF of
// geometry::segmentDistanceHessian.
void closestPointJacobian(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1,
                          const geometry::SegmentNormal& sn, Eigen::Matrix<double, 2, 12>& J);

// Coulomb friction of a pair of elements in contact (overlap rsum - sn.D > 0, sn.D > 0) on the 12
// coordinates of its nodes x[0..3] (p0, p1, q0, q1). u: their displacements q - q_start over the step
// dt (v = u / dt). With the relative velocity of the closest points v_rel = sum_k w_k v_k (Q's minus
// P's), its tangential part v_T = (I - n n^T) v_rel and the normal force of Eq. 37
// f_n = k eps - gamma n . v_rel (law.gamma: 0 without the dashpot):
//     F_k = -mu max(f_n, 0) w_k phi(v_T),
// i.e. -mu f_n phi on the closest point of the second element and the opposite on the first, shared
// among the nodes like the normal force (power -mu f_n phi . v_T <= 0). Sets F (12); when K is given,
// K = -dF/dq (12 x 12, s, t and n moving with the nodes). False (F, K zero) when f_n <= 0.
bool pairFriction(const Vec3 x[4], const Vec12& u, double dt, const geometry::SegmentNormal& sn, double rsum,
                  const ContactLaw& law, Vec12& F, Mat12* K);

// Node-obstacle contact: the paper's Eq. 37 on the overlap eps = r - d of a node of radius r at signed
// distance d from the surface (normal n = grad d): f_n = k eps - gamma n . v, the force
// max(f_n, 0) n (never pulling) plus, with mu > 0, the friction -mu max(f_n, 0) phi(v_T) against the
// velocity of the surface point under the node, x - d n (a spinning cylinder's). u: x - x_start (null
// in quasi-static solves: no dashpot, no friction). Sets F and, when K is given, K = -dF/dx (3 x 3;
// on curved surfaces the normal turns with the node). Returns the gap d - r; F, K zero when d >= r.
double nodeObstacle(const Obstacle& o, const Vec3& x, double radius, const Vec3* u, double dt, const ContactLaw& law,
                    Vec3& F, Mat3* K);

}  // namespace rodsim::spring_dashpot
