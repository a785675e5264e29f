// The Delassus operator W of each contact group (Bertails-Descoubes et al. 2011, Eq. 8: u = W r + q),
// for the implicit step and the velocity-level step: its entries per group in the group's local contact indexing
// (addDelassusBlock, group_w_), or for an unreduced group its factors A and G with diag(W).
#include "ac_contact.h"

#include <algorithm>
#include <array>
#include <vector>

namespace rodsim::ac {

// The implicit step: X_c = A_c^-1 H_c^T per component and W = H A^-1 H^T / dt^2 per group
// (README.md, "From the implicit solver's linearized system to u = W r + q"); unreduced groups need
// neither.
void AlartCurnierContact::assembleDelassus(double dt) {
  // X_c = A_c^-1 H_c^T per component, 3 columns per contact touching it (fixed DOFs carry no
  // impulse: their entries of H are dropped).
  for (auto& cpp : comps_) {
    Component& cp = *cpp;
    if (cp.contacts.empty() || groupUnreduced(cp)) continue;
    const int kc = static_cast<int>(cp.contacts.size());
    rhs_block_.setZero(static_cast<Eigen::Index>(cp.dofs.size()), 3 * kc);
    const int me = static_cast<int>(&cpp - comps_.data());
    for (int a = 0; a < kc; ++a) {
      forEachHEntry(points_[cp.contacts[a]], [&](int comp, int local, const Vec3& h) {
        if (comp == me) rhs_block_.block<1, 3>(local, 3 * a) += h.transpose();
      });
    }
    if (cp.isDense())
      cp.X = cp.dlu.solve(rhs_block_);
    else
      cp.X = cp.lu.solve(rhs_block_);
  }
  // W = H A^-1 H^T / dt^2, block (i, j) summed over the components i and j share (zero, and not
  // stored, between contacts on independent subsystems).
  const double inv_dt2 = 1.0 / (dt * dt);
  clearDelassus();
  Eigen::Matrix<double, 3, Eigen::Dynamic> rows;
  for (auto& cpp : comps_) {
    Component& cp = *cpp;
    if (cp.contacts.empty() || groupUnreduced(cp)) continue;
    const int kc = static_cast<int>(cp.contacts.size());
    const int me = static_cast<int>(&cpp - comps_.data());
    for (int a = 0; a < kc; ++a) {
      const int i = cp.contacts[a];
      const ContactPoint& p = points_[i];
      rows.setZero(3, 3 * kc);  // (H_c X_c) rows of contact i
      forEachHEntry(p, [&](int comp, int local, const Vec3& h) {
        if (comp == me) rows += h * cp.X.row(local);
      });
      for (int bb = 0; bb < kc; ++bb) addDelassusBlock(i, cp.contacts[bb], rows.block<3, 3>(0, 3 * bb), inv_dt2);
    }
  }
}

// The velocity-level step (README.md, "Explicit solvers: the velocity-level step"): W = H M^-1 H^T,
// block (a, b) += w_a w_b F_a diag(M^-1 of the node) F_b^T for every node the two contacts share
// (fixed DOFs: M^-1 = 0); no factorization, and W couples only contacts that share a node.
void AlartCurnierContact::assembleLumpedDelassus(const Vec& mass, const std::vector<char>& fixed) {
  auto minv = [&](int d) { return fixed[d] ? 0.0 : 1.0 / mass[d]; };
  // Node incidences (x DOF, contact, node slot), sorted by DOF: the contacts on a node are a run.
  const int n = static_cast<int>(points_.size());
  node_contacts_.clear();
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < points_[i].nodes; ++j) node_contacts_.push_back({points_[i].dof[j], i, j});
  std::sort(node_contacts_.begin(), node_contacts_.end());
  clearDelassus();
  for (std::size_t k0 = 0; k0 < node_contacts_.size();) {
    std::size_t k1 = k0;
    while (k1 < node_contacts_.size() && node_contacts_[k1][0] == node_contacts_[k0][0]) ++k1;
    const int d = node_contacts_[k0][0];
    const Vec3 mi(minv(d), minv(d + 1), minv(d + 2));
    if (mi.squaredNorm() > 0)
      for (std::size_t a = k0; a < k1; ++a)
        for (std::size_t b = k0; b < k1; ++b) {
          const int ia = node_contacts_[a][1], ib = node_contacts_[b][1];
          const int sa = node_contacts_[a][2], sb = node_contacts_[b][2];  // the node's slot in each
          const ContactPoint &pa = points_[ia], &pb = points_[ib];
          const Mat3 w = pa.weight[sa] * pb.weight[sb] * pa.frame * mi.asDiagonal() * pb.frame.transpose();
          addDelassusBlock(ia, ib, w, 1.0);
        }
    k0 = k1;
  }
}

