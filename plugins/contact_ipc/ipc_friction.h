// Lagged smoothed friction of IPC (Li et al. 2020; ref. [34] of Tong et al. 2023) for rod contacts.
//
// Per contact, from the configuration at the start of the step (lagged): the closest-point
// parameters (s, t), the unit normal n and the normal force magnitude lambda. The tangential
// displacement of the contact point over the step is u = T sum_k w_k (x_k - x_k^start),
// T = I - n n^T, w = (1 - s, s, -(1 - t), -t) for an edge pair, w = (1) for a node on a plane.
// The friction potential D = mu lambda f0(|u|) with IPC's smoothing (eps_u = eps_v dt):
//     f1(y) = 2 y/eps_u - y^2/eps_u^2 (y < eps_u), 1 beyond;   f0' = f1, f0(eps_u) = eps_u,
// so the force -dD/dx has magnitude mu lambda f1(|u|) (Coulomb, mu lambda, once the slip exceeds
// eps_u) and opposes the slip. With the lagged quantities held fixed D is a potential of x, and
// its Hessian (the friction Jacobian) is symmetric positive semi-definite:
//     d2D/dx_k dx_l = mu lambda w_k w_l [ (f1/y) T + ((f1/y)'/y) u u^T ].
// The tangent plane is T, not a 2-vector basis, so nothing depends on a choice of tangent
// directions. Parallel edges keep a well-defined contact point: the middle of the overlap of
// their projections (lagEdgeEdge), never a pinned end.
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>

namespace rodsim::ipc {

using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;

// IPC's C1 friction smoothing: f0 (potential), f1 = f0', f1(y)/y and ((f1/y)'(y))/y.
double frictionF0(double y, double eps_u);
double frictionF1(double y, double eps_u);
double frictionF1OverY(double y, double eps_u);
double frictionF1OverYDerivOverY(double y, double eps_u);

struct FrictionLag {
  double s = 0, t = 0;          // closest-point parameters on edge a and edge b
  Vec3 n = Vec3::UnitZ();       // unit normal, from b toward a (plane: the plane normal)
  double lambda_unit = 0;       // normal force magnitude per unit kappa (m): lambda = kappa lambda_unit
};

// Closest points and normal of two segments at the lagged configuration. Nearly parallel edges
// (|e_a x e_b|^2 <= parallel_tol |e_a|^2 |e_b|^2) take the middle of the overlap of their
// projections on edge a (the nearer ends when they do not overlap).
FrictionLag lagEdgeEdge(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1, double parallel_tol = 1e-6);

// Friction potential of N nodes with weights w (sum_k w_k dx_k is the relative displacement of
// the contact point), displacements dx (3N), tangent projector T, mu lambda and eps_u. order 0:
// D; 1: + gradient dD/dx (3N); 2: + Hessian (3N x 3N).
template <int N>
struct NodeFriction {
  double D = 0, slip = 0;  // potential (J), |u| (m)
  Eigen::Matrix<double, 3 * N, 1> grad = Eigen::Matrix<double, 3 * N, 1>::Zero();
  Eigen::Matrix<double, 3 * N, 3 * N> hess = Eigen::Matrix<double, 3 * N, 3 * N>::Zero();
};

template <int N>
void frictionPotential(const double (&w)[N], const Eigen::Matrix<double, 3 * N, 1>& dx, const Vec3& n,
                       double mu_lambda, double eps_u, int order, NodeFriction<N>& out) {
  const Mat3 T = Mat3::Identity() - n * n.transpose();
  Vec3 rel = Vec3::Zero();
  for (int k = 0; k < N; ++k) rel += w[k] * dx.template segment<3>(3 * k);
  const Vec3 u = T * rel;
  const double y = u.norm();
  out.slip = y;
  out.D = mu_lambda * frictionF0(y, eps_u);
  if (order < 1) return;
  const double a = mu_lambda * frictionF1OverY(y, eps_u);
  for (int k = 0; k < N; ++k) out.grad.template segment<3>(3 * k) = (a * w[k]) * u;
  if (order < 2) return;
  const double c = y > 0 ? mu_lambda * frictionF1OverYDerivOverY(y, eps_u) : 0.0;
  const Mat3 B = a * T + c * u * u.transpose();
  for (int k = 0; k < N; ++k)
    for (int l = 0; l < N; ++l) out.hess.template block<3, 3>(3 * k, 3 * l) = (w[k] * w[l]) * B;
}

}  // namespace rodsim::ipc
