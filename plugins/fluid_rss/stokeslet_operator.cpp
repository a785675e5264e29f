#include "stokeslet_operator.h"

#include "far_field.h"
#include "segment_integrals.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace rodsim::rss {

namespace {
// Symmetric 3x3 entries in the order xx yy zz xy xz yz (far_field.h), and back.
constexpr int kSymRow[6] = {0, 1, 2, 0, 0, 1};
constexpr int kSymCol[6] = {0, 1, 2, 1, 2, 2};
constexpr int kSym[3][3] = {{0, 3, 4}, {3, 1, 5}, {4, 5, 2}};
}  // namespace

void StokesletOperator::setTopology(int nodes, std::vector<Segment> segments, std::vector<double> blob,
                                    const std::vector<int>& rod_first_node, int threads) {
  nodes_ = nodes;
  segments_ = std::move(segments);
  eps2_.resize(blob.size());
  for (std::size_t i = 0; i < blob.size(); ++i) eps2_[i] = blob[i] * blob[i];
#ifdef _OPENMP
  threads_ = threads > 0 ? threads : omp_get_num_procs();
#else
  threads_ = 1;
  (void)threads;
#endif
  sym_.assign(static_cast<std::size_t>(6) * nodes * nodes, 0.0f);
  x_split_.assign(3 * static_cast<std::size_t>(nodes), 0.0);
  far_.resize(static_cast<int>(segments_.size()));
  scratch_.resize(std::max(threads_, 2));  // at least the two of an overlapped assembly
  for (RowScratch& r : scratch_) {
    r.far.assign(12 * segments_.size(), 0.0);
    r.near.assign(segments_.size(), 0);
    r.near_field.resize(static_cast<int>(segments_.size()));
  }
  // The assembly relies on the layout RssForce builds: each rod's segments in order, segment
  // (first node of rod r) - r + k joining its nodes k and k + 1.
  rod_first_node_ = rod_first_node;
  for (std::size_t r = 0; r + 1 < rod_first_node.size(); ++r)
    for (int j = rod_first_node[r]; j + 1 < rod_first_node[r + 1]; ++j) {
      const Segment& seg = segments_.at(static_cast<std::size_t>(j) - r);
      if (seg.start != j || seg.end != j + 1) throw std::logic_error("StokesletOperator: segments out of order");
    }
  std::vector<int> blocks;
  for (int first : rod_first_node) blocks.push_back(3 * first);
  gmres_.resize(3 * nodes, std::min(3 * nodes, 40), std::move(blocks));
}

void StokesletOperator::prepareAssembly(const std::vector<Vec3>& x) {
  if (static_cast<int>(x.size()) != nodes_) throw std::logic_error("StokesletOperator: wrong node count");
  const int S = static_cast<int>(segments_.size());
  for (int s = 0; s < S; ++s) far_.set(s, x[segments_[s].start], x[segments_[s].end], eps2_[segments_[s].start]);
  x_ = &x;
  next_row_.store(0, std::memory_order_relaxed);
  rows_done_.store(0, std::memory_order_release);
}

void StokesletOperator::assembleRows(int slot) {
  constexpr int kChunk = 8;  // rows claimed at a time: few claims, and a balanced end
  RowScratch& scratch = scratch_[slot];
  for (;;) {
    const int first = next_row_.fetch_add(kChunk, std::memory_order_relaxed);
    if (first >= nodes_) break;
    const int last = std::min(first + kChunk, nodes_);
    for (int i = first; i < last; ++i) assembleRow(i, scratch);
    rows_done_.fetch_add(last - first, std::memory_order_acq_rel);
  }
}

void StokesletOperator::waitAssembled() const {
  while (rows_done_.load(std::memory_order_acquire) != nodes_) spinPause();
}

void StokesletOperator::assemble(const std::vector<Vec3>& x) {
  prepareAssembly(x);
  // One block row per collocation node; rows are independent, so the threads split them.
#pragma omp parallel num_threads(threads_) if (threads_ > 1)
  {
#ifdef _OPENMP
    assembleRows(omp_get_thread_num());
#else
    assembleRows(0);
#endif
  }
}

