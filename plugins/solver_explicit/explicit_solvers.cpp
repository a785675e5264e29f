#include "explicit_solvers.h"

#include <rodsim/plugin.h>

#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <sstream>

namespace rodsim::explicit_solver {

namespace {

// The per-DOF passes of step() below are the solver's whole cost (a few flops per DOF, memory
// bound): they are compiled for AVX-512 and AVX2 machines and for generic x86-64, and the loader picks
// one at run time (as plugins/fluid_rss/far_field.cpp). This file is compiled with
// -ffp-contract=off (CMakeLists.txt), so all clones round exactly as the scalar code did: the
// trajectories are bitwise those of the unvectorized loops.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define EXPLICIT_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define EXPLICIT_SIMD_CLONES
#endif

// Exponent bits of a double: all ones for NaN and ±Inf. Adding 2^52 to them carries into the sign
// bit exactly in that case, so an OR-reduction of the sums has bit 63 set iff some value is not
// finite (64-bit AND, ADD and OR only: this vectorizes even with SSE2, unlike a 64-bit compare).
constexpr std::uint64_t kExponent = 0x7ff0000000000000ull, kExponentLsb = 0x0010000000000000ull;
inline std::uint64_t nonFiniteBit(double x) { return (std::bit_cast<std::uint64_t>(x) & kExponent) + kExponentLsb; }

// The start-of-step copies q = q_world, v = v0 = v_world, in one pass.
EXPLICIT_SIMD_CLONES void startOfStep(double* __restrict q, double* __restrict v, double* __restrict v0,
                                      const double* __restrict qw, const double* __restrict vw, int n) {
  for (int i = 0; i < n; ++i) {
    q[i] = qw[i];
    v[i] = v0[i] = vw[i];
  }
}

// Drift of the free DOFs: q += a v (fr = 1 on free DOFs, 0 on fixed ones).
EXPLICIT_SIMD_CLONES void drift(double* __restrict q, const double* __restrict v, const double* __restrict fr,
                                double a, int n) {
  for (int i = 0; i < n; ++i) q[i] += a * v[i] * fr[i];
}

// Start-of-evaluation configuration qs = q - dt v, so that ctx.velocity(i) = (q - qs)/dt = v.
EXPLICIT_SIMD_CLONES void startConfiguration(double* __restrict qs, const double* __restrict q,
                                             const double* __restrict v, double dt, int n) {
  for (int i = 0; i < n; ++i) qs[i] = q[i] - dt * v[i];
}

// Kick v += b dt M⁻¹ f (m_inv = 0 on fixed DOFs) and the step-averaged force acc (+)= b f, fused
// with the finiteness check of f (one pass). Returns false if f holds a NaN or an infinity.
EXPLICIT_SIMD_CLONES bool kick(double* __restrict acc, double* __restrict v, const double* __restrict f,
                               const double* __restrict minv, double b, double dt, bool first, int n) {
  const double bdt = b * dt;
  std::uint64_t bad = 0;
  if (first)
    for (int i = 0; i < n; ++i) {
      acc[i] = b * f[i];
      v[i] += bdt * f[i] * minv[i];
      bad |= nonFiniteBit(f[i]);
    }
  else
    for (int i = 0; i < n; ++i) {
      acc[i] += b * f[i];
      v[i] += bdt * f[i] * minv[i];
      bad |= nonFiniteBit(f[i]);
    }
  return (bad >> 63) == 0;
}

// M a - F with a = (v - v0)/dt and F the step-averaged force, fused with the finiteness check of
// the end-of-step q and v. Returns false if q or v holds a NaN or an infinity.
EXPLICIT_SIMD_CLONES bool residual(double* __restrict res, const double* __restrict M, const double* __restrict q,
                                   const double* __restrict v, const double* __restrict v0,
                                   const double* __restrict acc, double dt, int n) {
  std::uint64_t bad = 0;
  for (int i = 0; i < n; ++i) {
    res[i] = M[i] * (v[i] - v0[i]) / dt - acc[i];
    bad |= nonFiniteBit(q[i]) | nonFiniteBit(v[i]);
  }
  return (bad >> 63) == 0;
}

// The start of a step fused with its first drift and the start-of-evaluation configuration (one
// pass instead of three): q = q_world + a v_world fr, qs = q - dt v_world. The same operations as
// startOfStep, drift and startConfiguration one after the other; the caller redoes qs on the DOFs
// the constraints prescribe in between. The velocities are not copied: a one-kick scheme
// (position-verlet) reads the World's v, which stays the start-of-step velocity until the commit,
// as v0 and as the velocity before its kick (two of four stores per DOF saved).
// The free-DOF mask comes from the World's fixed mask (a byte per DOF: one stream of 1 byte instead of 8).
EXPLICIT_SIMD_CLONES void startDrift(double* __restrict q, double* __restrict qs, const double* __restrict qw,
                                     const double* __restrict vw, const char* __restrict fixed, double a, double dt,
                                     int n) {
#pragma GCC unroll 2
  for (int i = 0; i < n; ++i) {
    const double vi = vw[i];
    const double fri = fixed[i] ? 0.0 : 1.0;
    const double qi = qw[i] + a * vi * fri;
    q[i] = qi;
    qs[i] = qi - dt * vi;
  }
}

// The kick of a one-kick scheme fused with the last drift (one pass instead of two): v = v0 + b dt
// M⁻¹ f (v0: the start-of-step velocity, the World's), q += a v fr, and the finiteness checks of f and
// of the end-of-step q and v. The same operations as kick (from v = v0) and drift; the caller redoes
// v on the prescribed DOFs. The residual M (v - v0)/dt - b f is not formed here: on a free DOF the
// kick makes it zero (the kick is that equation solved for v), so the caller keeps those entries at
// an exact 0 and computes the reactions on the prescribed DOFs only (two streams fewer, M and the
// residual: this pass is bound by the memory bandwidth once a rod's arrays leave the L2 cache).
// Returns bit 0 set if f holds a NaN or Inf, bit 1 if q or v does.
EXPLICIT_SIMD_CLONES int kickDrift(double* __restrict q, double* __restrict v, const double* __restrict v0,
                                   const double* __restrict f, const double* __restrict minv, double b, double a,
                                   double dt, int n) {
  const double bdt = b * dt;
  std::uint64_t badf = 0, bads = 0;
#pragma GCC unroll 2
  for (int i = 0; i < n; ++i) {
    const double fi = f[i], mi = minv[i];
    const double vi = v0[i] + bdt * fi * mi;
    // the free-DOF mask fr (1 or 0) from 1/M, which is nonzero exactly on the free DOFs (one stream less)
    const double fri = mi != 0.0 ? 1.0 : 0.0;
    const double qi = q[i] + a * vi * fri;
    v[i] = vi;
    q[i] = qi;
    badf |= nonFiniteBit(fi);
    bads |= nonFiniteBit(qi) | nonFiniteBit(vi);
  }
  return int(badf >> 63) | int(bads >> 63) << 1;
}

// x rounded down to three significant digits: a dt the messages advise ("use dt <= ...", printed
// with three digits) must pass the check when copied into the scene.
double downToThreeDigits(double x) {
  if (!(x > 0) || !std::isfinite(x)) return x;
  const double scale = std::pow(10.0, std::floor(std::log10(x)) - 2);
  return std::floor(x / scale * (1 - 1e-12)) * scale;
}

}  // namespace

Scheme positionVerletScheme() { return {{0.5, 0.5}, {1.0}}; }

Scheme pefrlScheme() {
  // Omelyan, Mryglod & Folk, Comput. Phys. Commun. 146 (2002) 188, Eq. 20 (position-extended
  // Forest-Ruth-like): x += ξhv, v += (1-2λ)h/2 a, x += χhv, v += λha, x += (1-2(χ+ξ))hv, ...
  const double xi = 0.1786178958448091, lambda = -0.2123418310626054, chi = -0.06626458266981849;
  return {{xi, chi, 1.0 - 2.0 * (chi + xi), chi, xi},
          {0.5 * (1.0 - 2.0 * lambda), lambda, lambda, 0.5 * (1.0 - 2.0 * lambda)}};
}

double stabilityBound(const Scheme& s) {
  // Half the trace of the one-step map of ẍ = -x with step h; stable while |tr/2| <= 1 (det = 1).
  auto halfTrace = [&](double h) {
    double m00 = 1, m01 = 0, m10 = 0, m11 = 1;  // [x; v] <- M [x; v]
    for (std::size_t k = 0; k < s.drift.size(); ++k) {
      const double a = s.drift[k] * h;  // x += a v
      m00 += a * m10;
      m01 += a * m11;
      if (k < s.kick.size()) {
        const double b = s.kick[k] * h;  // v -= b x
        m10 -= b * m00;
        m11 -= b * m01;
      }
    }
    return 0.5 * (m00 + m11);
  };
  double lo = 0, hi = 0;
  for (double h = 1e-3; h < 20; h += 1e-3)
    if (std::abs(halfTrace(h)) > 1.0 + 1e-12) {
      hi = h;
      lo = h - 1e-3;
      break;
    }
  if (hi == 0) return 20.0;
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (lo + hi);
    (std::abs(halfTrace(mid)) > 1.0 + 1e-12 ? hi : lo) = mid;
  }
  return lo;
}

