// FCLIB (HDF5) problems through Debian's libfclib: local (/fclib_local: u = W r + q) or global
// (/fclib_global: M v = H r + f, u = H^T v + w). Built only when libfclib is found.
#include "ac_fclib.h"

extern "C" {
#include <fclib.h>
}
#include <hdf5.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace rodsim::ac {

namespace {

// The file's own indexes are checked before any is used (a damaged or forged file would otherwise
// read and write out of bounds): pointers nondecreasing within nzmax, indexes within the matrix.
void checkMatrix(const fclib_matrix* m, const char* what) {
  auto bad = [&](const std::string& why) {
    return std::runtime_error(std::string("FCLIB matrix ") + what + ": " + why);
  };
  if (m->m < 0 || m->n < 0 || m->nzmax < 0) throw bad("negative size");
  if (m->nz == -2 || m->nz == -1) {
    const int outer = m->nz == -2 ? m->m : m->n, inner = m->nz == -2 ? m->n : m->m;
    if (!m->p || (m->nzmax > 0 && (!m->i || !m->x))) throw bad("missing arrays");
    if (m->p[0] < 0) throw bad("negative pointer");
    for (int k = 0; k < outer; ++k)
      if (m->p[k + 1] < m->p[k] || m->p[k + 1] > m->nzmax) throw bad("pointers decrease or pass nzmax");
    for (int k = 0; k < m->p[outer]; ++k)
      if (m->i[k] < 0 || m->i[k] >= inner) throw bad("an index outside the matrix");
  } else {
    if (m->nz < 0 || m->nz > m->nzmax || (m->nz > 0 && (!m->p || !m->i || !m->x))) throw bad("bad triplet count");
    for (int k = 0; k < m->nz; ++k)
      if (m->i[k] < 0 || m->i[k] >= m->m || m->p[k] < 0 || m->p[k] >= m->n) throw bad("an index outside the matrix");
  }
}

SpMat toSparse(const fclib_matrix* m, const char* what) {
  if (!m) throw std::runtime_error(std::string("FCLIB problem has no matrix ") + what);
  checkMatrix(m, what);
  std::vector<Eigen::Triplet<double>> t;
  if (m->nz == -2) {  // CSR: p row pointers, i column indexes
    for (int r = 0; r < m->m; ++r)
      for (int k = m->p[r]; k < m->p[r + 1]; ++k) t.emplace_back(r, m->i[k], m->x[k]);
  } else if (m->nz == -1) {  // CSC: p column pointers, i row indexes
    for (int c = 0; c < m->n; ++c)
      for (int k = m->p[c]; k < m->p[c + 1]; ++k) t.emplace_back(m->i[k], c, m->x[k]);
  } else {  // triplets: i rows, p columns
    for (int k = 0; k < m->nz; ++k) t.emplace_back(m->i[k], m->p[k], m->x[k]);
  }
  SpMat s(m->m, m->n);
  s.setFromTriplets(t.begin(), t.end());
  s.makeCompressed();
  return s;
}

bool hasGroup(const std::string& path, const char* group) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // no HDF5 error stack printing
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) throw std::runtime_error("cannot open '" + path + "' as an HDF5 file");
  const bool yes = H5Lexists(f, group, H5P_DEFAULT) > 0;
  H5Fclose(f);
  return yes;
}

}  // namespace

bool isHdf5(const std::string& path) { return H5Fis_hdf5(path.c_str()) > 0; }

Problem readFclib(const std::string& path, Vec* guess_r) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw std::runtime_error("'" + path + "' is not a regular file");
  if (std::filesystem::file_size(path, ec) > (std::uintmax_t(1) << 30))
    throw std::runtime_error("'" + path + "' is larger than 1 GiB, more than a problem file may be");
  Problem p;
  if (hasGroup(path, "/fclib_local")) {
    fclib_local* l = fclib_read_local(path.c_str());
    if (!l) throw std::runtime_error("'" + path + "': libfclib could not read the local problem");
    p.dim = l->spacedim;
    p.W = toSparse(l->W, "W");
    p.contacts = static_cast<int>(p.W.rows()) / p.dim;
    p.q = Eigen::Map<const Vec>(l->q, p.W.rows());
    p.mu = Eigen::Map<const Vec>(l->mu, p.contacts);
    fclib_delete_local(l);
    if (p.dim == 2) embed2D(p);
  } else if (hasGroup(path, "/fclib_global")) {
    fclib_global* g = fclib_read_global(path.c_str());
    if (!g) throw std::runtime_error("'" + path + "': libfclib could not read the global problem");
    p.global = true;
    p.dim = g->spacedim;
    if (p.dim != 3) throw std::runtime_error("'" + path + "': only 3D global problems are supported");
    p.M = toSparse(g->M, "M");
    p.H = toSparse(g->H, "H");
    p.contacts = static_cast<int>(p.H.cols()) / 3;
    p.f = Eigen::Map<const Vec>(g->f, p.M.rows());
    p.w = Eigen::Map<const Vec>(g->w, p.H.cols());
    p.mu = Eigen::Map<const Vec>(g->mu, p.contacts);
    fclib_delete_global(g);
  } else {
    throw std::runtime_error("'" + path + "' holds neither /fclib_local nor /fclib_global");
  }
  if (guess_r && hasGroup(path, "/guesses")) {
    int count = 0;
    fclib_solution* s = fclib_read_guesses(path.c_str(), &count);
    if (s && count > 0 && s[0].r) *guess_r = Eigen::Map<const Vec>(s[0].r, p.dim * p.contacts);
    if (s) fclib_delete_solutions(s, count);
  }
  return p;
}

}  // namespace rodsim::ac
