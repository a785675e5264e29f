// The IMC contact energy (Tong et al. 2023, Eq. 9, normalized as SI Eq. B.1) on one edge pair. The energy
// E(D) itself is rodsim::geometry::imcEnergy (libs/geometry, penalty.h), the distance D
// rodsim::geometry::edgeDistance (segment_segment_distance.h).
//
// In coordinates scaled by 1/h_s (SI B.1) with scaled contact distance c (2 for two rods of radius
// h_s = (r_i + r_j)/2, 1 for a node of radius h_s on a plane) and scaled band dbar = delta / h_s:
//
//   E(D) = (c - D)^2                                 D <= c - dbar
//        = ( log(1 + exp(K1 (c - D))) / K1 )^2       c - dbar < D < c + dbar
//        = 0                                         D >= c + dbar,      K1 = 15 / dbar = 15 h_s / delta (B.2)
//
// The contact energy of a pair is k E(D(x / h_s)) (J, k the contact stiffness); its force is
// F^c = -(k / h_s) E'(D) grad D and its stiffness -dF^c/dx = (k / h_s^2) (E'' grad D grad D^T +
// E' hess D), gradients taken in scaled coordinates (the 1/h and 1/h^2 factors of SI B.1).
#pragma once

#include <rodsim/geometry/penalty.h>
#include <rodsim/geometry/segment_segment_distance.h>

namespace rodsim::imc {

using geometry::DistanceType;
using geometry::EdgeDistance;
using geometry::Mat12;
using geometry::PenaltyValue;
using geometry::Vec12;
using geometry::Vec3;
using geometry::edgeDistance;
using geometry::imcEnergy;
using geometry::segmentDistance;

// One rod-rod pair: nodes (x_i, x_{i+1}, x_j, x_{j+1}) in metres, scale h_s = (r_i + r_j)/2.
struct PairEvaluation {
  EdgeDistance dist;   // in scaled coordinates
  PenaltyValue e;      // E (v), dE/dD (d1), d2E/dD2 (d2) of Eq. B.1
  double gap = 0;      // m: distance minus r_i + r_j
  double energy = 0;   // J: k E
  Vec12 force = Vec12::Zero();  // F^c (N) on the 4 nodes
  Mat12 dforce = Mat12::Zero(); // dF^c/dx (N/m), symmetric; only with order 2
};
// order 1: energy and force; order 2: + dF^c/dx. Inactive pairs return zero force.
void evaluatePair(const Vec3& xi0, const Vec3& xi1, const Vec3& xj0, const Vec3& xj1, double h_s, double delta,
                  double k, int order, PairEvaluation& out);

}  // namespace rodsim::imc
