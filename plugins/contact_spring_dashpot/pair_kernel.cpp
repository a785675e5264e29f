// The closest points, normal and normal force of Eq. 37 (Gazzola et al. 2018, Sec. IV.4, Eqs. 36-37) for
// a list of pairs in one loop over structure-of-arrays, so that g++ computes 4 (AVX2) or 8
// (AVX-512) pairs per instruction. On the paper's plectoneme (150 elements, radius 3.75 element
// lengths) the near list holds some 280 pairs of which ~260 are in contact; pair by pair through
// geometry::segmentNormal (an out-of-line lumelsky with data-dependent branches) the same work cost
// several times as much (benchmarks/README.md, "bench_plectoneme").
//
// Same operations in the same order as the readable form (geometry::lumelsky, geometry::segmentNormal
// and SpringDashpotContact::addForceReference), branches turned into selects: the results are bitwise
// those (tests/plugins/contact_spring_dashpot/test_spring_dashpot.cpp, "fast = reference"). This
// needs no FMA contraction and Eigen's order of a 3-vector dot product, ((x0 y0 + x1 y1) + x2 y2),
// written out below. Division by zero and the like in lanes whose result a select drops are
// harmless (-fno-trapping-math: CMakeLists.txt).
#include "pair_kernel.h"

#include <cmath>

