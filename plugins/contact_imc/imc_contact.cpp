#include "imc_contact.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace rodsim::imc {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

Schema ImcContact::schema() {
  Schema s{"imc",
           "Implicit Contact Model (Tong et al. 2023, Sec. 3 and SI B): piecewise squared-softplus penalty energy "
           "(Eq. 9/B.1) on the minimum edge-edge distance (point-point, point-edge, edge-edge, Eqs. 10-13), "
           "contact distance r_i + r_j per pair, self-contact included; fully implicit Coulomb friction "
           "(Eqs. 14-21); adaptive stiffness k = s max|F_i| (SI B.3); candidate pairs once per step from a "
           "sweep-and-prune broad phase (SI B.2). Also node contact with [[obstacle]] planes, spheres and "
           "(spinning) cylinders."};
  s.add<double>("friction", 0.0, "Coulomb friction coefficient mu (Eq. 18).").atLeast(0);
  s.add<double>("delta", 1e-5,
                "Distance tolerance delta: forces act for distances below r_i + r_j + delta; the softplus "
                "band is (r_i + r_j - delta, r_i + r_j + delta), K1 = 15 h / delta (Eq. 9, B.2).")
      .unit("m")
      .greater(0);
  s.add<double>("slip_tolerance", 1e-4,
                "Slipping tolerance nu: relative tangential speeds below about nu count as sticking; "
                "K2 = 15 / nu (Eq. 17).")
      .unit("m/s")
      .greater(0);
  s.add<double>("stiffness_scale", 1e5,
                "s of the adaptive contact stiffness k = s max|F_i| (SI B.3, Eq. B.5), F_i the residual "
                "force without contact on the free nodes of candidate pairs at the first Newton "
                "evaluation of each step. Ignored when `stiffness` is given.")
      .greater(0);
  s.optional<double>("stiffness",
                     "Constant contact stiffness k instead of the adaptive rule: pair energy k E(D/h), "
                     "force (k/h) dE/dD-bar (numerically Tong et al.'s k, a force in N times 1 m).")
      .unit("J")
      .greater(0);
  s.optional<double>("margin",
                     "Candidate margin delta-hat - delta (SI B.2): pairs closer than r_i + r_j + delta + margin "
                     "at the start of a step are candidates; they are rebuilt within the step when a node "
                     "moves farther than margin/2. Also the arc-length margin of the self-contact "
                     "exclusion. Default: max(2 h_max, 2 max|v| dt) each step (2 h_max for the exclusion).")
      .unit("m")
      .greater(0);
  declareContactSelection(s);
  return s;
}

ImcContact::ImcContact(const Params& p)
    : Contact(p),
      mu_(p.real("friction")),
      delta_(p.real("delta")),
      nu_(p.real("slip_tolerance")),
      K2_(15.0 / p.real("slip_tolerance")),
      scale_(p.real("stiffness_scale")) {
  if (p.has("stiffness")) k_fixed_ = p.real("stiffness");
  if (p.has("margin")) margin_param_ = p.real("margin");
  rod_names_ = p.optionalStrings("rods");
  obstacle_names_ = p.optionalStrings("obstacles");
}

void ImcContact::bind(World& world) {
  world_ = &world;
  node_radius_.clear();
  obstacles_.clear();
  const std::vector<Rod*> rods = resolveRods(world, rod_names_, "rods");
  refuseClosedRods(rods, "rods", "the imc contact model");
  table_.bind(rods, "edge", "imc needs the cross-section radius as the contact thickness");
  rod_names_bound_.clear();
  for (Rod* rod : rods) rod_names_bound_.push_back(rod->name());
  h_max_ = table_.maxRadius();
  for (Rod* rod : rods)
    for (int i = 0; i < rod->numNodes(); ++i) {
      node_radius_.push_back(rod->nodeRadius(i));
      h_max_ = std::max(h_max_, rod->nodeRadius(i));
    }
  self_exclusion_ = margin_param_ ? *margin_param_ : 2 * h_max_;

  // Obstacles: planes, spheres and cylinders (spinning ones too), node against surface.
  for (int i : resolveObstacles(world, obstacle_names_, "obstacles")) obstacles_.push_back(&world.obstacle(i));
  swept_.bind(rods, obstacles_);
  node_mark_.assign(world.numDofs(), 0);
  cand_.clear();
  x_cand_.clear();
  obstacle_cand_.clear();
  stats_ = {};
}

