#include "far_field.h"

#include <cmath>
#include <cstddef>
#include <type_traits>

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

// Adds Gauss point α (weight |e| w in gw) of every segment to the 12 sums (see far_field.h); the
// first point assigns them (no separate zeroing pass). One restrict pointer per output array
// (out + j S), so that the loop vectorizes across segments.
template <bool kFirst>
inline void addGaussPoint(int S, double alpha, double tx, double ty, double tz, const double* __restrict gx,
                          const double* __restrict gy, const double* __restrict gz,
                          const double* __restrict gw, const double* __restrict pe, double* __restrict o0,
                          double* __restrict o1, double* __restrict o2, double* __restrict o3,
                          double* __restrict o4, double* __restrict o5, double* __restrict o6,
                          double* __restrict o7, double* __restrict o8, double* __restrict o9,
                          double* __restrict o10, double* __restrict o11) {
  for (int s = 0; s < S; ++s) {
    const double rx = tx - gx[s], ry = ty - gy[s], rz = tz - gz[s], eps2 = pe[s];
    const double iR = 1.0 / std::sqrt(rx * rx + ry * ry + rz * rz + eps2);
    const double iR3 = iR * iR * iR;
    const double w = gw[s], we = w * alpha;
    const double diag = iR + eps2 * iR3;  // Eq. A.1
    const double Kxx = diag + iR3 * rx * rx, Kyy = diag + iR3 * ry * ry, Kzz = diag + iR3 * rz * rz;
    const double Kxy = iR3 * rx * ry, Kxz = iR3 * rx * rz, Kyz = iR3 * ry * rz;
    if constexpr (kFirst) {
      o0[s] = w * Kxx, o1[s] = w * Kyy, o2[s] = w * Kzz, o3[s] = w * Kxy, o4[s] = w * Kxz, o5[s] = w * Kyz;
      o6[s] = we * Kxx, o7[s] = we * Kyy, o8[s] = we * Kzz, o9[s] = we * Kxy, o10[s] = we * Kxz, o11[s] = we * Kyz;
    } else {
      o0[s] += w * Kxx, o1[s] += w * Kyy, o2[s] += w * Kzz, o3[s] += w * Kxy, o4[s] += w * Kxz, o5[s] += w * Kyz;
      o6[s] += we * Kxx, o7[s] += we * Kyy, o8[s] += we * Kzz, o9[s] += we * Kxy, o10[s] += we * Kxz, o11[s] += we * Kyz;
    }
  }
}

}  // namespace

// Compiled twice, for AVX2 + FMA machines and generic x86-64; the loader picks one at run time.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("arch=x86-64-v3", "default")))
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
  // Gauss point outermost, segments innermost: unit-stride loads that vectorize across segments.
  for (int g = 0; g < kGaussPoints; ++g) {
    const std::ptrdiff_t o = static_cast<std::ptrdiff_t>(g) * S;
    auto add = [&](auto first) {
      addGaussPoint<decltype(first)::value>(
          S, kGaussAlpha[g], tx, ty, tz, points.x.data() + o, points.y.data() + o, points.z.data() + o,
          points.weight.data() + o, points.eps2.data(), out, out + S, out + 2 * S, out + 3 * S, out + 4 * S,
          out + 5 * S, out + 6 * S, out + 7 * S, out + 8 * S, out + 9 * S, out + 10 * S, out + 11 * S);
    };
    if (g == 0)
      add(std::true_type{});
    else
      add(std::false_type{});
  }
}

}  // namespace rodsim::rss
