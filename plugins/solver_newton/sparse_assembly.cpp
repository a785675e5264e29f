#include "sparse_assembly.h"

#include <Eigen/CholmodSupport>
#include <Eigen/OrderingMethods>
#include <Eigen/SparseCholesky>
#include <Eigen/SparseLU>
#include <Eigen/UmfPackSupport>
#include <rodsim/krylov/gmres.h>
#include <rodsim/sparse_direct/supernodal_cholesky.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace rodsim::newton {

// ------------------------------------------------------------------------------ SparseAssembler

bool SparseAssembler::setFixed(const std::vector<char>& fixed, Layout layout) {
  if (!dirty_ && layout == layout_ && fixed == fixed_) return false;
  layout_ = layout;
  fixed_ = fixed;
  const int n = static_cast<int>(fixed.size());
  index_of_.assign(n, -1);
  global_of_.clear();
  for (int g = 0; g < n; ++g) {
    if (layout == Layout::Free && fixed[g]) continue;
    index_of_[g] = static_cast<int>(global_of_.size());
    global_of_.push_back(g);
  }
  dirty_ = true;
  return true;
}

int SparseAssembler::slotOf(int row, int col) const {
  const int* inner = A_.innerIndexPtr();
  const int* begin = inner + A_.outerIndexPtr()[col];
  const int* end = inner + A_.outerIndexPtr()[col + 1];
  const int* it = std::lower_bound(begin, end, row);
  if (it == end || *it != row) return -1;  // cannot happen: the pattern holds every triplet
  return static_cast<int>(it - inner);
}

void SparseAssembler::rebuild(const std::vector<Eigen::Triplet<double>>& triplets) {
  const int n = size();
  const bool identity = layout_ == Layout::GlobalIdentity;
  std::vector<Eigen::Triplet<double>> pattern;
  pattern.reserve(triplets.size() + n);
  auto mapped = [&](int g) -> int {
    if (g < 0 || g >= static_cast<int>(index_of_.size())) return -1;
    if (identity && fixed_[g]) return -1;
    return index_of_[g];
  };
  for (const auto& t : triplets) {
    const int r = mapped(t.row()), c = mapped(t.col());
    if (r >= 0 && c >= 0) pattern.emplace_back(r, c, 0.0);
  }
  for (int i = 0; i < n; ++i) pattern.emplace_back(i, i, 0.0);
  A_.resize(n, n);
  A_.setFromTriplets(pattern.begin(), pattern.end());  // keeps explicit zeros
  A_.makeCompressed();

  slot_.resize(triplets.size());
  prev_keys_.resize(triplets.size());
  for (std::size_t k = 0; k < triplets.size(); ++k) {
    const int r = mapped(triplets[k].row()), c = mapped(triplets[k].col());
    slot_[k] = (r >= 0 && c >= 0) ? slotOf(r, c) : -1;
    prev_keys_[k] = key(triplets[k].row(), triplets[k].col());
  }
  diag_slot_.resize(n);
  for (int i = 0; i < n; ++i) diag_slot_[i] = slotOf(i, i);
  // Entry pairs the symmetry test compares: each stored (i, j) below the diagonal with its mirror
  // (j, i), and any entry whose mirror is not stored (compared with 0).
  mirror_.clear();
  for (int j = 0; j < n; ++j)
    for (int k = A_.outerIndexPtr()[j]; k < A_.outerIndexPtr()[j + 1]; ++k) {
      const int i = A_.innerIndexPtr()[k];
      if (i == j) continue;
      const int m = slotOf(j, i);
      if (i > j || m < 0) mirror_.emplace_back(k, m);
    }
  // Band mode: the triplets' and the diagonal's slots then index band_ instead of A_'s values.
  int bandwidth = 0;
  for (int j = 0; j < n; ++j)
    for (int k = A_.outerIndexPtr()[j]; k < A_.outerIndexPtr()[j + 1]; ++k)
      bandwidth = std::max(bandwidth, std::abs(A_.innerIndexPtr()[k] - j));
  banded_ = layout_ == Layout::Free && n > 0 && bandwidth <= kBandHalf;
  stale_ = false;
  band_.clear();
  band_of_slot_.clear();
  if (banded_) {
    band_.assign(std::size_t(n) * kBandStride, 0.0);
    band_of_slot_.resize(A_.nonZeros());
    for (int j = 0; j < n; ++j)
      for (int k = A_.outerIndexPtr()[j]; k < A_.outerIndexPtr()[j + 1]; ++k)
        band_of_slot_[k] = kBandStride * j + kBandHalf + A_.innerIndexPtr()[k] - j;
    for (int& s : slot_)
      if (s >= 0) s = band_of_slot_[s];
    for (int& s : diag_slot_) s = band_of_slot_[s];
  }
  dirty_ = false;
  ++rebuilds_;
}

void SparseAssembler::copyBandToMatrix() const {
  double* values = A_.valuePtr();
  for (std::size_t p = 0; p < band_of_slot_.size(); ++p) values[p] = band_[band_of_slot_[p]];
  stale_ = false;
}

