// The "cosserat" rod model, one function per term (see cosserat_reference.h). Equation numbers are
// those of Gazzola et al. (2018); README.md, "Energy and forces", explains where and
// why the model departs from their Eqs. 23-24 (it is the exact gradient of an energy).
//
// The elastic energy of the discrete rod is
//
//   U = Σ_e ½ ℓ̂_e (σ_e - σ°_e)ᵀ Ŝ (σ_e - σ°_e)  +  Σ_i ½ (θ_i - θ°_i)ᵀ B̂ (θ_i - θ°_i) / (D̂_i E_i³)
//
// (shear/stretch per element, bend/twist per node with a curvature), and the internal forces and
// couples below are its exact gradient: -∂U/∂x on the nodes and, on the elements, the couple
// -∂U/∂a for the rotation Q_e -> exp(-[a]x) Q_e of the element's frame (README.md, "Degrees of
// freedom": the gradient with respect to the rotation-vector DOFs φ_e at φ_e = 0).
#include "cosserat_reference.h"

#include "cosserat_rod.h"
#include <rodsim/geometry/so3.h>

#include <rodsim/params.h>

#include <cmath>
#include <numbers>
#include <string>

namespace rodsim::cosserat::reference {

using geometry::expSO3;
using geometry::invLeftJacobianTimes;
using geometry::invRightJacobianTimes;
using geometry::logSO3;

namespace {
const Vec3 kD3(0.0, 0.0, 1.0);  // d3 in material components: Q d3 = (0, 0, 1)
}

RodConstants constantsOf(const CosseratRod& rod, const Params& p) {
  RodConstants c;
  c.closed = rod.closed();
  const int ne = rod.numElements(), nn = rod.numNodes();
  for (int e = 0; e < ne; ++e) c.rest_length.push_back(rod.restLength(e));
  for (int i = 0; i < nn; ++i) c.rest_voronoi.push_back(rod.restVoronoiLength(i));
  c.S = rod.shearStiffness();
  c.B = rod.bendStiffness();
  // Ĵ per unit length of a circular section (Table I's Î1 = Î2 = π r⁴/4, Î3 = 2 Î1), times ρ.
  const double r = p.real("radius"), I = std::numbers::pi * std::pow(r, 4) / 4.0;
  c.J = p.real("density") * Vec3(I, I, 2.0 * I) * p.real("inertia_ratio");  // lambda = 2 J / (m r^2), Appendix F
  c.gamma_r = p.real("rotational_damping");
  c.written_force_law = p.string("force_law") == "gazzola2018";
  c.bend_twist_rescaling = p.boolean("bend_twist_rescaling");
  c.sigma0.assign(ne, Vec3::Zero());
  c.theta0.assign(nn, Vec3::Zero());
  if (p.string("rest_shape") == "initial") {
    // The rest strains are those of the initial configuration: initial positions and frames.
    Configuration initial;
    Vec q(rod.numDofs());
    rod.initialDofs(q);
    for (int i = 0; i < nn; ++i) initial.x.push_back(q.segment<3>(rod.positionDof(i)));
    for (int e = 0; e < ne; ++e) initial.Q.push_back(rod.committedFrame(e));
    std::vector<Vec3> sigma0(ne), theta0(nn, Vec3::Zero());
    for (int e = 0; e < ne; ++e) sigma0[e] = shearStrain(c, initial, e);
    for (int i = 0; i < nn; ++i)
      if (hasCurvature(c, i)) theta0[i] = curvatureRotation(c, initial, i);
    c.sigma0 = sigma0;
    c.theta0 = theta0;
  }
  return c;
}

// ------------------------------------------------------------------------------------ kinematics

// Director kinematics dQ/dt = -[ω_L]x Q (Eq. 13 in material components): a rotation by the vector φ
// in the material frame takes Q to exp(-[φ]x) Q, with exp the Rodrigues formula (Eq. 16).
Mat3 frameFromRotationVector(const Mat3& Qc, const Vec3& phi) { return expSO3(-phi) * Qc; }

Configuration configurationFromDofs(const RodConstants& rod, const std::vector<Mat3>& committed, const Vec& q) {
  Configuration c;
  const int nn = rod.numNodes(), ne = rod.numElements();
  for (int i = 0; i < nn; ++i) c.x.push_back(q.segment<3>(3 * i));
  for (int e = 0; e < ne; ++e) c.Q.push_back(frameFromRotationVector(committed[e], q.segment<3>(3 * nn + 3 * e)));
  return c;
}

int secondNode(const RodConstants& rod, int e) { return rod.closed && e + 1 == rod.numNodes() ? 0 : e + 1; }

bool hasCurvature(const RodConstants& rod, int i) { return rod.closed || (i >= 1 && i < rod.numElements()); }

int elementBefore(const RodConstants& rod, int i) { return i == 0 ? rod.numElements() - 1 : i - 1; }

// --------------------------------------------------------------------------------------- strains

Vec3 edge(const RodConstants& rod, const Configuration& c, int e) { return c.x[secondNode(rod, e)] - c.x[e]; }

Vec3 tangent(const RodConstants& rod, const Configuration& c, int e) { return edge(rod, c, e).normalized(); }

double dilatation(const RodConstants& rod, const Configuration& c, int e) {
  return edge(rod, c, e).norm() / rod.rest_length[e];
}

// σ_L = Q (e t - d3) (Eq. 9), discretely Q_e (e_e t_e - d3_e) = Q_e ℓ_e / ℓ̂_e - (0, 0, 1) (Eq. 18).
Vec3 shearStrain(const RodConstants& rod, const Configuration& c, int e) {
  return c.Q[e] * edge(rod, c, e) / rod.rest_length[e] - kD3;
}

// n_L = Ŝ (σ_L - σ°_L): Eq. 11 with the rest-configuration stiffness Ŝ (README.md: with it the
// shear/stretch energy below is a plain quadratic form over the rest length).
Vec3 internalForce(const RodConstants& rod, const Configuration& c, int e) {
  return rod.S.cwiseProduct(shearStrain(rod, c, e) - rod.sigma0[e]);
}

// The rotation from the frame of element i to that of element i-1, as a rotation vector:
// Q_i = exp(-[θ_i]x) Q_{i-1}, θ_i = log(Q_{i-1} Q_iᵀ) = D̂_i κ̂_i. Gazzola et al.'s Eq. 20 writes
// κ̂ = log(Q_{i+1} Q_iᵀ) / D̂ with the opposite sign convention of its exp (README.md); this sign
// matches Q ∂x/∂s = ∂x_L/∂s + κ_L × x_L of Eq. 3.
Vec3 curvatureRotation(const RodConstants& rod, const Configuration& c, int i) {
  return logSO3(c.Q[elementBefore(rod, i)] * c.Q[i].transpose());
}

// κ̂_i = θ_i / D̂_i: the curvature, a rotation per unit rest length (Eq. 20; CosseratRod::curvature).
Vec3 curvature(const RodConstants& rod, const Configuration& c, int i) {
  return curvatureRotation(rod, c, i) / rod.rest_voronoi[i];
}

// D_i = (ℓ_{i-1} + ℓ_i) / 2 (Eq. 19; at node 0 of a ring, the closing element and element 0).
double voronoiLength(const RodConstants& rod, const Configuration& c, int i) {
  return 0.5 * (edge(rod, c, elementBefore(rod, i)).norm() + edge(rod, c, i).norm());
}

double voronoiDilatation(const RodConstants& rod, const Configuration& c, int i) {
  return voronoiLength(rod, c, i) / rod.rest_voronoi[i];
}

// τ_L = B (κ_L - κ°_L) (Eq. 8) with B = B̂/E², κ = κ̂/E (Eq. 10, the Voronoi dilatation E of Eq. 20),
// integrated over the Voronoi length D = E D̂ and written for θ = D̂ κ̂: m = ∂U_i/∂θ_i =
// B̂ (θ - θ°) / (D̂ E³). Without the rescaling (bend_twist_rescaling = false), B̂ (θ - θ°) / D̂.
Vec3 bendingCouple(const RodConstants& rod, const Configuration& c, int i) {
  const double E = rod.bend_twist_rescaling ? voronoiDilatation(rod, c, i) : 1.0;
  const Vec3 u = curvatureRotation(rod, c, i) - rod.theta0[i];
  return rod.B.cwiseProduct(u) / (rod.rest_voronoi[i] * E * E * E);
}

// ---------------------------------------------------------------------------------------- energy

// ½ ℓ̂ (σ - σ°)ᵀ Ŝ (σ - σ°): the linear law of Eq. 11 integrated over the element's rest length.
double shearStretchEnergy(const RodConstants& rod, const Configuration& c, int e) {
  return 0.5 * rod.rest_length[e] * (shearStrain(rod, c, e) - rod.sigma0[e]).dot(internalForce(rod, c, e));
}

// ½ (θ - θ°)ᵀ B̂ (θ - θ°) / (D̂ E³) = ∫ ½ (κ - κ°)ᵀ B (κ - κ°) ds over the Voronoi domain (Eqs. 8, 10).
double bendTwistEnergy(const RodConstants& rod, const Configuration& c, int i) {
  return 0.5 * (curvatureRotation(rod, c, i) - rod.theta0[i]).dot(bendingCouple(rod, c, i));
}

double elasticEnergy(const RodConstants& rod, const Configuration& c) {
  double U = 0;
  for (int e = 0; e < rod.numElements(); ++e) U += shearStretchEnergy(rod, c, e);
  for (int i = 0; i < rod.numNodes(); ++i)
    if (hasCurvature(rod, i)) U += bendTwistEnergy(rod, c, i);
  return U;
}

// ------------------------------------------------------------------------ internal forces, couples

GeneralizedForce zeroForce(const RodConstants& rod) {
  GeneralizedForce f;
  f.force.assign(rod.numNodes(), Vec3::Zero());
  f.couple.assign(rod.numElements(), Vec3::Zero());
  return f;
}

// Shear/stretch internal force Δh(Qᵀ n) on the nodes (Eq. 23): element e pulls its first node by
// Q_eᵀ n_e and its second by -Q_eᵀ n_e (-∂/∂x of the shear/stretch energy: ∂σ_e/∂x_{e+1} = Q_e / ℓ̂_e).
// Gazzola et al. divide n by e (S = Ŝ/e of Eq. 10); this model's n is the energy gradient (README.md).
// With force_law = "gazzola2018", Eq. 23 as written: Q_eᵀ n_e / e_e.
void addShearStretchForces(const RodConstants& rod, const Configuration& c, GeneralizedForce& out) {
  for (int e = 0; e < rod.numElements(); ++e) {
    Vec3 f = c.Q[e].transpose() * internalForce(rod, c, e);
    if (rod.written_force_law) f /= dilatation(rod, c, e);
    out.force[e] += f;
    out.force[secondNode(rod, e)] -= f;
  }
}

// Shear/stretch internal couple Q t × Ŝσ ℓ̂ (Eq. 24), times e: (Q_e ℓ_e) × n_e. (Turning the frame by
// exp(-[a]x) changes σ by (Q ℓ) × a / ℓ̂.) It is what keeps d3 along the tangent: zero when the rod
// does not shear.
// With force_law = "gazzola2018", Eq. 24 as written: (Q t × Ŝσ) ℓ̂, i.e. the above divided by e.
void addShearStretchCouples(const RodConstants& rod, const Configuration& c, GeneralizedForce& out) {
  for (int e = 0; e < rod.numElements(); ++e) {
    const Vec3 couple = (c.Q[e] * edge(rod, c, e)).cross(internalForce(rod, c, e));
    out.couple[e] += rod.written_force_law ? Vec3(couple / dilatation(rod, c, e)) : couple;
  }
}

// Bend/twist internal couple Δh(B̂κ̂/E³) + Ah(κ̂ × B̂κ̂ D̂/E³) of Eq. 24, in its exact form: node i's
// couple m_i acts on element i-1 as J_r⁻¹(θ_i) m_i and on element i as -J_l⁻¹(θ_i) m_i, the inverse
// Jacobians of the exponential map (so3.h), J⁻¹ m = m ± ½ θ × m + c(θ) θ × (θ × m). Their first
// order, m ± ½ θ × m, is Gazzola et al.'s difference of couples plus its averaged κ̂ × B̂κ̂ term; the exact
// form makes the couples the gradient of the bend/twist energy.
void addBendTwistCouples(const RodConstants& rod, const Configuration& c, GeneralizedForce& out) {
  for (int i = 0; i < rod.numNodes(); ++i) {
    if (!hasCurvature(rod, i)) continue;
    const Vec3 th = curvatureRotation(rod, c, i), m = bendingCouple(rod, c, i);
    out.couple[elementBefore(rod, i)] += invRightJacobianTimes(th, m);
    out.couple[i] -= invLeftJacobianTimes(th, m);
  }
}

// The bend/twist energy of node i depends on the lengths of its two elements through E_i³ (Eq. 10):
// ∂U_i/∂ℓ = -3 U_i / (ℓ_{i-1} + ℓ_i) for each of them, and ∂ℓ_e/∂x = ∓t_e on its first/second node.
// Gazzola et al.'s Eq. 23 has no such term (its bending couples are not derived from an energy).
void addBendingLengthForces(const RodConstants& rod, const Configuration& c, GeneralizedForce& out) {
  for (int i = 0; i < rod.numNodes(); ++i) {
    if (!hasCurvature(rod, i)) continue;
    const double g = -3.0 * bendTwistEnergy(rod, c, i) / (2.0 * voronoiLength(rod, c, i));  // ∂U_i/∂ℓ
    for (int e : {elementBefore(rod, i), i}) {
      const Vec3 t = tangent(rod, c, e);
      out.force[e] += g * t;                     // -∂U_i/∂x_e = g t_e
      out.force[secondNode(rod, e)] -= g * t;   // -∂U_i/∂x_{e+1} = -g t_e
    }
  }
}

GeneralizedForce elasticForces(const RodConstants& rod, const Configuration& c) {
  GeneralizedForce f = zeroForce(rod);
  addShearStretchForces(rod, c, f);
  addShearStretchCouples(rod, c, f);
  addBendTwistCouples(rod, c, f);
  // Absent from Gazzola et al.'s Eq. 23, and zero without the rescaling (no dependence on the lengths).
  if (!rod.written_force_law && rod.bend_twist_rescaling) addBendingLengthForces(rod, c, f);
  return f;
}

// ------------------------------------------------------------------------------ velocity couples
//
// Eq. 24 has the rotational inertia Ĵ/e on its left; the rod's lumped rotational mass is Ĵ, so the
// rod returns Eq. 24 multiplied by e:  Ĵ dω/dt = e C + (Ĵω) × ω + Ĵ ω ė / e - γ_r ℓ̂ e² ω  (+ e C_ext).
// The elastic couple C is addElasticForce's; the terms below are the rest.

Velocities velocitiesFromDofs(const RodConstants& rod, const Vec& q, const Vec& q_start, double dt) {
  Velocities w;
  const int nn = rod.numNodes();
  for (int i = 0; i < nn; ++i) w.v.push_back((q.segment<3>(3 * i) - q_start.segment<3>(3 * i)) / dt);
  for (int e = 0; e < rod.numElements(); ++e) {
    const int r = 3 * nn + 3 * e;
    w.omega.push_back((q.segment<3>(r) - q_start.segment<3>(r)) / dt);
  }
  return w;
}

// e C - C: the elastic couple scaled by the element's dilatation (the "times e" above).
Vec3 dilatationCouple(const RodConstants& rod, const Configuration& c, int e, const Vec3& elastic_couple) {
  return (dilatation(rod, c, e) - 1.0) * elastic_couple;
}

// Lagrangian transport (Ĵ ω / e) × ω of Eq. 24, times e (the gyroscopic couple).
Vec3 lagrangianTransportCouple(const RodConstants& rod, int e, const Velocities& w) {
  const Vec3 Jw = rod.rest_length[e] * rod.J.cwiseProduct(w.omega[e]);
  return Jw.cross(w.omega[e]);
}

// Unsteady dilatation (Ĵ ω / e²) ∂e/∂t of Eq. 24, times e, with ∂e/∂t = t · (v_{e+1} - v_e) / ℓ̂.
Vec3 unsteadyDilatationCouple(const RodConstants& rod, const Configuration& c, int e, const Velocities& w) {
  const double edot = tangent(rod, c, e).dot(w.v[secondNode(rod, e)] - w.v[e]) / rod.rest_length[e];
  const Vec3 Jw = rod.rest_length[e] * rod.J.cwiseProduct(w.omega[e]);
  return (edot / dilatation(rod, c, e)) * Jw;
}

// Rotational internal friction -γ_r ω per unit length (Eq. 32): over the element's current length
// e ℓ̂, times e.
Vec3 rotationalFrictionCouple(const RodConstants& rod, const Configuration& c, int e, const Velocities& w) {
  const double ee = dilatation(rod, c, e);
  return -(rod.gamma_r * rod.rest_length[e] * ee * ee) * w.omega[e];
}

std::vector<Vec3> velocityCouples(const RodConstants& rod, const Configuration& c, const Velocities& w) {
  const GeneralizedForce elastic = elasticForces(rod, c);
  std::vector<Vec3> out(rod.numElements());
  for (int e = 0; e < rod.numElements(); ++e)
    out[e] = dilatationCouple(rod, c, e, elastic.couple[e]) + lagrangianTransportCouple(rod, e, w) +
             unsteadyDilatationCouple(rod, c, e, w) + rotationalFrictionCouple(rod, c, e, w);
  return out;
}

// --------------------------------------------------------------------------------------- layout

Vec toDofs(const RodConstants& rod, const GeneralizedForce& f) {
  const int nn = rod.numNodes();
  Vec out = Vec::Zero(3 * nn + 3 * rod.numElements());
  for (int i = 0; i < nn; ++i) out.segment<3>(3 * i) = f.force[i];
  for (int e = 0; e < rod.numElements(); ++e) out.segment<3>(3 * nn + 3 * e) = f.couple[e];
  return out;
}

Vec couplesToDofs(const RodConstants& rod, const std::vector<Vec3>& couples) {
  GeneralizedForce f = zeroForce(rod);
  f.couple = couples;
  return toDofs(rod, f);
}

}  // namespace rodsim::cosserat::reference
