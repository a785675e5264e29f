// The IMC contact energy (Tong et al. 2023, Eq. 9, normalized as SI Eq. B.1) as a function of the scaled
// distance, with its first two derivatives. Used by contact_imc (rod-rod pairs and rod-obstacle
// nodes).
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

#include <rodsim/geometry/scalar2.h>

namespace rodsim::geometry {

// v = E, d1 = dE/dD, d2 = d2E/dD2 (D scaled), and which branch of Eq. B.1 applies.
struct PenaltyValue : Scalar2 {
  bool active = false;     // D < c + dbar
  bool quadratic = false;  // D <= c - dbar (the (c - D)^2 branch)
};

// Eq. B.1 with contact distance c and band dbar (both scaled).
PenaltyValue imcEnergy(double D, double c, double dbar);

}  // namespace rodsim::geometry
