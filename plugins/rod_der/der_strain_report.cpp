// RodStrainReport of the der rod: its strains and internal loads as Tong et al. (2023), Sec. 2, define
// them (Eqs. 1, 3, 4, 6), for output. Nothing here is on a solver's path.
#include "der_rod.h"

namespace rodsim {

// Eq. 1: the stretching strain of each edge. DER edges do not shear (a Kirchhoff rod: d3 = t), so the
// shear/stretch strain σ = e t - d3 of a Cosserat element is (0, 0, ε) in the material frame.
// The internal force of edge e is what the rod beyond it exerts on nodes 0 .. e, i.e. the partial sum
// of the elastic forces F_int = -∂(E_s + E_b + E_t)/∂x (Eq. 6) over those nodes (the elastic forces of
// the whole rod sum to zero, so the cut may be taken from either end). It is the stretching force
// EA ε t of Eq. 5 plus the transverse (shear) force that bending and twisting transmit across the edge,
// which no strain of the model carries but equilibrium does.
void DerRod::reportElements(double* stretch, double* shear, double* force) const {
  const int ne = n_ - 1;
  if (stretch)
    for (int e = 0; e < ne; ++e) stretch[e] = kin_[e].len / rest_len_[e] - 1.0;  // Eq. 1
  if (shear)
    for (int e = 0; e < ne; ++e) {
      shear[3 * e] = shear[3 * e + 1] = 0.0;
      shear[3 * e + 2] = kin_[e].len / rest_len_[e] - 1.0;
    }
  if (force) {
    report_force_.setZero();
    addElasticForce(report_force_);  // Eq. 6
    Vec3 sum = Vec3::Zero();
    for (int e = 0; e < ne; ++e) {
      sum += report_force_.segment<3>(positionDof(e));
      for (int c = 0; c < 3; ++c) force[3 * e + c] = sum[c];
    }
  }
}

// Eq. 3 gives the material curvatures κ^(1) = ½(m2^{i-1} + m2^i)·(κb)_i and κ^(2) = ½(m1^{i-1} + m1^i)·(κb)_i
// of the curvature binormal (κb)_i (Eq. 2), Eq. 4 the twist τ_i: integrated (dimensionless) strains
// of the Voronoi region of node i. Divided by its rest Voronoi length Δl_i they are the curvature
// vector's components per length: along the averaged m1 (bending about d1) κ^(2)/Δl, along m2 κ^(1)/Δl,
// along the tangent τ/Δl. The couples are the derivatives of Eq. 5's energies with respect to those
// strains, EI (κ - κ̄)/Δl and GJ (τ - τ̄)/Δl, in the same components.
void DerRod::reportJunctions(double* curvature, double* couple) const {
  for (int i = 1; i + 1 < n_; ++i) {
    const der::Vec2 k = materialCurvature(i);  // (κ^(1), κ^(2)), Eq. 3
    const double tau = twist(i);                // Eq. 4
    const double dl = voronoi_[i];
    double* out = curvature ? curvature + 3 * (i - 1) : nullptr;
    if (out) {
      out[0] = k[1] / dl;
      out[1] = k[0] / dl;
      out[2] = tau / dl;
    }
    if (couple) {
      double* m = couple + 3 * (i - 1);
      m[0] = EI_ * (k[1] - kappa_bar_[i][1]) / dl;
      m[1] = EI_ * (k[0] - kappa_bar_[i][0]) / dl;
      m[2] = GJ_ * (tau - tau_bar_[i]) / dl;
    }
  }
}

// The twist angle θ^e turns the material frame about the edge's tangent (m1 = cos θ d1 + sin θ d2 with
// d2 = t × d1): its generalized force is the torque's component along t, and the only one it carries.
Vec3 DerRod::frameTorque(int edge, const double* g) const { return g[0] * t_[edge]; }

}  // namespace rodsim
