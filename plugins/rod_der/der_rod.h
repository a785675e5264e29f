// The "der" rod model: Discrete Elastic Rods (Tong et al. 2023, section 2, Eqs. 1-6; Bergou et al. 2008,
// 2010) with exact gradients and Hessians. See README.md in this folder.
#pragma once

#include "der_energies.h"

#include <rodsim/capabilities.h>
#include <rodsim/rod.h>

#include <vector>

namespace rodsim {

class DerRod : public Rod, public RodStiffness, public RodStrainReport {
  RODSIM_INTERFACES(DerRod, RodStiffness, RodStrainReport)

 public:
  static Schema schema();
  explicit DerRod(const Params& p);

  // --- layout: [x0, θ0, x1, θ1, ..., x_{N-1}]
  int numNodes() const override { return n_; }
  int numDofs() const override { return 4 * n_ - 1; }
  int positionDof(int node) const override { return 4 * node; }
  int twistDof(int edge) const override { return 4 * edge + 3; }

  void initialDofs(VecRef q) const override;
  void initialVelocity(VecRef v) const override;
  void lumpedMass(VecRef m) const override;

  double radius(int /*edge*/) const override { return r_; }
  double nodeRadius(int /*node*/) const override { return r_; }
  double restVoronoiLength(int node) const override { return voronoi_[node]; }

  void setConfiguration(ConstVecRef q) override;
  void commitConfiguration() override;
  void saveState(std::vector<double>& out) const override;
  void loadState(const std::vector<double>& in) override;
  double elasticEnergy() const override;
  void addElasticForce(VecRef f_local) const override;
  void addStiffness(StiffnessSink& K) const override;

  void materialFrame(int edge, Vec3& t, Vec3& m1, Vec3& m2) const override;
  double twistForDirector(int edge, const Vec3& m1) const override;
  void addNodeTorque(int node, const Vec3& torque, VecRef f_local) const override;

  // --- RodStrainReport (der_strain_report.cpp): Eqs. 1, 3, 4 and 6 of Tong et al. (2023)
  int numStrainElements() const override { return n_ - 1; }
  int numJunctions() const override { return n_ > 2 ? n_ - 2 : 0; }
  int junctionNode(int k) const override { return k + 1; }
  bool shearable() const override { return false; }
  void reportElements(double* stretch, double* shear, double* force) const override;
  void reportJunctions(double* curvature, double* couple) const override;
  Vec3 frameTorque(int edge, const double* g) const override;

  // --- model-specific queries (tests, output)
  double restEdgeLength(int edge) const { return rest_len_[edge]; }
  // Reference twist m_ref^i (Eq. 4) of interior node i in the current configuration.
  double referenceTwist(int node) const { return ref_twist_[node]; }
  // Material curvatures (κ^(1), κ^(2)) (Eq. 3) and twist τ (Eq. 4) at interior node i.
  der::Vec2 materialCurvature(int node) const;
  double twist(int node) const;
  der::Vec2 naturalCurvature(int node) const { return kappa_bar_[node]; }
  double naturalTwist(int node) const { return tau_bar_[node]; }
  const Vec3& tangent(int edge) const { return t_[edge]; }
  const Vec3& referenceDirector1(int edge) const { return d1_[edge]; }
  double stretchStiffness() const { return EA_; }   // EA, N
  double bendStiffness() const { return EI_; }      // EI1 = EI2, N m^2
  double twistStiffness() const { return GJ_; }     // GJ, N m^2
  double shearModulus() const { return G_; }        // Pa

 private:
  der::Vec11 stencil(int node) const { return q_.segment<11>(4 * (node - 1)); }
  void updateKinematics();  // kin_ from q_ and the committed frames
  der::BendParams bendParams(int node) const;
  der::TwistParams twistParams(int node) const;

  int n_ = 0;
  double r_ = 0, rho_ = 0, E_ = 0, G_ = 0;
  double A_ = 0, I_ = 0, J_ = 0, EA_ = 0, EI_ = 0, GJ_ = 0;
  std::vector<Vec3> x_init_;
  std::vector<std::pair<int, double>> point_masses_;  // (node, kg): added to the lumped mass
  Vec3 v_init_ = Vec3::Zero();
  std::vector<double> rest_len_;   // |ē^e|
  std::vector<double> voronoi_;    // rest Voronoi length of each node (ends: half edge)
  std::vector<der::Vec2> kappa_bar_;  // per node (interior only meaningful)
  std::vector<double> tau_bar_;

  // Committed state (start of the step): frames of each edge and reference twist of each node.
  std::vector<der::EdgeFrame> committed_;
  std::vector<double> committed_twist_;

  // Current configuration. kin_: each edge's kinematics (tangent, transported frame, material
  // directors), computed once in setConfiguration and shared by the stretching of the edge and
  // the bending/twisting of both its nodes.
  Vec q_;
  // t_, d1_, d2_ and ref_twist_ hold q_'s values (set by setConfiguration, cleared when the
  // committed frames change): a setConfiguration to the same q can keep them.
  bool configured_ = false;
  std::vector<der::EdgeKinematics> kin_;
  // Strain gradients of each interior node, computed by addElasticForce and reused by
  // addStiffness at the same configuration (the kernel calls both at every evaluation);
  // invalidated with kin_.
  mutable std::vector<der::StrainGradients> strain_grad_;
  std::vector<Vec3> t_, d1_, d2_;
  std::vector<double> ref_twist_;

  // Scratch of addStiffness (sized once, so that it allocates nothing): the rod's Hessian in band
  // storage, column c's entry at row r in band_[kBand c + r - c + kHalfBand]. A stencil spans 11
  // consecutive DOFs, so |r - c| <= 10.
  static constexpr int kHalfBand = 10, kBand = 2 * kHalfBand + 1;
  mutable std::vector<double> band_;
  // Scratch of reportElements: the elastic forces whose partial sums are the edges' internal forces.
  mutable Vec report_force_;
};

}  // namespace rodsim
