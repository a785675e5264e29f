// The far field of the segment blocks: 6-point Gauss-Legendre quadrature of the regularized
// Stokeslet times each node's hat function, used past a midpoint distance of 4 |e| (accuracy in
// segment_integrals.cpp). farFieldRow evaluates it for one target and every segment at once over
// structure-of-arrays data, so that the compiler vectorizes across segments.
#pragma once

#include <rodsim/linalg.h>

#include <array>
#include <vector>

namespace rodsim::rss {

constexpr int kGaussPoints = 6;
// Nodes and weights on [0, 1].
constexpr std::array<double, kGaussPoints> kGaussAlpha{
    0.5 - 0.5 * 0.9324695142031521, 0.5 - 0.5 * 0.6612093864662645, 0.5 - 0.5 * 0.2386191860831969,
    0.5 + 0.5 * 0.2386191860831969, 0.5 + 0.5 * 0.6612093864662645, 0.5 + 0.5 * 0.9324695142031521};
constexpr std::array<double, kGaussPoints> kGaussWeight{0.5 * 0.1713244923791704, 0.5 * 0.3607615730481386,
                                                        0.5 * 0.4679139345726910, 0.5 * 0.4679139345726910,
                                                        0.5 * 0.3607615730481386, 0.5 * 0.1713244923791704};
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
