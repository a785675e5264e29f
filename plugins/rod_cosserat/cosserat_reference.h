// The "cosserat" rod model written plainly: read this (and cosserat_reference.cpp) first.
//
// cosserat_rod.cpp computes the same numbers fast (structure-of-arrays frames, branch-free vector
// passes, AVX clones, values computed on demand and cached between calls). This is the same model
// with one function per term, plain Eigen types and std::vector, no SIMD and no caching, so that the
// physics can be read top to bottom next to Gazzola et al. (2018)
// (docs/references.md). Equation numbers below are theirs.
//
// It is not called by the plugin at run time: tests compare it with CosseratRod (energies, forces,
// couples and velocity couples agree to round-off, tests/plugins/rod_cosserat/
// test_cosserat_reference.cpp) and check it against finite differences of its own energy.
//
// Conventions (README.md): a frame Q has the directors d1, d2, d3 as its rows, so that Q x is x in
// material components; element e joins node e to node e+1 (node 0 for the closing element of a
// ring); node i carries the curvature between element i-1 and element i (node 0 of a ring: between
// element n-1 and element 0).
#pragma once

#include <rodsim/linalg.h>

#include <vector>

namespace rodsim {
class CosseratRod;
class Params;
}  // namespace rodsim

namespace rodsim::cosserat::reference {

// Everything about a rod that its configuration does not change.
struct RodConstants {
  bool closed = false;               // a ring: as many elements as nodes
  std::vector<double> rest_length;   // ℓ̂_e per element, m
  std::vector<double> rest_voronoi;  // D̂_i per node, m (Eq. 19 at rest; used at nodes with a curvature)
  Vec3 S = Vec3::Zero();             // diag Ŝ = (α_c G Â, α_c G Â, E Â), N (Table I)
  Vec3 B = Vec3::Zero();             // diag B̂ = (E Î1, E Î2, G Î3), N m² (Table I)
  Vec3 J = Vec3::Zero();             // ρ Î per unit length, kg m: an element's inertia is Ĵ_e = J ℓ̂_e
  double gamma_r = 0;                // rotational friction γ_r of Eq. 32, N s
  bool written_force_law = false;    // force_law = "gazzola2018": Eq. 23 as written (Qᵀ n / e, no dE/dℓ forces)
  bool bend_twist_rescaling = true;  // Eq. 10's 1/E³ on the bend/twist couples and energy
  std::vector<Vec3> sigma0;          // rest shear/stretch strain σ°_e per element
  std::vector<Vec3> theta0;          // rest curvature rotation D̂_i κ̂°_i per node

