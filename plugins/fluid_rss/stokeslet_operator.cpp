#include "stokeslet_operator.h"

#include "far_field.h"
#include "segment_integrals.h"

#include <cmath>
#include <stdexcept>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace rodsim::rss {

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
  far_out_.assign(threads_, std::vector<double>(12 * segments_.size()));
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
    double* far = far_out_[omp_get_thread_num()].data();
#else
    double* far = far_out_[0].data();
#endif
    const Vec3 xi = x[i];
    farFieldRow(xi, far_, far);
    auto row = A_.middleRows<3>(3 * i);
    row.setZero();
    Mat3 A_start, A_end;
    for (int s = 0; s < S; ++s) {
      const Segment& seg = segments_[s];
      const Vec3 r0 = xi - x[seg.start];
      const Vec3 e = x[seg.end] - x[seg.start];
      if (isFarField(r0, e)) {
        // entries xx yy zz xy xz yz: hat-weighted sums Σ (j) and Σ α (6 + j)
        static constexpr int kSym[3][3] = {{0, 3, 4}, {3, 1, 5}, {4, 5, 2}};
        for (int p = 0; p < 3; ++p)
          for (int q = 0; q < 3; ++q) {
            const double whole = far[kSym[p][q] * S + s], end = far[(6 + kSym[p][q]) * S + s];
            A_start(p, q) = whole - end;
            A_end(p, q) = end;
          }
      } else {  // near field: the closed forms (Eq. A.3-A.5)
        const double eps2 = eps2_[seg.start];
        segmentBlocks(r0, e, eps2, std::sqrt(r0.squaredNorm() + eps2), std::sqrt((r0 - e).squaredNorm() + eps2),
                      A_start, A_end);
      }
      row.middleCols<3>(3 * seg.start) += A_start;  // Eq. A.6
      row.middleCols<3>(3 * seg.end) += A_end;
    }
  }
}

int StokesletOperator::solveLu(const Vec& rhs, Vec& F) {
  lu_.compute(A_);  // copies into column-major storage; the reference path, O(n³)
  F = lu_.solve(rhs);
  return 0;
}

GmresResult StokesletOperator::solveGmres(const Vec& rhs, Vec& F, double tolerance, int max_iterations) {
  return gmres_.solve(A_, rhs, F, tolerance, max_iterations);
}

}  // namespace rodsim::rss