void SparseAssembler::multiply(const Vec& x, Vec& y) const {
  const int n = size();
  y.setZero(n);
  if (!banded_) {
    y.noalias() = A_ * x;
    return;
  }
  // Column by column, rows ascending: the order (and so the rounding) of the sparse product; the
  // band's zeros outside the pattern add nothing.
  double* out = y.data();
  for (int c = 0; c < n; ++c) {
    const double xc = x[c];
    if (c >= kBandHalf && c + kBandHalf < n) {  // a whole column: a fixed count, unrolled
      const double* col = band_.data() + std::size_t(kBandStride) * c;  // rows c - kBandHalf ..
      double* o = out + (c - kBandHalf);
      for (int k = 0; k < kBandStride; ++k) o[k] += col[k] * xc;
      continue;
    }
    const double* col = band_.data() + std::size_t(kBandStride) * c + kBandHalf - c;  // col[r]: (r, c)
    const int r1 = std::min(n - 1, c + kBandHalf);
    for (int r = std::max(0, c - kBandHalf); r <= r1; ++r) out[r] += col[r] * xc;
  }
}

bool SparseAssembler::assemble(const std::vector<Eigen::Triplet<double>>& triplets,
                               const Vec* diag, double diag_scale) {
  // Pattern check and scatter in one pass over the triplets (a Newton iteration sends thousands
  // per rod); the first triplet off the stored sequence rebuilds the pattern and scatters again.
  // The values go to band_ in band mode, else to A_'s; the arrays are read through local pointers
  // (a store into the values could otherwise, for the compiler, change the vectors' own pointers).
  const std::size_t count = triplets.size();
  bool same = !dirty_ && count == prev_keys_.size();
  auto zeroValues = [this]() -> double* {
    double* v = banded_ ? band_.data() : A_.valuePtr();
    std::fill(v, v + (banded_ ? Eigen::Index(band_.size()) : A_.nonZeros()), 0.0);
    return v;
  };
  const Eigen::Triplet<double>* t = triplets.data();
  if (same) {
    double* values = zeroValues();
    const std::uint64_t* keys = prev_keys_.data();
    const int* slot = slot_.data();
    for (std::size_t k = 0; k < count; ++k) {
      if (key(t[k].row(), t[k].col()) != keys[k]) {
        same = false;
        break;
      }
      if (slot[k] >= 0) values[slot[k]] += t[k].value();
    }
  }
  if (!same) {
    rebuild(triplets);
    double* values = zeroValues();
    const int* slot = slot_.data();
    for (std::size_t k = 0; k < count; ++k)
      if (slot[k] >= 0) values[slot[k]] += t[k].value();
  }
  stale_ = banded_;
  double* values = banded_ ? band_.data() : A_.valuePtr();
  const bool identity = layout_ == Layout::GlobalIdentity;
  for (int i = 0; i < size(); ++i) {
    const int g = global_of_[i];
    if (identity && fixed_[g])
      values[diag_slot_[i]] = 1.0;
    else if (diag)
      values[diag_slot_[i]] += diag_scale * (*diag)[g];
  }
  return !same;
}

bool SparseAssembler::isSymmetric() const {
  // The test of isNumericallySymmetric, |a_ij - a_ji| <= 1e-12 max |a| for every stored entry
  // below the diagonal, and also for entries above it whose mirror is not stored (taken as 0).
  if (banded_) {
    // Entry (r, c) below the diagonal against (c, r), in the band's columns; zeros outside the
    // pattern on both sides.
    const int n = size();
    const double scale = Eigen::Map<const Vec>(band_.data(), Eigen::Index(band_.size())).cwiseAbs().maxCoeff();
    double asym = 0;
    for (int c = 0; c < n; ++c) {
      // (c + t, c) at col[t], its mirror (c, c + t) at col[kBandStride t - 2 t]: column c + t,
      // kBandHalf - t rows above that column's diagonal.
      const double* col = band_.data() + std::size_t(kBandStride) * c + kBandHalf;
      const int reach = std::min(kBandHalf, n - 1 - c);
      if (reach == kBandHalf) {
        for (int t = 1; t <= kBandHalf; ++t) asym = std::max(asym, std::abs(col[t] - col[(kBandStride - 1) * t]));
      } else {
        for (int t = 1; t <= reach; ++t) asym = std::max(asym, std::abs(col[t] - col[(kBandStride - 1) * t]));
      }
    }
    return asym <= 1e-12 * scale;
  }
  const double* v = A_.valuePtr();
  if (A_.nonZeros() == 0) return true;
  const double scale = Eigen::Map<const Vec>(v, A_.nonZeros()).cwiseAbs().maxCoeff();  // vectorized
  double asym = 0;
  for (const auto& [k, m] : mirror_) asym = std::max(asym, std::abs(v[k] - (m >= 0 ? v[m] : 0.0)));
  return asym <= 1e-12 * scale;
}

void SparseAssembler::shiftDiagonal(double mu) {
  const bool identity = layout_ == Layout::GlobalIdentity;
  double* values = banded_ ? band_.data() : A_.valuePtr();
  stale_ = banded_;
  for (int i = 0; i < size(); ++i)
    if (!(identity && fixed_[global_of_[i]])) values[diag_slot_[i]] += mu;
}

double SparseAssembler::meanAbsDiagonal() const {
  const bool identity = layout_ == Layout::GlobalIdentity;
  const double* values = banded_ ? band_.data() : A_.valuePtr();
  double sum = 0;
  int count = 0;
  for (int i = 0; i < size(); ++i) {
    if (identity && fixed_[global_of_[i]]) continue;
    sum += std::abs(values[diag_slot_[i]]);
    ++count;
  }
  return count ? sum / count : 0.0;
}

