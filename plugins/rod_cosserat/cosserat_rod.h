// The "cosserat" rod model: shearable, extensible Cosserat rods of Gazzola et al. (2018,
// Sec. II-III, Eqs. 9-24 and Appendix C), for explicit symplectic time stepping
// (plugins/solver_explicit) and, through the exact Hessian of its energy (addStiffness), for the Newton
// solvers (plugins/solver_newton). See README.md in this folder for the conventions.
#pragma once

#include "rotation_jacobians.h"

#include <rodsim/capabilities.h>
#include <rodsim/rod.h>

#include <new>
#include <vector>

namespace rodsim {

namespace cosserat {
// Storage of the rod's own arrays on 64-byte boundaries (a cache line, one AVX-512 vector): the
// vectorized passes (cosserat_rod.cpp) then load and store whole vectors without straddling two
// cache lines, which std::allocator's 16-byte alignment makes most AVX-512 accesses do
// (benchmarks/README.md, "rod_cosserat").
template <class T> struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <class U> CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(64))); }
  void deallocate(T* p, std::size_t) { ::operator delete(p, std::align_val_t(64)); }
  template <class U> bool operator==(const CacheLineAllocator<U>&) const { return true; }
};
using Doubles = std::vector<double, CacheLineAllocator<double>>;
using Vec3s = std::vector<Vec3, CacheLineAllocator<Vec3>>;
}  // namespace cosserat