// Unreduced Newton systems (Bertails-Descoubes et al. 2011, Eq. 7) for large groups: A_g = the group's
// components side by side, G_g = H / dt on their free DOFs, so that W_g = G_g A_g^-1 G_g^T.
void AlartCurnierContact::setUnreducedProblem(const Group& g, Solver& solver, const Vec& q, const Vec& mu, double dt) {
  const int ng = static_cast<int>(g.contacts.size());
  SpMat Ag, Gg;
  Vec wdiag;
  std::vector<int> comps, offset(comps_.size(), -1);
  for (int i : g.contacts) {
    const ContactPoint& p = points_[i];
    for (int j = 0; j < p.nodes; ++j)
      for (int c = 0; c < 3; ++c)
        if (const int cp = comp_of_[p.dof[j] + c]; cp >= 0 && offset[cp] < 0) {
          offset[cp] = 0;
          comps.push_back(cp);
        }
  }
  std::sort(comps.begin(), comps.end());
  int m = 0;
  std::vector<Eigen::Triplet<double>> ta, tg;
  for (int cp : comps) {
    offset[cp] = m;
    const Eigen::SparseMatrix<double>& Ac = comps_[cp]->A;
    for (int c = 0; c < Ac.outerSize(); ++c)
      for (Eigen::SparseMatrix<double>::InnerIterator it(Ac, c); it; ++it)
        ta.emplace_back(m + int(it.row()), m + c, it.value());
    m += static_cast<int>(comps_[cp]->dofs.size());
  }
  for (int a = 0; a < ng; ++a)
    forEachHEntry(points_[g.contacts[a]], [&](int cp, int local, const Vec3& h) {
      for (int k = 0; k < 3; ++k) tg.emplace_back(3 * a + k, offset[cp] + local, h[k] / dt);
    });
  Ag.resize(m, m);
  Ag.setFromTriplets(ta.begin(), ta.end());
  Gg.resize(3 * ng, m);
  Gg.setFromTriplets(tg.begin(), tg.end());
  // diag(W), W_ii = G_i A^-1 G_i^T, needs A^-1 only on the DOFs of contact i's nodes, which lie
  // within a rod's band: from the entries of A_c^-1 inside A_c's band (O(n b^2) per rod, b = 11
  // for DER; an estimate with diag(A) made rho poor enough to double the Newton iterations, ~45
  // ms each at 2280 contacts). Where a contact's entries leave the band (other rod models), from
  // a small component's dense inverse (2 n^3 flops) or one sparse solve per direction.
  for (int cp : comps) {
    Component& c = *comps_[cp];
    c.band_inverse_ok = c.band_inverse.compute(c.A, kMaxBandInverse);
    c.inverse.resize(0, 0);  // the dense inverse only where a contact's entries leave the band
  }
  wdiag.setZero(3 * ng);
  for (int a = 0; a < ng; ++a) {
    std::array<int, 12> comp{}, dof{};
    std::array<Vec3, 12> h{};
    int ne = 0;
    forEachHEntry(points_[g.contacts[a]], [&](int cp, int local, const Vec3& hc) {
      comp[ne] = cp;
      dof[ne] = local;
      h[ne++] = hc / dt;
    });
    // Per component, one way for all of the contact's entries on it: the band when every pair of
    // them lies inside it (otherwise a sparse solve that covers all of them would count again the
    // entries that took the band).
    std::array<bool, 12> banded{};
    for (int x = 0; x < ne; ++x) {
      const Component& cx = *comps_[comp[x]];
      banded[x] = cx.band_inverse_ok;
      for (int y = 0; y < ne && banded[x]; ++y)
        for (int z = 0; z < ne && banded[x]; ++z)
          if (comp[y] == comp[x] && comp[z] == comp[x] && !cx.band_inverse.inBand(dof[y], dof[z])) banded[x] = false;
    }
    for (int k = 0; k < 3; ++k) {
      double w = 0;
      for (int x = 0; x < ne; ++x) {
        Component& cx = *comps_[comp[x]];
        if (banded[x]) {
          for (int y = 0; y < ne; ++y)
            if (comp[y] == comp[x]) w += h[x][k] * h[y][k] * cx.band_inverse(dof[x], dof[y]);
        } else if (cx.isDense()) {
          if (cx.inverse.rows() == 0) cx.inverse = cx.dlu.inverse();
          for (int y = 0; y < ne; ++y)
            if (comp[y] == comp[x]) w += h[x][k] * h[y][k] * cx.inverse(dof[x], dof[y]);
        } else if (std::find(comp.begin(), comp.begin() + x, comp[x]) == comp.begin() + x) {
          // first entry on this sparse component: one solve with all of its entries
          rhs_.setZero(static_cast<Eigen::Index>(cx.dofs.size()));
          for (int y = x; y < ne; ++y)
            if (comp[y] == comp[x]) rhs_[dof[y]] += h[y][k];
          sol_ = cx.lu.solve(rhs_);
          w += rhs_.dot(sol_);
        }
      }
      wdiag[3 * a + k] = w;
    }
  }

  solver.setProblem(Ag, Gg, wdiag, q, mu);
}

}  // namespace rodsim::ac
