// Implicit Coulomb friction of one contact pair (Tong et al. 2023, Sec. 3.3, Eqs. 14-21).
//
// Given the contact forces f = (f1, f2, f3, f4) = F^c on (x_i, x_{i+1}, x_j, x_{j+1}) and the
// implicit node velocities v = (x - x_0)/dt:
//   n      = (f1 + f2) / |f1 + f2|                                  Eq. 14
//   beta_i = |f2| / |f1 + f2|,  beta_j = |f4| / |f3 + f4|            Eq. 20 (used in force AND Jacobian)
//   v_rel  = (1 - beta_i) v1 + beta_i v2 - (1 - beta_j) v3 - beta_j v4   Eq. 15
//   v_T    = (I - n n^T) v_rel                                        Eq. 16
//   gamma  = 2 / (1 + exp(-K2 |v_T|)) - 1 = tanh(K2 |v_T| / 2),  K2 = 15 / nu   Eq. 17
//   F^fr_m = -s_m mu gamma v_T/|v_T| |f_m|,  s = (+1, +1, -1, -1)     Eq. 18 (edge j gets the reaction)
// f(v, F^c) is returned with its partial derivatives d/dv and d/dF^c; the Jacobian with respect to
// the positions is then (Eq. 21) dF^fr/dx = (df/dv) / dt + (df/dF^c) dF^c/dx.
// gamma v_T/|v_T| = (gamma/|v_T|) v_T is evaluated in that form, smooth at v_T = 0 (sticking).
#pragma once

#include <rodsim/geometry/types.h>

namespace rodsim::imc {

using geometry::Mat12;
using geometry::Vec12;
using geometry::Vec3;

struct FrictionResult {
  Vec12 force = Vec12::Zero();     // N
  Mat12 d_dv = Mat12::Zero();      // dF^fr/dv (N s/m)
  Mat12 d_df = Mat12::Zero();      // dF^fr/dF^c (dimensionless)
  double slip = 0;                 // |v_T|, m/s
  double gamma = 0;
  Vec3 normal = Vec3::Zero();
};

// mu >= 0, K2 = 15 / nu. `jacobian`: also fill d_dv and d_df.
void pairFriction(const Vec12& f, const Vec12& v, double mu, double K2, bool jacobian, FrictionResult& out);

// The same law for one node on a fixed surface: contact force magnitude fn along unit normal n,
// node velocity v relative to the surface. F^fr = -mu fn gamma v_T/|v_T|; returns dF/dv (3x3),
// dF/dfn (3) and, for curved surfaces whose normal moves with the node, dF/dn (3x3).
void nodeFriction(double fn, const Vec3& n, const Vec3& v, double mu, double K2, Vec3& force,
                  Eigen::Matrix3d* d_dv, Vec3* d_dfn, Eigen::Matrix3d* d_dn = nullptr);

}  // namespace rodsim::imc
