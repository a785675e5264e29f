// Discrete Elastic Rods: the elastic energy of one stencil, with its exact gradient and Hessian.
//
// Small free functions in the ipc-toolkit style. Equation numbers refer to section 2 of Tong et
// al. (2023) (Tong, Choi, Joo, Jawed, "A Fully Implicit Method for Robust Frictional Contact Handling
// in Elastic Rods"), which follows Bergou et al. 2008/2010.
//
// Stencils and their DOF order (contiguous in the rod's DOF layout [x0, θ0, x1, θ1, ..., x_{N-1}]):
//   stretching of edge i      : Vec6  [x_i, x_{i+1}]                       (no twist DOF)
//   bending/twisting at node i: Vec11 [x_{i-1}, θ^{i-1}, x_i, θ^i, x_{i+1}]
//
// Reference frames. Each edge carries a committed reference frame (t̂, d̂1, d̂2): the frame at the
// start of the step. The current reference frame of an edge with unit tangent t is the
// time-parallel transport of the committed one from t̂ to t (minimal rotation):
//     d_k(t) = d̂_k - (t·d̂_k) / (1 + t̂·t) (t̂ + t).
// The stencil functions take the committed frames as constants and differentiate everything that
// depends on the positions through this transport exactly, so gradients and Hessians are exact at
// any configuration (not only at the committed one). Singular only for an edge that turns by π
// within one step (1 + t̂·t = 0).
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>  // cross products

namespace rodsim::der {

using Vec2 = Eigen::Vector2d;
using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;
using Vec6 = Eigen::Matrix<double, 6, 1>;
using Mat6 = Eigen::Matrix<double, 6, 6>;
using Vec11 = Eigen::Matrix<double, 11, 1>;
using Mat11 = Eigen::Matrix<double, 11, 11>;

// Committed reference frame of one edge: unit tangent t, directors d1, d2 = t × d1.
struct EdgeFrame {
  Vec3 t = Vec3::UnitX(), d1 = Vec3::UnitY(), d2 = Vec3::UnitZ();
};

// ---------------------------------------------------------------------------------------------
// Frames and angles
// ---------------------------------------------------------------------------------------------

// wrapAngle, anyPerpendicular, parallelTransport, signedAngle and curvatureBinormal (Eq. 2) are
// rodsim::geometry's (libs/geometry, frames.h).

// Current reference directors of an edge with unit tangent t: time-parallel transport of the
// committed frame.
void transportFrame(const EdgeFrame& committed, const Vec3& t, Vec3& d1, Vec3& d2);

// Reference twist m_ref^i of Eq. 4 at an interior node: signed angle about t^i from the space
// parallel transport of d1^{i-1} onto t^i to d1^i, unwrapped relative to `committed` (the
// committed reference twist) so that it never jumps by 2π.
double referenceTwistAngle(const Vec3& t0, const Vec3& d1_0, const Vec3& t1, const Vec3& d1_1,
                           double committed);

// ---------------------------------------------------------------------------------------------
// Stretching of one edge (Eqs. 1, 5): E_s = ½ EA ε² |ē|, ε = |e|/|ē| - 1.
// q = [x_i, x_{i+1}].
// ---------------------------------------------------------------------------------------------
struct StretchParams {
  double EA = 0;          // axial stiffness, N
  double rest_length = 0; // |ē|, m
};

double stretchingEnergy(const Vec6& q, const StretchParams& p);
Vec6 stretchingGradient(const Vec6& q, const StretchParams& p);
Mat6 stretchingHessian(const Vec6& q, const StretchParams& p);
// All at once; grad / hess may be null.
double stretching(const Vec6& q, const StretchParams& p, Vec6* grad, Mat6* hess);

// ---------------------------------------------------------------------------------------------
// Bending at one interior node (Eqs. 2, 3, 5):
//   κ^(1) = ½ (m2^{i-1} + m2^i)·(κb)_i,   κ^(2) = ½ (m1^{i-1} + m1^i)·(κb)_i,
//   E_b = 1/(2 Δl̄) [EI1 (κ^(1) - κ̄^(1))² + EI2 (κ^(2) - κ̄^(2))²],
// material frame m1 = cos θ d1 + sin θ d2, m2 = -sin θ d1 + cos θ d2.
// q = [x_{i-1}, θ^{i-1}, x_i, θ^i, x_{i+1}]; f0, f1: committed frames of edges i-1 and i.
// ---------------------------------------------------------------------------------------------
struct BendParams {
  double EI1 = 0, EI2 = 0;        // bending stiffnesses about m1 and m2, N m²
  Vec2 kappa_bar = Vec2::Zero();  // natural material curvatures (κ̄^(1), κ̄^(2))
  double voronoi_length = 0;      // rest Voronoi length Δl̄_i = (|ē^{i-1}| + |ē^i|)/2, m
};

// (κ^(1), κ^(2)) of Eq. 3.
Vec2 materialCurvature(const Vec11& q, const EdgeFrame& f0, const EdgeFrame& f1);
double bendingEnergy(const Vec11& q, const EdgeFrame& f0, const EdgeFrame& f1, const BendParams& p);
Vec11 bendingGradient(const Vec11& q, const EdgeFrame& f0, const EdgeFrame& f1, const BendParams& p);
Mat11 bendingHessian(const Vec11& q, const EdgeFrame& f0, const EdgeFrame& f1, const BendParams& p);
double bending(const Vec11& q, const EdgeFrame& f0, const EdgeFrame& f1, const BendParams& p,
               Vec11* grad, Mat11* hess);

// ---------------------------------------------------------------------------------------------
// Twisting at one interior node (Eqs. 4, 5):
//   τ = θ^i - θ^{i-1} + m_ref^i,   E_t = GJ/(2 Δl̄) (τ - τ̄)².
// The reference twist depends on the positions through both edges' time-parallel transport; its
// exact gradient is
//   ∂m/∂e^{i-1} = κb/(2|e^{i-1}|) + t̂^{i-1}×e^{i-1} / (|e^{i-1}|(|e^{i-1}| + t̂^{i-1}·e^{i-1})),
//   ∂m/∂e^i     = κb/(2|e^i|)     - t̂^i×e^i         / (|e^i|(|e^i| + t̂^i·e^i)),
// i.e. the classic DER term plus the holonomy of the finite transport from the committed tangent
// t̂ (zero at the committed configuration, not its derivative).
// committed_twist: the committed reference twist (branch for unwrapping).
// ---------------------------------------------------------------------------------------------
struct TwistParams {
  double GJ = 0;              // torsional stiffness, N m²
  double tau_bar = 0;         // natural twist τ̄, rad
  double voronoi_length = 0;  // Δl̄_i, m
};

double referenceTwist(const Vec11& q, const EdgeFrame& f0, const EdgeFrame& f1, double committed_twist);
// Gradient and Hessian of the reference twist alone, w.r.t. the 11 stencil DOFs (θ entries zero).
void referenceTwistDerivatives(const Vec11& q, const EdgeFrame& f0, const EdgeFrame& f1, Vec11& grad,
                               Mat11& hess);
double twistingEnergy(const Vec11& q, const EdgeFrame& f0, const EdgeFrame& f1, double committed_twist,
                      const TwistParams& p);
Vec11 twistingGradient(const Vec11& q, const EdgeFrame& f0, const EdgeFrame& f1, double committed_twist,
                       const TwistParams& p);
Mat11 twistingHessian(const Vec11& q, const EdgeFrame& f0, const EdgeFrame& f1, double committed_twist,
                      const TwistParams& p);
double twisting(const Vec11& q, const EdgeFrame& f0, const EdgeFrame& f1, double committed_twist,
                const TwistParams& p, Vec11* grad, Mat11* hess);

// ---------------------------------------------------------------------------------------------
// Bending and twisting of one interior node in a single pass, from per-edge kinematics.
//
// This is what DerRod uses: it computes each edge's kinematics once per configuration (shared by
// the stretching of the edge and the bending/twisting of both its nodes) and evaluates bending and
// twisting together, so the binormal and its derivatives are computed once per node. The
// functions above are thin wrappers around it, so the finite-difference tests cover it.
// ---------------------------------------------------------------------------------------------

// Kinematics of one edge at twist angle θ relative to its committed frame (t̂, d̂1, d̂2).
struct EdgeKinematics {
  Vec3 e, u, T, s;            // edge, unit tangent e/|e|, committed tangent t̂, s = t̂ + u
  double len = 0, gamma = 0;  // |e|, 1 + t̂·u
  double theta = 0;           // twist angle θ of the edge, rad
  Vec3 d1, d2;                // reference directors Tr(u, d̂1), Tr(u, d̂2)
  Vec3 a1, a2;                // committed frame turned by θ: cos θ d̂1 + sin θ d̂2, -sin θ d̂1 + cos θ d̂2
  Vec3 m1, m2;                // material directors Tr(u, a1), Tr(u, a2)