void ExplicitSolver::declareCommon(Schema& s, const std::string& velocity_default) {
  s.require(ComponentKind::Contact, {ForceContact::kInterfaceId, VelocityImpulseContact::kInterfaceId},
            "An explicit step solves contact at the end of the step: force contacts (imc, ipc, spring-dashpot) "
            "implicitly with the lumped mass, velocity-impulse contacts (alart-curnier) at the velocity level (a "
            "Moreau-Jean step); use a contact model that offers one of them.");
  s.add<std::string>("contact_forces", "implicit",
                     "How force contacts (imc, ipc, spring-dashpot) enter the step. implicit: the kicks move the rods "
                     "without contact, then the contact forces are solved at the end of the step with the lumped mass "
                     "(one backward-Euler step of the contact subsystem, Newton with the models' K = -dF/dq): stable "
                     "for any contact stiffness at the dt the rods need, dissipative, never gaining energy. explicit: "
                     "added to every kick like any force (Gazzola et al. 2018, Eqs. 36-37), the contact stiffness "
                     "then bounds dt (checked at every kick while contacts are active).")
      .choices({"implicit", "explicit"});
  s.add<int>("contact_iterations", 50, "Newton iterations of the implicit contact step before the step fails.")
      .range(1, 10000);
  s.add<std::string>("velocity_forces", velocity_default,
                     "How a kick treats the velocity-dependent forces (Cosserat gyroscopic, transport and "
                     "dilatation couples of Eq. 24, damping): explicit: frozen at the velocity before the kick, "
                     "as in Gazzola et al. 2018, Appendix B (one force evaluation; first order in these terms); "
                     "midpoint: re-evaluated at the kick's mid velocity (two more evaluations of these terms "
                     "alone; second order); rk4: integrated over the kick by RK4 (four more; keeps pefrl fourth "
                     "order).")
      .choices({"explicit", "midpoint", "rk4"});
  s.add<std::string>("stability", "refuse",
                     "At the first step the solver estimates its stability limit h_max / omega_max (omega_max by "
                     "power iteration on M^-1 K, K by finite differences of the forces). refuse: stop with a "
                     "message naming a safe dt when dt exceeds safety * limit; warn: print that and go on; off.")
      .choices({"refuse", "warn", "off"});
  s.add<double>("safety", 0.9, "Fraction of the estimated stability limit that dt may reach.").greater(0).atMost(1);
  s.add<int>("power_iterations", 60, "Power iterations of the stability estimate.").range(5, 10000);
}

