// The `ground` force: soft wall response (Eq. 38) and anisotropic Amonton-Coulomb friction with
// rolling (Sec. IV.5, Eqs. 39-42) of Gazzola et al. (2018). Notation of the paper's Fig. 8: n = u_perp
// the plane's outward normal, u_k = t x n the lateral direction, u_x = n x u_k the longitudinal one
// (the tangent projected on the plane).
#include "cosserat_ground.h"

#include <rodsim/capabilities.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace rodsim::ground {

namespace {

inline Vec3 load3(const double* p) { return Vec3(p[0], p[1], p[2]); }

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define GROUND_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define GROUND_SIMD_CLONES
#endif

// What the per-element loop needs of element k's geometry and velocity, branch-free (so that a run of
// elements vectorizes): its penetration eps, the mean velocity ve and total force Fe projected on
// the normal and (for the friction) on u_x and u_k, sin of the tangent's angle to the normal, and
// u_k, u_x. Same operations in the same order as the Eigen expressions they replace (dot products
// (a0 b0 + a1 b1) + a2 b2, Eigen's cross and norm, component-wise division by the norm in
// normalize()), so bitwise the same values. xa, xb, ma, mb, va, vb: the element's two nodes.
struct Geometry {
  double *eps, *s, *vn, *Fn, *vx, *Fx, *vk, *Fk, *uk, *ux;  // uk, ux: 3 per element
};
[[gnu::always_inline]] inline void elementGeometry(std::size_t k, const double* __restrict xa,
                                                   const double* __restrict xb, double ma, double mb,
                                                   const double* __restrict va, const double* __restrict vb,
                                                   const double* __restrict Fe, double r, const double* nrm,
                                                   const double* pt, const Geometry& g) {
  const double n0 = nrm[0], n1 = nrm[1], n2 = nrm[2];
  const double c0 = 0.5 * (xa[0] + xb[0]) - pt[0], c1 = 0.5 * (xa[1] + xb[1]) - pt[1],
               c2 = 0.5 * (xa[2] + xb[2]) - pt[2];
  g.eps[k] = r - ((n0 * c0 + n1 * c1) + n2 * c2);  // penetration (Fig. 7)
  const double mab = ma + mb;
  const double v0 = (ma * va[0] + mb * vb[0]) / mab, v1 = (ma * va[1] + mb * vb[1]) / mab,
               v2 = (ma * va[2] + mb * vb[2]) / mab;
  const double F0 = Fe[0], F1 = Fe[1], F2 = Fe[2];
  g.vn[k] = (n0 * v0 + n1 * v1) + n2 * v2;
  g.Fn[k] = (n0 * F0 + n1 * F1) + n2 * F2;
  const double t0 = xb[0] - xa[0], t1 = xb[1] - xa[1], t2 = xb[2] - xa[2];
  double u0 = t1 * n2 - t2 * n1, u1 = t2 * n0 - t0 * n2, u2 = t0 * n1 - t1 * n0;  // u_k = t x u_perp
  const double tl = std::sqrt((t0 * t0 + t1 * t1) + t2 * t2);
  const double z = (u0 * u0 + u1 * u1) + u2 * u2, un = std::sqrt(z);
  g.s[k] = un / (tl > 0 ? tl : 1.0);
  const double iu = z > 0 ? un : 1.0;  // normalize() leaves a zero vector alone
  u0 = u0 / iu, u1 = u1 / iu, u2 = u2 / iu;
  const double x0 = n1 * u2 - n2 * u1, x1 = n2 * u0 - n0 * u2, x2 = n0 * u1 - n1 * u0;  // u_x = u_perp x u_k
  g.vx[k] = (v0 * x0 + v1 * x1) + v2 * x2;
  g.Fx[k] = (F0 * x0 + F1 * x1) + F2 * x2;
  g.vk[k] = (v0 * u0 + v1 * u1) + v2 * u2;
  g.Fk[k] = (F0 * u0 + F1 * u1) + F2 * u2;
  g.uk[3 * k] = u0, g.uk[3 * k + 1] = u1, g.uk[3 * k + 2] = u2;
  g.ux[3 * k] = x0, g.ux[3 * k + 1] = x1, g.ux[3 * k + 2] = x2;
}

// elementGeometry for n elements whose nodes are consecutive in x, M and v (3 DOFs per node, as a
// Cosserat rod lays them out): element k from node k to node k+1, k = 0 .. n-1, results at k0 + k.
// The outputs are separate restrict pointers so that g++ vectorizes the loop across elements.
GROUND_SIMD_CLONES void runGeometry(const double* __restrict x, const double* __restrict M, const double* __restrict v,
                                    const double* __restrict Fe, double r, double n0, double n1, double n2, double p0,
                                    double p1, double p2, double* __restrict eps, double* __restrict s,
                                    double* __restrict vn, double* __restrict Fn, double* __restrict vx,
                                    double* __restrict Fx, double* __restrict vk, double* __restrict Fk,
                                    double* __restrict uk, double* __restrict ux, int n) {
  const double nrm[3] = {n0, n1, n2}, pt[3] = {p0, p1, p2};
  const Geometry g{eps, s, vn, Fn, vx, Fx, vk, Fk, uk, ux};
  for (int k = 0; k < n; ++k)
    elementGeometry(k, x + 3 * k, x + 3 * k + 3, M[3 * k], M[3 * k + 3], v + 3 * k, v + 3 * k + 3, Fe + 3 * k, r, nrm,
                    pt, g);
}

// v_i = (q_i - q_start_i) / dt over a rod's DOFs, as EvalContext::velocity rounds it, in one vector
// pass (the per-element loop needs 7 velocities per element, 6 of them shared with the neighbours:
// one scalar division each before).
GROUND_SIMD_CLONES void velocities(const double* __restrict q, const double* __restrict qs, double dt,
                                   double* __restrict v, int n) {
  for (int i = 0; i < n; ++i) v[i] = (q[i] - qs[i]) / dt;
}

}  // namespace

