// Closed forms of the segment moments (see segment_integrals.h for the notation).
//
// With D = a c - b² = |e|² ε² + |r0 × e|² > 0 (ε > 0) and R0 = R(0), R1 = R(1):
//   T_{0,-1} = ln[(√a R1 + a - b) / (√a R0 - b)] / √a          (d/dα ln(√a R + aα - b) = √a / R)
//   T_{1,-1} = (R1 - R0) / a + (b / a) T_{0,-1}                  (d/dα R = (aα - b) / R)
//   T_{0,-3} = [(a - b) / R1 + b / R0] / D                      (d/dα [(aα - b) / (D R)] = R⁻³)
//   T_{1,-3} = [(b - c) / R1 + c / R0] / D                      (d/dα [(bα - c) / (D R)] = α R⁻³)
//   T_{n+2,-3} = (T_{n,-1} + 2b T_{n+1,-3} - c T_{n,-3}) / a     (a α² = R² + 2bα - c)
// The paper's Eq. A.4 writes the same quantities with a typo (a velocity v where the edge vector e
// belongs). Both logarithm arguments are sums that cancel when the target lies on the segment's
// line beyond an end; there they are rewritten with the identity (√a R - s)(√a R + s) = D for
// s = b at α = 0 and s = -(a - b) at α = 1, which keeps full relative precision.
//
// Far from the segment the closed forms are still exact but no longer accurate: the R⁻³ moments
// are differences of terms larger than the result by about |r0|² / (ε² + d⊥²) (d⊥: distance off
// the segment's line), and the recursion loses (|r0| / |e|)² more per step: a collinear target
// 40 edges away with ε = |e| / 100 keeps only two digits of T_{3,-3}. There the integrand is
// smooth on the scale of the segment: the zeros of R² in the complex α plane lie at least d / |e|
// from the midpoint (d: midpoint distance), so N-point Gauss-Legendre quadrature of the blocks
// (hat function times r rᵀ / R³: degree 3 times an analytic function) converges like
// (2d / |e|)^(-(2N - 1)). Past d = 4 |e| we use 6 points: measured against 1600-point quadrature
// the relative error of every block is below 2e-15 (and 1e-11 would already need 6 points at
// d = 4 |e|, 5 up to 12 |e|, 4 up to 40 |e|). The operator evaluates this far field for all
// segments at once in vectorized form (far_field.h).
#include "segment_integrals.h"

#include "far_field.h"

#include <cmath>

namespace rodsim::rss {

namespace {

SegmentMoments farFieldMoments(const Vec3& r0, const Vec3& e, double eps2) {
  SegmentMoments T;
  for (int k = 0; k < kGaussPoints; ++k) {
    const double alpha = kGaussAlpha[k], weight = kGaussWeight[k];
    const double iR = 1.0 / std::sqrt((r0 - alpha * e).squaredNorm() + eps2);
    const double iR3 = iR * iR * iR;
    T.T0m1 += weight * iR;
    T.T1m1 += weight * alpha * iR;
    T.T0m3 += weight * iR3;
    T.T1m3 += weight * alpha * iR3;
    T.T2m3 += weight * alpha * alpha * iR3;
    T.T3m3 += weight * alpha * alpha * alpha * iR3;
  }
  return T;
}

}  // namespace

SegmentMoments segmentMoments(const Vec3& r0, const Vec3& e, double eps2, double R0, double R1) {
  const double a = e.squaredNorm();
  if (isFarField(r0, e)) return farFieldMoments(r0, e, eps2);
  const double b = r0.dot(e), c = R0 * R0;
  const double sa = std::sqrt(a);
  const double D = a * eps2 + r0.cross(e).squaredNorm();  // = a c - b², without the cancellation
  const double am = a - b;
  const double upper = am >= 0 ? sa * R1 + am : D / (sa * R1 - am);  // √a R1 + a - b
  const double lower = b <= 0 ? sa * R0 - b : D / (sa * R0 + b);     // √a R0 - b
  SegmentMoments T;
  T.T0m1 = std::log(upper / lower) / sa;
  T.T1m1 = (R1 - R0) / a + (b / a) * T.T0m1;
  const double iR0 = 1.0 / R0, iR1 = 1.0 / R1, iD = 1.0 / D;
  T.T0m3 = (am * iR1 + b * iR0) * iD;
  T.T1m3 = ((b - c) * iR1 + c * iR0) * iD;
  T.T2m3 = (T.T0m1 + 2.0 * b * T.T1m3 - c * T.T0m3) / a;
  T.T3m3 = (T.T1m1 + 2.0 * b * T.T2m3 - c * T.T1m3) / a;
  return T;
}

SegmentMoments segmentMoments(const Vec3& r0, const Vec3& e, double eps) {
  const double eps2 = eps * eps;
  return segmentMoments(r0, e, eps2, std::sqrt(r0.squaredNorm() + eps2),
                        std::sqrt((r0 - e).squaredNorm() + eps2));
}

namespace {
// |e| [ (W0m1 + ε² W0m3) I + W0m3 r0 r0ᵀ - W1m3 (r0 eᵀ + e r0ᵀ) + W2m3 e eᵀ ], symmetric.
void weightedBlock(const Vec3& r0, const Vec3& e, double len, double eps2, double W0m1, double W0m3,
                   double W1m3, double W2m3, Mat3& A) {
  const double diag = W0m1 + eps2 * W0m3;
  for (int p = 0; p < 3; ++p)
    for (int q = p; q < 3; ++q) {
      A(p, q) = A(q, p) = weightedBlockEntry(r0[p], r0[q], e[p], e[q], len, diag, W0m3, W1m3, W2m3, p == q);
    }
}
}  // namespace

void segmentBlocks(const Vec3& r0, const Vec3& e, double eps2, double R0, double R1, Mat3& A_start,
                   Mat3& A_end) {
  const double a = e.squaredNorm();
  if (isFarField(r0, e)) {
    farFieldBlocks(r0, e, eps2, A_start, A_end);
    return;
  }
  const SegmentMoments T = segmentMoments(r0, e, eps2, R0, R1);
  const double len = std::sqrt(a);
  // weight α (the end node's hat function)
  weightedBlock(r0, e, len, eps2, T.T1m1, T.T1m3, T.T2m3, T.T3m3, A_end);
  // weight 1 - α (the start node's hat function)
  weightedBlock(r0, e, len, eps2, T.T0m1 - T.T1m1, T.T0m3 - T.T1m3, T.T1m3 - T.T2m3, T.T2m3 - T.T3m3,
                A_start);
}

void segmentBlocks(const Vec3& r0, const Vec3& e, double eps, Mat3& A_start, Mat3& A_end) {
  const double eps2 = eps * eps;
  segmentBlocks(r0, e, eps2, std::sqrt(r0.squaredNorm() + eps2), std::sqrt((r0 - e).squaredNorm() + eps2),
                A_start, A_end);
}

Mat3 regularizedStokeslet(const Vec3& r, double eps) {
  const double R2 = r.squaredNorm() + eps * eps, R = std::sqrt(R2), R3 = R2 * R;
  return (1.0 / R + eps * eps / R3) * Mat3::Identity() + r * r.transpose() / R3;  // Eq. A.1
}

}  // namespace rodsim::rss