// --------------------------------------------------------------------------------- LinearSolver

// LDLT of a narrowly banded matrix: a DER rod's Jacobian has half-bandwidth 10 (a bending stencil
// spans 11 consecutive DOFs), and rods without contact between them keep it. Eliminating in the
// natural order fills only the band, which is what AMD achieves there too, and the band is dense:
// a dense band factorization with the bandwidth known at compile time does n B²/2 unrolled
// multiply-adds and no index work, where Eigen's SimplicialLDLT spends most of its time on
// elimination-tree bookkeeping (and copies A into a permuted matrix at every factorization).
// Wider bands (contacts between rods, other layouts) go to SimplicialLDLT with AMD.
constexpr int kBand = 10;

// A = L D Lᵀ in dense band storage, half-bandwidth kBand (narrower bands are padded with zeros);
// no pivoting (like SimplicialLDLT).
class BandedLdlt {
 public:
  static constexpr int B = kBand, S = B + 1;  // column stride

  // Sizes the storage for an n x n matrix (allocates; once per pattern). B zero columns before
  // the first and after the last let every column reach B neighbours without bounds checks.
  void resize(int n) {
    n_ = n;
    storage_.assign(std::size_t(n + 2 * B) * S, 0.0);
    y_.assign(std::size_t(n) + B, 0.0);
  }
  // False for a zero (or, relative to the largest, negligible) pivot or a non-finite one, and for
  // an entry outside the band (a pattern that was not analysed).
  bool factorize(const SpMat& A) {
    const int n = n_;
    if (A.rows() != n || A.cols() != n) return false;
    const int* outer = A.outerIndexPtr();
    const int* inner = A.innerIndexPtr();
    const int* nnz = A.innerNonZeroPtr();  // null when compressed
    const double* val = A.valuePtr();
    // Column j of the band: col[0] = A(j, j) (then D_j), col[r] = A(j + r, j) (then L(j + r, j)).
    for (int j = 0; j < n; ++j) {
      double* col = column(j);
      for (int r = 0; r < S; ++r) col[r] = 0.0;
      const int end = nnz ? outer[j] + nnz[j] : outer[j + 1];
      for (int k = end - 1; k >= outer[j] && inner[k] >= j; --k) {  // lower triangle
        if (inner[k] - j > B) return false;
        col[inner[k] - j] = val[k];
      }
    }
    return eliminate();
  }
  // The same from SparseAssembler's band storage (half-bandwidth B, column stride 2B + 1, the
  // diagonal at offset B): the lower half of each column is this storage's column.
  bool factorize(const double* band, int n) {
    if (n != n_) return false;
    for (int j = 0; j < n; ++j) {
      const double* from = band + std::size_t(2 * B + 1) * j + B;
      double* col = column(j);
      for (int r = 0; r < S; ++r) col[r] = from[r];
    }
    return eliminate();
  }

 private:
  bool eliminate() {
    const int n = n_;
    // Left-looking, column j from the B columns k = j - o before it (the leading padding has
    // D = 0, so it contributes nothing):
    //   acc(j + t) = A(j + t, j) - Σ_k L(j + t, k) D_k L(j, k),   D_j = acc(j),  L(j + t, j) = acc(j + t)/D_j,
    // with L(j + t, k) = column(k)[o + t] stored for o + t <= B. Fully unrolled, the accumulators
    // stay in registers.
    double dmax = 0;
    for (int j = 0; j < n; ++j) {
      double* col = column(j);
      double acc[S];
      for (int t = 0; t < S; ++t) acc[t] = col[t];
#pragma GCC unroll 16
      for (int o = 1; o <= B; ++o) {
        const double* ck = column(j - o);
        const double w = ck[o] * ck[0];
#pragma GCC unroll 16
        for (int t = 0; t + o <= B; ++t) acc[t] -= ck[o + t] * w;
      }
      const double d = acc[0];
      if (!std::isfinite(d) || d == 0.0) return false;
      dmax = std::max(dmax, std::abs(d));
      const double inv_d = 1.0 / d;
      col[0] = d;
      for (int t = 1; t < S; ++t) col[t] = acc[t] * inv_d;
    }
    for (int j = 0; j < n; ++j)
      if (!(std::abs(column(j)[0]) > 1e-14 * dmax)) return false;
    return true;
  }

 public:
  // x = A⁻¹ rhs (x must have the size of rhs).
  void solve(const Vec& rhs, Vec& x) {
    const int n = n_;
    double* y = y_.data();  // n + B entries: the padding absorbs the updates past the end
    for (int j = 0; j < n; ++j) y[j] = rhs[j];
    for (int j = n; j < n + B; ++j) y[j] = 0.0;
    for (int j = 0; j < n; ++j) {  // L z = rhs (unit diagonal), column by column
      const double* col = column(j);
      const double yj = y[j];
      for (int r = 1; r < S; ++r) y[j + r] -= col[r] * yj;
    }
    for (int j = 0; j < n; ++j) y[j] /= column(j)[0];  // D w = z
    for (int j = n - 1; j >= 0; --j) {  // Lᵀ x = w (y past n stays 0)
      const double* col = column(j);
      double v = y[j];
      for (int r = 1; r < S; ++r) v -= col[r] * y[j + r];
      y[j] = v;
    }
    for (int j = 0; j < n; ++j) x[j] = y[j];
  }