class CosseratRod : public Rod,
                    public RodStiffness,
                    public RodVelocityForces,
                    public RodRotationVectors,
                    public RodClosedCenterline,
                    public RodStrainReport {
  RODSIM_INTERFACES(CosseratRod, RodStiffness, RodVelocityForces, RodRotationVectors, RodClosedCenterline,
                    RodStrainReport)

 public:
  static Schema schema();
  explicit CosseratRod(const Params& p);
  // Finds the World's threads (ParallelLoops, SDK 1.10): a long rod spreads its element passes over them.
  void bind(World& world) override;

  // --- layout: [x_0 .. x_{N}] (3 per node), then [φ_0 .. φ_{n-1}] (3 per element); an open rod has
  // n = N elements on N + 1 nodes, a closed one (`closed`) n = N + 1 (element N joins node N to node 0).
  int numNodes() const override { return nn_; }
  int numDofs() const override { return 3 * nn_ + 3 * ne_; }
  int positionDof(int node) const override { return 3 * node; }
  // First of the three rotation-vector DOFs of element e (material frame components, rad).
  int rotationDof(int edge) const { return 3 * nn_ + 3 * edge; }
  // The rotation about the element's d3 (its twist about the tangent): what `rotate` spins.
  int twistDof(int edge) const override { return rotationDof(edge) + 2; }
  // The element's three rotation DOFs: what `clamp`, `rotate` and `translate` prescribe for an element
  // whose two nodes they hold (the bending rotations at zero relative to the committed frame).
  std::vector<int> frameDofs(int edge) const override {
    const int r = rotationDof(edge);
    return {r, r + 1, r + 2};
  }

  void initialDofs(VecRef q) const override;
  void initialVelocity(VecRef v) const override;
  void lumpedMass(VecRef m) const override;

  double radius(int) const override { return r_; }
  double nodeRadius(int) const override { return r_; }
  double restVoronoiLength(int node) const override { return voronoi_[node]; }

  void setConfiguration(ConstVecRef q) override;
  void commitConfiguration() override;
  void rebaseDofs(VecRef q_local, VecRef v_local) override;
  // Positions drift by h v; the rotation vector φ of a free element composes with the drift of its
  // angular velocity, exp(-[φ']) = exp(-h[ω]) exp(-[φ]) (Eq. 16 after the earlier drifts of the
  // step), i.e. φ' = log(exp([φ]) exp(h[ω])).
  void drift(VecRef q_local, ConstVecRef v_local, const double* free_local, double h) const override;
  // drift's rotation vectors of elements first .. end-1.
  void driftRotations(VecRef q_local, ConstVecRef v_local, const double* free_local, double h, int first,
                      int end) const;
  double elasticEnergy() const override;
  void addElasticForce(VecRef f_local) const override;
  void addVelocityForce(const EvalContext& ctx, VecRef f_local) const override;
  // K += ∂²U/∂q² at the last configuration set (global indexing), the exact Hessian of the elastic
  // energy U(q) as setConfiguration reads q: positions and rotation vectors φ relative to the committed
  // frames, at any φ (README.md, "Stiffness"). force_law = "gazzola2018" has no energy: ParamError.
  void addStiffness(StiffnessSink& K) const override;
  // addElasticForce with the rotation rows -∂U/∂φ_e = J_l(φ_e) C_e instead of the couples C_e (the
  // same at φ = 0): the exact -∂U/∂q whose Jacobian addStiffness gives (tests; README.md, "Stiffness").
  void addElasticForceOfDofs(VecRef f_local) const;

  void materialFrame(int edge, Vec3& t, Vec3& m1, Vec3& m2) const override;
  double twistForDirector(int edge, const Vec3& m1) const override;
  void addNodeTorque(int node, const Vec3& torque, VecRef f_local) const override;
  // addNodeTorque for nodes 0 .. numEdges()-1 in one vectorized pass (bitwise the same sums).
  void addNodeTorques(const double* torques, VecRef f_local) const override;

  // --- RodStrainReport (cosserat_strain_report.cpp): Eqs. 9, 20, 23 and 10 of Gazzola et al. (2018)
  int numStrainElements() const override { return ne_; }
  int numJunctions() const override { return closed_ ? nn_ : ne_ - 1; }
  int junctionNode(int k) const override { return closed_ ? k : k + 1; }
  bool shearable() const override { return true; }
  void reportElements(double* stretch, double* shear, double* force) const override;
  void reportJunctions(double* curvature, double* couple) const override;
  Vec3 frameTorque(int edge, const double* g) const override;

  // Checkpoints: the committed frames (the state that is not in q).
  void saveState(std::vector<double>& out) const override;
  void loadState(const std::vector<double>& in) override;

  // --- model-specific (tests, constraints, output)
  int numElements() const { return ne_; }
  Mat3 frame(int e) const { ensureFrames(); return gather(Q_, e); }  // rows d1, d2, d3
  Mat3 committedFrame(int e) const { return gather(Qc_, e); }
  double dilatation(int e) const { ensureStrains(); return e_[e]; }
  Vec3 shearStrain(int e) const;  // σ_L = Q(e t - d3)
  Vec3 curvature(int node) const;  // κ̂_L at an interior node (every node of a ring), 1/m
  bool closed() const { return closed_; }
  bool closedCenterline() const override { return closed_; }
  bool writtenForceLaw() const { return written_force_law_; }
  double restLength(int e) const { return lhat_[e]; }
  const Vec3& shearStiffness() const { return S_; }  // diag Ŝ, N
  const Vec3& bendStiffness() const { return B_; }   // diag B̂, N m²

 private:
  // Lazy evaluation (see README.md, "Cost"): setConfiguration only records q; the frames
  // Q = exp(-[φ]) Qc and then the strains are computed when something asks for them.
  void ensureFrames() const {
    if (!frames_ok_) computeFrames();
  }
  void ensureStrains() const {
    if (!strains_ok_) computeStrains();
  }
  void computeFrames() const;
  // Frames are stored structure-of-arrays: entry k = r + 3c (column-major, as Mat3) of element e's
  // frame at [k ns_ + e], so the per-element loops read nine unit-stride streams and vectorize. The
  // stride ns_ is ne_ rounded up to 8 so that each stream starts on a cache line too.
  Mat3 gather(const cosserat::Doubles& A, int e) const {
    Mat3 M;
    for (int k = 0; k < 9; ++k) M.data()[k] = A[static_cast<std::size_t>(k) * ns_ + e];
    return M;
  }
  void scatter(cosserat::Doubles& A, int e, const Mat3& M) const {
    for (int k = 0; k < 9; ++k) A[static_cast<std::size_t>(k) * ns_ + e] = M.data()[k];
  }
  void computeStrains() const;  // frames first (their own pass) if they are stale
  void shearOf(int e, Vec3& sigma, Vec3& n) const;  // σ_L and n_L of element e (energy, shearStrain)
  void closeStrains() const;    // a ring's closing element n-1 and junction node 0 (computeStrains)
  void removeBendTwistRescaling() const;  // bend_twist_rescaling = false (computeStrains): B̂κ̂ instead of B̂κ̂/E³
  void applyWrittenForceLaw() const;  // force_law = "gazzola2018" (computeStrains): Eq. 23's Qᵀn/e, no dE/dℓ forces
  // The node after node e along element e: e + 1, or 0 for the closing element of a ring.
  int next(int e) const { return closed_ && e + 1 == nn_ ? 0 : e + 1; }
  double closedTwistRate(double requested) const;  // constructor: a ring's initial twist density

  // True when the element passes are spread over the World's threads (README.md, "Threads"): more
  // than one thread and at least 2 kSpreadGrain elements. Each element (node) of a spread pass is
  // computed from inputs no other element of that pass writes, with the operations of the one-thread
  // pass, so the results are bit for bit those of one thread.
  bool spread() const { return spread_; }
  static constexpr int kSpreadGrain = 1024;  // elements per block at least (a pass over them: ~10 us)
  // elasticEnergy of a rod longer than this sums chunks of this many elements (a fixed order).
  static constexpr int kEnergyChunk = 1024;
  mutable cosserat::Doubles energy_chunks_;  // elasticEnergy's partial sums
  ParallelLoops* loops_ = nullptr;
  bool spread_ = false;

  int nn_ = 0, ne_ = 0;
  std::size_t ns_ = 0;  // stride of the structure-of-arrays frames: ne_ rounded up to a multiple of 8 (gather)
  bool closed_ = false;  // a ring: ne_ = nn_, element nn_-1 joins node nn_-1 to node 0
  bool written_force_law_ = false;    // force_law = "gazzola2018": Eq. 23 as written instead of the energy gradient
  bool bend_twist_rescaling_ = true;  // Eq. 10's B̂κ̂/E³ (false: B̂κ̂ at every stretch)
  double r_ = 0, rho_ = 0, E_ = 0, G_ = 0, gamma_r_ = 0;
  Vec3 S_, B_, J_;  // Ŝ, B̂ (diagonals) and ρÎ per unit length
  std::vector<Vec3> x_init_;
  std::vector<std::pair<int, double>> point_masses_;  // (node, kg): added to the lumped mass
  Vec3 v_init_ = Vec3::Zero();
  cosserat::Doubles lhat_, voronoi_, Dhat_;  // rest edge, node Voronoi (ends: half edge), interior D̂
  cosserat::Doubles ilhat_;                 // 1 / lhat_
  cosserat::Vec3s sigma0_, theta0_;          // rest strains: σ°_L per element, D̂ κ̂°_L per node
  cosserat::Doubles Qc_;                     // committed frames (rows d1, d2, d3), SoA (gather)

  // current configuration (setConfiguration) and what is derived from it, on demand
  Vec q_;
  mutable bool frames_ok_ = false, strains_ok_ = false;
  bool frames_committed_ = false;  // φ = 0 since rebaseDofs: the current frames are Qc_ (computeFrames)
  mutable cosserat::Doubles Q_;  // current frames exp(-[φ]) Qc, SoA (gather)
  mutable cosserat::Vec3s t_, theta_;  // tangent, θ = D̂κ̂
  mutable cosserat::Doubles l_, e_, Ebend_;  // length, dilatation; bending energy per node
  // What computeStrains prepares for the elastic forces: per element Qᵀn_L (Nf_) and (Q d) × n_L (cn_),
  // per node J_r⁻¹m and J_l⁻¹m (Jp_, Jn_, 3 each, m = dE/dθ) and g_ = dE/dℓ of the adjacent elements.
  mutable cosserat::Vec3s cn_;
  mutable cosserat::Doubles Nf_, Jp_, Jn_, g_;
  mutable cosserat::Doubles big_;  // 1 at the nodes whose curvature needs logSO3's large-angle branch
  mutable cosserat::Doubles jc_;   // scratch of nodeCurvatures: c(θ) of the inverse Jacobians per node
  mutable cosserat::Doubles redo_;  // scratch of rotateFrames: elements redone one by one
  mutable bool wide_curvatures_ = false;  // the last curvature pass met 0.1 rad or more (computeStrains)
  mutable cosserat::Vec3s couple_;  // elastic couples of the last addElasticForce
  mutable cosserat::Doubles vel_;  // scratch of addVelocityForce: ω and the node velocity differences, 3 ne each
  // Work array of addStiffness: J_r(φ_e), J_l(φ_e) and the coefficients of J_l per element (shared by
  // the element's shear/stretch term and the bend/twist terms of its two nodes).
  mutable std::vector<cosserat::RotationDofJacobians> rotation_jacobians_;
};

}  // namespace rodsim