Schema Ground::schema() {
  Schema s{"ground",
           "Soft ground plane for rods with a twist DOF (Gazzola et al. 2018, Sec. IV.4-5): wall response of Eq. 38, "
           "H(eps) (-F_perp + k_w eps - gamma_w v.n) n per element (eps = r - distance of the element centre), and "
           "anisotropic Amonton-Coulomb friction: longitudinal static/kinetic (forward along +t or backward), lateral "
           "with rolling (slip velocity v_k + r n x omega_x, Eq. 39; no-slip force of Eq. 42; couple (-r n) x F_lat). "
           "Forces on the element centre, split equally between its two nodes. It reads the total force accumulated "
           "before it in the evaluation (F_perp, and the static friction's F_x, F_k, T_x): list it after every other "
           "force. Open rods only."};
  s.optional<std::vector<std::string>>("rods", "Rods it acts on (default: all rods).");
  s.add<Vec3>("point", Vec3(0, 0, 0), "A point of the plane.").unit("m");
  s.add<Vec3>("normal", Vec3(0, 0, 1), "Outward normal u_perp of the plane (normalized here; rods stay on its side).");
  s.add<double>("stiffness", 1.0, "Wall stiffness k_w of Eq. 38 (per element).").unit("N/m").atLeast(0);
  s.add<double>("damping", 1e-6, "Wall dissipation gamma_w of Eq. 38 (per element, on the normal velocity).")
      .unit("N s/m")
      .atLeast(0);
  s.add<double>("contact_tolerance", 1e-4,
                "An element is in contact when eps = r - d >= -contact_tolerance (the Heaviside of Eq. 38, widened so "
                "that a rod resting at eps = 0 does not flicker in and out of contact by round-off); the elastic term "
                "uses max(eps, 0).")
      .unit("m")
      .atLeast(0);
  s.add<double>("slip_velocity", 1e-4,
                "Threshold velocity v_eps between static (speed <= v_eps) and kinetic friction (Sec. IV.5; Gazzola "
                "et al. use 1e-4 in Appendix F and 1e-8 for the snake).")
      .unit("m/s")
      .greater(0);
  s.add<Vec3>("static_friction", Vec3(0, 0, 0),
              "Static friction coefficients [forward, backward, lateral (rolling)] = [mu_fs, mu_bs, mu_rs]. Forward: the "
              "force along +t (t from node 0 to the last node).");
  s.add<Vec3>("kinetic_friction", Vec3(0, 0, 0),
              "Kinetic friction coefficients [forward, backward, lateral (rolling)] = [mu_fk, mu_bk, mu_rk]. Forward: the "
              "velocity along +t.");
  s.add<bool>("rolling", true,
              "Lateral friction acts at the contact point (Eqs. 39-42): it couples translation and spin about the "
              "axis. false: it acts on the centre (slip velocity v_k, static force -F_k, no couple), e.g. for rods "
              "without a twist DOF.");
  return s;
}

