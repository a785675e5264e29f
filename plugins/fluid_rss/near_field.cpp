#include "near_field.h"

#include "far_field.h"
#include "segment_integrals.h"

#include <cmath>

namespace rodsim::rss {

void NearFieldBatch::resize(int n) {
  capacity = n;
  count = 0;
  segment.assign(n, 0);
  r0x.assign(n, 0.0);
  r0y = r0z = ex = ey = ez = eps2 = R0 = R1 = log_ratio = r0x;
  out.assign(12 * static_cast<std::size_t>(n), 0.0);
  quadrature.assign(n, 0);
}

namespace {

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define NEAR_FIELD_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define NEAR_FIELD_CLONES
#endif

// segmentMoments up to its logarithm: R0, R1 as the operator computes them, the argument
// upper / lower of the logarithm, and isFarField. Both sides of each two-case formula are computed
// and one is selected (no branch: the loop vectorizes; the other side's value, possibly infinite,
// is discarded). Every expression is written as segment_integrals.cpp and Eigen evaluate it
// (sums of squares left to right), and this file is built without FMA contraction
// (-ffp-contract=off, CMakeLists.txt): the same roundings in every clone and in segmentBlocks.
NEAR_FIELD_CLONES void logArguments(int n, const double* __restrict r0x, const double* __restrict r0y,
                                    const double* __restrict r0z, const double* __restrict ex,
                                    const double* __restrict ey, const double* __restrict ez,
                                    const double* __restrict eps2, double* __restrict R0, double* __restrict R1,
                                    double* __restrict ratio, char* __restrict quadrature) {
  for (int j = 0; j < n; ++j) {
    const double x = r0x[j], y = r0y[j], z = r0z[j], u = ex[j], v = ey[j], w = ez[j], e2 = eps2[j];
    const double a = u * u + v * v + w * w;
    const double hx = x - 0.5 * u, hy = y - 0.5 * v, hz = z - 0.5 * w;
    quadrature[j] = hx * hx + hy * hy + hz * hz >= kFarField2 * a;
    const double r0 = std::sqrt(x * x + y * y + z * z + e2);
    const double dx = x - u, dy = y - v, dz = z - w;
    const double r1 = std::sqrt(dx * dx + dy * dy + dz * dz + e2);
    R0[j] = r0, R1[j] = r1;
    const double b = x * u + y * v + z * w;
    const double sa = std::sqrt(a);
    const double cx = y * w - z * v, cy = z * u - x * w, cz = x * v - y * u;
    const double D = a * e2 + (cx * cx + cy * cy + cz * cz);
    const double am = a - b;
    const double upper_sum = sa * r1 + am, upper_quotient = D / (sa * r1 - am);  // √a R1 + a - b
    const double lower_sum = sa * r0 - b, lower_quotient = D / (sa * r0 + b);     // √a R0 - b
    const double upper = am >= 0 ? upper_sum : upper_quotient;
    const double lower = b <= 0 ? lower_sum : lower_quotient;
    ratio[j] = upper / lower;
  }
}

// Entry (p, q) of both blocks into whole[j] (A_start + A_end) and end[j] (A_end).
[[gnu::always_inline]] inline void blockEntry(double rp, double rq, double ep, double eq, double len, double ediag,
                                              double eW0m3, double eW1m3, double eW2m3, double sdiag, double sW0m3,
                                              double sW1m3, double sW2m3, bool on_diagonal, double& whole,
                                              double& end) {
  const double e = weightedBlockEntry(rp, rq, ep, eq, len, ediag, eW0m3, eW1m3, eW2m3, on_diagonal);
  const double s = weightedBlockEntry(rp, rq, ep, eq, len, sdiag, sW0m3, sW1m3, sW2m3, on_diagonal);
  whole = s + e;
  end = e;
}

// The rest of segmentMoments and segmentBlocks from the logarithms: the moments, both blocks and
// the whole segment's block, into the twelve output arrays o[k] (k as in nearFieldBlocks). One
// restrict pointer per output, so that the loop vectorizes.
NEAR_FIELD_CLONES void blocksFromLogs(int n, const double* __restrict r0x, const double* __restrict r0y,
                                      const double* __restrict r0z, const double* __restrict ex,
                                      const double* __restrict ey, const double* __restrict ez,
                                      const double* __restrict eps2, const double* __restrict R0,
                                      const double* __restrict R1, const double* __restrict log_ratio,
                                      double* __restrict o0, double* __restrict o1, double* __restrict o2,
                                      double* __restrict o3, double* __restrict o4, double* __restrict o5,
                                      double* __restrict o6, double* __restrict o7, double* __restrict o8,
                                      double* __restrict o9, double* __restrict o10, double* __restrict o11) {
  for (int j = 0; j < n; ++j) {
    const double x = r0x[j], y = r0y[j], z = r0z[j], u = ex[j], v = ey[j], w = ez[j], e2 = eps2[j];
    const double r0 = R0[j], r1 = R1[j];
    const double a = u * u + v * v + w * w;
    const double b = x * u + y * v + z * w, c = r0 * r0;
    const double sa = std::sqrt(a);
    const double cx = y * w - z * v, cy = z * u - x * w, cz = x * v - y * u;
    const double D = a * e2 + (cx * cx + cy * cy + cz * cz);
    const double am = a - b;
    const double T0m1 = log_ratio[j] / sa;
    const double T1m1 = (r1 - r0) / a + (b / a) * T0m1;
    const double iR0 = 1.0 / r0, iR1 = 1.0 / r1, iD = 1.0 / D;
    const double T0m3 = (am * iR1 + b * iR0) * iD;
    const double T1m3 = ((b - c) * iR1 + c * iR0) * iD;
    const double T2m3 = (T0m1 + 2.0 * b * T1m3 - c * T0m3) / a;
    const double T3m3 = (T1m1 + 2.0 * b * T2m3 - c * T1m3) / a;
    const double len = sa;  // segmentBlocks' sqrt(a)
    // A_end: weights T1m1, T1m3, T2m3, T3m3; A_start: their complements (segmentBlocks).
    const double eW0m3 = T1m3, eW1m3 = T2m3, eW2m3 = T3m3;
    const double sW0m1 = T0m1 - T1m1, sW0m3 = T0m3 - T1m3, sW1m3 = T1m3 - T2m3, sW2m3 = T2m3 - T3m3;
    const double ediag = T1m1 + e2 * eW0m3, sdiag = sW0m1 + e2 * sW0m3;
    blockEntry(x, x, u, u, len, ediag, eW0m3, eW1m3, eW2m3, sdiag, sW0m3, sW1m3, sW2m3, true, o0[j], o6[j]);   // xx
    blockEntry(y, y, v, v, len, ediag, eW0m3, eW1m3, eW2m3, sdiag, sW0m3, sW1m3, sW2m3, true, o1[j], o7[j]);   // yy
    blockEntry(z, z, w, w, len, ediag, eW0m3, eW1m3, eW2m3, sdiag, sW0m3, sW1m3, sW2m3, true, o2[j], o8[j]);   // zz
    blockEntry(x, y, u, v, len, ediag, eW0m3, eW1m3, eW2m3, sdiag, sW0m3, sW1m3, sW2m3, false, o3[j], o9[j]);  // xy
    blockEntry(x, z, u, w, len, ediag, eW0m3, eW1m3, eW2m3, sdiag, sW0m3, sW1m3, sW2m3, false, o4[j], o10[j]); // xz
    blockEntry(y, z, v, w, len, ediag, eW0m3, eW1m3, eW2m3, sdiag, sW0m3, sW1m3, sW2m3, false, o5[j], o11[j]); // yz
  }
}

}  // namespace

bool nearFieldBlocks(NearFieldBatch& nf) {
  const int n = nf.count;
  logArguments(n, nf.r0x.data(), nf.r0y.data(), nf.r0z.data(), nf.ex.data(), nf.ey.data(), nf.ez.data(),
               nf.eps2.data(), nf.R0.data(), nf.R1.data(), nf.log_ratio.data(), nf.quadrature.data());
  bool any_quadrature = false;
  for (int j = 0; j < n; ++j) {
    nf.log_ratio[j] = std::log(nf.log_ratio[j]);
    any_quadrature |= nf.quadrature[j] != 0;
  }
  double* o = nf.out.data();
  const std::size_t c = nf.capacity;
  blocksFromLogs(n, nf.r0x.data(), nf.r0y.data(), nf.r0z.data(), nf.ex.data(), nf.ey.data(), nf.ez.data(),
                 nf.eps2.data(), nf.R0.data(), nf.R1.data(), nf.log_ratio.data(), o, o + c, o + 2 * c, o + 3 * c,
                 o + 4 * c, o + 5 * c, o + 6 * c, o + 7 * c, o + 8 * c, o + 9 * c, o + 10 * c, o + 11 * c);
  return any_quadrature;
}

}  // namespace rodsim::rss
