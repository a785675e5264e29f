// Readers for friction-contact problems from outside: the Siconos numerics ASCII format (.dat), and
// the reduction of a global problem to the local one. The HDF5 (FCLIB) reader is in ac_fclib.cpp.
//
// .dat layout (the format Siconos' FrictionContactProblem / GlobalFrictionContactProblem print):
//   local:  dim, n, <matrix W>, q (dim n values), mu (n values)
//   global: dim, n, <matrix M>, <matrix H>, f (ndof values), w (dim n values), mu (n values)
//           with M v = H r + f and u = H^T v + w.
//   <matrix>: storage (0 dense, 1 sparse-block), rows, cols, then
//     dense:        rows cols, then rows*cols values column-major;
//     sparse block: nbblocks [if 0: nothing more], block rows, block cols, cumulative row sizes,
//                   cumulative column sizes, filled1, filled2, row pointers (filled1), block column
//                   indexes (filled2), then per block (row by row): its number and its values
//                   column-major.
#include "ac_solver.h"

#include <Eigen/UmfPackSupport>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace rodsim::ac {

namespace {

// A problem file of at most 1 GiB, a regular file (/dev/zero or a FIFO never ends); every count it
// declares (sizes, numbers of values) is bounded by its length, since each value takes at least two
// bytes, so nothing is allocated beyond what the file can hold.
constexpr std::uintmax_t kMaxProblemBytes = std::uintmax_t(1) << 30;

class Tokens {
 public:
  explicit Tokens(const std::string& path) : path_(path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) throw std::runtime_error("'" + path + "' is not a regular file");
    bytes_ = std::filesystem::file_size(path, ec);
    if (ec || bytes_ > kMaxProblemBytes)
      throw std::runtime_error("'" + path + "' is larger than 1 GiB, more than a problem file may be");
    in_.open(path);
    if (!in_) throw std::runtime_error("cannot open '" + path + "'");
  }
  double real(const char* what) {
    double x;
    if (!(in_ >> x)) throw std::runtime_error("'" + path_ + "': unexpected end or bad number while reading " + what);
    return x;
  }
  int integer(const char* what) {
    const double x = real(what);
    if (!(std::abs(x) < 2e9) || x != static_cast<int>(x))
      throw std::runtime_error("'" + path_ + "': expected an integer for " + what);
    return static_cast<int>(x);
  }
  // A number of entries, in [0, file length / 2].
  int count(const char* what) {
    const int x = integer(what);
    if (x < 0 || static_cast<std::uintmax_t>(x) > bytes_ / 2)
      throw std::runtime_error("'" + path_ + "': " + what + " " + std::to_string(x) + " is more than the file can hold");
    return x;
  }
  // An index or offset in [lo, hi].
  int index(const char* what, int lo, int hi) {
    const int x = integer(what);
    if (x < lo || x > hi)
      throw std::runtime_error("'" + path_ + "': " + what + " " + std::to_string(x) + " is outside [" +
                               std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return x;
  }

 private:
  std::ifstream in_;
  std::string path_;
  std::uintmax_t bytes_ = 0;
};

SpMat readMatrix(Tokens& t) {
  const int storage = t.integer("matrix storage type");
  const int rows = t.count("matrix rows"), cols = t.count("matrix columns");
  std::vector<Eigen::Triplet<double>> trip;
  if (storage == 0) {
    t.integer("dense rows");
    t.integer("dense columns");
    for (int j = 0; j < cols; ++j)
      for (int i = 0; i < rows; ++i) {
        const double v = t.real("dense matrix value");
        if (v != 0) trip.emplace_back(i, j, v);
      }
  } else if (storage == 1) {
    const int nb = t.count("number of blocks");
    if (nb > 0) {
      const int br = t.count("block rows"), bc = t.count("block columns");
      // cumulative sizes: nondecreasing, within the matrix
      std::vector<int> rs(br), cs(bc);
      for (int k = 0; k < br; ++k) rs[k] = t.index("row block sizes", k ? rs[k - 1] : 0, rows);
      for (int k = 0; k < bc; ++k) cs[k] = t.index("column block sizes", k ? cs[k - 1] : 0, cols);
      const int f1 = t.count("filled1"), f2 = t.count("filled2");
      if (f1 > br + 1) throw std::runtime_error("filled1 exceeds the block rows + 1");
      std::vector<int> i1(f1), i2(f2);
      for (int k = 0; k < f1; ++k) i1[k] = t.index("block row pointers", k ? i1[k - 1] : 0, f2);
      for (int& x : i2) x = t.index("block column indexes", 0, bc - 1);
      for (int rb = 0; rb + 1 < f1; ++rb)
        for (int b = i1[rb]; b < i1[rb + 1]; ++b) {
          const int cb = i2[b];
          const int r0 = rb ? rs[rb - 1] : 0, c0 = cb ? cs[cb - 1] : 0;
          const int nr = rs[rb] - r0, nc = cs[cb] - c0;
          t.integer("block number");
          for (int j = 0; j < nc; ++j)
            for (int i = 0; i < nr; ++i) {
              const double v = t.real("block value");
              if (v != 0) trip.emplace_back(r0 + i, c0 + j, v);
            }
        }
    }
  } else {
    throw std::runtime_error("matrix storage type " + std::to_string(storage) +
                             " is not supported (0 dense and 1 sparse-block are)");
  }
  SpMat m(rows, cols);
  m.setFromTriplets(trip.begin(), trip.end());
  m.makeCompressed();
  return m;
}

}  // namespace