namespace rodsim::spring_dashpot {

namespace {

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define SPRING_DASHPOT_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define SPRING_DASHPOT_SIMD_CLONES
#endif

// std::clamp(x, 0.0, 1.0), as lumelsky's clamp01, bitwise (NaN stays NaN), written as
// min(max(x, 0), 1) = (1 < y ? 1 : y) of y = (x < 0 ? 0 : x): two vector min/max instructions, where
// the nested conditional became a combination of masks that g++ 12 does not vectorize.
inline double clamp01(double x) {
  const double y = x < 0.0 ? 0.0 : x;
  return 1.0 < y ? 1.0 : y;
}

// Pairs per block: the gathered node coordinates of a block (24 x 64 doubles, 12 kB) stay in L1.
constexpr int kBlock = 64;

template <bool Damp>
[[gnu::always_inline]] inline void pairLoop(const double* __restrict X, const double* __restrict Y,
                                            const double* __restrict Z, const double* __restrict UX,
                                            const double* __restrict UY, const double* __restrict UZ,
                                            const int* __restrict a0, const int* __restrict a1,
                                            const int* __restrict b0, const int* __restrict b1,
                                            const double* __restrict rsum, int n, double k, double gamma, double dt,
                                            double tol, double* __restrict oD, double* __restrict os,
                                            double* __restrict ot, double* __restrict onx, double* __restrict ony,
                                            double* __restrict onz, double* __restrict ofn) {
  // g++ 12 does not vectorize the arithmetic with the indexed loads in the same loop ("no vectype"
  // for the gathers), so each block's node coordinates are first copied to contiguous arrays:
  // G[3 m + c] is coordinate c of the pair's node m (p0, p1, q0, q1), V likewise for q - q_start.
  alignas(64) double G[12][kBlock];
  alignas(64) double V[12][kBlock];
  for (int j0 = 0; j0 < n; j0 += kBlock) {
    const int m = n - j0 < kBlock ? n - j0 : kBlock;
    for (int i = 0; i < m; ++i) {
      const int idx[4] = {a0[j0 + i], a1[j0 + i], b0[j0 + i], b1[j0 + i]};
      for (int l = 0; l < 4; ++l) {
        G[3 * l][i] = X[idx[l]];
        G[3 * l + 1][i] = Y[idx[l]];
        G[3 * l + 2][i] = Z[idx[l]];
        if constexpr (Damp) {
          V[3 * l][i] = UX[idx[l]];
          V[3 * l + 1][i] = UY[idx[l]];
          V[3 * l + 2][i] = UZ[idx[l]];
        }
      }
    }
    for (int i = 0; i < m; ++i) {
      const int j = j0 + i;
      const double p0x = G[0][i], p0y = G[1][i], p0z = G[2][i];
      const double p1x = G[3][i], p1y = G[4][i], p1z = G[5][i];
      const double q0x = G[6][i], q0y = G[7][i], q0z = G[8][i];
      const double q1x = G[9][i], q1y = G[10][i], q1z = G[11][i];
      // lumelsky (Tong et al. 2023, Eq. 10): d1 = p1 - p0, d2 = q1 - q0, r = p0 - q0
      const double d1x = p1x - p0x, d1y = p1y - p0y, d1z = p1z - p0z;
      const double d2x = q1x - q0x, d2y = q1y - q0y, d2z = q1z - q0z;
      const double rx = p0x - q0x, ry = p0y - q0y, rz = p0z - q0z;
      const double a = (d1x * d1x + d1y * d1y) + d1z * d1z;
      const double e = (d2x * d2x + d2y * d2y) + d2z * d2z;
      const double f = (d2x * rx + d2y * ry) + d2z * rz;
      const double b = (d1x * d2x + d1y * d2y) + d1z * d2z;
      const double c = (d1x * rx + d1y * ry) + d1z * rz;
      const double denom = a * e - b * b;  // |d1 x d2|^2
      // Every quotient computed, the wanted one selected (no control flow, so g++ vectorizes; the
      // dropped lanes may divide by zero).
      // Not parallel when a > 0, e > 0 and denom > tol a e, else s = 0: one select per comparison,
      // each on doubles (g++ 12 vectorizes no combination of comparisons, and not the unordered
      // comparisons that !(a <= 0) needs). The results differ from lumelsky's only where an input
      // is NaN (then D is NaN too, and the pair is not in contact either way).
      const double s_in = clamp01((b * f - c * e) / denom);
      const double s_1 = denom > tol * a * e ? s_in : 0.0;
      const double s_2 = e > 0 ? s_1 : 0.0;
      const double s_0 = a > 0 ? s_2 : 0.0;
      const double t_in = (b * s_0 + f) / e;
      const double t = clamp01(e > 0 ? t_in : 0.0);
      // t outside (0, 1): clamped (above), and s the closest to that end
      const double s_q = clamp01((b * t - c) / a);
      const double s_c = a > 0 ? s_q : 0.0;
      const double s_3 = t < 1 ? s_0 : s_c;
      const double s = t > 0 ? s_3 : s_c;
      // segmentNormal: d = Q - P, D = |d|, n = d / D (Eq. 36's d_min and its direction)
      const double dx = (q0x + t * d2x) - (p0x + s * d1x);
      const double dy = (q0y + t * d2y) - (p0y + s * d1y);
      const double dz = (q0z + t * d2z) - (p0z + s * d1z);
      const double D = std::sqrt((dx * dx + dy * dy) + dz * dz);
      const double inv = 1.0 / D;
      const double nx = dx * inv, ny = dy * inv, nz = dz * inv;
      // Eq. 37: f_n = k eps - gamma dD/dt, dD/dt = n . sum_k w_k u_k / dt, w = (-(1 - s), -s, 1 - t, t)
      double fn = k * (rsum[j] - D);
      if constexpr (Damp) {
        const double w0 = -(1 - s), w1 = -s, w2 = 1 - t, w3 = t;
        const double vx = ((w0 * V[0][i] + w1 * V[3][i]) + w2 * V[6][i]) + w3 * V[9][i];
        const double vy = ((w0 * V[1][i] + w1 * V[4][i]) + w2 * V[7][i]) + w3 * V[10][i];
        const double vz = ((w0 * V[2][i] + w1 * V[5][i]) + w2 * V[8][i]) + w3 * V[11][i];
        fn -= gamma * (((nx * vx + ny * vy) + nz * vz) / dt);
      }
      oD[j] = D;
      os[j] = s;
      ot[j] = t;
      onx[j] = nx;
      ony[j] = ny;
      onz[j] = nz;
      ofn[j] = fn;
    }
  }
}

SPRING_DASHPOT_SIMD_CLONES void pairKernelDamped(const NodeArrays& N, const PairArrays& P, double k, double gamma,
                                                 double dt, double tol, const PairResults& R) {
  pairLoop<true>(N.X, N.Y, N.Z, N.UX, N.UY, N.UZ, P.a0, P.a1, P.b0, P.b1, P.rsum, P.n, k, gamma, dt, tol, R.D, R.s,
                 R.t, R.nx, R.ny, R.nz, R.fn);
}

SPRING_DASHPOT_SIMD_CLONES void pairKernelSpring(const NodeArrays& N, const PairArrays& P, double k, double tol,
                                                 const PairResults& R) {
  pairLoop<false>(N.X, N.Y, N.Z, nullptr, nullptr, nullptr, P.a0, P.a1, P.b0, P.b1, P.rsum, P.n, k, 0.0, 1.0, tol,
                  R.D, R.s, R.t, R.nx, R.ny, R.nz, R.fn);
}

}  // namespace

void pairKernel(const NodeArrays& nodes, const PairArrays& pairs, bool damp, double k, double gamma, double dt,
                double parallel_tol, const PairResults& out) {
  if (damp)
    pairKernelDamped(nodes, pairs, k, gamma, dt, parallel_tol, out);
  else
    pairKernelSpring(nodes, pairs, k, parallel_tol, out);
}

}  // namespace rodsim::spring_dashpot