// SI B.2: candidate set C-hat = pairs closer than r_i + r_j + delta + margin, from the broad phase.
void ImcContact::buildCandidates(const Vec& q) {
  auto t0 = Clock::now();
  const double pad_extra = 0.5 * (delta_ + margin_);
  // A Verlet list with a skin of the largest radius: the same candidates as a fresh sweep and
  // prune (the distance test below decides), rebuilt only every few hundred explicit steps.
  // Self-contact: no neighbours closer along the rod (rest arc length between the edges) than the
  // contact distance r_a + r_b + delta plus a margin; adjacent edges (gap 0) included. A straight
  // rod then has no candidates whatever its radius/edge ratio.
  const auto& near = table_.nearPairs(q, pad_extra, h_max_,
                                      [this](const EdgeRef& A, const EdgeRef& B) { return excludedSelfPair(A, B); });
  timing_.broad_s += since(t0);

  t0 = Clock::now();
  cand_.clear();
  for (const auto& [a, b] : near) {
    const EdgeRef &A = edges_[a], &B = edges_[b];
    const double reach = A.radius + B.radius;
    const double gap = segmentDistance(node(q, A.x0), node(q, A.x1), node(q, B.x0), node(q, B.x1)) - reach;
    // The Jacobian's pattern holds the pairs that can reach the band within a step or so; the
    // others add their block only once active (the pattern then changes and the solver
    // re-analyses it, which is rare). A zero 12 x 12 block for each of the hundreds of
    // candidates along rods side by side cost more than the contact terms themselves.
    if (gap < delta_ + margin_) cand_.push_back({a, b, gap < delta_ + pattern_band_, gap});
  }
  obstacle_cand_.clear();
  for (std::size_t i = 0; i < node_dofs_.size(); ++i)
    for (const Obstacle* p : obstacles_)
      if (p->signedDistance(node(q, node_dofs_[i])) < node_radius_[i] + delta_ + margin_)
        obstacle_cand_.push_back({node_dofs_[i], node_radius_[i], p});
  // Nodes of the candidates, for the stiffness rule.
  cand_nodes_.clear();
  auto mark = [&](int x) {
    if (!node_mark_[x]) {
      node_mark_[x] = 1;
      cand_nodes_.push_back(x);
    }
  };
  for (const Pair& p : cand_) {
    mark(edges_[p.a].x0);
    mark(edges_[p.a].x1);
    mark(edges_[p.b].x0);
    mark(edges_[p.b].x1);
  }
  for (const auto& c : obstacle_cand_) mark(c.x);
  for (int x : cand_nodes_) node_mark_[x] = 0;
  x_cand_.take(q, node_dofs_);
  timing_.filter_s += since(t0);
  ++timing_.builds;
}

void ImcContact::beginStep(const EvalContext& ctx) {
  const Vec& q = *ctx.q;
  double vmax = 0;  // fastest node at the step start
  if (ctx.v_start && ctx.v_start->size() == q.size())
    for (int x : node_dofs_) vmax = std::max(vmax, ctx.v_start->segment<3>(x).norm());
  margin_ = margin_param_ ? *margin_param_ : std::max(2 * h_max_, 2 * vmax * ctx.dt);
  pattern_band_ = std::min(margin_, std::max(delta_, 4 * vmax * ctx.dt));
  if (static_cast<int>(node_mark_.size()) != q.size()) node_mark_.assign(q.size(), 0);
  buildCandidates(q);
  need_k_ = !k_fixed_;
  if (k_fixed_) k_ = *k_fixed_;
}

// Candidates are rebuilt within a step when a node has moved more than margin/2 from where they
// were built (two approaching nodes may then have closed the whole margin).
void ImcContact::maybeRefresh(const Vec& q) {
  moved_ = 0;
  if (x_cand_.empty()) {
    buildCandidates(q);
    return;
  }
  moved_ = x_cand_.largestMove(q, node_dofs_);
  if (moved_ > 0.5 * margin_) {
    buildCandidates(q);
    moved_ = 0;
    ++timing_.refreshes;
  }
}

