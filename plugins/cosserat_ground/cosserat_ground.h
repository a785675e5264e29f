// The cosserat_ground plugin: a soft ground plane with anisotropic Amonton-Coulomb friction and
// rolling (Gazzola et al. 2018, Sec. IV.4-5, Eqs. 38-42, Appendix F) and the travelling-wave muscle
// couple (Sec. IV.2, Eqs. 33 and 35). See README.md in this folder.
#pragma once

#include <rodsim/force.h>
#include <rodsim/rod.h>

#include <optional>
#include <string>
#include <vector>

namespace rodsim::ground {

// Per-element friction regime of the last evaluation (reported as fractions).
enum class Regime : signed char { None = 0, Static = 1, Kinetic = 2 };

// The `ground` force: for every element of the selected (open) rods whose centre is within
// radius + contact_tolerance of the plane,
//   - the wall response of Eq. 38, F_w = H(eps) (-F_perp + k_w eps - gamma_w v.n) n, with F_perp the
//     normal component of the total force the element carries when it pushes into the plane;
//   - longitudinal friction along u_x (Sec. IV.5, the F_long equation): static (|v_x| <= v_eps):
//     -F_x capped at mu_s |F_w|, kinetic: -mu_k |F_w| sign(v_x); forward coefficients when the force
//     (static) or velocity (kinetic) points along +t, backward ones otherwise;
//   - lateral friction along u_k with rolling: slip velocity v_slip = v_k + r n x omega_x (Eq. 39),
//     static: the no-slip force of Eqs. 40-42 capped at mu_rs |F_w|, kinetic: -mu_rk |F_w| sign(v_slip),
//     and the couple (-r n) x F_lat (C_lat of Sec. IV.5) on the element.
// It reads the total force accumulated before it in the evaluation (rods' internal forces and every
// force listed before it in the scene): list it after the other forces.
class Ground : public Force {
 public:
  static Schema schema();
  explicit Ground(const Params& p);
  void bind(World& world) override;
  void addForce(const EvalContext& ctx, Vec& f) override;
  // Coulomb friction depends on the total force of the evaluation, which
  // World::evaluateVelocityForces does not provide, and it is discontinuous in the velocity:
  // explicit kicks freeze it at the velocity before the kick, as the paper's Appendix B scheme does.
  bool velocityDependent() const override { return false; }
  // Only the Newton solvers (implicit-euler, static) ask a force for its stiffness; the explicit ones
  // never do. `ground` has none to give: its wall response and static friction cancel the total force
  // of the evaluation (Eqs. 38, 40-42), which has no Jacobian, and Coulomb friction is discontinuous
  // in the velocity; under Newton the snake does not converge (|R| stays at 5 N). So it refuses them
  // here, with the reason, at the first step (what a force needs of the solver cannot be declared per
  // type in SDK 1.4, so `rodsim check` does not see it: README.md).
  void addStiffness(const EvalContext& ctx, StiffnessSink& K) override;

  std::vector<std::string> reportColumns() const override;
  void reportValues(std::vector<double>& out) const override;

 private:
  struct Element {
    Rod* rod;
    int local;    // element index in its rod
    int a, b;     // global x DOFs of its two nodes
    int tw;       // global twist DOF (-1: none)
    double r;     // radius
    double wa, wb;  // weights of the node forces in the element force (1/2, or 1 at the rod's ends)
    int va, vb, vt;  // indexes of the DOFs a, b, tw in vel_ (vt: -1 without a twist DOF)
  };
  // The elements of one rod: elements_[k0 .. k0 + n), with the rod's DOFs [lo, lo + ndof) at vel_[voff ..).
  struct RodRun {
    Rod* rod;
    int k0, n, lo, ndof, voff;
    bool uniform;  // element k0 + j joins nodes at DOFs a0 + 3 j and a0 + 3 j + 3, one radius
  };
  Vec3 point_, normal_;
  double k_w_, gamma_w_, tolerance_, v_eps_;
  double mu_fs_, mu_bs_, mu_rs_, mu_fk_, mu_bk_, mu_rk_;
  bool rolling_;
  std::optional<std::vector<std::string>> rod_names_;
  World* world_ = nullptr;
  std::vector<Element> elements_;
  // scratch, sized at bind: element force (3 per element) and axial torque gathered before any write
  std::vector<double> force_, torque_;
  std::vector<RodRun> runs_;
  // scratch: velocities (q - q_start)/dt of every DOF of the rods, computed per rod in one vector
  // pass; the couple of the lateral friction on each element (3 per element, zero without one),
  // handed to each rod at once (Rod::addNodeTorques)
  std::vector<double> vel_, couple_;
  std::vector<double> geo_;  // scratch: per element geometry (ground.cpp, Geometry), 14 per element
  std::vector<Regime> longitudinal_, lateral_;
  double normal_total_ = 0;
  int contacts_ = 0;
};

// The `muscle-torque` force: internal couples C_i = A(s_i, t) d_i at the interior nodes of one rod,
// +C_i on the element after node i and -C_i on the element before it (no net couple), with
//   A(s, t) = ramp(t) beta(s) sin(2 pi t / T_m + k_m s + phi_m)      (Eq. 33, k_m = 2 pi / lambda_m)
// and d_i the chosen material director (d1 for the paper's slithering, Eq. 35) averaged over the two
// elements. beta is a clamped uniform cubic B-spline over the rest length with the given control
// coefficients; ramp(t) = min(1, t / ramp_up_time).
class MuscleTorque : public Force {
 public:
  static Schema schema();
  explicit MuscleTorque(const Params& p);
  void bind(World& world) override;
  void addForce(const EvalContext& ctx, Vec& f) override;

  // Clamped uniform cubic B-spline with coefficients c (at least 4) at u in [0, 1].
  static double bspline(const std::vector<double>& c, double u);

 private:
  std::string rod_name_;
  std::vector<double> beta_coef_;
  double period_, wave_number_, phase_, ramp_;
  int director_;  // 0, 1, 2: d1, d2, d3
  Rod* rod_ = nullptr;
  std::vector<double> s_, beta_;          // rest arc length and amplitude of each node
  std::vector<double> cos_ks_, sin_ks_;   // cos(k_m s_i), sin(k_m s_i)
  std::vector<Vec3> dir_, couple_;  // scratch: director per element, couple per element
};

}  // namespace rodsim::ground
