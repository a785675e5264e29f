// Sparse Jacobian assembly with a cached pattern, and the selectable sparse direct solver.
//
// SparseAssembler turns the triplets of a StiffnessSink (global DOF indexing) plus a scaled
// diagonal (the lumped mass over dt^2) into a column-major Eigen::SparseMatrix over the free DOFs.
// The first assembly (or any assembly whose (row, col) triplet sequence differs from the previous
// one) rebuilds the pattern and stores, for every triplet, the slot of valuePtr() it lands in; later
// assemblies with the same sequence only scatter values through that map (no allocation) and report
// that the linear solver can keep its symbolic analysis.
#pragma once

#include <rodsim/linalg.h>

#include <Eigen/SparseCore>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace rodsim::newton {

using SpMat = Eigen::SparseMatrix<double, Eigen::ColMajor, int>;

class SparseAssembler {
 public:
  // How fixed (prescribed) DOFs appear in the matrix.
  enum class Layout {
    Free,            // rows/cols of fixed DOFs are dropped: matrix size = number of free DOFs
    GlobalIdentity,  // global size; fixed rows/cols are removed and replaced by a unit diagonal
  };

  // Sets the DOF map from the world's fixed mask. Returns true when the map changed (the next
  // assemble() then rebuilds the pattern).
  bool setFixed(const std::vector<char>& fixed, Layout layout);

  // A = diag_scale * diag(diag) + sum of the triplets, over the mapped DOFs. `diag` is global
  // (size = number of global DOFs) or nullptr for no diagonal term; the diagonal is always part of
  // the pattern (the Levenberg shift needs it). Returns true when the pattern was rebuilt (the
  // linear solver must redo analyzePattern).
  bool assemble(const std::vector<Eigen::Triplet<double>>& triplets, const Vec* diag,
                double diag_scale);

  // Adds mu to every diagonal entry of a mapped DOF that is not a fixed identity row.
  void shiftDiagonal(double mu);
  // isNumericallySymmetric(matrix()) in one pass over the values, through the transposed slot of
  // every entry stored when the pattern was built (no search, no allocation); it also checks
  // entries above the diagonal whose mirror is not stored, which that function does not.
  bool isSymmetric() const;
  // Mean absolute value of the (non-identity) diagonal, for scaling the Levenberg shift.
  double meanAbsDiagonal() const;
  // |A|_F from the stored values in one vectorized pass (SparseMatrix::norm() iterates by column).
  double frobeniusNorm() const {
    return banded_ ? Eigen::Map<const Vec>(band_.data(), Eigen::Index(band_.size())).norm()
                   : Eigen::Map<const Vec>(A_.valuePtr(), A_.nonZeros()).norm();
  }

  // Band storage. When the pattern (Free layout) has a half-bandwidth of at most kBandHalf (a DER
  // rod; rods that do not touch), assemble() scatters the triplets straight into a dense band
  // instead of the sparse matrix: the band LDLT takes its columns as they are, and the product,
  // the symmetry test, the norms and the Levenberg shift read it in contiguous passes. matrix()
  // copies the band into the sparse matrix only when someone asks for it (an LU, a test).
  static constexpr int kBandHalf = 10, kBandStride = 2 * kBandHalf + 1;
  bool banded() const { return banded_; }
  // Entry (r, c) of A at band()[kBandStride c + kBandHalf + r - c] (zero outside the pattern).
  const double* band() const { return band_.data(); }
  // y = A x (x, y of size size(); y is resized), in the order of A's columns and rows.
  void multiply(const Vec& x, Vec& y) const;

  const SpMat& matrix() const {
    if (stale_) copyBandToMatrix();
    return A_;
  }
  int size() const { return static_cast<int>(global_of_.size()); }
  // Matrix index -> global DOF, and global DOF -> matrix index (-1 when dropped).
  const std::vector<int>& globalOf() const { return global_of_; }
  const std::vector<int>& indexOf() const { return index_of_; }
  Layout layout() const { return layout_; }
  // Number of pattern rebuilds so far (for tests and statistics).
  int rebuilds() const { return rebuilds_; }

 private:
  void rebuild(const std::vector<Eigen::Triplet<double>>& triplets);
  int slotOf(int row, int col) const;
  void copyBandToMatrix() const;

