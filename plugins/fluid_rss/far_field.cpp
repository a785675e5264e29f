#include "far_field.h"

#include <cmath>
#include <cstddef>

namespace rodsim::rss {

void farFieldBlocks(const Vec3& r0, const Vec3& e, double eps2, Mat3& A_start, Mat3& A_end) {
  const double len = e.norm();
  Mat3 S = Mat3::Zero(), Se = Mat3::Zero();
  for (int g = 0; g < kGaussPoints; ++g) {
    const Vec3 r = r0 - kGaussAlpha[g] * e;
    const double iR = 1.0 / std::sqrt(r.squaredNorm() + eps2), iR3 = iR * iR * iR;
    const Mat3 K = (iR + eps2 * iR3) * Mat3::Identity() + iR3 * r * r.transpose();  // Eq. A.1
    S += (len * kGaussWeight[g]) * K;
    Se += (len * kGaussWeight[g] * kGaussAlpha[g]) * K;
  }
  A_end = Se;
  A_start = S - Se;
}

void FarFieldPoints::resize(int S) {
  segments = S;
  x.assign(kGaussPoints * S, 0.0);
  y = z = weight = x;
  eps2.assign(S, 0.0);
  mx = my = mz = near2 = eps2;
}

void FarFieldPoints::set(int s, const Vec3& start, const Vec3& end, double eps2_s) {
  const Vec3 e = end - start;
  const double len = e.norm();
  for (int g = 0; g < kGaussPoints; ++g) {
    const Vec3 p = start + kGaussAlpha[g] * e;
    x[g * segments + s] = p.x();
    y[g * segments + s] = p.y();
    z[g * segments + s] = p.z();
    weight[g * segments + s] = len * kGaussWeight[g];
  }
  eps2[s] = eps2_s;
  const Vec3 mid = start + 0.5 * e;
  mx[s] = mid.x();
  my[s] = mid.y();
  mz[s] = mid.z();
  near2[s] = kFarField2 * e.squaredNorm();
}

namespace {

// The 12 sums of far_field.h for every segment: segments vectorized, the Gauss points of a
// segment summed in registers in the order g = 0, 1, 2, 3 and each sum stored once. Point g of
// segment s is at [g S + s]. One restrict pointer per array, so that the loop vectorizes.
// Compiled for AVX-512, for AVX2 + FMA and for generic x86-64; the loader picks one at run time.
// No sum runs across lanes, but the AVX-512 and AVX2 clones contract multiply-adds into FMAs and
// the generic one cannot: their sums differ in the last bits (round-off). The FMAs are worth it:
// without them the M = 10 assembly takes 3.25 ms instead of 2.47 (benchmarks/README.md).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
void gaussSums(int S, double tx, double ty, double tz, const double* __restrict gx, const double* __restrict gy,
               const double* __restrict gz, const double* __restrict gw, const double* __restrict pe,
               double* __restrict o0, double* __restrict o1, double* __restrict o2, double* __restrict o3,
               double* __restrict o4, double* __restrict o5, double* __restrict o6, double* __restrict o7,
               double* __restrict o8, double* __restrict o9, double* __restrict o10, double* __restrict o11) {
  for (int s = 0; s < S; ++s) {
    const double eps2 = pe[s];
    // Starting from zero is exact: 0 + w K rounds as w K.
    double a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0, a8 = 0, a9 = 0, a10 = 0, a11 = 0;
#pragma GCC unroll 4
    for (int g = 0; g < kGaussPoints; ++g) {
      const double rx = tx - gx[g * S + s], ry = ty - gy[g * S + s], rz = tz - gz[g * S + s];
      const double iR = 1.0 / std::sqrt(rx * rx + ry * ry + rz * rz + eps2);
      const double iR3 = iR * iR * iR;
      const double w = gw[g * S + s], we = w * kGaussAlpha[g];
      const double diag = iR + eps2 * iR3;  // Eq. A.1
      const double Kxx = diag + iR3 * rx * rx, Kyy = diag + iR3 * ry * ry, Kzz = diag + iR3 * rz * rz;
      const double Kxy = iR3 * rx * ry, Kxz = iR3 * rx * rz, Kyz = iR3 * ry * rz;
      a0 += w * Kxx, a1 += w * Kyy, a2 += w * Kzz, a3 += w * Kxy, a4 += w * Kxz, a5 += w * Kyz;
      a6 += we * Kxx, a7 += we * Kyy, a8 += we * Kzz, a9 += we * Kxy, a10 += we * Kxz, a11 += we * Kyz;
    }
    o0[s] = a0, o1[s] = a1, o2[s] = a2, o3[s] = a3, o4[s] = a4, o5[s] = a5;
    o6[s] = a6, o7[s] = a7, o8[s] = a8, o9[s] = a9, o10[s] = a10, o11[s] = a11;
  }
}

}  // namespace

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
void farFieldRow(const Vec3& target, const FarFieldPoints& points, double* out, char* __restrict near) {
  const int S = points.segments;
  const double tx = target.x(), ty = target.y(), tz = target.z();
  const double* __restrict mx = points.mx.data();
  const double* __restrict my = points.my.data();
  const double* __restrict mz = points.mz.data();
  const double* __restrict n2 = points.near2.data();
  for (int s = 0; s < S; ++s) {
    const double dx = tx - mx[s], dy = ty - my[s], dz = tz - mz[s];
    near[s] = dx * dx + dy * dy + dz * dz < n2[s];  // the complement of isFarField
  }
  gaussSums(S, tx, ty, tz, points.x.data(), points.y.data(), points.z.data(), points.weight.data(),
            points.eps2.data(), out, out + S, out + 2 * S, out + 3 * S, out + 4 * S, out + 5 * S, out + 6 * S,
            out + 7 * S, out + 8 * S, out + 9 * S, out + 10 * S, out + 11 * S);
}

}  // namespace rodsim::rss