ExplicitSolver::ExplicitSolver(const Params& p, Scheme scheme, std::string type, bool compose_rotations)
    : Solver(p), scheme_(std::move(scheme)), type_(std::move(type)), compose_rotations_(compose_rotations) {
  const std::string vf = p.string("velocity_forces");
  velocity_forces_ = vf == "rk4"        ? VelocityForces::Rk4
                     : vf == "midpoint" ? VelocityForces::Midpoint
                                        : VelocityForces::Explicit;
  implicit_contacts_ = p.string("contact_forces") == "implicit";
  contact_max_iterations_ = static_cast<int>(p.integer("contact_iterations"));
  stability_ = p.string("stability");
  if (stability_ != "refuse" && stability_ != "warn" && stability_ != "off")
    throw ParamError("stability", "'stability' must be refuse, warn or off; got '" + stability_ + "'");
  safety_ = p.real("safety");
  if (!(safety_ > 0 && safety_ <= 1)) throw ParamError("safety", "'safety' must be in (0, 1]");
  power_iterations_ = static_cast<int>(p.integer("power_iterations"));
  if (power_iterations_ < 5) throw ParamError("power_iterations", "'power_iterations' must be >= 5");
  bound_ = stabilityBound(scheme_);
}

// The context of an evaluation at the solver's q_ with velocities (q_ - qs_)/dt.
EvalContext ExplicitSolver::context(double t, double dt) const {
  EvalContext ctx;
  ctx.t = t;
  ctx.dt = dt;
  ctx.q = &q_;
  ctx.q_start = &qs_;
  ctx.v_start = v_start_;
  return ctx;
}

void ExplicitSolver::evaluate(World& world, double t, double dt) {
  // ctx.velocity(i) = (q - q_start)/dt must be the current velocity v: q_start = q - dt v
  // (step() computes qs_ in its drift loop; the stability estimate here).
  if (!qs_fresh_) qs_ = q_ - dt * v_;
  qs_fresh_ = false;
  const EvalContext ctx = context(t, dt);
  if (contact_free_)
    contact_free_->evaluateWithoutContacts(ctx, f_);
  else
    world.evaluate(ctx, f_, nullptr);
}

double ExplicitSolver::estimateMaxFrequency(World& world, double dt) {
  const int n = world.numDofs();
  const Vec& M = world.mass();
  const auto& fixed = world.fixedMask();
  double qscale = 0;
  for (int i = 0; i < n; ++i)
    if (!fixed[i]) qscale = std::max(qscale, std::abs(q_[i]));
  x_.setZero(n);
  for (int i = 0; i < n; ++i)
    if (!fixed[i]) x_[i] = double((i * 2654435761u) % 1000u) / 1000.0 - 0.5;
  const Vec q_keep = q_;
  double lambda = 0;
  for (int it = 0; it < power_iterations_; ++it) {
    const double norm = std::sqrt(x_.dot(M.cwiseProduct(x_)));
    if (!(norm > 0) || !std::isfinite(norm)) break;
    x_ /= norm;
    const double eps = 1e-6 * (qscale + 1e-6) / std::max(x_.cwiseAbs().maxCoeff(), 1e-300);
    q_ = q_keep + eps * x_;
    evaluate(world, world.time(), dt);
    fp_ = f_;
    q_ = q_keep - eps * x_;
    evaluate(world, world.time(), dt);
    y_ = -(fp_ - f_) / (2 * eps);  // K x
    lambda = std::max(lambda, x_.dot(y_));  // Rayleigh quotient (x is M-normalized)
    for (int i = 0; i < n; ++i) x_[i] = fixed[i] ? 0.0 : y_[i] * m_inv_[i];
  }
  q_ = q_keep;
  return std::sqrt(std::max(lambda, 0.0));
}

// The committed state moves into the World by swapping buffers (no copy): the World's q() and v()
// become this step's q_ and v_, and q_, v_ keep the old buffers (rewritten at the next step). The
// kernel's commitStep then skips copying a vector onto itself.
const Vec& ExplicitSolver::swapIntoWorld(World& world) {
  world.q().swap(q_);
  world.v().swap(v_);
  return world.q();
}