namespace {

// One rod's nodes 0 .. m of one entry array of a block row from its m segments' sums (`whole`: the
// whole segment, `end`: the end node's share): node j takes the end share of segment j - 1 and the
// start share (whole minus end) of segment j, rounded to float. A vector loop compiled for AVX-512,
// AVX2 and generic x86-64 (the same roundings in each: no sum runs across lanes).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
void hatShares(const double* __restrict whole, const double* __restrict end, int m, float* __restrict out) {
  out[0] = static_cast<float>(whole[0] - end[0]);
  for (int j = 1; j < m; ++j) out[j] = static_cast<float>(end[j - 1] + whole[j] - end[j]);
  out[m] = static_cast<float>(end[m - 1]);
}

}  // namespace

void StokesletOperator::assembleRow(int i, RowScratch& scratch) {
  const std::vector<Vec3>& x = *x_;
  const int S = static_cast<int>(segments_.size());
  double* far = scratch.far.data();
  const Vec3 xi = x[i];
  farFieldRow(xi, far_, far, scratch.near.data());
  // Near segments (within 4 |e| of the midpoint): the closed forms of Eqs. A.3-A.5 for all of them at
  // once (nearFieldBlocks, bitwise segmentBlocks), written over the quadrature sums in the same
  // layout (whole segment in 0..5, end node's share in 6..11).
  NearFieldBatch& nf = scratch.near_field;
  nf.clear();
  for (int s = 0; s < S; ++s)
    if (scratch.near[s]) {
      const Segment& seg = segments_[s];
      nf.add(s, xi - x[seg.start], x[seg.end] - x[seg.start], eps2_[seg.start]);
    }
  const bool quadrature = nearFieldBlocks(nf);
  for (int j = 0; j < nf.count; ++j) {
    const int s = nf.segment[j];
    for (int k = 0; k < 12; ++k) far[k * S + s] = nf.out[static_cast<std::size_t>(k) * nf.capacity + j];
  }
  // A segment that the midpoint test called near but isFarField calls far (the two round differently
  // at the boundary): segmentBlocks, which takes the quadrature there.
  for (int j = 0; quadrature && j < nf.count; ++j) {
    if (!nf.quadrature[j]) continue;
    const int s = nf.segment[j];
    const Segment& seg = segments_[s];
    const Vec3 r0 = xi - x[seg.start];
    const Vec3 e = x[seg.end] - x[seg.start];
    const double eps2 = eps2_[seg.start];
    Mat3 A_start, A_end;
    segmentBlocks(r0, e, eps2, std::sqrt(r0.squaredNorm() + eps2), std::sqrt((r0 - e).squaredNorm() + eps2),
                  A_start, A_end);
    const Mat3 whole = A_start + A_end;
    for (int k = 0; k < 6; ++k) {
      far[k * S + s] = whole(kSymRow[k], kSymCol[k]);
      far[(6 + k) * S + s] = A_end(kSymRow[k], kSymCol[k]);
    }
  }
  // Node j's block collects its hat function on both adjacent segments (Eq. A.6): the end share
  // of the segment before it plus the start share (whole minus end) of the segment after it.
  // Along rod r, node j sits between segments j - r - 1 and j - r.
  // Summed in double, stored rounded to float (sym_).
  float* node = sym_.data() + static_cast<std::ptrdiff_t>(6) * i * nodes_;  // block row i
  for (int k = 0; k < 6; ++k) {
    const double* whole = far + k * S;
    const double* end = far + (6 + k) * S;
    float* out = node + k * nodes_;
    for (std::size_t r = 0; r + 1 < rod_first_node_.size(); ++r) {
      const int first = rod_first_node_[r], last = rod_first_node_[r + 1] - 1, shift = static_cast<int>(r);
      hatShares(whole + first - shift, end + first - shift, last - first, out + first);
    }
  }
}