  void set(const Vec3& edge, const EdgeFrame& committed, double theta);
  // Time-parallel transport Tr(u, a) = a - (u·a)/(1 + t̂·u) (t̂ + u) of a vector a ⟂ t̂.
  Vec3 transport(const Vec3& a) const { return a - (u.dot(a) / gamma) * s; }
};

// First derivatives of a node's strains w.r.t. y = [e^{i-1}, θ^{i-1}, e^i, θ^i]: the gradient is
// made of them and the Hessian needs them again (Gauss-Newton part). A caller that asks for the
// gradient and the Hessian in two calls at the same configuration passes the same object to both;
// the second call reuses it (with the same `bend`/`twist` selection). Invalidate it (valid = false)
// whenever the edge kinematics change.
struct StrainGradients {
  bool valid = false;
  Eigen::Matrix<double, 8, 1> g1, g2, gt;  // ∂κ^(1)/∂y, ∂κ^(2)/∂y, ∂τ/∂y
};

// Bending (if `bend`) plus twisting (if `twist`) energy of the interior node between the edges
// k0 = e^{i-1} and k1 = e^i; the gradient and Hessian w.r.t. the 11 stencil DOFs are written (not
// added) when requested. m_ref: the reference twist m_ref^i of this configuration (Eq. 4).
// cache: see StrainGradients (optional).
double bendTwist(const EdgeKinematics& k0, const EdgeKinematics& k1, const BendParams* bend,
                 const TwistParams* twist, double m_ref, Vec11* grad, Mat11* hess,
                 StrainGradients* cache = nullptr);

// The Hessian of bendTwist plus, if given, extra0 and extra1 added to its ∂²/∂(e^{i-1})² and
// ∂²/∂(e^i)² blocks (a function of one edge vector, such as the stretching of that edge, has its
// whole Hessian there): 9 additions in the reduced variables instead of 36 in the stencil.
void bendTwistHessian(const EdgeKinematics& k0, const EdgeKinematics& k1, const BendParams* bend,
                      const TwistParams* twist, double m_ref, Mat11& H, StrainGradients* cache = nullptr,
                      const Mat3* extra0 = nullptr, const Mat3* extra1 = nullptr);

}  // namespace rodsim::der
