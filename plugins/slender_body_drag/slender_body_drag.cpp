// slender-body-drag: the local resistive drag of slender-body theory (Gazzola et al. 2018, Sec. IV.6).
//
// Eq. 43 of the paper gives the hydrodynamic force per unit length of a slender filament moving with
// velocity v in a fluid of viscosity mu at Re << 1, to leading order in 1 / ln(L / r):
//     f = -(4 pi mu / ln(L / r)) (I - t t^T / 2) v,
// whose tangential part (Eq. 44) is -(2 pi mu / ln(L / r)) (v.t) t and whose normal part is
// -(4 pi mu / ln(L / r)) (v - (v.t) t): the tangential drag coefficient is half the normal one.
//
// Discretization (README.md, "Discretization"): per edge e from node a to node b, edge vector
// e = x_b - x_a, length l = |e|, tangent t = e / l, velocity v_e = (v_a + v_b) / 2, the edge force is
// the line density times the current length,
//     F_e = -c l (I - t t^T / 2) v_e = -c (l v_e - (e.v_e) e / (2 l)),           c = 4 pi mu / ln(L / r_e),
// and half of it goes to each node. With this lumping the nodal forces are -dR/dv_i of the Rayleigh
// function R = sum_e (c l / 2) v_e^T (I - t t^T / 2) v_e, so the drag dissipates exactly 2 R.
#include "slender_body_drag.h"

#include <rodsim/capabilities.h>

#include <cmath>
#include <numbers>
#include <string>