void ExplicitSolver::driftRods(World& world, double h) {
  double* q = q_.data();
  const double* v = v_.data();
  const double* outside = outside_rods_.data();
  perDof(static_cast<int>(q_.size()), [&](int b, int e) { drift(q + b, v + b, outside + b, h, e - b); });
  // Rods in blocks over the threads (each drifts its own slice; a long rod alone spreads its elements).
  auto rods = [&](int r0, int r1) {
    for (int r = r0; r < r1; ++r) {
      Rod& rod = world.rod(r);
      const int off = rod.dofOffset(), nd = rod.numDofs();
      // Rotation vectors compose on SO(3); every other DOF drifts by h v (as drift() above).
      if (RodRotationVectors* rv = rod.as<RodRotationVectors>())
        rv->drift(q_.segment(off, nd), v_.segment(off, nd), free_.data() + off, h);
      else
        drift(q_.data() + off, v_.data() + off, free_.data() + off, h, nd);
    }
  };
  parallelForBlocks(loops_, world.numRods(), 8, rods);
}

// The kick integrates v' = M⁻¹ (P(q) + G(q, v)) over tau with q frozen; f_ = P + G(v0) was
// evaluated at the velocity v0 before the kick. The kick function then applies f_ + Δ with
//   midpoint: Δ = G(v0 + tau/2 M⁻¹ f) - G(v0)
//   rk4:      Δ = (G(v0) + 2 G(v2) + 2 G(v3) + G(v4)) / 6 - G(v0), v2, v3, v4 the RK4 stage velocities,
// which is exactly v0 + tau/6 (k1 + 2 k2 + 2 k3 + k4) (midpoint rule: v0 + tau k2).
void ExplicitSolver::integrateVelocityForces(World& world, double t, double dt, double tau, const Vec& v) {
  const int n = static_cast<int>(q_.size());
  const EvalContext ctx = context(t, dt);
  // G at velocity w: ctx.velocity(i) = (q - qs)/dt = w.
  auto velocityForces = [&](const Vec& w, Vec& g) {
    double* qs = qs_.data();
    const double* q = q_.data();
    const double* wd = w.data();
    perDof(n, [&](int b, int e) { startConfiguration(qs + b, q + b, wd + b, dt, e - b); });
    world.evaluateVelocityForces(ctx, g);
  };
  velocityForces(v, g0_);
  // stage velocity v0 + c tau M⁻¹ (f + k), with k the correction of the stage's force
  auto stage = [&](double c, const Vec* k) {
    perDof(n, [&](int b, int e) {
      for (int i = b; i < e; ++i)
        vstage_[i] = v[i] + c * tau * m_inv_[i] * (f_[i] + (k ? (*k)[i] - g0_[i] : 0.0));
    });
  };
  if (velocity_forces_ == VelocityForces::Midpoint) {
    stage(0.5, nullptr);
    velocityForces(vstage_, g_);
    // f += g - g0, entry by entry as the Eigen expression f_ += g_ - g0_ rounds it
    perDof(n, [&](int b, int e) { f_.segment(b, e - b) += g_.segment(b, e - b) - g0_.segment(b, e - b); });
  } else {
    gsum_ = g0_;
    stage(0.5, nullptr);  // k1 = M⁻¹ f
    velocityForces(vstage_, g_);  // G(v2)
    gsum_ += 2 * g_;
    stage(0.5, &g_);  // v3 = v0 + tau/2 k2
    velocityForces(vstage_, g_);  // G(v3)
    gsum_ += 2 * g_;
    stage(1.0, &g_);  // v4 = v0 + tau k3
    velocityForces(vstage_, g_);  // G(v4)
    gsum_ += g_;
    f_ += gsum_ / 6.0 - g0_;
  }
}

// Off the no-contact path: kept out of the hot text (the per-DOF loops' layout is unchanged).
[[gnu::cold]] void ExplicitSolver::findContacts(World& world) {
  contacts_found_ = true;
  force_contacts_.clear();
  velocity_contacts_.clear();
  // A model offering both couplings is driven by its force (it works with every explicit scheme);
  // the kernel refused the models this scheme cannot drive (Schema::require in declareCommon).
  for (int i = 0; i < world.numContacts(); ++i) {
    Contact& c = world.contact(i);
    if (ForceContact* f = c.as<ForceContact>())
      force_contacts_.push_back({&c, f});
    else if (VelocityImpulseContact* vi = c.as<VelocityImpulseContact>())
      velocity_contacts_.push_back({&c, vi});
  }
  const int n = world.numDofs();
  contact_free_ = nullptr;
  if (implicit_contacts_ && !force_contacts_.empty()) {
    // an older kernel's World has no contact-free evaluation: the contacts then stay in the kicks
    contact_free_ = worldCapability<ContactFreeEvaluation>(world);
    if (contact_free_) {
      // converged within 1e-6 of the largest contact force: the friction of a sliding rod is resolved
      // to that relative accuracy (a coarser residual biases it: a tolerance in position, D x_tol,
      // grows as 1/dt^2 and at dt = 5e-6 s exceeded the friction force itself)
      double r_min = INFINITY;
      for (int r = 0; r < world.numRods(); ++r)
        for (int e = 0; e < world.rod(r).numEdges(); ++e) r_min = std::min(r_min, world.rod(r).radius(e));
      implicit_contact_.configure(world, contact_max_iterations_, 1e-6, std::isfinite(r_min) ? r_min : 1e-3);
      contact_force_.setZero(n);
    }
  }
  rowsum_.setZero(force_contacts_.empty() ? 0 : n);
  dv_.setZero(velocity_contacts_.empty() ? 0 : n);
  q_detect_.setZero(velocity_contacts_.empty() ? 0 : n);
}