 private:
  double* column(int j) { return storage_.data() + std::size_t(S) * (j + B); }
  const double* column(int j) const { return storage_.data() + std::size_t(S) * (j + B); }

  int n_ = 0;
  std::vector<double> storage_, y_;
};

// LDLT in the envelope (skyline) of a reverse Cuthill-McKee ordering, for the patterns the dense
// band above does not take but that stay narrow once reordered: rods touching side by side (two
// flagella in a bundle, a rod on a crossing rod, a tightening knot), where contact couples node i
// of one rod to node j of another. RCM numbers the DOFs breadth first from a peripheral DOF, so
// coupled DOFs get nearby numbers; every row i of L then fills only from its first nonzero column
// first[i] to the diagonal (fill stays inside the envelope), and the factorization is a sequence of
// contiguous dot products, Σ w_i²/2 multiply-adds for row widths w_i, with no elimination-tree
// bookkeeping and no permuted copy of A: analyze() maps every stored entry of A's lower triangle
// to its place in the envelope once per pattern. No pivoting (like SimplicialLDLT).
class EnvelopeLdlt {
 public:
  // Orders A's pattern by RCM and lays out the envelope; returns the largest row width.
  int analyze(const SpMat& A) {
    if (!A.isCompressed()) return std::numeric_limits<int>::max();  // (the assembler's always is)
    const int n = static_cast<int>(A.rows());
    n_ = n;
    // Symmetric adjacency of the pattern (either triangle may be stored).
    std::vector<std::vector<int>> adj(n);
    for (int j = 0; j < n; ++j)
      for (SpMat::InnerIterator it(A, j); it; ++it) {
        const int i = static_cast<int>(it.row());
        if (i == j) continue;
        adj[i].push_back(j);
        adj[j].push_back(i);
      }
    for (auto& a : adj) {
      std::sort(a.begin(), a.end());
      a.erase(std::unique(a.begin(), a.end()), a.end());
    }
    // Cuthill-McKee per connected component, from a pseudo-peripheral DOF (the last DOF reached
    // by repeated breadth-first searches, George and Liu), neighbours by increasing degree.
    std::vector<int> order, level(n, -1);
    order.reserve(n);
    std::vector<char> placed(n, 0);
    auto bfs = [&](int root, std::vector<int>& out) {  // the levels of root's component
      out.clear();
      out.push_back(root);
      level[root] = 0;
      for (std::size_t h = 0; h < out.size(); ++h)
        for (int v : adj[out[h]])
          if (level[v] < 0) level[v] = level[out[h]] + 1, out.push_back(v);
      for (int v : out) level[v] = -1;
    };
    std::vector<int> comp;
    for (int start = 0; start < n; ++start) {
      if (placed[start]) continue;
      int root = start;
      for (int pass = 0; pass < 4; ++pass) {  // a few sweeps find a peripheral DOF
        bfs(root, comp);
        const int far = comp.back();
        if (far == root) break;
        root = far;
      }
      const std::size_t first = order.size();
      order.push_back(root);
      placed[root] = 1;
      for (std::size_t h = first; h < order.size(); ++h) {
        std::vector<int>& next = adj[order[h]];
        std::sort(next.begin(), next.end(), [&](int a, int b) { return adj[a].size() < adj[b].size(); });
        for (int v : next)
          if (!placed[v]) placed[v] = 1, order.push_back(v);
      }
    }
    std::reverse(order.begin(), order.end());
    perm_ = order;  // new -> old
    inv_.assign(n, 0);
    for (int k = 0; k < n; ++k) inv_[perm_[k]] = k;
    // Envelope: row k of L spans columns first_[k] .. k - 1.
    first_.assign(n, 0);
    for (int k = 0; k < n; ++k) {
      int f = k;
      for (int v : adj[perm_[k]]) f = std::min(f, inv_[v]);
      first_[k] = f;
    }
    offset_.assign(n + 1, 0);
    int widest = 0;
    for (int k = 0; k < n; ++k) {
      offset_[k + 1] = offset_[k] + (k - first_[k]);
      widest = std::max(widest, k - first_[k]);
    }
    envelope_.assign(offset_[n], 0.0);
    d_.assign(n, 0.0);
    y_.assign(n, 0.0);
    // Where each stored lower-triangle entry of A goes: >= 0 into envelope_, -1 - k onto D_k,
    // kSkip for the upper triangle.
    const int* outer = A.outerIndexPtr();
    const int* inner = A.innerIndexPtr();
    slot_.assign(outer[n], kSkip);
    for (int j = 0; j < n; ++j)
      for (int p = outer[j]; p < outer[j + 1]; ++p) {
        const int i = inner[p];
        if (i < j) continue;
        const int a = inv_[i], b = inv_[j];
        const int row = std::max(a, b), col = std::min(a, b);
        slot_[p] = row == col ? -1 - row : offset_[row] + (col - first_[row]);
      }
    return widest;
  }

