// The slender_body_drag plugin: the local resistive drag of slender-body theory at low Reynolds
// number (Gazzola et al. 2018, Sec. IV.6, Eqs. 43-44), for every rod model. See
// README.md in this folder.
#pragma once

#include <rodsim/force.h>
#include <rodsim/rod.h>

#include <optional>
#include <string>
#include <vector>

namespace rodsim::sbt {

// The `slender-body-drag` force. Per edge e between nodes a and b (edge vector e = x_b - x_a, current
// length l = |e|, tangent t = e / l), with the edge velocity v_e = (v_a + v_b) / 2:
//   F_e = -c_e l (I - t t^T / 2) v_e,        c_e = 4 pi mu / ln(L / r_e)           (Eq. 43)
// (tangential drag c_e / 2 per unit length, normal c_e: Eq. 44), half of F_e on each node. The nodal
// forces are -dR/dv of the Rayleigh function R = sum_e c_e l v_e^T (I - t t^T / 2) v_e / 2, so the drag
// only dissipates (sum_i F_i . v_i = -2 R <= 0). Velocities are the implicit ones of the step,
// (q - q_start) / dt; zero in quasi-static solves. K = -dF/dq holds the velocity part (c_e l P / (4 dt)
// per node pair) and, with position_jacobian = true, the position part (the tangent and length of each
// edge turn with its nodes; not symmetric).
class SlenderBodyDrag : public Force {
 public:
  static Schema schema();
  explicit SlenderBodyDrag(const Params& p);
  void bind(World& world) override;
  void addForce(const EvalContext& ctx, Vec& f) override;
  void addStiffness(const EvalContext& ctx, StiffnessSink& K) override;
  // Explicit solvers integrate it over each kick (velocity_forces = midpoint / rk4) like `damping`.
  bool velocityDependent() const override { return true; }

  // The drag coefficient c_e = 4 pi mu / ln(L / r_e) (N s / m^2) of every edge, in bind order (tests).
  const std::vector<double>& coefficients() const { return c_; }

 private:
  struct Edge {
    int a, b;  // global x DOFs of the two nodes (y, z follow)
  };
  double mu_;
  std::optional<double> length_;
  bool position_jacobian_;
  std::optional<std::vector<std::string>> rod_names_;
  std::vector<Edge> edges_;
  std::vector<double> c_;  // 4 pi mu / ln(L / r_e) per edge
};

}  // namespace rodsim::sbt