// SI B.3, Eq. B.5: k = s max_i |F_i^total| over the free nodes of the candidate pairs, F^total the
// residual without contact at the first evaluation of the step: `f` is the force without contact
// (ForceContact::addForce's non_contact); the inertial part is M (q - q_n - dt v_n)/dt^2.
void ImcContact::updateStiffness(const EvalContext& ctx, const Vec& f) {
  need_k_ = false;
  if (cand_nodes_.empty()) return;  // nothing to scale yet: decided at the first step with candidates
  const Vec& m = world_->mass();
  const auto& fixed = world_->fixedMask();
  const Vec& q = *ctx.q;
  const bool inertial = !ctx.quasi_static && ctx.dt > 0 && ctx.q_start && ctx.v_start;
  double fmax = 0, pmax = 0;
  for (int x : cand_nodes_) {
    if (fixed[x] && fixed[x + 1] && fixed[x + 2]) continue;
    Vec3 r = -f.segment<3>(x);
    if (inertial) {
      const Vec3 a = (q.segment<3>(x) - ctx.q_start->segment<3>(x) - ctx.dt * ctx.v_start->segment<3>(x)) /
                     (ctx.dt * ctx.dt);
      r += m.segment<3>(x).cwiseProduct(a);
      pmax = std::max(pmax, m.segment<3>(x).cwiseProduct(ctx.v_start->segment<3>(x)).norm() / ctx.dt);
    }
    fmax = std::max(fmax, r.norm());
  }
  // Nothing pushes the candidate nodes (a free rod coasting into another): fall back on the
  // momentum rate M v_n / dt (the paper's residual at q = q_n), then on the previous k.
  if (!(fmax > 0)) fmax = pmax;
  if (fmax > 0) k_ = scale_ * fmax;
}

void ImcContact::pairVelocity(const EvalContext& ctx, const EdgeRef& A, const EdgeRef& B, Vec12& v) const {
  const int xs[4] = {A.x0, A.x1, B.x0, B.x1};
  for (int a = 0; a < 4; ++a)
    for (int c = 0; c < 3; ++c) v[3 * a + c] = ctx.velocity(xs[a] + c);
}

void ImcContact::addForce(const EvalContext& ctx, const Vec& non_contact, Vec& f) {
  const Vec& q = *ctx.q;
  maybeRefresh(q);
  if (need_k_) updateStiffness(ctx, non_contact);
  const auto t0 = Clock::now();
  const bool fric = mu_ > 0 && !ctx.quasi_static;
  stats_ = {};
  Vec12 v;
  // Candidates surely outside their band (most of them: the margin reaches far beyond the band)
  // have no force: only their gap is needed, for min_gap, and only where it could be the smallest.
  bool apart_left = false;
  for (const Pair& p : cand_) {
    if (surelyApart(p, moved_)) {
      apart_left = true;
      continue;
    }
    const EdgeRef &A = edges_[p.a], &B = edges_[p.b];
    const double hs = 0.5 * (A.radius + B.radius);
    evaluatePair(node(q, A.x0), node(q, A.x1), node(q, B.x0), node(q, B.x1), hs, delta_, k_, 1, pe_);
    stats_.min_gap = std::min(stats_.min_gap, pe_.gap);
    if (!pe_.e.active) continue;
    ++stats_.active;
    if (fric) {
      pairVelocity(ctx, A, B, v);
      pairFriction(pe_.force, v, mu_, K2_, false, fr_);
      pe_.force += fr_.force;
    }
    f.segment<3>(A.x0) += pe_.force.segment<3>(0);
    f.segment<3>(A.x1) += pe_.force.segment<3>(3);
    f.segment<3>(B.x0) += pe_.force.segment<3>(6);
    f.segment<3>(B.x1) += pe_.force.segment<3>(9);
  }
  if (apart_left)
    for (const Pair& p : cand_)
      if (surelyApart(p, moved_) && p.build_gap - 2 * moved_ < stats_.min_gap) {
        const EdgeRef &A = edges_[p.a], &B = edges_[p.b];
        evaluatePair(node(q, A.x0), node(q, A.x1), node(q, B.x0), node(q, B.x1), 0.5 * (A.radius + B.radius), delta_,
                     k_, 0, pe_);
        stats_.min_gap = std::min(stats_.min_gap, pe_.gap);
      }
  for (const auto& c : obstacle_cand_) {
    Vec3 n;
    const double d = c.obstacle->signedDistance(node(q, c.x), &n);
    stats_.min_gap = std::min(stats_.min_gap, d - c.radius);
    const PenaltyValue e = imcEnergy(d / c.radius, 1.0, delta_ / c.radius);
    if (!e.active) continue;
    ++stats_.active;
    const double fn = -k_ / c.radius * e.d1;  // >= 0
    Vec3 F = fn * n;
    if (fric) {
      Vec3 fr, vel;
      for (int i = 0; i < 3; ++i) vel[i] = ctx.velocity(c.x + i);
      nodeFriction(fn, n, vel - c.obstacle->surfaceVelocity(node(q, c.x) - d * n), mu_, K2_, fr, nullptr, nullptr);
      F += fr;
    }
    f.segment<3>(c.x) += F;
  }
  timing_.narrow_s += since(t0);
  ++timing_.evaluations;
  timing_.pair_evaluations += static_cast<long long>(cand_.size());
}