  bool factorize(const SpMat& A) {
    if (A.rows() != n_ || !A.isCompressed() || A.outerIndexPtr()[n_] != static_cast<int>(slot_.size())) return false;
    std::fill(envelope_.begin(), envelope_.end(), 0.0);
    std::fill(d_.begin(), d_.end(), 0.0);
    const double* val = A.valuePtr();
    for (std::size_t k = 0; k < slot_.size(); ++k) {
      const int s = slot_[k];
      if (s >= 0)
        envelope_[s] += val[k];
      else if (s != kSkip)
        d_[-1 - s] += val[k];
    }
    // Row by row: u_j = L(i, j) D_j = A(i, j) - Σ_{k < j} u_k L(j, k) over the overlap of the two
    // rows' envelopes, then D_i = A(i, i) - Σ_j u_j² / D_j and L(i, j) = u_j / D_j.
    double dmax = 0;
    for (int i = 0; i < n_; ++i) {
      double* li = envelope_.data() + offset_[i];
      const int fi = first_[i];
      double di = d_[i];
      for (int j = fi; j < i; ++j) {
        const int k0 = std::max(fi, first_[j]);
        const double* lj = envelope_.data() + offset_[j] - first_[j];
        const double* ui = li - fi;
        double s = 0;
        for (int k = k0; k < j; ++k) s += ui[k] * lj[k];
        li[j - fi] -= s;
      }
      for (int j = fi; j < i; ++j) {
        const double u = li[j - fi], l = u / d_[j];
        di -= u * l;
        li[j - fi] = l;
      }
      if (!std::isfinite(di) || di == 0.0) return false;
      d_[i] = di;
      dmax = std::max(dmax, std::abs(di));
    }
    for (int i = 0; i < n_; ++i)
      if (!(std::abs(d_[i]) > 1e-14 * dmax)) return false;
    return true;
  }

  // x = A⁻¹ rhs (x must have the size of rhs).
  void solve(const Vec& rhs, Vec& x) {
    double* y = y_.data();
    for (int k = 0; k < n_; ++k) y[k] = rhs[perm_[k]];
    for (int i = 0; i < n_; ++i) {  // L z = P rhs, row by row
      const double* li = envelope_.data() + offset_[i] - first_[i];
      double s = y[i];
      for (int k = first_[i]; k < i; ++k) s -= li[k] * y[k];
      y[i] = s;
    }
    for (int i = 0; i < n_; ++i) y[i] /= d_[i];
    for (int i = n_ - 1; i >= 0; --i) {  // Lᵀ w = z: column i of Lᵀ is row i of L
      const double* li = envelope_.data() + offset_[i] - first_[i];
      const double yi = y[i];
      for (int k = first_[i]; k < i; ++k) y[k] -= li[k] * yi;
    }
    for (int k = 0; k < n_; ++k) x[perm_[k]] = y[k];
  }

 private:
  static constexpr int kSkip = std::numeric_limits<int>::min();
  int n_ = 0;
  std::vector<int> perm_, inv_, first_, offset_, slot_;
  std::vector<double> envelope_, d_, y_;
};

// Envelopes wider than this go to SimplicialLDLT with AMD: past it the Σ w²/2 of the envelope
// grows faster than AMD's fill (a pile of crossing rods, a dense knot core).
constexpr int kEnvelopeMaxWidth = 64;
// Past this many rows a wide pattern goes to CHOLMOD's supernodal Cholesky (dense BLAS-3 blocks on
// the fronts) rather than SimplicialLDLT (one column at a time): on piles of crossing rods the
// fill grows faster than the rows (the crossings couple the rods like a 2D mesh), and the
// column-by-column update was 65 % of an ipc step at 1000 contacts (benchmarks/README.md,
// "Contacts that scale"). Below it the simplicial factorization costs less than the supernodal
// set-up.
constexpr int kSupernodalMinRows = 2000;

namespace {

using sparse_direct::SerialOpenMp;
using sparse_direct::SupernodalCholesky;

// An unsymmetric J on a wide pattern (implicit friction on a pile of crossing rods): GMRES on J,
// right-preconditioned by the supernodal Cholesky factor of a symmetric S taken from J. The
// friction's unsymmetric part is small beside the mass, elastic and contact terms, so GMRES reaches
// round-off in 4-5 steps, and the factorization is CHOLMOD's supernodal one (dense BLAS-3 fronts)
// instead of UMFPACK's unsymmetric LU, about 60 % of an imc step at 10,000 contacts before (a solve
// there went from 37-38 to 24.5-25 us per contact: benchmarks/README.md, "Contacts that scale").
//
// S is J's symmetric core: J where J(i, j) = J(j, i); elsewhere, of the two mirrored entries, the
// one of smaller magnitude when they have the same sign, and 0 when they do not. Not the symmetric
// part (J + Jᵀ)/2: a sliding contact's friction depends on its normal force (imc: mu dF^fr/dF^c
// dF^c/dx, Tong et al. (2023) Eq. 21), a one-sided coupling c t nᵀ of the slip direction t to the
// normal n whose symmetric half c (t nᵀ + n tᵀ)/2 has an eigenvalue -c/2 and makes (J + Jᵀ)/2
// indefinite once mu times the normal contact stiffness exceeds the tangential one (a woven mat
// under gravity, where every crossing slides). The core leaves such a coupling out, and J = S + C
// with C nilpotent on each contact (t nᵀ with t ⊥ n), which GMRES removes in a few steps. On the
// rod piles it is as good as (J + Jᵀ)/2 (4.6 GMRES steps per solve at 3042 contacts against 4.7);
// on the 30 x 30 woven mat it is positive definite at all 57 solves of 5 steps, where (J + Jᵀ)/2
// failed at the 9th and sent the rest to UMFPACK (4.1 s against 6.1 s).
// When S is not positive definite twice in a row, or GMRES stalls, the caller takes UMFPACK for the
// rest of this pattern (once: for this factorization).
class SymmetricPartGmres {
 public:
  // Forget the pattern (SparseAssembler rebuilt it): the next factorize() analyses it again.
  void reset() { analyzed_ = false, usable_ = true; }
  bool usable() const { return usable_; }
  void giveUp() { usable_ = false; }