Ground::Ground(const Params& p)
    : Force(p),
      point_(p.vec3("point")),
      normal_(p.vec3("normal")),
      k_w_(p.real("stiffness")),
      gamma_w_(p.real("damping")),
      tolerance_(p.real("contact_tolerance")),
      v_eps_(p.real("slip_velocity")),
      rolling_(p.boolean("rolling")),
      rod_names_(p.has("rods") ? std::optional(p.strings("rods")) : std::nullopt) {
  const double nn = normal_.norm();
  if (!(nn > 0) || !std::isfinite(nn)) throw ParamError("normal", "the plane normal must be a nonzero vector");
  normal_ /= nn;
  const Vec3 ms = p.vec3("static_friction"), mk = p.vec3("kinetic_friction");
  for (const auto& [key, v] : {std::pair{"static_friction", ms}, std::pair{"kinetic_friction", mk}})
    if (!(v.minCoeff() >= 0) || !v.allFinite())
      throw ParamError(key, std::string("friction coefficients must be finite and >= 0"));
  mu_fs_ = ms[0], mu_bs_ = ms[1], mu_rs_ = ms[2];
  mu_fk_ = mk[0], mu_bk_ = mk[1], mu_rk_ = mk[2];
}

void Ground::bind(World& world) {
  world_ = &world;
  const std::vector<Rod*> rods = resolveRods(world, rod_names_, "rods");
  refuseClosedRods(rods, "rods", "the ground force");
  elements_.clear();
  runs_.clear();
  int voff = 0;
  for (Rod* rod : rods) {
    const int k0 = static_cast<int>(elements_.size()), lo = rod->dofOffset();
    const int ne = rod->numEdges();
    if (rolling_ && rod->twistDof(0) < 0)
      throw ParamError("rolling", "rod '" + rod->name() +
                                      "' has no twist DOF, so it cannot roll; set rolling = false for it");
    for (int e = 0; e < ne; ++e) {
      Element el;
      el.rod = rod;
      el.local = e;
      el.a = rod->globalPositionDof(e);
      el.b = rod->globalPositionDof(e + 1);
      el.tw = rod->twistDof(e) >= 0 ? rod->dofOffset() + rod->twistDof(e) : -1;
      el.r = rod->radius(e);
      // Nodal forces to element forces: half of each node, all of an end node (so that the element
      // forces sum to the nodal ones); element forces go back half to each node (Eq. 38 cancels
      // F_perp exactly under a uniform load).
      el.wa = e == 0 ? 1.0 : 0.5;
      el.wb = e == ne - 1 ? 1.0 : 0.5;
      el.va = voff + el.a - lo;
      el.vb = voff + el.b - lo;
      el.vt = el.tw >= 0 ? voff + el.tw - lo : -1;
      elements_.push_back(el);
    }
    // Nodes 3 DOFs apart and one radius (a Cosserat rod): its elements vectorize (runGeometry).
    bool uniform = true;
    for (int e = 0; e < ne; ++e)
      uniform = uniform && elements_[k0 + e].a == elements_[k0].a + 3 * e && elements_[k0 + e].b == elements_[k0 + e].a + 3 &&
                elements_[k0 + e].r == elements_[k0].r;
    runs_.push_back({rod, k0, ne, lo, rod->numDofs(), voff, uniform});
    voff += rod->numDofs();
  }
  vel_.assign(voff, 0.0);
  const std::size_t n = elements_.size();
  couple_.assign(3 * n, 0.0);
  geo_.assign(14 * n, 0.0);
  force_.assign(3 * n, 0.0);
  torque_.assign(n, 0.0);
  longitudinal_.assign(n, Regime::None);
  lateral_.assign(n, Regime::None);
}

void Ground::addStiffness(const EvalContext& /*ctx*/, StiffnessSink& /*K*/) {
  throw std::runtime_error(
      "ground works with the explicit solvers (position-verlet, pefrl) only: its wall response and static "
      "friction cancel the total force of the evaluation (Gazzola et al. 2018, Eqs. 38, 40-42) and Coulomb friction "
      "is discontinuous in the velocity, so it has no Jacobian for implicit-euler or static (Newton does not "
      "converge); use solver type = \"position-verlet\" or \"pefrl\"");
}