// K = -dF/dq: -(dF^c/dx) - (dF^fr/dv / dt + dF^fr/dF^c dF^c/dx) (Eq. 21). One 12 x 12 block per
// candidate pair, in candidate order, structural zeros for inactive pairs (constant pattern).
void ImcContact::addStiffness(const EvalContext& ctx, StiffnessSink& K) {
  const Vec& q = *ctx.q;
  const auto t0 = Clock::now();
  const bool fric = mu_ > 0 && !ctx.quasi_static;
  const double vd = ctx.velocityDerivative();
  Vec12 v;
  int dofs[12];
  const double moved = x_cand_.empty() ? INFINITY : x_cand_.largestMove(q, node_dofs_);
  for (const Pair& p : cand_) {
    const EdgeRef &A = edges_[p.a], &B = edges_[p.b];
    const bool apart = surelyApart(p, moved);
    if (apart && !p.in_pattern) continue;
    if (!apart) {
      const double hs = 0.5 * (A.radius + B.radius);
      evaluatePair(node(q, A.x0), node(q, A.x1), node(q, B.x0), node(q, B.x1), hs, delta_, k_, 2, pe_);
      if (!pe_.e.active && !p.in_pattern) continue;
    }
    if (!apart && pe_.e.active) {
      block_ = -pe_.dforce;
      if (fric) {
        pairVelocity(ctx, A, B, v);
        pairFriction(pe_.force, v, mu_, K2_, true, fr_);
        block_.noalias() -= vd * fr_.d_dv;
        block_.noalias() -= fr_.d_df * pe_.dforce;
      }
    } else {
      block_.setZero();
    }
    const int xs[4] = {A.x0, A.x1, B.x0, B.x1};
    for (int a = 0; a < 4; ++a)
      for (int c = 0; c < 3; ++c) dofs[3 * a + c] = xs[a] + c;
    K.addBlock(dofs, block_);
  }
  for (const auto& c : obstacle_cand_) {
    const Vec3 x = node(q, c.x);
    Vec3 n;
    const double d = c.obstacle->signedDistance(x, &n);
    const PenaltyValue e = imcEnergy(d / c.radius, 1.0, delta_ / c.radius);
    Mat3 B = Mat3::Zero();
    if (e.active) {
      const double fn = -k_ / c.radius * e.d1;
      const Vec3 dfn = -k_ / (c.radius * c.radius) * e.d2 * n;  // d fn / dx
      const Mat3 dn = c.obstacle->distanceHessian(x);             // d n / dx (0 on a plane)
      B = -(n * dfn.transpose() + fn * dn);                       // -dF^c/dx
      if (fric) {
        // The friction sees the node's velocity relative to the surface's material point under it,
        // s(x) = x - d n (ds/dx = I - n n^T - d dn/dx), and the normal n(x).
        Vec3 fr, vel, d_dfn;
        Mat3 d_dv, d_dn;
        for (int i = 0; i < 3; ++i) vel[i] = ctx.velocity(c.x + i);
        nodeFriction(fn, n, vel - c.obstacle->surfaceVelocity(x - d * n), mu_, K2_, fr, &d_dv, &d_dfn, &d_dn);
        const Mat3 ds = Mat3::Identity() - n * n.transpose() - d * dn;
        B -= d_dv * (vd * Mat3::Identity() - c.obstacle->surfaceVelocityGradient() * ds) + d_dfn * dfn.transpose() +
             d_dn * dn;
      }
    }
    K.addContiguous(c.x, B);
  }
  timing_.narrow_s += since(t0);
}

double ImcContact::energy(const EvalContext& ctx) const {
  const Vec& q = *ctx.q;
  double e = 0;
  PairEvaluation pe;
  for (const Pair& p : cand_) {
    const EdgeRef &A = edges_[p.a], &B = edges_[p.b];
    evaluatePair(node(q, A.x0), node(q, A.x1), node(q, B.x0), node(q, B.x1), 0.5 * (A.radius + B.radius), delta_,
                 k_, 0, pe);
    e += k_ * pe.e.v;
  }
  for (const auto& c : obstacle_cand_)
    e += k_ * imcEnergy(c.obstacle->signedDistance(node(q, c.x)) / c.radius, 1.0, delta_ / c.radius).v;
  return e;
}

}  // namespace rodsim::imc