// Off the no-contact path: kept out of the hot text (the per-DOF loops' layout is unchanged).
[[gnu::cold]] std::string ExplicitSolver::activeContacts(World& world) const {
  std::string s;
  for (int i = 0; i < world.numContacts(); ++i) {
    Contact& c = world.contact(i);
    const ContactStats st = c.stats();
    if (st.active == 0) continue;
    std::ostringstream m;
    m.precision(3);
    m << (s.empty() ? "" : ", ") << st.active << " contact(s) active in '" << c.name() << "' (smallest gap "
      << st.min_gap << " m)";
    s += m.str();
  }
  return s.empty() ? std::string("no contact active") : s;
}

// Contact stiffness in the stability limit. For K = K_el + K_c (M^-1/2 K M^-1/2 symmetric),
// lambda_max(M^-1 K) <= lambda_max(M^-1 K_el) + lambda_max(M^-1 K_c) (Weyl), and lambda_max(M^-1 K_c)
// <= max_i sum_j |K_c,ij| / m_i (Gershgorin, free rows and columns): omega^2 <= omega_el^2 +
// sum over the active contacts of their Gershgorin bounds, evaluated at every kick while a contact
// is active (penalty and barrier stiffnesses change with the gap and, for imc, with the adaptive k).
// A friction force regularized in the velocity (slope c = dF/dv) enters K as c/dt (the models'
// Jacobian for v = (q - q_start)/dt): h^2 omega^2 = h c/m <= h_max^2, where the frozen-velocity kick
// is stable for h c/m <= 2 (position-verlet: h_max^2 = 4); beyond that the regularized friction,
// bounded by mu f_n, chatters but cannot blow up.
// Off the no-contact path: kept out of the hot text (the per-DOF loops' layout is unchanged).
// The bound costs an assembly of K_c (most of a step with hundreds of persistent contacts), so it
// is not redone while it had room to spare: when dt was within half the safe step (the contact
// stiffness would have to grow fourfold to matter), the same pairs are active, and fewer than
// kRebound kicks have passed. Close to the limit, or when pairs come or go, it is redone at every
// kick. Only the check is skipped; the step is the same either way.
[[gnu::cold]] bool ExplicitSolver::contactStable(World& world, double t, double dt, StepReport& report) {
  // Off, or warned already: a warning is given once per run, so there is nothing left to compute.
  if (stability_ == "off" || (stability_ == "warn" && contact_warned_)) return true;
  constexpr int kRebound = 32;
  int active = 0;
  for (const ForceContactRef& fc : force_contacts_) active += fc.contact->stats().active;
  if (bound_roomy_ && active == bound_active_ && ++kicks_since_bound_ < kRebound) return true;
  bound_active_ = active;
  kicks_since_bound_ = 0;
  bound_roomy_ = false;
  const auto& fixed = world.fixedMask();
  const int n = static_cast<int>(q_.size());
  // the start-of-evaluation configuration of this kick (the velocity-force stages rewrote it)
  if (velocity_forces_ != VelocityForces::Explicit)
    startConfiguration(qs_.data(), q_.data(), (scheme_.kick.size() == 1 && velocity_contacts_.empty() &&
                                               !compose_rotations_ ? *v_start_ : v_).data(), dt, n);
  const EvalContext ctx = context(t, dt);
  double lam_sum = 0, lam_worst = 0, k_worst = 0;
  int row_worst = -1;
  const ForceContactRef* worst = nullptr;
  for (const ForceContactRef& fc : force_contacts_) {
    if (fc.contact->stats().active == 0) continue;
    contact_k_.clear();
    fc.force->addStiffness(ctx, contact_k_);
    const auto& entries = contact_k_.entries();
    for (const auto& e : entries)
      if (!fixed[e.row()] && !fixed[e.col()]) rowsum_[e.row()] += std::abs(e.value());
    // The largest row sum per unit mass, over all n DOFs (rows without entries are 0), then the
    // sums reset: two passes over the n DOFs rather than over the entries (some 38,000 with the
    // coiled plectoneme's 260 pairs, several per row).
    double lam = 0, k = 0;
    int row = -1;
    for (int i = 0; i < n; ++i) {
      const double l = rowsum_[i] * m_inv_[i];
      if (l > lam) {
        lam = l;
        row = i;
        k = rowsum_[i];
      }
    }
    rowsum_.setZero();
    lam_sum += lam;
    if (lam > lam_worst) {
      lam_worst = lam;
      k_worst = k;
      row_worst = row;
      worst = &fc;
    }
  }
  if (!(lam_sum > 0)) return true;
  const double w_el = dt_crit_ > 0 && std::isfinite(dt_crit_) ? bound_ / dt_crit_ : 0.0;
  const double limit = bound_ / std::sqrt(w_el * w_el + lam_sum);
  bound_roomy_ = dt <= 0.5 * safety_ * limit;
  if (dt <= safety_ * limit * (1 + 1e-9)) return true;
  std::string where = "DOF " + std::to_string(row_worst);
  for (int r = 0; r < world.numRods(); ++r) {
    Rod& rod = world.rod(r);
    const int local = row_worst - rod.dofOffset();
    if (local < 0 || local >= rod.numDofs()) continue;
    for (int node = 0; node < rod.numNodes(); ++node)
      if (local >= rod.positionDof(node) && local < rod.positionDof(node) + 3)
        where = "node " + std::to_string(node) + " of rod '" + rod.name() + "'";
  }
  std::ostringstream msg;
  msg.precision(3);
  msg << type_ << ": contact '" << worst->contact->name() << "' stiffness k = " << k_worst
      << " N/m (Gershgorin row sum of its K = -dF/dq) on " << where << " (mass " << world.mass()[row_worst]
      << " kg) at t = " << t << " s limits dt to " << limit << " s (omega_max h <= " << bound_
      << ", omega_max^2 <= " << w_el * w_el << " elastic + " << lam_sum << " contact, rad^2/s^2); dt = " << dt
      << " s exceeds " << safety_ << " x that: reduce dt to <= " << downToThreeDigits(safety_ * limit)
      << " s (simulation.dt) or the contact stiffness (imc: a fixed `stiffness` or a smaller `stiffness_scale`, "
         "a larger `delta`, a larger `slip_tolerance` with friction; ipc: `kappa`, a larger `d_hat`; spring-dashpot: "
         "`stiffness` and `damping`), or set "
         "solver stability = \"warn\"";
  if (stability_ == "refuse") {
    report.ok = false;
    report.message = msg.str();
    return false;
  }
  std::fprintf(stderr, "rodsim: warning: %s\n", msg.str().c_str());
  contact_warned_ = true;  // once per run: the contact stiffness changes every step
  return true;
}