  Layout layout_ = Layout::Free;
  std::vector<char> fixed_;       // copy of the mask the map was built from
  std::vector<int> index_of_;     // global -> matrix index or -1
  std::vector<int> global_of_;    // matrix index -> global
  // (row, col) of a triplet as one integer: the sequence check costs one comparison per triplet.
  static std::uint64_t key(int row, int col) {
    return (std::uint64_t(std::uint32_t(row)) << 32) | std::uint32_t(col);
  }
  std::vector<std::uint64_t> prev_keys_;  // triplet sequence of the last rebuild
  std::vector<int> slot_;         // triplet -> valuePtr slot, -1 when dropped
  std::vector<int> diag_slot_;    // matrix index -> valuePtr slot of the diagonal
  std::vector<std::pair<int, int>> mirror_;  // (slot of (i, j), slot of (j, i) or -1): see rebuild()
  bool dirty_ = true;
  int rebuilds_ = 0;
  // In band mode the values live in band_ (slot_ and diag_slot_ then index band_) and A_ holds the
  // pattern, its values copied from band_ by matrix() when stale_; band_of_slot_: A_'s value slot ->
  // band_ index.
  bool banded_ = false;
  std::vector<double> band_;
  std::vector<int> band_of_slot_;
  mutable bool stale_ = false;
  mutable SpMat A_;
};

// Sparse direct solver chosen by name: "auto" (default: LDLT when the matrix is numerically
// symmetric; an unsymmetric one on a wide pattern of 2000 rows or more by GMRES preconditioned
// with the Cholesky of its symmetric part; UMFPACK otherwise or when those fail), "umfpack" (UmfPackLU;
// unsymmetric-safe), "sparselu" (Eigen SparseLU with COLAMD), "ldlt". LDLT is a dense band
// factorization in the natural order when analyzePattern finds a half-bandwidth of at most 10
// (DER rods without contacts between them), an envelope factorization in reverse Cuthill-McKee
// order when that envelope is at most 64 wide (rods in contact side by side), SimplicialLDLT with
// AMD otherwise, or CHOLMOD's supernodal Cholesky from 2000 rows (piles of crossing rods).
class LinearSolver {
 public:
  // SymmetricPartGmres: only chosen by `auto` (GMRES on J preconditioned by the Cholesky factor
  // of (J + Jᵀ)/2, for unsymmetric J on wide patterns of 2000 rows or more).
  enum class Kind { Auto, UmfPack, SparseLU, LDLT, SymmetricPartGmres };
  // What LDLT uses on the analysed pattern. Supernodal: CHOLMOD's supernodal LLT for wide patterns
  // of 2000 rows or more, SimplicialLDLT when J is not positive definite.
  enum class LdltMethod { Band, Envelope, Simplicial, Supernodal };
  static Kind parse(const std::string& name);  // throws std::invalid_argument
  static const std::vector<std::string>& names();

  explicit LinearSolver(Kind kind = Kind::Auto);
  ~LinearSolver();
  LinearSolver(const LinearSolver&) = delete;
  LinearSolver& operator=(const LinearSolver&) = delete;

  Kind kind() const { return kind_; }
  // The concrete solver used by the last factorization (differs from kind() for Auto).
  Kind active() const { return active_; }
  // Symbolic analysis; call when the pattern changed (SparseAssembler::assemble returned true).
  void analyzePattern(const SpMat& A);
  // Numeric factorization; false when the matrix is (numerically) singular.
  bool factorize(const SpMat& A);
  // The same, with the symmetry of A already known (SparseAssembler::isSymmetric): `auto` then
  // skips its own check.
  bool factorize(const SpMat& A, bool symmetric);
  // Whether factorizeBand() serves a matrix of the analysed pattern with this symmetry: the LDLT
  // the kind chooses for it is the dense band one.
  bool takesBand(bool symmetric) const;
  // The band LDLT of the n x n matrix in SparseAssembler::band() storage (its pattern analysed).
  bool factorizeBand(const double* band, int n);
  // x = A^{-1} b with the last factorization; false when the solver reports a failure.
  bool solve(const Vec& b, Vec& x);
  int analyses() const { return analyses_; }
  LdltMethod ldltMethod() const;

 private:
  bool factorizeWith(Kind kind, const SpMat& A);
  struct Impl;
  Kind kind_, active_;
  std::unique_ptr<Impl> impl_;
  int analyses_ = 0;
};

// True when A equals its transpose to 1e-12 of its largest entry (no allocation).
bool isNumericallySymmetric(const SpMat& A);

}  // namespace rodsim::newton
