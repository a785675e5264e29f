// Closed-form integrals of the regularized Stokeslet over one straight segment (Tong et al. 2023, SI
// Appendix A, Eqs. A.2-A.5), derived here; every function is checked against quadrature in
// tests/plugins/fluid_rss.
//
// Segment y(α) = x_k + α e, α ∈ [0, 1], e = x_{k+1} - x_k, force density (force per unit length
// exerted on the fluid) linear along it: f(α) = (1 - α) f_k + α f_{k+1}. The velocity it induces at
// x̂ is (Eq. A.2, Cortez's blob φ_ε = 15 ε⁴ / (8π R⁷))
//   8πη u(x̂) = |e| ∫₀¹ [ (1/R + ε²/R³) f(α) + (f(α)·r) r / R³ ] dα,
//   r(α) = x̂ - y(α) = r0 - α e,  r0 = x̂ - x_k,  R² = |r|² + ε² = a α² - 2 b α + c,
//   a = |e|², b = r0·e, c = |r0|² + ε².
// (The sign convention of r does not matter: r enters quadratically.) With the moments
// T_{n,m} = ∫₀¹ αⁿ R^m dα the integral is linear in the two nodal densities:
//   8πη u = A_k f_k + A_{k+1} f_{k+1}                                        (the blocks of Eq. A.6)
//   A_w = |e| [ (W⁰₋₁ + ε² W⁰₋₃) I + W⁰₋₃ r0 r0ᵀ - W¹₋₃ (r0 eᵀ + e r0ᵀ) + W²₋₃ e eᵀ ],
// where Wⁿₘ = ∫ w(α) αⁿ R^m: w = α gives Wⁿₘ = T_{n+1,m}, w = 1 - α gives T_{n,m} - T_{n+1,m}.
// Both blocks are symmetric 3x3 matrices.
#pragma once

#include <rodsim/linalg.h>

namespace rodsim::rss {

struct SegmentMoments {
  double T0m1 = 0, T1m1 = 0;                    // ∫ R⁻¹, ∫ α R⁻¹
  double T0m3 = 0, T1m3 = 0, T2m3 = 0, T3m3 = 0;  // ∫ αⁿ R⁻³, n = 0..3
};

// The moments for a target at r0 = x̂ - x_k from the segment start, segment vector e, blob ε > 0.
// R0 = sqrt(|r0|² + ε²) and R1 = sqrt(|r0 - e|² + ε²) are passed in because neighbouring
// segments share them (R1 of one segment is R0 of the next).
SegmentMoments segmentMoments(const Vec3& r0, const Vec3& e, double eps2, double R0, double R1);
SegmentMoments segmentMoments(const Vec3& r0, const Vec3& e, double eps);

// Entry (p, q) of a block A_w (above) from r0_p, r0_q, e_p, e_q, |e|, the diagonal term
// W⁰₋₁ + ε² W⁰₋₃ and the weighted moments: the one expression segmentBlocks and the batched near
// field (near_field.cpp) both evaluate, so that they round alike.
[[gnu::always_inline]] inline double weightedBlockEntry(double rp, double rq, double ep, double eq, double len,
                                                       double diag, double W0m3, double W1m3, double W2m3,
                                                       bool on_diagonal) {
  double v = W0m3 * rp * rq - W1m3 * (rp * eq + ep * rq) + W2m3 * ep * eq;
  if (on_diagonal) v += diag;
  return len * v;
}

// The two 3x3 blocks: 8πη u(x̂) = A_start f_k + A_end f_{k+1}.
void segmentBlocks(const Vec3& r0, const Vec3& e, double eps2, double R0, double R1, Mat3& A_start,
                   Mat3& A_end);
void segmentBlocks(const Vec3& r0, const Vec3& e, double eps, Mat3& A_start, Mat3& A_end);

// The regularized Stokeslet itself (Eq. A.1): 8πη u(x̂) = S f for a point force f at x̂ - r.
Mat3 regularizedStokeslet(const Vec3& r, double eps);

}  // namespace rodsim::rss