  // Assembles S's lower triangle from A and factorizes it; false when S is not positive definite
  // (and not usable for this pattern when that happens twice in a row).
  bool factorize(const SpMat& A) {
    if (!analyzed_) analyze(A);
    if (!usable_) return false;
    std::fill(lower_.begin(), lower_.end(), 0.0);
    std::fill(upper_.begin(), upper_.end(), 0.0);
    const double* a = A.valuePtr();
    for (std::size_t k = 0; k < slot_.size(); ++k) (above_[k] ? upper_ : lower_)[slot_[k]] += a[k];
    double* s = S_.valuePtr();
    for (int p = 0; p < static_cast<int>(S_.nonZeros()); ++p) {
      const double lo = lower_[p], up = upper_[p];
      // The diagonal as it is; an entry whose mirror is a structural zero is left out, as one
      // whose mirror has the opposite sign.
      s[p] = diagonal_[p] ? lo : lo * up > 0 ? (std::abs(lo) < std::abs(up) ? lo : up) : 0.0;
    }
    chol_.factorize(S_);
    A_ = &A;
    if (chol_.info() == Eigen::Success) {
      failures_ = 0;
      return true;
    }
    usable_ = ++failures_ < 2;
    return false;
  }

  // x = A⁻¹ b to a relative residual of 1e-12 (round-off for the Newton step, far inside
  // LinearStep's backward-error test); false when GMRES does not get there.
  bool solve(const Vec& b, Vec& x) {
    x.setZero(b.size());
    const SpMat& A = *A_;
    const auto result = gmres_.solve(
        [&](const double* in, double* out) {
          Eigen::Map<Vec>(out, A.rows()).noalias() = A * Eigen::Map<const Vec>(in, A.cols());
        },
        [&](const double* in, double* out) {
          if (!chol_.solveInto(in, out)) std::fill_n(out, A.rows(), std::numeric_limits<double>::quiet_NaN());
        },
        b, x, kTolerance, kMaxIterations);
    return result.converged && x.allFinite();
  }
  const SpMat& matrix() const { return *A_; }

 private:
  static constexpr double kTolerance = 1e-12;
  // 12-30 steps on the woven mats (benchmarks/make_woven_mat.py; up to 51 seen at 30 x 30): each is
  // a pair of triangular solves with the factor, cheaper than the LU of J a failure falls back on.
  static constexpr int kMaxIterations = 100;

  // S's pattern: lower(A) ∪ upper(A)ᵀ; every stored entry of A goes to the slot of S(i, j) or
  // S(j, i), whichever is in the lower triangle, as its lower or its upper value.
  void analyze(const SpMat& A) {
    const int n = static_cast<int>(A.rows());
    std::vector<Eigen::Triplet<double>> lower;
    lower.reserve(A.nonZeros());
    for (int j = 0; j < n; ++j)
      for (SpMat::InnerIterator it(A, j); it; ++it)
        lower.emplace_back(std::max(int(it.row()), j), std::min(int(it.row()), j), 0.0);
    S_.resize(n, n);
    S_.setFromTriplets(lower.begin(), lower.end());
    S_.makeCompressed();
    slot_.resize(A.nonZeros());
    above_.resize(A.nonZeros());
    diagonal_.assign(S_.nonZeros(), 0);
    for (std::size_t k = 0; k < lower.size(); ++k) {
      const int row = lower[k].row(), col = lower[k].col();
      const int* begin = S_.innerIndexPtr() + S_.outerIndexPtr()[col];
      const int* end = S_.innerIndexPtr() + S_.outerIndexPtr()[col + 1];
      slot_[k] = static_cast<int>(std::lower_bound(begin, end, row) - S_.innerIndexPtr());
      if (row == col) diagonal_[slot_[k]] = 1;
    }
    for (int j = 0, k = 0; j < n; ++j)
      for (SpMat::InnerIterator it(A, j); it; ++it, ++k) above_[k] = it.row() < j;
    lower_.assign(S_.nonZeros(), 0.0);
    upper_.assign(S_.nonZeros(), 0.0);
    failures_ = 0;
    chol_.analyzePattern(S_);
    usable_ = chol_.cholmod().status >= 0;  // no METIS, out of memory: no factor to give
    gmres_.resize(n, kMaxIterations);
    analyzed_ = true;
  }