namespace {

// Block rows i and i + 1 of y = A x (`row`: row i's six symmetric entry arrays, row i + 1's
// follow), with x split by component: each x entry loaded once for both rows. The products and
// sums are in double (A's entries widened). Compiled for AVX-512, AVX2 + FMA and generic x86-64.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
void blockRowPair(const float* __restrict row, int n, const double* __restrict xx, const double* __restrict xy,
                  const double* __restrict xz, double* __restrict y) {
  const float* __restrict a = row;
  const float* __restrict b = row + 6 * n;
  double sx = 0, sy = 0, sz = 0, tx = 0, ty = 0, tz = 0;
#pragma omp simd reduction(+ : sx, sy, sz, tx, ty, tz)
  for (int j = 0; j < n; ++j) {
    const double x0 = xx[j], x1 = xy[j], x2 = xz[j];
    const double axx = a[j], ayy = a[n + j], azz = a[2 * n + j], axy = a[3 * n + j], axz = a[4 * n + j],
                 ayz = a[5 * n + j];
    sx += axx * x0 + axy * x1 + axz * x2;
    sy += axy * x0 + ayy * x1 + ayz * x2;
    sz += axz * x0 + ayz * x1 + azz * x2;
    const double bxx = b[j], byy = b[n + j], bzz = b[2 * n + j], bxy = b[3 * n + j], bxz = b[4 * n + j],
                 byz = b[5 * n + j];
    tx += bxx * x0 + bxy * x1 + bxz * x2;
    ty += bxy * x0 + byy * x1 + byz * x2;
    tz += bxz * x0 + byz * x1 + bzz * x2;
  }
  y[0] = sx, y[1] = sy, y[2] = sz, y[3] = tx, y[4] = ty, y[5] = tz;
}

// Block rows [first, last) of y = A x in pairs (blockRowPair). An odd last row i is done as one of
// the pair (i, i + 1) or (i - 1, i) (n >= 2: every rod has two nodes), the other row thrown away:
// each row's sum is the same whichever pair it is in.
void blockRows(const float* rows, int n, const double* xs, int first, int last, double* y) {
  int i = first;
  for (; i + 1 < last; i += 2)
    blockRowPair(rows + static_cast<std::ptrdiff_t>(6) * i * n, n, xs, xs + n, xs + 2 * n, y + 3 * i);
  if (i < last) {
    const int pair_first = i + 1 < n ? i : i - 1;
    double pair[6];
    blockRowPair(rows + static_cast<std::ptrdiff_t>(6) * pair_first * n, n, xs, xs + n, xs + 2 * n, pair);
    for (int k = 0; k < 3; ++k) y[3 * i + k] = pair[3 * (i - pair_first) + k];
  }
}

}  // namespace

void StokesletOperator::apply(const double* x, double* y) const {
  const int n = nodes_;
  double* xs = x_split_.data();
  for (int j = 0; j < n; ++j) xs[j] = x[3 * j], xs[n + j] = x[3 * j + 1], xs[2 * n + j] = x[3 * j + 2];
  const float* rows = sym_.data();
  if (team_) {  // the block rows in two halves, one per thread of the team
    team_->run([&](int part) { blockRows(rows, n, xs, part * n / 2, (part + 1) * n / 2, y); });
    return;
  }
#ifdef _OPENMP
  if (threads_ > 1) {
#pragma omp parallel num_threads(threads_)
    {
      const int parts = omp_get_num_threads(), part = omp_get_thread_num();
      blockRows(rows, n, xs, part * n / parts, (part + 1) * n / parts, y);
    }
    return;
  }
#endif
  blockRows(rows, n, xs, 0, n, y);
}

void StokesletOperator::diagonalBlock(int first, int size, Eigen::MatrixXd& out) const {
  out.resize(size, size);
  const int n = nodes_, first_node = first / 3, count = size / 3;
  for (int a = 0; a < count; ++a) {
    const float* row = sym_.data() + static_cast<std::ptrdiff_t>(6) * (first_node + a) * n;
    for (int b = 0; b < count; ++b)
      for (int p = 0; p < 3; ++p)
        for (int c = 0; c < 3; ++c) out(3 * a + p, 3 * b + c) = row[kSym[p][c] * n + first_node + b];
  }
}

void StokesletOperator::solveLu(const Vec& rhs, Vec& F) {
  diagonalBlock(0, 3 * nodes_, dense_);  // the whole operator; the reference path, O(n³)
  lu_.compute(dense_);
  F = lu_.solve(rhs);
}

GmresResult StokesletOperator::solveGmres(const Vec& rhs, Vec& F, double tolerance, int max_iterations) {
  return gmres_.solve(*this, rhs, F, tolerance, max_iterations);
}

}  // namespace rodsim::rss
