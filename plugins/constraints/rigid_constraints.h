// Prescribed rigid motion of a set of nodes and of the material frames of the edges between them:
// clamp (at rest), rotate (about an axis), translate (at constant velocity over [start, stop]).
#pragma once

#include <rodsim/capabilities.h>
#include <rodsim/constraint.h>
#include <rodsim/rod.h>

#include <optional>
#include <string>
#include <vector>

namespace rodsim::constraints {

// The shared part: the nodes, their initial positions p0 and the initial director m1_0 of every
// edge whose two nodes are listed. A subclass gives the rigid motion x -> R(t) x + b(t); then
//   p(t) = R(t) p0 + b(t),   m1(t) = R(t) m1_0 (written as a twist angle via twistForDirector),
// and the edge's other frame DOFs (Rod::frameDofs minus the twist: a cosserat element's two bending
// rotations) stay at their values at bind. With R = I (clamp, translate) that holds the whole frame
// on every rod model; see README.md for rotate.
class RigidMotionConstraint : public Constraint {
 public:
  explicit RigidMotionConstraint(const Params& p);

  void bind(World& world) override;
  const std::vector<int>& dofs() const override { return dofs_; }
  const std::vector<int>& positionDofs() const override { return position_dofs_; }
  void prescribe(double t, Vec& q) override;

  // The rigid motion at time t: rotation R and translation b.
  virtual void motion(double t, Mat3& R, Vec3& b) const = 0;

  const std::vector<int>& nodes() const { return nodes_; }
  const std::vector<int>& edges() const { return edges_; }  // edges with a prescribed frame
  // Frame DOFs held at their bind values besides the twists (global): empty on DER rods.
  const std::vector<int>& heldFrameDofs() const { return held_dofs_; }

 protected:
  // Declares `rod` and `nodes` in a subclass schema.
  static void declareCommon(Schema& s);
  // Which position components (x, y, z) of the listed nodes are prescribed; all three unless a
  // subclass restricts them (clamp's `components`). With a restriction no twist is prescribed.
  bool held_[3] = {true, true, true};
  Rod& rod() const { return *rod_; }  // after bind

 private:
  std::string rod_name_;
  std::vector<long long> node_params_;
  Rod* rod_ = nullptr;
  std::vector<int> nodes_, edges_;
  std::vector<Vec3> p0_, m1_0_;
  std::vector<double> theta_last_;  // last prescribed twist per edge (2 pi unwrapping fallback)
  std::vector<int> twist_dofs_;     // per edge: local twist DOF, or -1 if it is not among frameDofs
  // Frame DOFs other than the twist (a cosserat element's bending rotations), global, and the values
  // they had at bind: prescribed at those values (zero for cosserat: the committed frame's d3).
  std::vector<int> held_dofs_;
  std::vector<double> held_values_;
  std::vector<int> dofs_, position_dofs_;
};

// Holds the nodes and the frames of the edges between them at their initial values; `components`
// restricts the hold to some position components (a pin that slides along an axis).
class Clamp : public RigidMotionConstraint {
 public:
  static Schema schema();
  explicit Clamp(const Params& p);
  void motion(double t, Mat3& R, Vec3& b) const override;
};

// Rigid rotation about `axis` through `center` at `angular_velocity` from time `start`. The
// angular velocity is adjustable between steps (AdjustableParameters: a motor a controller drives);
// the angle goes on from its value at the change.
class Rotate : public RigidMotionConstraint, public AdjustableParameters {
  RODSIM_INTERFACES(Rotate, AdjustableParameters)

 public:
  static Schema schema();
  explicit Rotate(const Params& p);
  // On a model with frame DOFs beyond the twist (cosserat) only the twist follows R while the bending
  // rotations are held: exact when the held edge's d3 lies along the axis (it spins about itself),
  // so any other axis is a ParamError on `axis` (cosserat-clamp's angular_velocity rotates whole frames).
  void bind(World& world) override;
  void motion(double t, Mat3& R, Vec3& b) const override;
  std::vector<std::string> adjustableParameters() const override { return {"angular_velocity"}; }
  std::vector<double> parameter(const std::string& key) const override;
  void setParameter(const std::string& key, const std::vector<double>& value, double t) override;
  void saveState(std::vector<double>& out) const override;  // omega, start and angle0, once adjusted
  void loadState(const std::vector<double>& in) override;

 private:
  double angle(double t) const;
  Vec3 axis_, center_;
  double omega_, start_;
  // After an adjustment: the angle reached at the change (start_ is then the time of the change).
  double angle0_ = 0;
  bool adjusted_ = false;
};

// Translation at `velocity` between `start` and `stop`, held still before and after; the frames
// keep their initial m1.
class Translate : public RigidMotionConstraint {
 public:
  static Schema schema();
  explicit Translate(const Params& p);
  void motion(double t, Mat3& R, Vec3& b) const override;

 private:
  Vec3 velocity_;
  double start_;
  std::optional<double> stop_;
};

}  // namespace rodsim::constraints
