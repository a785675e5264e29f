// External loads: gravity, point-load, damping (all rodsim::Force).
#pragma once

#include <rodsim/capabilities.h>
#include <rodsim/force.h>
#include <rodsim/rod.h>

#include <optional>
#include <string>
#include <vector>

namespace rodsim::loads {

// Weight m_i g on every position DOF of the selected rods (m_i from World::mass()), scaled by
// ctx.load_scale. Potential energy -sum m_i g . x_i (times load_scale). `g` is adjustable between
// steps (AdjustableParameters).
class Gravity : public Force, public AdjustableParameters {
  RODSIM_INTERFACES(Gravity, AdjustableParameters)

 public:
  static Schema schema();
  explicit Gravity(const Params& p);
  void bind(World& world) override;
  void addForce(const EvalContext& ctx, Vec& f) override;
  double potentialEnergy(const EvalContext& ctx) const override;
  std::vector<std::string> adjustableParameters() const override { return {"g"}; }
  std::vector<double> parameter(const std::string& key) const override;
  void setParameter(const std::string& key, const std::vector<double>& value, double t) override;
  void saveState(std::vector<double>& out) const override;  // g, once it was adjusted
  void loadState(const std::vector<double>& in) override;

 private:
  Vec3 g_;
  bool adjusted_ = false;
  std::optional<std::vector<std::string>> rod_names_;
  World* world_ = nullptr;
  std::vector<int> node_dofs_;  // global x DOF of every node of the selected rods
  // node_dofs_ as runs of nodes whose DOFs are contiguous (first x DOF, number of nodes): one run per
  // cosserat rod, so addForce is a unit-stride loop.
  std::vector<std::pair<int, int>> runs_;
};

// A dead force (N) and/or torque (N m) at one node, scaled by ctx.load_scale. The torque goes
// through Rod::addNodeTorque (its dependence on the configuration is not linearized). `force` and
// `torque` are adjustable between steps (AdjustableParameters: a controller's actuator).
class PointLoad : public Force, public AdjustableParameters {
  RODSIM_INTERFACES(PointLoad, AdjustableParameters)

 public:
  static Schema schema();
  explicit PointLoad(const Params& p);
  void bind(World& world) override;
  void addForce(const EvalContext& ctx, Vec& f) override;
  double potentialEnergy(const EvalContext& ctx) const override;
  std::vector<std::string> adjustableParameters() const override { return {"force", "torque"}; }
  std::vector<double> parameter(const std::string& key) const override;
  void setParameter(const std::string& key, const std::vector<double>& value, double t) override;
  void saveState(std::vector<double>& out) const override;  // force and torque, once adjusted
  void loadState(const std::vector<double>& in) override;

 private:
  bool adjusted_ = false;
  std::string rod_name_;
  long long node_param_;
  double factor(const EvalContext& ctx) const;  // load_scale, times the harmonic factor in dynamics
  std::optional<Vec3> force_, torque_;
  double frequency_ = -1, start_ = 0, ramp_ = 0;  // frequency < 0: constant load
  Rod* rod_ = nullptr;
  int node_ = -1;
};

// Viscous damping per unit length: F_i = -c lbar_i v_i on every position DOF, with lbar_i the
// rest Voronoi length and v_i the implicit velocity of the step; K_ii = c lbar_i / dt.
class Damping : public Force {
 public:
  static Schema schema();
  explicit Damping(const Params& p);
  void bind(World& world) override;
  void addForce(const EvalContext& ctx, Vec& f) override;
  void addStiffness(const EvalContext& ctx, StiffnessSink& K) override;
  bool velocityDependent() const override { return true; }

 private:
  double c_;
  double stop_;  // no damping from this time on (infinity: always)
  std::optional<std::vector<std::string>> rod_names_;
  std::vector<int> dofs_;      // global position DOFs
  std::vector<double> coef_;   // c * lbar_i for each of them, N s/m
  // dofs_ as runs of consecutive DOFs (first DOF, index into dofs_/coef_, length): one run per
  // rod whose position DOFs are contiguous (cosserat), so addForce is a unit-stride loop.
  struct Run {
    int dof, index, length;
  };
  std::vector<Run> runs_;
  // The World's threads (ParallelLoops, SDK 1.10): the runs in blocks of rods, or one long run in
  // blocks of DOFs (each DOF as on one thread: the same force bit for bit). nullptr: one thread.
  ParallelLoops* loops_ = nullptr;
};

}  // namespace rodsim::loads
