// RodStrainReport of the cosserat rod: its strains and internal loads (Gazzola et al. 2018, Eqs. 9,
// 10, 20, 23; README.md, "Energy and forces"), read from what computeStrains prepared, for output.
// Nothing here is on a solver's path.
#include "cosserat_rod.h"

namespace rodsim {

// Per element: the dilatation e = ℓ/ℓ̂ (Eq. 9) minus one; the shear/stretch strain σ_L = Q(e t) - d3 in
// the material frame (Eq. 9; σ_3 is the axial strain of d3, σ_1 and σ_2 the shears); and the force
// the element carries. The nodal elastic forces are differences of per-element terms: node j takes
// +Qᵀn of element j and -Qᵀn of element j-1 (Eq. 23's Δh; n = Ŝ(σ - σ°), divided by e under
// force_law = "gazzola2018"), and, from the stretch dependence of the bending energy (Eq. 10's 1/E³),
// +(g_j + g_{j+1}) t_j and -(g_{j-1} + g_j) t_{j-1} with g_i = ∂E_i/∂ℓ of node i's bending energy.
// So element e pushes its first node with Qᵀn_e + (g_e + g_{e+1}) t_e and its second node with the
// opposite: that is the force the rod after the element exerts on the rod before it.
void CosseratRod::reportElements(double* stretch, double* shear, double* force) const {
  ensureStrains();
  for (int e = 0; e < ne_; ++e) {
    if (stretch) stretch[e] = e_[e] - 1.0;
    if (shear) {
      Vec3 sigma, n;
      shearOf(e, sigma, n);
      for (int c = 0; c < 3; ++c) shear[3 * e + c] = sigma[c];
    }
    if (force) {
      // g_ holds 0 at the nodes without curvature (an open rod's ends), 3 copies per node (nodeTerms).
      const double g = g_[3 * e] + g_[3 * next(e)];
      for (int c = 0; c < 3; ++c) force[3 * e + c] = Nf_[3 * e + c] + g * t_[e][c];
    }
  }
}

// Per junction node i: κ̂_L = θ_i / D̂_i with θ_i = log(Q_{i-1} Q_iᵀ) (Eq. 20), material components, 1/m;
// the couple m = B̂ (θ_i - θ°_i) / (D̂_i E_i³) of Eq. 10 (E_i = D_i/D̂_i; B̂ (θ - θ°)/D̂ with
// bend_twist_rescaling = false), the derivative of the bending energy with respect to θ_i: it acts
// on element i-1 (before the node) as +m and on element i as -m to first order in θ (Eq. 24's Δh).
void CosseratRod::reportJunctions(double* curvature, double* couple) const {
  ensureStrains();
  const int nj = numJunctions();
  for (int k = 0; k < nj; ++k) {
    const int i = junctionNode(k);
    const double Dh = Dhat_[i];
    const Vec3& th = theta_[i];
    if (curvature)
      for (int c = 0; c < 3; ++c) curvature[3 * k + c] = th[c] / Dh;
    if (couple) {
      double scale = 1.0 / Dh;
      if (bend_twist_rescaling_) {
        const double lprev = l_[i == 0 ? ne_ - 1 : i - 1];
        const double E = 0.5 * (lprev + l_[i]) / Dh;
        scale /= E * E * E;
      }
      const Vec3& t0 = theta0_[i];
      for (int c = 0; c < 3; ++c) couple[3 * k + c] = scale * B_[c] * (th[c] - t0[c]);
    }
  }
}

// The rotation DOFs of an element take e Q T for a torque T (addNodeTorque: Eq. 24 times e, the
// rotational inertia being Ĵ/e), so a generalized force g on them is the torque Qᵀ g / e.
Vec3 CosseratRod::frameTorque(int edge, const double* g) const {
  ensureStrains();
  const Mat3 Q = gather(Q_, edge);
  return Q.transpose() * Vec3(g[0], g[1], g[2]) / e_[edge];
}

}  // namespace rodsim