// Moreau-Jean contact step (README.md, "Contact") at the end of the step: q_, v_ are the step
// without contact (q_pred, v_free). The impulses change the velocity by dv = M^-1 H^T P, and the
// positions as a constant force over the step would, by h/2 dv (every consistent scheme integrates a
// constant acceleration exactly); so the contacts are detected at q_pred - h/2 v_free, from where the
// positions move h/2 at v_{n+1} (position-verlet: exactly its mid-step configuration and last drift,
// Moreau's midpoint scheme).
// Off the no-contact path: kept out of the hot text (the per-DOF loops' layout is unchanged).
[[gnu::cold]] bool ExplicitSolver::contactImpulses(World& world, double t, double dt, StepReport& report) {
  const int n = static_cast<int>(v_.size());
  const Vec& M = world.mass();
  const auto& fixed = world.fixedMask();
  for (int i = 0; i < n; ++i) q_detect_[i] = fixed[i] ? q_[i] : q_[i] - 0.5 * dt * v_[i];
  for (const VelocityContactRef& vc : velocity_contacts_) {
    VelocityContactProblem pb;
    pb.q = &q_detect_;
    pb.v_free = &v_;
    pb.mass = &M;
    pb.fixed = &fixed;
    pb.t = t;
    pb.dt = dt;
    pb.drift = 0.5 * dt;
    if (!vc.impulses->solveVelocity(pb, dv_)) {
      report.ok = false;
      report.message = type_ + ": contact '" + vc.contact->name() + "' at t = " + std::to_string(t) +
                       " s: " + vc.impulses->failureReason();
      return false;
    }
    // v += dv, q += h/2 dv; the step-averaged force (residual M a - F on free DOFs = 0) gains M dv / dt.
    for (int i = 0; i < n; ++i) {
      v_[i] += dv_[i];
      q_[i] += 0.5 * dt * dv_[i];
      a_[i] += M[i] * dv_[i] / dt;
    }
  }
  return true;
}

