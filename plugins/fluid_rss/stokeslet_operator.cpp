#include "stokeslet_operator.h"

#include "far_field.h"
#include "segment_integrals.h"

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
  A_.resize(3 * nodes, 3 * nodes);
  far_.resize(static_cast<int>(segments_.size()));
  scratch_.resize(threads_);
  for (RowScratch& r : scratch_) {
    r.far.assign(12 * segments_.size(), 0.0);
    r.near.assign(segments_.size(), 0);
    r.node.assign(6 * nodes, 0.0);
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

void StokesletOperator::assemble(const std::vector<Vec3>& x) {
  if (static_cast<int>(x.size()) != nodes_) throw std::logic_error("StokesletOperator: wrong node count");
  const int S = static_cast<int>(segments_.size());
  for (int s = 0; s < S; ++s) far_.set(s, x[segments_[s].start], x[segments_[s].end], eps2_[segments_[s].start]);
  // One block row per collocation node; rows are independent, so the threads split them.
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 8)
  for (int i = 0; i < nodes_; ++i) {
#ifdef _OPENMP
    RowScratch& scratch = scratch_[omp_get_thread_num()];
#else
    RowScratch& scratch = scratch_[0];
#endif
    double* far = scratch.far.data();
    const Vec3 xi = x[i];
    farFieldRow(xi, far_, far, scratch.near.data());
    // Near segments (within 4 |e| of the midpoint): the closed forms of Eqs. A.3-A.5, written over
    // the quadrature sums in the same layout (whole segment in 0..5, end node's share in 6..11).
    for (int s = 0; s < S; ++s) {
      if (!scratch.near[s]) continue;
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
    double* node = scratch.node.data();  // 6 x nodes, symmetric entries
    for (int k = 0; k < 6; ++k) {
      const double* __restrict whole = far + k * S;
      const double* __restrict end = far + (6 + k) * S;
      double* __restrict out = node + k * nodes_;
      for (std::size_t r = 0; r + 1 < rod_first_node_.size(); ++r) {
        const int first = rod_first_node_[r], last = rod_first_node_[r + 1] - 1, shift = static_cast<int>(r);
        out[first] = whole[first - shift] - end[first - shift];
        for (int j = first + 1; j < last; ++j) out[j] = end[j - shift - 1] + whole[j - shift] - end[j - shift];
        out[last] = end[last - shift - 1];
      }
    }
    for (int p = 0; p < 3; ++p) {
      double* __restrict row = A_.data() + static_cast<std::ptrdiff_t>(3 * i + p) * 3 * nodes_;
      const double* __restrict c0 = node + kSym[p][0] * nodes_;
      const double* __restrict c1 = node + kSym[p][1] * nodes_;
      const double* __restrict c2 = node + kSym[p][2] * nodes_;
      for (int j = 0; j < nodes_; ++j) {
        row[3 * j] = c0[j];
        row[3 * j + 1] = c1[j];
        row[3 * j + 2] = c2[j];
      }
    }
  }
}

void StokesletOperator::solveLu(const Vec& rhs, Vec& F) {
  lu_.compute(A_);  // copies into column-major storage; the reference path, O(n³)
  F = lu_.solve(rhs);
}

GmresResult StokesletOperator::solveGmres(const Vec& rhs, Vec& F, double tolerance, int max_iterations) {
  return gmres_.solve(A_, rhs, F, tolerance, max_iterations);
}

}  // namespace rodsim::rss