void Ground::addForce(const EvalContext& ctx, Vec& f) {
  const Vec& q = *ctx.q;
  const Vec& M = world_->mass();
  const std::size_t n = elements_.size();
  // Pass 1: the total force and axial torque on every element, read before this force writes any.
  for (std::size_t k = 0; k < n; ++k) {
    const Element& el = elements_[k];
    for (int c = 0; c < 3; ++c) force_[3 * k + c] = el.wa * f[el.a + c] + el.wb * f[el.b + c];
    torque_[k] = el.tw >= 0 ? f[el.tw] : 0.0;
  }
  // Velocities of every DOF of the rods (0 when there is none: quasi-static, no step).
  const bool moving = !(ctx.quasi_static || !(ctx.dt > 0));
  for (const RodRun& run : runs_) {
    if (moving)
      velocities(q.data() + run.lo, ctx.q_start->data() + run.lo, ctx.dt, vel_.data() + run.voff, run.ndof);
    else
      std::fill(vel_.begin() + run.voff, vel_.begin() + run.voff + run.ndof, 0.0);
  }
  const bool friction = mu_fs_ > 0 || mu_bs_ > 0 || mu_rs_ > 0 || mu_fk_ > 0 || mu_bk_ > 0 || mu_rk_ > 0;
  const bool couples = rolling_ && friction;
  if (couples) std::fill(couple_.begin(), couple_.end(), 0.0);
  const double* vel = vel_.data();
  // Pass 2: the geometry of every element (branch-free; vectorized over the runs of a Cosserat rod).
  double* G = geo_.data();
  const Geometry g{G, G + n, G + 2 * n, G + 3 * n, G + 4 * n, G + 5 * n, G + 6 * n, G + 7 * n, G + 8 * n, G + 11 * n};
  for (const RodRun& run : runs_) {
    if (run.uniform) {
      const Element& el = elements_[run.k0];
      const std::size_t k0 = run.k0;
      runGeometry(q.data() + el.a, M.data() + el.a, vel + el.va, force_.data() + 3 * k0, el.r, normal_[0], normal_[1],
                  normal_[2], point_[0], point_[1], point_[2], g.eps + k0, g.s + k0, g.vn + k0, g.Fn + k0, g.vx + k0,
                  g.Fx + k0, g.vk + k0, g.Fk + k0, g.uk + 3 * k0, g.ux + 3 * k0, run.n);
    } else {
      for (int j = 0; j < run.n; ++j) {
        const std::size_t k = run.k0 + j;
        const Element& el = elements_[k];
        elementGeometry(k, q.data() + el.a, q.data() + el.b, M[el.a], M[el.b], vel + el.va, vel + el.vb, force_.data() + 3 * k,
                        el.r, normal_.data(), point_.data(), g);
      }
    }
  }
  normal_total_ = 0;
  contacts_ = 0;
  // Pass 3: response of each element in contact.
  for (std::size_t k = 0; k < n; ++k) {
    const Element& el = elements_[k];
    longitudinal_[k] = lateral_[k] = Regime::None;
    const double eps = g.eps[k];
    if (eps < -tolerance_) continue;  // H(eps) of Eq. 38
    ++contacts_;
    const double ma = M[el.a], mb = M[el.b];
    const double me = el.wa * ma + el.wb * mb;  // element mass, same transform as the forces

    // Eq. 38: cancel the part of the total force that pushes into the plane, plus the elastic and
    // dissipative responses.
    const double Fperp = g.Fn[k];
    const double N = (Fperp < 0 ? -Fperp : 0.0) + k_w_ * std::max(eps, 0.0) - gamma_w_ * g.vn[k];
    const double Nabs = std::abs(N);
    normal_total_ += N;
    Vec3 F = N * normal_;

    const double s = g.s[k];  // |u_k| / |t| before normalization: sin of the angle to the normal
    if (friction && s > 1e-9) {
      const Vec3 uk = load3(g.uk + 3 * k), ux = load3(g.ux + 3 * k);  // u_x: the tangent projected on the plane
      // Longitudinal friction (Sec. IV.5, F_long): kinetic opposite to v_x, static opposite to F_x
      // up to mu_s |F_perp|; forward (+t) or backward coefficients by the sign of v_x or F_x.
      const double vx = g.vx[k], Fx = g.Fx[k];
      double Flong;
      if (std::abs(vx) > v_eps_) {
        Flong = -(vx > 0 ? mu_fk_ : mu_bk_) * Nabs * (vx > 0 ? 1.0 : -1.0);
        longitudinal_[k] = Regime::Kinetic;
      } else {
        const double cap = (Fx >= 0 ? mu_fs_ : mu_bs_) * Nabs;
        Flong = -std::copysign(std::min(std::abs(Fx), cap), Fx);
        longitudinal_[k] = Regime::Static;
      }
      // Lateral friction with rolling. Slip velocity (Eq. 39) v_slip = v_k + r u_perp x omega_x
      // = (v_k - r omega_x) u_k, since u_perp x u_x = -u_k. omega_x: the spin about the axis, from the
      // twist DOF (omega . d3, d3 ~ t, times t . u_x = s to project on u_x); T_x likewise from the
      // generalized force on the twist DOF.
      const double vk = g.vk[k], Fk = g.Fk[k];
      double vslip, Froll;
      if (rolling_) {
        const double J = M[el.tw];  // axial moment of inertia of the element (rho 2I l for a Cosserat rod)
        const double w = vel[el.vt] * s, T = torque_[k] * s, r = el.r;
        vslip = vk - r * w;
        // No-slip force (Eqs. 40-42) for element mass m and axial inertia J: m a = F_k + F_roll,
        // J dw/dt = T_x - r F_roll, a = r dw/dt  =>  F_roll = (m r T_x - J F_k) / (J + m r^2), which is
        // Eq. 42, -(r F_k - 2 T_x) / (3 r), for the disk J = m r^2 / 2 (a solid Cosserat rod).
        Froll = (me * r * T - J * Fk) / (J + me * r * r);
      } else {
        vslip = vk;
        Froll = -Fk;
      }
      double Flat;
      if (std::abs(vslip) > v_eps_) {
        Flat = -mu_rk_ * Nabs * (vslip > 0 ? 1.0 : -1.0);
        lateral_[k] = Regime::Kinetic;
      } else {
        Flat = std::copysign(std::min(std::abs(Froll), mu_rs_ * Nabs), Froll);
        lateral_[k] = Regime::Static;
      }
      F += Flong * ux + Flat * uk;
      // C_lat = (-r u_perp) x F_lat u_k = -r F_lat u_x (the couple of the contact force about the centre).
      // Added for all elements at once below (Rod::addNodeTorques).
      if (rolling_ && Flat != 0.0) {
        const Vec3 C = (-el.r * Flat) * ux;
        for (int c = 0; c < 3; ++c) couple_[3 * k + c] = C[c];
      }
    }
    f.segment<3>(el.a) += 0.5 * F;
    f.segment<3>(el.b) += 0.5 * F;
  }
  if (couples)
    for (const RodRun& run : runs_)
      run.rod->addNodeTorques(couple_.data() + 3 * run.k0, f.segment(run.rod->dofOffset(), run.rod->numDofs()));
}

std::vector<std::string> Ground::reportColumns() const {
  return {"contacts", "normal_force", "spin", "lateral_kinetic", "axial_kinetic"};
}

// contacts: elements in contact; normal_force: sum of the wall responses (N); spin: mean axial
// angular velocity (twist DOF velocity, rad/s) of the elements, at the committed state; lateral_kinetic
// and axial_kinetic: fractions of the elements in contact whose lateral / longitudinal friction was
// kinetic in the last evaluation.
void Ground::reportValues(std::vector<double>& out) const {
  double spin = 0, lat = 0, lon = 0;
  int with_twist = 0;
  const Vec& v = world_->v();
  for (std::size_t k = 0; k < elements_.size(); ++k) {
    if (elements_[k].tw >= 0) spin += v[elements_[k].tw], ++with_twist;
    lat += lateral_[k] == Regime::Kinetic;
    lon += longitudinal_[k] == Regime::Kinetic;
  }
  out.push_back(contacts_);
  out.push_back(normal_total_);
  out.push_back(with_twist ? spin / with_twist : 0.0);
  out.push_back(contacts_ ? lat / contacts_ : 0.0);
  out.push_back(contacts_ ? lon / contacts_ : 0.0);
}

}  // namespace rodsim::ground