Problem readSiconosDat(const std::string& path, bool global) {
  Tokens t(path);
  Problem p;
  p.global = global;
  p.dim = t.integer("dimension");
  if (p.dim != 2 && p.dim != 3) throw std::runtime_error("'" + path + "': dimension must be 2 or 3");
  p.contacts = t.count("number of contacts");
  const int m = p.dim * p.contacts;
  if (!global) {
    p.W = readMatrix(t);
    if (p.W.rows() != m || p.W.cols() != m) throw std::runtime_error("'" + path + "': W is not dim n x dim n");
    p.q.resize(m);
    for (int i = 0; i < m; ++i) p.q[i] = t.real("q");
  } else {
    p.M = readMatrix(t);
    p.H = readMatrix(t);
    if (p.M.rows() != p.M.cols() || p.H.rows() != p.M.rows() || p.H.cols() != m)
      throw std::runtime_error("'" + path + "': M must be ndof x ndof and H ndof x dim n");
    p.f.resize(p.M.rows());
    for (Eigen::Index i = 0; i < p.f.size(); ++i) p.f[i] = t.real("f");
    p.w.resize(m);
    for (int i = 0; i < m; ++i) p.w[i] = t.real("w");
  }
  p.mu.resize(p.contacts);
  for (int i = 0; i < p.contacts; ++i) p.mu[i] = t.real("mu");
  if (p.dim == 2) {
    if (global) throw std::runtime_error("'" + path + "': 2D global problems are not supported");
    embed2D(p);
  }
  return p;
}

void embed2D(Problem& p) {
  if (p.dim != 2) return;
  const int n = p.contacts;
  auto map = [](int i) { return 3 * (i / 2) + i % 2; };
  std::vector<Eigen::Triplet<double>> t;
  for (int c = 0; c < p.W.outerSize(); ++c)
    for (SpMat::InnerIterator it(p.W, c); it; ++it) t.emplace_back(map(int(it.row())), map(c), it.value());
  for (int i = 0; i < n; ++i) t.emplace_back(3 * i + 2, 3 * i + 2, 1.0);
  SpMat W(3 * n, 3 * n);
  W.setFromTriplets(t.begin(), t.end());
  Vec q = Vec::Zero(3 * n);
  for (int i = 0; i < 2 * n; ++i) q[map(i)] = p.q[i];
  p.W = std::move(W);
  p.q = std::move(q);
  p.dim = 3;
}

void reduceGlobal(Problem& p) {
  if (!p.global) return;
  const int m = 3 * p.contacts;
  Eigen::UmfPackLU<SpMat> lu;
  SpMat M = p.M;
  M.makeCompressed();
  lu.compute(M);
  if (lu.info() != Eigen::Success) throw std::runtime_error("global problem: M is singular");
  // X = M^-1 H column by column; W = H^T X (exact zeros kept out), q = H^T M^-1 f + w.
  Eigen::MatrixXd X(M.rows(), m);
  Vec h(M.rows());
  for (int j = 0; j < m; ++j) {
    h = Vec(p.H.col(j));
    X.col(j) = lu.solve(h);
  }
  const Eigen::MatrixXd Wd = Eigen::MatrixXd(p.H.transpose() * X);
  std::vector<Eigen::Triplet<double>> t;
  for (int j = 0; j < m; ++j)
    for (int i = 0; i < m; ++i)
      if (Wd(i, j) != 0) t.emplace_back(i, j, Wd(i, j));
  p.W.resize(m, m);
  p.W.setFromTriplets(t.begin(), t.end());
  p.W.makeCompressed();
  const Vec Mf = lu.solve(p.f);
  p.q = p.H.transpose() * Mf + p.w;
}

}  // namespace rodsim::ac