namespace rodsim::sbt {

Schema SlenderBodyDrag::schema() {
  Schema s{"slender-body-drag",
           "Local resistive drag of slender-body theory (Gazzola et al. 2018, Eqs. 43-44): per unit length "
           "f = -(4 pi mu / ln(L/r)) (I - t t^T/2) v, the tangential drag half the normal one. Per edge with its "
           "current tangent and length and the mean velocity of its two nodes, half on each node; works on every "
           "rod model. Implicit through its velocity Jacobian (and optionally the position one). Zero in quasi-static "
           "solves. Open rods (the closing element of a closed cosserat ring is not dragged)."};
  s.required<double>("viscosity", "Dynamic viscosity mu of the fluid.").unit("Pa s").atLeast(0);
  s.optional<double>("length",
                     "Length L in the logarithm ln(L/r) of Eq. 43 (default: each rod's rest length). It must exceed "
                     "every radius of the rods.")
      .unit("m")
      .greater(0);
  s.add<bool>("position_jacobian", false,
              "Add the position part of the Jacobian (the edge tangents and lengths turn with the nodes) to the "
              "velocity part c l (I - t t^T/2) / (4 dt). It is not symmetric, so the Newton solvers then factorize "
              "with LU instead of LDLT; without it Newton converges as fast on the scenes measured (README.md, "
              "\"Jacobians\").");
  s.optional<std::vector<std::string>>("rods", "Rods it acts on (default: all rods).");
  return s;
}

SlenderBodyDrag::SlenderBodyDrag(const Params& p)
    : Force(p),
      mu_(p.real("viscosity")),
      length_(p.has("length") ? std::optional<double>(p.real("length")) : std::nullopt),
      position_jacobian_(p.boolean("position_jacobian")),
      rod_names_(p.optionalStrings("rods")) {}

void SlenderBodyDrag::bind(World& world) {
  edges_.clear();
  c_.clear();
  const std::vector<Rod*> rods = resolveRods(world, rod_names_, "rods");
  refuseClosedRods(rods, "rods", "slender-body drag");
  for (Rod* rod : rods) {
    // L: the `length` parameter, else the rod's rest length (the sum of its rest edge lengths).
    const double L = length_ ? *length_ : restArcLengths(*rod).back();
    for (int e = 0; e < rod->numEdges(); ++e) {
      const double r = rod->radius(e);
      if (!(L > r))
        throw ParamError(length_ ? "length" : "rods",
                         "slender-body drag needs L > r (ln(L/r) > 0): rod '" + rod->name() + "' has L = " +
                             std::to_string(L) + " m and radius " + std::to_string(r) + " m at edge " +
                             std::to_string(e));
      edges_.push_back({rod->globalPositionDof(e), rod->globalPositionDof(e + 1)});
      c_.push_back(4.0 * std::numbers::pi * mu_ / std::log(L / r));  // Eq. 43
    }
  }
}

void SlenderBodyDrag::addForce(const EvalContext& ctx, Vec& f) {
  if (ctx.quasi_static || !(ctx.dt > 0)) return;
  const double* q = ctx.q->data();
  const double* qs = ctx.q_start->data();
  const double idt = 1.0 / ctx.dt;
  double* fd = f.data();
  for (std::size_t k = 0; k < edges_.size(); ++k) {
    const int a = edges_[k].a, b = edges_[k].b;
    double e[3], v[3];
    for (int i = 0; i < 3; ++i) {
      e[i] = q[b + i] - q[a + i];
      // v_e = (v_a + v_b) / 2 with v = (q - q_start) / dt, as EvalContext::velocity
      v[i] = 0.5 * ((q[a + i] - qs[a + i]) * idt + (q[b + i] - qs[b + i]) * idt);
    }
    const double l = std::sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
    const double ev = e[0] * v[0] + e[1] * v[1] + e[2] * v[2];
    const double c = c_[k];
    // half of F_e = -c (l v - (e.v) e / (2 l)) on each node
    for (int i = 0; i < 3; ++i) {
      const double Fi = -0.5 * c * (l * v[i] - 0.5 * ev * e[i] / l);
      fd[a + i] += Fi;
      fd[b + i] += Fi;
    }
  }
}

void SlenderBodyDrag::addStiffness(const EvalContext& ctx, StiffnessSink& K) {
  // The same entries in every call (zeros when quasi-static, and for the position part when it is off) so that
  // the pattern stays cached.
  const bool off = ctx.quasi_static || !(ctx.dt > 0);
  const double idt = off ? 0.0 : 1.0 / ctx.dt;
  const double* q = ctx.q->data();
  const double* qs = ctx.q_start->data();
  for (std::size_t k = 0; k < edges_.size(); ++k) {
    const int a = edges_[k].a, b = edges_[k].b;
    Vec3 e, v;
    for (int i = 0; i < 3; ++i) {
      e[i] = q[b + i] - q[a + i];
      v[i] = off ? 0.0 : 0.5 * ((q[a + i] - qs[a + i]) * idt + (q[b + i] - qs[b + i]) * idt);
    }
    const double l = e.norm();
    const Vec3 t = e / l;
    const double c = c_[k];
    // Velocity part: dF_i/dv_j = -(c l / 4) P for i, j in {a, b} (half of F_e, v_e = (v_a + v_b)/2),
    // P = I - t t^T / 2, and dv_j/dq_j = 1/dt: K_v = (c l / (4 dt)) P.
    const Mat3 Kv = (0.25 * c * l * idt) * (Mat3::Identity() - 0.5 * t * t.transpose());
    // Position part at fixed velocity: D = dF_e/de = -c (v t^T - (t v^T + (t.v)(I - t t^T)) / 2), the
    // derivative of -c (l v - (e.v) e / (2 l)); node a gets F_e/2 and e = x_b - x_a, so
    // -dF_a/dx_a = D/2, -dF_a/dx_b = -D/2, and the same for node b.
    const double tv = t.dot(v);
    const Mat3 D = position_jacobian_
                       ? Mat3(-c * (v * t.transpose() - 0.5 * (t * v.transpose() + tv * (Mat3::Identity() - t * t.transpose()))))
                       : Mat3(Mat3::Zero());
    const Mat3 Kaa = Kv + 0.5 * D, Kab = Kv - 0.5 * D;
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 3; ++i) {
        K.add(a + i, a + j, Kaa(i, j));
        K.add(a + i, b + j, Kab(i, j));
        K.add(b + i, a + j, Kaa(i, j));
        K.add(b + i, b + j, Kab(i, j));
      }
  }
}

}  // namespace rodsim::sbt