  SupernodalCholesky chol_;
  SpMat S_;
  std::vector<int> slot_;        // stored entry of A -> slot of S_'s values
  std::vector<char> above_;      // stored entry of A above the diagonal: its slot's upper value
  std::vector<char> diagonal_;   // per slot of S_: on the diagonal
  std::vector<double> lower_, upper_;  // per slot of S_: J(i, j) and J(j, i), i >= j
  int failures_ = 0;             // factorizations in a row whose S was not positive definite
  krylov::Gmres gmres_;
  const SpMat* A_ = nullptr;     // the matrix of the last factorize()
  bool analyzed_ = false, usable_ = true;
};

}  // namespace

struct LinearSolver::Impl {
  Eigen::UmfPackLU<SpMat> umfpack;
  Eigen::SparseLU<SpMat, Eigen::COLAMDOrdering<int>> sparselu;
  Eigen::SimplicialLDLT<SpMat, Eigen::Lower, Eigen::AMDOrdering<int>> ldlt;
  // LLT: positive definite J only (a failed one falls back on `ldlt`, which takes indefinite J).
  SupernodalCholesky supernodal;
  bool supernodal_analyzed = false, supernodal_ok = false;  // for the current pattern / factorization
  BandedLdlt ldlt_banded;
  EnvelopeLdlt ldlt_envelope;
  SymmetricPartGmres symmetric_part;
  LinearSolver::LdltMethod method = LinearSolver::LdltMethod::Simplicial;  // for the current pattern
  bool analyzed[3] = {false, false, false};  // per concrete kind, for the current pattern
};

const std::vector<std::string>& LinearSolver::names() {
  static const std::vector<std::string> n{"auto", "umfpack", "sparselu", "ldlt"};
  return n;
}

LinearSolver::Kind LinearSolver::parse(const std::string& name) {
  if (name == "auto") return Kind::Auto;
  if (name == "umfpack") return Kind::UmfPack;
  if (name == "sparselu") return Kind::SparseLU;
  if (name == "ldlt") return Kind::LDLT;
  throw std::invalid_argument("unknown linear solver '" + name + "'; valid: auto, ldlt, sparselu, umfpack");
}

LinearSolver::LinearSolver(Kind kind) : kind_(kind), active_(kind), impl_(std::make_unique<Impl>()) {
  // No iterative refinement: LU with partial pivoting is backward stable, and LinearStep checks
  // the backward error of every solve (a refinement step was two more triangular solves and a
  // residual per Newton iteration).
  impl_->umfpack.umfpackControl()(UMFPACK_IRSTEP) = 0;
}
LinearSolver::~LinearSolver() = default;

void LinearSolver::analyzePattern(const SpMat& A) {
  // Lazily per concrete solver in factorize(): `auto` may use either on this pattern.
  ++analyses_;
  for (bool& a : impl_->analyzed) a = false;
  impl_->supernodal_analyzed = false;
  impl_->symmetric_part.reset();
  int bandwidth = 0;
  for (int j = 0; j < A.outerSize(); ++j)
    for (SpMat::InnerIterator it(A, j); it; ++it) bandwidth = std::max(bandwidth, std::abs(int(it.row()) - j));
  using M = LdltMethod;
  impl_->method = M::Simplicial;
  if (A.rows() != A.cols()) return;
  if (bandwidth <= kBand) {
    impl_->method = M::Band;
    impl_->ldlt_banded.resize(int(A.rows()));
  } else if (impl_->ldlt_envelope.analyze(A) <= kEnvelopeMaxWidth) {
    impl_->method = M::Envelope;
  } else if (A.rows() >= kSupernodalMinRows) {
    impl_->method = M::Supernodal;
  }
}

LinearSolver::LdltMethod LinearSolver::ldltMethod() const { return impl_->method; }

bool LinearSolver::takesBand(bool symmetric) const {
  return impl_->method == LdltMethod::Band && (kind_ == Kind::LDLT || (kind_ == Kind::Auto && symmetric));
}

bool LinearSolver::factorizeBand(const double* band, int n) {
  static_assert(SparseAssembler::kBandHalf == kBand, "the assembler's band is the factorization's");
  active_ = Kind::LDLT;
  return impl_->ldlt_banded.factorize(band, n);
}

bool isNumericallySymmetric(const SpMat& A) {
  double scale = 0;
  for (int k = 0; k < A.nonZeros(); ++k) scale = std::max(scale, std::abs(A.valuePtr()[k]));
  const double tol = 1e-12 * scale;
  for (int j = 0; j < A.outerSize(); ++j)
    for (SpMat::InnerIterator it(A, j); it; ++it) {
      const int i = static_cast<int>(it.row());
      if (i <= j) continue;
      // Entry (j, i) lives in column i; columns are sorted by row.
      const int* begin = A.innerIndexPtr() + A.outerIndexPtr()[i];
      const int* end = A.innerIndexPtr() + A.outerIndexPtr()[i + 1];
      const int* pos = std::lower_bound(begin, end, j);
      const double mirror = (pos != end && *pos == j) ? A.valuePtr()[pos - A.innerIndexPtr()] : 0.0;
      if (std::abs(it.value() - mirror) > tol) return false;
    }
  return true;
}