StepReport ExplicitSolver::step(World& world, double dt) {
  StepReport report;
  const int n = world.numDofs();
  const Vec& M = world.mass();
  const auto& fixed = world.fixedMask();
  if (m_inv_.size() != n) {
    m_inv_.setZero(n);
    for (int i = 0; i < n; ++i) {
      if (fixed[i]) continue;
      if (!(M[i] > 0)) {
        report.ok = false;
        report.message = type_ + ": DOF " + std::to_string(i) + " is free but has no mass; an explicit solver "
                         "needs a positive lumped mass on every free DOF";
        return report;
      }
      m_inv_[i] = 1.0 / M[i];
    }
    f_.setZero(n);
    a_.setZero(n);
    qs_.setZero(n);
    residual_.setZero(n);
    free_.setZero(n);
    fixed_list_.clear();
    for (int i = 0; i < n; ++i) {
      if (fixed[i]) fixed_list_.push_back(i);
      else free_[i] = 1.0;
    }
    outside_rods_ = free_;
    for (int r = 0; r < world.numRods(); ++r) {
      const Rod& rod = world.rod(r);
      outside_rods_.segment(rod.dofOffset(), rod.numDofs()).setZero();
    }
    g0_.setZero(n);
    g_.setZero(n);
    vstage_.setZero(n);
    gsum_.setZero(n);
  }
  if (!contacts_found_) {
    findContacts(world);
    loops_ = worldCapability<ParallelLoops>(world);
  }
  const double t0 = world.time();
  world.beginStep(dt);
  q_.resize(n);
  v_.resize(n);
  v0_.resize(n);
  qs_.resize(n);
  // Position-verlet (one kick, no composed rotations) fuses the start-of-step copies into its first
  // drift (startDrift below) and reads the start-of-step velocity from the World instead of copying
  // it; the stability estimate of the first step needs the copies.
  const bool fused = !compose_rotations_ && scheme_.kick.size() == 1 && velocity_contacts_.empty() && !contact_free_;
  if (!fused || (!checked_ && stability_ != "off"))
    startOfStep(q_.data(), v_.data(), v0_.data(), world.q().data(), world.v().data(), n);
  v_start_ = &v0_;
  q0_fixed_.resize(fixed_list_.size());
  const Vec& q_world = world.q();  // (one virtual call, not one per fixed DOF)
  for (std::size_t j = 0; j < fixed_list_.size(); ++j) q0_fixed_[j] = q_world[fixed_list_[j]];

  if (!checked_ && stability_ != "off") {
    checked_ = true;
    const double w = estimateMaxFrequency(world, dt);
    dt_crit_ = w > 0 ? bound_ / w : INFINITY;
  }
  // The start-of-step velocity (ctx.v_start, v0 of the kick and the residual): the World's v, unchanged
  // until the commit, when it is not copied (fused).
  if (fused) v_start_ = &world.v();
  const double* __restrict v0 = v_start_->data();
  if (stability_ != "off" && dt > safety_ * dt_crit_ * (1 + 1e-9) && dt > checked_dt_ * (1 + 1e-6)) {
    std::ostringstream msg;
    msg.precision(3);
    // Below the estimate itself but above the safety margin, say so: "0.00021 s exceeds the limit,
    // estimated at 0.000213 s" reads as a contradiction.
    msg << type_ << ": dt = " << dt << " s exceeds ";
    if (dt <= dt_crit_) msg << "safety = " << safety_ << " x ";
    msg << "the explicit stability limit, estimated at " << dt_crit_ << " s (omega_max h <= " << bound_
        << ", omega_max = " << bound_ / dt_crit_ << " rad/s from power iteration on M^-1 K); use dt <= "
        << downToThreeDigits(safety_ * dt_crit_) << " s (simulation.dt), or set solver stability = \"warn\"";
    if (dt <= dt_crit_) msg << " or a safety closer to 1 (solver.safety)";
    if (stability_ == "refuse") {
      report.ok = false;
      report.message = msg.str();
      return report;
    }
    std::fprintf(stderr, "rodsim: warning: %s\n", msg.str().c_str());
    checked_dt_ = dt;  // warn once per larger dt
  }

  // One vectorized pass over the DOF vectors per drift, per start-of-evaluation configuration and
  // per kick (the kick fused with the averaged force and the finiteness check of f). For a one-kick
  // scheme without composed rotations (position-verlet, `fused`), the start of the step, the first
  // drift and the start-of-evaluation configuration are one pass, and so are the kick, the last drift
  // and the residual; the DOFs the constraints prescribe between them are redone after the constraints.
  double* __restrict q = q_.data();
  double* __restrict v = v_.data();
  double* __restrict qs = qs_.data();
  double* __restrict acc = a_.data();
  const double* __restrict f = f_.data();
  const double* __restrict minv = m_inv_.data();
  const double* __restrict fr = free_.data();
  auto nonFiniteForce = [&](double tau) {
    report.ok = false;
    report.message = type_ + ": non-finite force (NaN or Inf) at t = " + std::to_string(tau) +
                     " s with " + activeContacts(world) + ": the state blew up; reduce dt (estimated stability "
                     "limit " + std::to_string(dt_crit_) + " s) or check the loads";
    return report;
  };
  auto nonFiniteState = [&] {
    report.ok = false;
    report.message = type_ + ": non-finite state (NaN or Inf) at t = " + std::to_string(t0 + dt) + " s with " +
                     activeContacts(world);
    return report;
  };
  double tau = t0;
  const std::size_t K = scheme_.kick.size();
  for (std::size_t k = 0; k <= K; ++k) {
    const bool start_fused = fused && k == 0;
    const double a = scheme_.drift[k] * dt;
    if (start_fused) {
      const double* qw = world.q().data();
      const char* fx = fixed.data();
      perDof(n, [&](int b, int e) { startDrift(q + b, qs + b, qw + b, v0 + b, fx + b, a, dt, e - b); });
    } else if (compose_rotations_) {
      driftRods(world, a);
    } else {
      perDof(n, [&](int b, int e) { drift(q + b, v + b, fr + b, a, e - b); });
    }
    tau = k == K ? t0 + dt : tau + scheme_.drift[k] * dt;
    world.prescribe(tau, q_);
    if (k == K) {
      if (contact_free_ && !implicitContactStep(world, t0 + dt, dt, report)) return report;
      if (!velocity_contacts_.empty() && !contactImpulses(world, t0 + dt, dt, report)) return report;
      break;
    }
    if (start_fused) {
      for (int i : fixed_list_) qs[i] = q[i] - dt * v0[i];
    } else {
      perDof(n, [&](int b, int e) { startConfiguration(qs + b, q + b, v + b, dt, e - b); });
    }
    qs_fresh_ = true;
    evaluate(world, tau, dt);
    if (velocity_forces_ != VelocityForces::Explicit)
      integrateVelocityForces(world, tau, dt, scheme_.kick[k] * dt, fused ? *v_start_ : v_);
    if (!force_contacts_.empty() && !contact_free_ && !contactStable(world, tau, dt, report)) return report;
    if (fused) {
      // the kick + last drift, then the constraints and the prescribed DOFs with their reactions
      std::atomic<int> any_bad{0};
      const double b_kick = scheme_.kick[k], a_last = scheme_.drift[K] * dt;
      perDof(n, [&](int b, int e) {
        if (const int r = kickDrift(q + b, v + b, v0 + b, f + b, minv + b, b_kick, a_last, dt, e - b))
          any_bad.fetch_or(r, std::memory_order_relaxed);
      });
      const int bad = any_bad.load(std::memory_order_relaxed);
      if (bad & 1) return nonFiniteForce(tau);
      // residual_ stays as sized, 0, on the free DOFs: a solver takes this path at every step or never
      // (its scheme and its contact models are fixed by its first step), and writes the reactions below.
      world.prescribe(t0 + dt, q_);
      std::uint64_t badfixed = 0;
      for (std::size_t j = 0; j < fixed_list_.size(); ++j) {
        const int i = fixed_list_[j];
        v[i] = (q[i] - q0_fixed_[j]) / dt;
        const double F = scheme_.kick[k] * f[i];
        residual_[i] = M[i] * (v[i] - v0[i]) / dt - F;
        badfixed |= nonFiniteBit(q[i]) | nonFiniteBit(v[i]);
      }
      // bit 1 may come from a fixed DOF's value before the constraint set it: check the free ones again
      if ((bad & 2) || (badfixed >> 63)) {
        std::uint64_t b2 = badfixed;
        for (int i = 0; i < n; ++i)
          if (fr[i] != 0.0) b2 |= nonFiniteBit(q[i]) | nonFiniteBit(v[i]);
        if (b2 >> 63) return nonFiniteState();
      }
      world.commitStep(t0 + dt, swapIntoWorld(world), world.v(), residual_);
      report.iterations = 0;
      report.residual = 0;
      return report;
    }
    std::atomic<bool> finite{true};
    const double b_kick = scheme_.kick[k];
    perDof(n, [&](int b, int e) {
      if (!kick(acc + b, v + b, f + b, minv + b, b_kick, dt, k == 0, e - b)) finite.store(false, std::memory_order_relaxed);
    });
    if (!finite.load(std::memory_order_relaxed)) return nonFiniteForce(tau);
  }
  for (std::size_t j = 0; j < fixed_list_.size(); ++j) {
    const int i = fixed_list_[j];
    v[i] = (q[i] - q0_fixed_[j]) / dt;
  }
  // M a - F with a = (v - v0)/dt and F the step-averaged force: 0 on free DOFs, the reaction on fixed ones.
  std::atomic<bool> finite{true};
  double* res = residual_.data();
  const double* Md = M.data();
  perDof(n, [&](int b, int e) {
    if (!residual(res + b, Md + b, q + b, v + b, v0 + b, acc + b, dt, e - b)) finite.store(false, std::memory_order_relaxed);
  });
  if (!finite.load(std::memory_order_relaxed)) return nonFiniteState();
  world.commitStep(t0 + dt, swapIntoWorld(world), world.v(), residual_);
  report.residual = 0;
  return report;
}

