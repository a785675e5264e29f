#include "sparse_assembly.h"

#include <Eigen/OrderingMethods>
#include <Eigen/SparseCholesky>
#include <Eigen/SparseLU>
#include <Eigen/UmfPackSupport>

#include <algorithm>
#include <cmath>
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
  prev_rows_.resize(triplets.size());
  prev_cols_.resize(triplets.size());
  for (std::size_t k = 0; k < triplets.size(); ++k) {
    const int r = mapped(triplets[k].row()), c = mapped(triplets[k].col());
    slot_[k] = (r >= 0 && c >= 0) ? slotOf(r, c) : -1;
    prev_rows_[k] = triplets[k].row();
    prev_cols_[k] = triplets[k].col();
  }
  diag_slot_.resize(n);
  for (int i = 0; i < n; ++i) diag_slot_[i] = slotOf(i, i);
  dirty_ = false;
  ++rebuilds_;
}

bool SparseAssembler::assemble(const std::vector<Eigen::Triplet<double>>& triplets,
                               const Vec* diag, double diag_scale) {
  bool same = !dirty_ && triplets.size() == prev_rows_.size();
  for (std::size_t k = 0; same && k < triplets.size(); ++k)
    same = triplets[k].row() == prev_rows_[k] && triplets[k].col() == prev_cols_[k];
  if (!same) rebuild(triplets);

  double* values = A_.valuePtr();
  std::fill(values, values + A_.nonZeros(), 0.0);
  for (std::size_t k = 0; k < triplets.size(); ++k)
    if (slot_[k] >= 0) values[slot_[k]] += triplets[k].value();
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

void SparseAssembler::shiftDiagonal(double mu) {
  const bool identity = layout_ == Layout::GlobalIdentity;
  double* values = A_.valuePtr();
  for (int i = 0; i < size(); ++i)
    if (!(identity && fixed_[global_of_[i]])) values[diag_slot_[i]] += mu;
}

double SparseAssembler::meanAbsDiagonal() const {
  const bool identity = layout_ == Layout::GlobalIdentity;
  const double* values = A_.valuePtr();
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

struct LinearSolver::Impl {
  Eigen::UmfPackLU<SpMat> umfpack;
  Eigen::SparseLU<SpMat, Eigen::COLAMDOrdering<int>> sparselu;
  Eigen::SimplicialLDLT<SpMat, Eigen::Lower, Eigen::AMDOrdering<int>> ldlt;
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

LinearSolver::LinearSolver(Kind kind) : kind_(kind), active_(kind), impl_(std::make_unique<Impl>()) {}
LinearSolver::~LinearSolver() = default;

void LinearSolver::analyzePattern(const SpMat&) {
  // Lazily per concrete solver in factorize(): `auto` may use either on this pattern.
  ++analyses_;
  for (bool& a : impl_->analyzed) a = false;
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
  bool& analyzed = impl_->analyzed[static_cast<int>(kind) - 1];
  switch (kind) {
    case Kind::UmfPack:
      if (!analyzed) impl_->umfpack.analyzePattern(A), analyzed = true;
      impl_->umfpack.factorize(A);
      return impl_->umfpack.info() == Eigen::Success;
    case Kind::SparseLU:
      if (!analyzed) impl_->sparselu.analyzePattern(A), analyzed = true;
      impl_->sparselu.factorize(A);
      return impl_->sparselu.info() == Eigen::Success;
    case Kind::LDLT: {
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
    case Kind::Auto: break;
  }
  return false;
}

bool LinearSolver::factorize(const SpMat& A) {
  if (kind_ != Kind::Auto) return factorizeWith(active_ = kind_, A);
  // Symmetric Jacobians (elasticity, damping, frictionless penalty contact): LDLT is about 1.5x
  // faster than LU on rods (docs/architecture.md); anything else, or a failed LDLT: UMFPACK.
  if (isNumericallySymmetric(A) && factorizeWith(active_ = Kind::LDLT, A)) return true;
  return factorizeWith(active_ = Kind::UmfPack, A);
}

bool LinearSolver::solve(const Vec& b, Vec& x) {
  switch (active_) {
    case Kind::UmfPack:
      x = impl_->umfpack.solve(b);
      return impl_->umfpack.info() == Eigen::Success && x.allFinite();
    case Kind::SparseLU:
      x = impl_->sparselu.solve(b);
      return impl_->sparselu.info() == Eigen::Success && x.allFinite();
    case Kind::LDLT:
      x = impl_->ldlt.solve(b);
      return impl_->ldlt.info() == Eigen::Success && x.allFinite();
    case Kind::Auto: break;
  }
  return false;
}

}  // namespace rodsim::newton
