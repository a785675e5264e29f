// The `ground` force: soft wall response (Eq. 38) and anisotropic Amonton-Coulomb friction with
// rolling (Sec. IV.5, Eqs. 39-42) of the Cosserat seed. Notation of the seed's Fig. 8: n = u_perp
// the plane's outward normal, u_k = t x n the lateral direction, u_x = n x u_k the longitudinal one
// (the tangent projected on the plane).
#include "cosserat_ground.h"

#include <algorithm>
#include <cmath>

namespace rodsim::ground {

namespace {

std::string rodNames(World& world) {
  std::string out;
  for (int i = 0; i < world.numRods(); ++i) out += (i ? ", '" : "'") + world.rod(i).name() + "'";
  return out.empty() ? "(none: the scene has no rod)" : out;
}

// Velocity of global DOF i in this evaluation (0 when there is none: quasi-static, no step).
inline double velocity(const EvalContext& ctx, int i) {
  return (ctx.quasi_static || !(ctx.dt > 0)) ? 0.0 : ctx.velocity(i);
}

inline Vec3 load3(const double* p) { return Vec3(p[0], p[1], p[2]); }

}  // namespace

Schema Ground::schema() {
  Schema s{"ground",
           "Soft ground plane for rods with a twist DOF (Cosserat seed, Sec. IV.4-5): wall response of Eq. 38, "
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
                "Threshold velocity v_eps between static (speed <= v_eps) and kinetic friction (Sec. IV.5; the seed uses "
                "1e-4 in Appendix F and 1e-8 for the snake).")
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
  std::vector<Rod*> rods;
  if (!rod_names_) {
    for (int i = 0; i < world.numRods(); ++i) rods.push_back(&world.rod(i));
  } else {
    for (const auto& n : *rod_names_) {
      Rod* rod = world.findRod(n);
      if (!rod) throw ParamError("rods", "no rod named '" + n + "'; valid rods: " + rodNames(world));
      rods.push_back(rod);
    }
  }
  elements_.clear();
  for (Rod* rod : rods) {
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
      elements_.push_back(el);
    }
  }
  const std::size_t n = elements_.size();
  force_.assign(3 * n, 0.0);
  torque_.assign(n, 0.0);
  longitudinal_.assign(n, Regime::None);
  lateral_.assign(n, Regime::None);
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
  const bool friction = mu_fs_ > 0 || mu_bs_ > 0 || mu_rs_ > 0 || mu_fk_ > 0 || mu_bk_ > 0 || mu_rk_ > 0;
  normal_total_ = 0;
  contacts_ = 0;
  // Pass 2: response of each element in contact.
  for (std::size_t k = 0; k < n; ++k) {
    const Element& el = elements_[k];
    longitudinal_[k] = lateral_[k] = Regime::None;
    const Vec3 xa = q.segment<3>(el.a), xb = q.segment<3>(el.b);
    const double eps = el.r - normal_.dot(0.5 * (xa + xb) - point_);  // penetration (Fig. 7)
    if (eps < -tolerance_) continue;                                   // H(eps) of Eq. 38
    ++contacts_;
    const double ma = M[el.a], mb = M[el.b];
    const double me = el.wa * ma + el.wb * mb;  // element mass, same transform as the forces
    Vec3 va, vb;
    for (int c = 0; c < 3; ++c) va[c] = velocity(ctx, el.a + c), vb[c] = velocity(ctx, el.b + c);
    const Vec3 ve = (ma * va + mb * vb) / (ma + mb);
    const Vec3 Fe = load3(&force_[3 * k]);

    // Eq. 38: cancel the part of the total force that pushes into the plane, plus the elastic and
    // dissipative responses.
    const double Fperp = normal_.dot(Fe);
    const double N = (Fperp < 0 ? -Fperp : 0.0) + k_w_ * std::max(eps, 0.0) - gamma_w_ * normal_.dot(ve);
    const double Nabs = std::abs(N);
    normal_total_ += N;
    Vec3 F = N * normal_;

    Vec3 t = xb - xa;
    Vec3 uk = t.cross(normal_);  // u_k = t x u_perp (Fig. 8), |t| sin(angle to the normal)
    const double tl = t.norm(), s = uk.norm() / (tl > 0 ? tl : 1.0);
    if (friction && s > 1e-9) {
      uk.normalize();
      const Vec3 ux = normal_.cross(uk);  // u_x = u_perp x u_k: the tangent projected on the plane
      // Longitudinal friction (Sec. IV.5, F_long): kinetic opposite to v_x, static opposite to F_x
      // up to mu_s |F_perp|; forward (+t) or backward coefficients by the sign of v_x or F_x.
      const double vx = ve.dot(ux), Fx = Fe.dot(ux);
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
      const double vk = ve.dot(uk), Fk = Fe.dot(uk);
      double vslip, Froll;
      if (rolling_) {
        const double J = M[el.tw];  // axial moment of inertia of the element (rho 2I l for a Cosserat rod)
        const double w = velocity(ctx, el.tw) * s, T = torque_[k] * s, r = el.r;
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
      if (rolling_ && Flat != 0.0) {
        Rod& rod = *el.rod;
        rod.addNodeTorque(el.local, (-el.r * Flat) * ux, f.segment(rod.dofOffset(), rod.numDofs()));
      }
    }
    f.segment<3>(el.a) += 0.5 * F;
    f.segment<3>(el.b) += 0.5 * F;
  }
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