bool LinearSolver::factorizeWith(Kind kind, const SpMat& A) {
  const SerialOpenMp serial;
  bool& analyzed = impl_->analyzed[static_cast<int>(kind) - 1];
  switch (kind) {
    case Kind::UmfPack:
      if (!analyzed) {
        // Nested dissection (METIS) on the large patterns of crossing-rod piles, whose AMD fill grows
        // like a 2D mesh's; AMD below, where METIS costs more than it saves.
        impl_->umfpack.umfpackControl()(UMFPACK_ORDERING) =
            A.rows() >= kSupernodalMinRows ? UMFPACK_ORDERING_METIS : UMFPACK_ORDERING_AMD;
        impl_->umfpack.analyzePattern(A), analyzed = true;
      }
      impl_->umfpack.factorize(A);
      return impl_->umfpack.info() == Eigen::Success;
    case Kind::SparseLU:
      if (!analyzed) impl_->sparselu.analyzePattern(A), analyzed = true;
      impl_->sparselu.factorize(A);
      return impl_->sparselu.info() == Eigen::Success;
    case Kind::LDLT: {
      if (impl_->method == LdltMethod::Band) return impl_->ldlt_banded.factorize(A);
      if (impl_->method == LdltMethod::Envelope) return impl_->ldlt_envelope.factorize(A);
      if (impl_->method == LdltMethod::Supernodal && !impl_->supernodal_analyzed) {
        impl_->supernodal.analyzePattern(A);
        impl_->supernodal_analyzed = true;
        // A CHOLMOD without METIS (or out of memory) has no factor to give: simplicial for this
        // pattern (Eigen reports success from analyzePattern whatever CHOLMOD said).
        if (impl_->supernodal.cholmod().status < 0) impl_->method = LdltMethod::Simplicial;
      }
      if (impl_->method == LdltMethod::Supernodal) {
        impl_->supernodal.factorize(A);
        impl_->supernodal_ok = impl_->supernodal.info() == Eigen::Success;
        if (impl_->supernodal_ok) return true;
        // Not positive definite: the simplicial LDLT below takes indefinite matrices.
      }
      if (!analyzed) impl_->ldlt.analyzePattern(A), analyzed = true;
      impl_->ldlt.factorize(A);
      if (impl_->ldlt.info() != Eigen::Success) return false;
      // A zero pivot means a singular matrix even when Eigen reports success.
      const auto d = impl_->ldlt.vectorD();
      const double scale = d.cwiseAbs().maxCoeff();
      for (Eigen::Index i = 0; i < d.size(); ++i)
        if (!(std::abs(d[i]) > 1e-14 * scale)) return false;
      return true;
    }
    case Kind::Auto:
    case Kind::SymmetricPartGmres: break;
  }
  return false;
}

bool LinearSolver::factorize(const SpMat& A) {
  return factorize(A, kind_ == Kind::Auto && isNumericallySymmetric(A));
}

bool LinearSolver::factorize(const SpMat& A, bool symmetric) {
  if (kind_ != Kind::Auto) return factorizeWith(active_ = kind_, A);
  // Symmetric Jacobians (elasticity, damping, frictionless penalty contact): LDLT, which does about
  // half the work of an LU on them (benchmarks/README.md, "solver_newton"); an unsymmetric J on a
  // wide pattern: GMRES on the Cholesky of its symmetric part; anything else, or a failure of
  // these: UMFPACK.
  if (symmetric && factorizeWith(active_ = Kind::LDLT, A)) return true;
  if (!symmetric && impl_->method == LdltMethod::Supernodal && impl_->symmetric_part.usable()) {
    const SerialOpenMp serial;
    if (impl_->symmetric_part.factorize(A)) return active_ = Kind::SymmetricPartGmres, true;
  }
  return factorizeWith(active_ = Kind::UmfPack, A);
}

bool LinearSolver::solve(const Vec& b, Vec& x) {
  const SerialOpenMp serial;
  switch (active_) {
    case Kind::SymmetricPartGmres:
      if (impl_->symmetric_part.solve(b, x)) return true;
      // GMRES stalled (a large unsymmetric part): the LU of J, for the rest of this pattern.
      impl_->symmetric_part.giveUp();
      if (!factorizeWith(active_ = Kind::UmfPack, impl_->symmetric_part.matrix())) return false;
      return solve(b, x);
    case Kind::UmfPack:
      x = impl_->umfpack.solve(b);
      return impl_->umfpack.info() == Eigen::Success && x.allFinite();
    case Kind::SparseLU:
      x = impl_->sparselu.solve(b);
      return impl_->sparselu.info() == Eigen::Success && x.allFinite();
    case Kind::LDLT:
      if (impl_->method == LdltMethod::Band || impl_->method == LdltMethod::Envelope) {
        x.resize(b.size());  // no allocation when the size is right (the Newton loop's case)
        if (impl_->method == LdltMethod::Band)
          impl_->ldlt_banded.solve(b, x);
        else
          impl_->ldlt_envelope.solve(b, x);
        return x.allFinite();
      }
      if (impl_->method == LdltMethod::Supernodal && impl_->supernodal_ok) {
        x.resize(b.size());
        return impl_->supernodal.solveInto(b.data(), x.data()) && x.allFinite();
      }
      x = impl_->ldlt.solve(b);
      return impl_->ldlt.info() == Eigen::Success && x.allFinite();
    case Kind::Auto: break;
  }
  return false;
}

}  // namespace rodsim::newton
