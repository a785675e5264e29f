// The far field of the segment blocks: 4-point Gauss-Legendre quadrature of the regularized
// Stokeslet times each node's hat function, used past a midpoint distance of 4 |e| (accuracy in
// segment_integrals.cpp). farFieldRow evaluates it for one target and every segment at once over
// structure-of-arrays data, so that the compiler vectorizes across segments.
//
// Why 4 points: the integrand is analytic with its nearest complex singularity about the target's
// distance away, so an n-point rule converges like (|e| / 4 D)^(2n). Measured against a 20-point
// rule over 64 directions (blob 0.2 |e|, the flagella's): at D = 4 |e| the worst relative error of
// a block is 7.7e-7 with 3 points, 3.5e-9 with 4, 6e-14 with 6. Four points keep the operator a
// thousand times more accurate than the GMRES tolerance (1e-6) and RSS itself (about 1%), for
// two thirds of the cost of six (tests/plugins/fluid_rss checks the blocks to 1e-9).
#pragma once

#include <rodsim/linalg.h>

#include <array>
#include <vector>

namespace rodsim::rss {

constexpr int kGaussPoints = 4;
// Nodes and weights on [0, 1].
constexpr std::array<double, kGaussPoints> kGaussAlpha{
    0.5 - 0.5 * 0.8611363115940526, 0.5 - 0.5 * 0.3399810435848563, 0.5 + 0.5 * 0.3399810435848563,
    0.5 + 0.5 * 0.8611363115940526};
constexpr std::array<double, kGaussPoints> kGaussWeight{0.5 * 0.3478548451374538, 0.5 * 0.6521451548625461,
                                                        0.5 * 0.6521451548625461, 0.5 * 0.3478548451374538};
constexpr double kFarField2 = 16.0;  // far when |x̂ - midpoint|² >= 16 |e|²
// Target at r0 = x̂ - x_k from a segment with vector e: is the quadrature accurate there?
inline bool isFarField(const Vec3& r0, const Vec3& e) {
  return (r0 - 0.5 * e).squaredNorm() >= kFarField2 * e.squaredNorm();
}

// One segment (scalar): the blocks of segment_integrals.h by quadrature.
void farFieldBlocks(const Vec3& r0, const Vec3& e, double eps2, Mat3& A_start, Mat3& A_end);

// The Gauss points of every segment, structure of arrays: point g of segment s at [g * S + s].
struct FarFieldPoints {
  int segments = 0;
  std::vector<double> x, y, z;  // m
  std::vector<double> weight;   // |e_s| w_g, m
  std::vector<double> eps2;     // per segment, m²
  std::vector<double> mx, my, mz, near2;  // per segment: midpoint, and kFarField2 |e|²
  void resize(int S);
  void set(int s, const Vec3& start, const Vec3& end, double eps2_s);
};

// For target x̂ and every segment s: out[j * S + s], j = 0..5 the entries (xx yy zz xy xz yz) of
// Σ_g |e| w_g K(x̂ - y_g) and j = 6..11 those of Σ_g |e| w_g α_g K; A_end = the second,
// A_start = the first minus the second. near[s] = 1 where the target is too close to segment s
// for the quadrature (its sums are then meaningless).
void farFieldRow(const Vec3& target, const FarFieldPoints& points, double* out, char* near);

}  // namespace rodsim::rss