  int numElements() const { return static_cast<int>(rest_length.size()); }
  int numNodes() const { return static_cast<int>(rest_voronoi.size()); }
};

// The constants of `rod`, built with the parameters `p` it was made from. Call it on a rod that has
// not been stepped yet: a rod with rest_shape = "initial" takes its rest strains from its initial
// positions and frames (the committed frames of a new rod).
RodConstants constantsOf(const CosseratRod& rod, const Params& p);

// A configuration: node positions (m) and element frames (rows d1, d2, d3).
struct Configuration {
  std::vector<Vec3> x;
  std::vector<Mat3> Q;
};

// --- kinematics -------------------------------------------------------------------------------

// Q = exp(-[φ]x) Qc: the frame of an element whose rotation-vector DOFs are φ, relative to its
// committed frame Qc (README.md, "Degrees of freedom").
Mat3 frameFromRotationVector(const Mat3& Qc, const Vec3& phi);
// The configuration of a rod's DOF vector [x_0 .. x_{N}, φ_0 .. φ_{n-1}] (its own slice of q).
Configuration configurationFromDofs(const RodConstants& rod, const std::vector<Mat3>& committed, const Vec& q);

// The second node of element e: e + 1, or 0 for the closing element of a ring.
int secondNode(const RodConstants& rod, int e);
// Nodes that carry a curvature: the interior nodes 1 .. n-1 of an open rod, every node of a ring.
bool hasCurvature(const RodConstants& rod, int i);
// The element before node i (i - 1; element n-1 for node 0 of a ring). The element after it is i.
int elementBefore(const RodConstants& rod, int i);

// --- strains ----------------------------------------------------------------------------------

Vec3 edge(const RodConstants& rod, const Configuration& c, int e);             // ℓ_e = x_{e+1} - x_e (Eq. 18)
Vec3 tangent(const RodConstants& rod, const Configuration& c, int e);          // t_e = ℓ_e / ℓ_e (Eq. 18)
double dilatation(const RodConstants& rod, const Configuration& c, int e);     // e_e = ℓ_e / ℓ̂_e (Eq. 18)
Vec3 shearStrain(const RodConstants& rod, const Configuration& c, int e);      // σ_e (Eqs. 9, 18)
Vec3 internalForce(const RodConstants& rod, const Configuration& c, int e);    // n_e = Ŝ (σ_e - σ°_e) (Eq. 11)
Vec3 curvatureRotation(const RodConstants& rod, const Configuration& c, int i);  // θ_i = D̂_i κ̂_i (Eq. 20)
Vec3 curvature(const RodConstants& rod, const Configuration& c, int i);          // κ̂_i = θ_i / D̂_i, 1/m
double voronoiLength(const RodConstants& rod, const Configuration& c, int i);  // D_i (Eq. 19)
double voronoiDilatation(const RodConstants& rod, const Configuration& c, int i);  // E_i = D_i / D̂_i (Eq. 20)
Vec3 bendingCouple(const RodConstants& rod, const Configuration& c, int i);    // m_i = B̂ (θ - θ°) / (D̂ E³) (Eqs. 8, 10)

// --- energy -----------------------------------------------------------------------------------

double shearStretchEnergy(const RodConstants& rod, const Configuration& c, int e);
double bendTwistEnergy(const RodConstants& rod, const Configuration& c, int i);
double elasticEnergy(const RodConstants& rod, const Configuration& c);  // CosseratRod::elasticEnergy

// --- internal forces and couples (the elastic generalized force, -dU/dq) ----------------------

struct GeneralizedForce {
  std::vector<Vec3> force;   // on the nodes, N
  std::vector<Vec3> couple;  // on the elements, material components, N m
};

// Each term adds its contribution to `out` (sized by zeroForce).
GeneralizedForce zeroForce(const RodConstants& rod);
void addShearStretchForces(const RodConstants& rod, const Configuration& c, GeneralizedForce& out);
void addShearStretchCouples(const RodConstants& rod, const Configuration& c, GeneralizedForce& out);
void addBendTwistCouples(const RodConstants& rod, const Configuration& c, GeneralizedForce& out);
void addBendingLengthForces(const RodConstants& rod, const Configuration& c, GeneralizedForce& out);
// All four: what CosseratRod::addElasticForce adds.
GeneralizedForce elasticForces(const RodConstants& rod, const Configuration& c);

// --- velocity-dependent couples (CosseratRod::addVelocityForce) --------------------------------

// Velocities of the nodes (m/s) and angular velocities ω_L of the elements (material components,
// rad/s).
struct Velocities {
  std::vector<Vec3> v;
  std::vector<Vec3> omega;
};
// As the implicit velocity of the SDK's EvalContext: (q - q_start) / dt, positions and φ alike.
Velocities velocitiesFromDofs(const RodConstants& rod, const Vec& q, const Vec& q_start, double dt);

Vec3 dilatationCouple(const RodConstants& rod, const Configuration& c, int e, const Vec3& elastic_couple);
Vec3 lagrangianTransportCouple(const RodConstants& rod, int e, const Velocities& w);
Vec3 unsteadyDilatationCouple(const RodConstants& rod, const Configuration& c, int e, const Velocities& w);
Vec3 rotationalFrictionCouple(const RodConstants& rod, const Configuration& c, int e, const Velocities& w);
// Their sum per element (the couples only: no force on the nodes).
std::vector<Vec3> velocityCouples(const RodConstants& rod, const Configuration& c, const Velocities& w);

// A generalized force in the rod's DOF layout: 3 per node, then 3 per element.
Vec toDofs(const RodConstants& rod, const GeneralizedForce& f);
Vec couplesToDofs(const RodConstants& rod, const std::vector<Vec3>& couples);

}  // namespace rodsim::cosserat::reference