// The force contacts at the end of the step (implicit_contact.h): q_ and v_ go from the step without
// contact to the step with it, and the step-averaged force gains F_c(q_{n+1}) (on free DOFs M dv / dt,
// on prescribed ones the contact load their constraints carry).
[[gnu::cold]] bool ExplicitSolver::implicitContactStep(World& world, double t_end, double dt, StepReport& report) {
  const ImplicitContactStep::Result r =
      implicit_contact_.solve(world, force_contacts_, t_end, dt, world.q(), q_, v_, contact_force_);
  report.iterations = r.iterations;
  if (!r.ok) {
    report.ok = false;
    report.message = type_ + ": " + r.message + "; " + activeContacts(world);
    return false;
  }
  a_ += contact_force_;
  return true;
}

Schema PositionVerlet::schema() {
  Schema s{"position-verlet",
           "Explicit, symplectic, second-order position Verlet (Gazzola et al. 2018, Appendix B, Eqs. B1-B6): half "
           "drift, one force evaluation, kick, half drift. Rotation DOFs drift in the rod's own rotation-vector "
           "coordinates (exactly Gazzola et al.'s exp(dt/2 omega) when the rod rebases them every step). Second order "
           "with velocity_forces = \"midpoint\" (default: a free Cosserat rod's energy stays bounded); Gazzola et "
           "al.'s explicit kick (velocity_forces = \"explicit\", as PyElastica) is first order in the velocity-dependent "
           "terms and gains energy in proportion to dt."};
  declareCommon(s, "midpoint");
  return s;
}
// Position Verlet adds rotation vectors: its two half drifts (at the old and the new angular
// velocity) differ from their composition by O(dt^3), within its second order.
PositionVerlet::PositionVerlet(const Params& p)
    : ExplicitSolver(p, positionVerletScheme(), "position-verlet", /*compose_rotations=*/false) {}

Schema Pefrl::schema() {
  Schema s{"pefrl",
           "Explicit, symplectic, fourth-order PEFRL (Omelyan, Mryglod & Folk 2002): five drifts and four force "
           "evaluations per step. Drifts compose Cosserat rotations on SO(3) and kicks integrate the velocity-"
           "dependent forces by RK4 (velocity_forces = \"rk4\", default), so the fourth order holds for rotations "
           "and couples too."};
  declareCommon(s, "rk4");
  return s;
}
Pefrl::Pefrl(const Params& p) : ExplicitSolver(p, pefrlScheme(), "pefrl", /*compose_rotations=*/true) {}

}  // namespace rodsim::explicit_solver
