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

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace rodsim::ac {

namespace {

class Tokens {
 public:
  explicit Tokens(const std::string& path) : in_(path), path_(path) {
    if (!in_) throw std::runtime_error("cannot open '" + path + "'");
  }
  double real(const char* what) {
    double x;
    if (!(in_ >> x)) throw std::runtime_error("'" + path_ + "': unexpected end or bad number while reading " + what);
    return x;
  }
  int integer(const char* what) {
    const double x = real(what);
    if (x != static_cast<int>(x)) throw std::runtime_error("'" + path_ + "': expected an integer for " + what);
    return static_cast<int>(x);
  }

 private:
  std::ifstream in_;
  std::string path_;
};

SpMat readMatrix(Tokens& t) {
  const int storage = t.integer("matrix storage type");
  const int rows = t.integer("matrix rows"), cols = t.integer("matrix columns");
  if (rows < 0 || cols < 0) throw std::runtime_error("negative matrix size");
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
    const int nb = t.integer("number of blocks");
    if (nb > 0) {
      const int br = t.integer("block rows"), bc = t.integer("block columns");
      std::vector<int> rs(br), cs(bc);
      for (int& x : rs) x = t.integer("row block sizes");
      for (int& x : cs) x = t.integer("column block sizes");
      const int f1 = t.integer("filled1"), f2 = t.integer("filled2");
      std::vector<int> i1(f1), i2(f2);
      for (int& x : i1) x = t.integer("block row pointers");
      for (int& x : i2) x = t.integer("block column indexes");
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
  p.contacts = t.integer("number of contacts");
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
