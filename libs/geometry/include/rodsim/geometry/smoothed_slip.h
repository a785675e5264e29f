// The smoothed Coulomb direction that the regularized friction laws share (imc's Eq. 17 of the IMC
// seed, spring-dashpot's): phi(v_T) = tanh(a |v_T|) v_T / |v_T| = g(|v_T|) v_T, |phi| < 1, a viscous
// slope a near v_T = 0 (imc: a = K2 / 2 = 7.5 / nu; spring-dashpot: a = 1 / v_s).
#pragma once

namespace rodsim::geometry {

// g = tanh(a tau) / tau and dg_over_tau = (dg/dtau) / tau at tau = |v_T| >= 0 (a series near 0, where
// both have finite limits: g -> a, dg_over_tau -> -2 a^3 / 3).
void smoothedSlip(double tau, double a, double& g, double& dg_over_tau);

}  // namespace rodsim::geometry
