// FCLIB (HDF5) problems through Debian's libfclib: local (/fclib_local: u = W r + q) or global
// (/fclib_global: M v = H r + f, u = H^T v + w). Built only when libfclib is found.
#include "ac_fclib.h"

extern "C" {
#include <fclib.h>
}
#include <hdf5.h>

#include <stdexcept>

namespace rodsim::ac {

namespace {

SpMat toSparse(const fclib_matrix* m, const char* what) {
  if (!m) throw std::runtime_error(std::string("FCLIB problem has no matrix ") + what);
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
