#include "ipc_contact.h"


#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace rodsim::ipc {

namespace {

constexpr double kParallelFrictionTol = 1e-6;  // lagEdgeEdge: overlap-midpoint rule below this sin^2
// Start-up (README, "Start-up: pairs inside d_hat"). A pair starting closer than this fraction of
// d_hat gets the barrier's zero moved below contact, to this gap: a log barrier on a scale the
// Newton iterations still resolve, rather than on a gap of zero or of round-off.
constexpr double kStartGapFloor = 1e-2;

}  // namespace

Schema IpcContact::schema() {
  Schema s{"ipc",
           "Incremental Potential Contact for rods (IPC, Li et al. 2020, as used by Tong et al. 2023): clamped log "
           "barrier -(d - d_hat)^2 ln(d/d_hat) (Tong et al. 2023, Eq. 8) on the gap d = distance - r_i - r_j of every edge "
           "pair (point-point, point-edge, edge-edge, Eqs. 10-13; nearly parallel edges mollified) and on "
           "node-obstacle gaps (planes, spheres, spinning cylinders), continuous collision detection bounding "
           "every Newton step so that no gap reaches zero, "
           "adaptive barrier stiffness, lagged smoothed Coulomb friction. Self-contact included."};
  s.optional<double>("d_hat",
                     "Barrier activation distance: forces act on gaps below d_hat. Default: 0.1 times the smallest "
                     "edge radius of the selected rods.")
      .unit("m")
      .greater(0);
  s.optional<double>("kappa", "Constant barrier stiffness instead of the adaptive rule (pair energy kappa b(d)).")
      .unit("N/m")
      .greater(0);
  s.optional<double>("kappa_min",
                     "Lower end of the adaptive stiffness range [kappa_min, 100 kappa_min]. Default: "
                     "kappa_min_scale max(m/dt^2, F/d_hat), m the mean mass of the free nodes, F the largest residual force "
                     "without contact on a node of the selected rods at the first evaluation of the step.")
      .unit("N/m")
      .greater(0);
  s.add<double>("kappa_min_scale", 1.0,
                "Factor of the default kappa_min (ignored when kappa_min or kappa is given).")
      .greater(0);
  s.add<double>("kappa_growth_gap", 0.1,
                "The stiffness doubles (up to 100 kappa_min) at the start of a step whose minimum gap is smaller "
                "than at the previous step and below kappa_growth_gap d_hat.")
      .range(0, 1);
  s.add<double>("friction", 0.0, "Coulomb friction coefficient mu.").atLeast(0);
  s.add<double>("eps_v", 1e-4,
                "Friction smoothing velocity: tangential slips below eps_v dt per step are treated as sticking "
                "(IPC's f1 mollifier).")
      .unit("m/s")
      .greater(0);
  s.add<double>("parallel_threshold", 1e-3,
                "Edge-edge mollifier threshold c: the pair energy blends toward the endpoint barriers when "
                "|e_a x e_b|^2 < c |e_a_rest|^2 |e_b_rest|^2 (sin^2 of the angle below about c).")
      .greater(0)
      .less(1);
  s.add<double>("ccd_gap_fraction", 0.1,
                "CCD target: a Newton step may shrink a gap to no less than this fraction of its value "
                "before the step.")
      .greater(0)
      .less(1);
  s.add<double>("ccd_safety", 0.8, "Factor applied to the CCD time when it limits the step.").greater(0).atMost(1);
  s.add<double>("ccd_tolerance", 1e-2,
                "Conservative advancement stops within this fraction of the closing distance from the target.")
      .greater(0)
      .less(1);
  s.add<int>("ccd_max_iterations", 200, "Conservative advancement iterations per pair (any iterate is safe).")
      .range(1, 1e6);
  s.optional<double>("margin",
                     "Candidate margin: pairs closer than r_i + r_j + d_hat + margin at the start of a step get "
                     "barrier terms (and are the pairs min_gap reports); rebuilt within the step when a node moves "
                     "farther than margin/2. Also the arc-length margin of the self-contact exclusion. Default: "
                     "max(d_hat, 4 max|v| dt) (2 h_max for the exclusion).")
      .unit("m")
      .greater(0);
  declareContactSelection(s);
  return s;
}

IpcContact::IpcContact(const Params& p)
    : Contact(p),
      kappa_min_scale_(p.real("kappa_min_scale")),
      kappa_growth_gap_(p.real("kappa_growth_gap")),
      mu_(p.real("friction")),
      eps_v_(p.real("eps_v")),
      parallel_eps_(p.real("parallel_threshold")),
      ccd_safety_(p.real("ccd_safety")) {
  if (p.has("d_hat")) d_hat_param_ = p.real("d_hat");
  if (p.has("kappa")) kappa_fixed_ = p.real("kappa");
  if (p.has("kappa_min")) kappa_min_param_ = p.real("kappa_min");
  if (p.has("margin")) margin_param_ = p.real("margin");
  rod_names_ = p.optionalStrings("rods");
  obstacle_names_ = p.optionalStrings("obstacles");
  allow_initial_overlap_ = p.boolean("allow_initial_overlap");
  ccd_.gap_fraction = p.real("ccd_gap_fraction");
  ccd_.tolerance = p.real("ccd_tolerance");
  ccd_.max_iterations = static_cast<int>(p.integer("ccd_max_iterations"));
}

void IpcContact::bind(World& world) {
  world_ = &world;
  edges_.clear();
  edge_rest_length_.clear();
  node_dofs_.clear();
  node_radius_.clear();
  obstacles_.clear();
  const std::vector<Rod*> rods = resolveRods(world, rod_names_, "rods");
  refuseClosedRods(rods, "rods", "the ipc contact model");
  rods_bound_ = rods;
  h_max_ = 0;
  double r_min = std::numeric_limits<double>::infinity();
  for (int ri = 0; ri < static_cast<int>(rods.size()); ++ri) {
    Rod& rod = *rods[ri];
    const int n = rod.numNodes();
    const std::vector<double> arc = restArcLengths(rod);
    for (int i = 0; i < n; ++i) {
      node_dofs_.push_back(rod.globalPositionDof(i));
      node_radius_.push_back(rod.nodeRadius(i));
    }
    for (int e = 0; e + 1 < n; ++e) {
      EdgeRef E;
      E.x0 = rod.globalPositionDof(e);
      E.x1 = rod.globalPositionDof(e + 1);
      E.rod = ri;
      E.radius = rod.radius(e);
      E.s0 = arc[e];
      E.s1 = arc[e + 1];
      if (!(E.radius > 0))
        throw ParamError("rods", "rod '" + rod.name() + "' has a non-positive radius on edge " + std::to_string(e) +
                                     "; ipc needs the cross-section radius as the contact thickness");
      h_max_ = std::max(h_max_, E.radius);
      r_min = std::min(r_min, E.radius);
      edges_.push_back(E);
      edge_rest_length_.push_back(arc[e + 1] - arc[e]);
    }
  }
  near_.bind(edges_, geometry::VerletPairs::Kind::Capsules);
  ccd_near_.bind(edges_, geometry::VerletPairs::Kind::Boxes);
  d_hat_ = d_hat_param_ ? *d_hat_param_ : (std::isfinite(r_min) ? 0.1 * r_min : 1e-4);
  verlet_skin_ = std::isfinite(r_min) ? r_min : 1.0;
  self_exclusion_ = margin_param_ ? *margin_param_ : 2 * h_max_;

  for (int i : resolveObstacles(world, obstacle_names_, "obstacles")) obstacles_.push_back(&world.obstacle(i));  // planes, spheres, cylinders
  barrier_grad_.setZero(world.numDofs());
  cand_.clear();
  obstacle_cand_.clear();
  stats_ = {};
  if (allow_initial_overlap_) refuseInitialOverlap(world.q());
}

// Edges of one rod closer along it (rest arc length between them) than the contact distance plus
// d_hat and a margin never get a barrier: neighbours overlap by construction (a straight rod's
// edges e and e + 2 are one edge length apart, often less than 2 r).
bool IpcContact::excludedSelfPair(const EdgeRef& A, const EdgeRef& B) const {
  if (A.rod != B.rod) return false;
  const double arc_gap = A.s0 < B.s0 ? B.s0 - A.s1 : A.s0 - B.s1;
  return arc_gap <= A.radius + B.radius + d_hat_ + self_exclusion_;
}

void IpcContact::pairNodes(const Vec& q, const Candidate& c, Vec3& p0, Vec3& p1, Vec3& q0, Vec3& q1) const {
  p0 = node(q, edges_[c.a].x0);
  p1 = node(q, edges_[c.a].x1);
  q0 = node(q, edges_[c.b].x0);
  q1 = node(q, edges_[c.b].x1);
}

// Start-up (README, "Start-up: pairs inside d_hat"). A pair starting at gap g0 < d_hat gets the
// barrier b(gap + offset) with its own activation gap in place of d_hat: min(d_hat, g0) when g0 is
// at least kStartGapFloor d_hat (offset 0: the zero stays at contact), else the floor with the zero
// moved to offset = floor - g0 below contact (a pair touching to round-off). Either way its force
// is zero where the pair starts and grows as the gap closes. False for a real overlap (the kernel
// refuses those unless allow_initial_overlap, which bind refuses) and for a pair beyond d_hat.
bool IpcContact::startPair(double gap, double reach, StartPair& out) const {
  if (!(gap < d_hat_) || gap < -kTouchRoundOff * reach) return false;
  const double floor = kStartGapFloor * d_hat_;
  out.offset = std::max(0.0, floor - gap);
  out.d_hat = std::min(d_hat_, gap + out.offset);
  return true;
}

const IpcContact::StartPair* IpcContact::findStart(const std::vector<StartPair>& pairs, int a, int b) {
  if (pairs.empty()) return nullptr;
  const auto it = std::lower_bound(pairs.begin(), pairs.end(), std::pair(a, b), [](const StartPair& s, const std::pair<int, int>& k) {
    return s.a < k.first || (s.a == k.first && s.b < k.second);
  });
  return it != pairs.end() && it->a == a && it->b == b ? &*it : nullptr;
}

// Every pair inside d_hat at the first step, in (a, b) order. Called once per run: clear rather than
// fast (the boxes of findOverlaps, grown by half of d_hat).
void IpcContact::captureStartPairs(const Vec& q) {
  start_captured_ = true;
  start_edges_.clear();
  start_nodes_.clear();
  start_offsets_ = false;
  if (!use_initial_gaps_) return;
  std::vector<Aabb> boxes(edges_.size());
  for (std::size_t e = 0; e < edges_.size(); ++e)
    boxes[e] = geometry::segmentBox(node(q, edges_[e].x0), node(q, edges_[e].x1), edges_[e].radius + 0.5 * d_hat_);
  std::vector<std::pair<int, int>> pairs;
  geometry::SweepAndPrune sap;
  sap.query(boxes, pairs);
  StartPair sp;
  for (const auto& [a, b] : pairs) {
    const EdgeRef &A = edges_[a], &B = edges_[b];
    if (excludedSelfPair(A, B)) continue;
    const double reach = A.radius + B.radius;
    if (!startPair(geometry::segmentDistance(node(q, A.x0), node(q, A.x1), node(q, B.x0), node(q, B.x1)) - reach, reach, sp))
      continue;
    sp.a = std::min(a, b);
    sp.b = std::max(a, b);
    start_edges_.push_back(sp);
  }
  for (std::size_t i = 0; i < node_dofs_.size(); ++i)
    for (std::size_t j = 0; j < obstacles_.size(); ++j) {
      const double reach = node_radius_[i];
      if (!startPair(obstacles_[j]->signedDistance(node(q, node_dofs_[i])) - reach, reach, sp)) continue;
      sp.a = static_cast<int>(i);
      sp.b = static_cast<int>(j);
      start_nodes_.push_back(sp);
    }
  auto order = [](const StartPair& x, const StartPair& y) { return x.a < y.a || (x.a == y.a && x.b < y.b); };
  std::sort(start_edges_.begin(), start_edges_.end(), order);
  for (const auto* list : {&start_edges_, &start_nodes_})
    for (const StartPair& s : *list) start_offsets_ = start_offsets_ || s.offset > 0;
}

// At a step start, as a start pair opens (gap g at the committed configuration) its barrier relaxes
// toward the plain one: the offset shrinks to floor - g (0 once g reaches the floor) and the
// activation gap grows to the gap it reached, up to d_hat; a pair back to the plain barrier is
// dropped. Both change only where the pair's barrier is zero at the step start (gap + offset >= its
// d_hat), and leave it zero there: no energy is added, and the pair never receives a push it did
// not earn by closing. Idempotent for one configuration (a step retried after a failure).
void IpcContact::relaxStartPairs(const Vec& q) {
  if (start_edges_.empty() && start_nodes_.empty()) return;
  const double floor = kStartGapFloor * d_hat_;
  auto relax = [&](StartPair& sp, double gap) {
    sp.offset = std::max(0.0, std::min(sp.offset, floor - gap));
    sp.d_hat = std::max(sp.d_hat, std::min(d_hat_, gap + sp.offset));
    return sp.offset == 0 && sp.d_hat >= d_hat_;  // the plain barrier
  };
  std::size_t kept = 0;
  for (StartPair sp : start_edges_) {
    const EdgeRef &A = edges_[sp.a], &B = edges_[sp.b];
    if (!relax(sp, geometry::segmentDistance(node(q, A.x0), node(q, A.x1), node(q, B.x0), node(q, B.x1)) -
                       (A.radius + B.radius)))
      start_edges_[kept++] = sp;
  }
  start_edges_.resize(kept);
  kept = 0;
  for (StartPair sp : start_nodes_)
    if (!relax(sp, obstacles_[sp.b]->signedDistance(node(q, node_dofs_[sp.a])) - node_radius_[sp.a]))
      start_nodes_[kept++] = sp;
  start_nodes_.resize(kept);
  start_offsets_ = false;
  for (const auto* list : {&start_edges_, &start_nodes_})
    for (const StartPair& s : *list) start_offsets_ = start_offsets_ || s.offset > 0;
}

// Candidates: pairs whose gap is below d_hat + margin at q; friction lags from q_lag (the step start).
void IpcContact::buildCandidates(const Vec& q, const Vec& q_lag) {
  // The pairs whose boxes grown by radius + (d_hat + margin)/2 may overlap, from a Verlet list with a
  // skin of the largest radius: the gap test below keeps the same candidates as a fresh sweep.
  const auto& near = near_.pairs(q, nullptr, 0.5 * (d_hat_ + margin_), verlet_skin_, excludedByIndex());
  cand_.clear();
  Vec3 p0, p1, q0, q1;
  for (const auto& [a, b] : near) {
    Candidate c;
    c.a = a;
    c.b = b;
    c.d_hat = d_hat_;
    if (const StartPair* sp = findStart(start_edges_, std::min(a, b), std::max(a, b))) {
      c.offset = sp->offset;
      c.d_hat = sp->d_hat;
    }
    pairNodes(q, c, p0, p1, q0, q1);
    const double gap = geometry::segmentDistance(p0, p1, q0, q1) - pairReach(c);
    if (gap >= c.d_hat + margin_) continue;
    // The Jacobian's sparsity pattern holds the pairs that can reach d_hat within a step or so:
    // emitting a zero 12 x 12 block for every candidate (there are hundreds along two flagella
    // side by side, for a few active pairs) cost more than the barrier itself. A pair outside
    // the band that does become active still adds its block; the pattern then changes and the
    // solver re-analyses it, which is rare.
    c.in_pattern = gap < c.d_hat + pattern_band_;
    c.eps_x = parallel_eps_ * edge_rest_length_[a] * edge_rest_length_[a] * edge_rest_length_[b] *
              edge_rest_length_[b];
    pairNodes(q_lag, c, p0, p1, q0, q1);
    // Lagged normal force for unit kappa: the barrier force on edge a (equal and opposite on b).
    pairBarrier(p0, p1, q0, q1, pairReach(c), c.d_hat, c.eps_x, 1, pb_);
    if (pb_.active && !(pb_.gap > 0))
      throw std::runtime_error("ipc: edges " + std::to_string(a) + " and " + std::to_string(b) +
                               " overlap (gap " + std::to_string(pb_.gap - c.offset) +
                               " m) at the start of the step; the barrier needs separated rods (check the "
                               "initial geometry against the radii, or the self-contact margin)");
    // The lagged closest points and normal serve friction, which a pair without a lagged normal
    // force does not have (most candidates).
    if (pb_.active) {
      c.lag = lagEdgeEdge(p0, p1, q0, q1, kParallelFrictionTol);
      c.lag.lambda_unit = (pb_.grad.segment<3>(0) + pb_.grad.segment<3>(3)).norm();
    }
    cand_.push_back(c);
  }
  obstacle_cand_.clear();
  for (std::size_t i = 0; i < node_dofs_.size(); ++i)
    for (std::size_t j = 0; j < obstacles_.size(); ++j) {
      const Obstacle* p = obstacles_[j];
      ObstacleCandidate c;
      c.x = node_dofs_[i];
      c.radius = node_radius_[i];
      c.d_hat = d_hat_;
      if (const StartPair* sp = findStart(start_nodes_, static_cast<int>(i), static_cast<int>(j))) {
        c.offset = sp->offset;
        c.d_hat = sp->d_hat;
      }
      c.reach = c.radius - c.offset;
      if (p->signedDistance(node(q, node_dofs_[i])) < c.reach + c.d_hat + margin_) {
        c.obstacle = p;
        const Vec3 x_lag = node(q_lag, c.x);
        const double distance = p->signedDistance(x_lag, &c.n_lag), gap = distance - c.reach;
        if (!(gap > 0))
          throw std::runtime_error("ipc: a node touches or crosses obstacle '" + p->name + "' (gap " +
                                   std::to_string(gap - c.offset) + " m) at the start of the step");
        c.lambda_unit = std::abs(barrier(gap, c.d_hat).d1);
        c.surface_step = dt_ * p->surfaceVelocity(x_lag - distance * c.n_lag);
        obstacle_cand_.push_back(c);
      }
    }
  q_cand_ = q;
}

void IpcContact::maybeRefresh(const Vec& q, const Vec& q_lag) {
  if (q_cand_.size() != q.size()) {
    buildCandidates(q, q_lag);
    return;
  }
  const double lim2 = 0.25 * margin_ * margin_;
  for (int x : node_dofs_)
    if ((q.segment<3>(x) - q_cand_.segment<3>(x)).squaredNorm() > lim2) {
      buildCandidates(q, q_lag);
      return;
    }
}

void IpcContact::beginStep(const EvalContext& ctx) {
  const Vec& q = *ctx.q;
  double vmax = 0;  // fastest node at the step start
  if (ctx.v_start && ctx.v_start->size() == q.size())
    for (int x : node_dofs_) vmax = std::max(vmax, ctx.v_start->segment<3>(x).norm());
  dt_ = ctx.dt;
  // The candidates need only cover the pairs a step can bring inside d_hat: twice the step's motion
  // (a Newton iterate that moves a node farther than margin/2 rebuilds them, maybeRefresh). A pair
  // beyond d_hat has no barrier and no friction, and nothing else reads the candidates (the stiffness
  // rules look at the pairs inside d_hat), so the margin sets the cost alone: each candidate is
  // evaluated at every residual.
  margin_ = margin_param_ ? *margin_param_ : std::max(d_hat_, 4 * vmax * ctx.dt);
  pattern_band_ = std::min(margin_, std::max(d_hat_, 4 * vmax * ctx.dt));
  if (barrier_grad_.size() != q.size()) barrier_grad_.setZero(q.size());
  if (!start_captured_)
    captureStartPairs(q);
  else
    relaxStartPairs(q);
  buildCandidates(q, q);
  // Minimum gap at the step start, for the stiffness growth rule.
  step_start_gap_ = std::numeric_limits<double>::infinity();
  Vec3 p0, p1, q0, q1;
  for (const Candidate& c : cand_) {
    pairNodes(q, c, p0, p1, q0, q1);
    step_start_gap_ =
        std::min(step_start_gap_, scaledGap(geometry::segmentDistance(p0, p1, q0, q1) - pairReach(c), c.d_hat));
  }
  for (const ObstacleCandidate& c : obstacle_cand_)
    step_start_gap_ =
        std::min(step_start_gap_, scaledGap(c.obstacle->signedDistance(node(q, c.x)) - c.reach, c.d_hat));
  need_kappa_ = true;
  step_fraction_ = 1;
  if (kappa_fixed_) kappa_ = *kappa_fixed_;
}

// Adaptive barrier stiffness (IPC): kappa_min from the mass and force scales, kappa from the
// balance of the barrier gradient against the rest of the residual the first time a barrier acts,
// kept in [kappa_min, 100 kappa_min], doubled at a step start whose minimum gap shrank and is below
// kappa_growth_gap d_hat. `f` is the force without contact (addForce's non_contact); the
// residual without contact is r = M (q - q_n - dt v_n)/dt^2 - f.
void IpcContact::updateKappa(const EvalContext& ctx, const Vec& f) {
  need_kappa_ = false;
  if (kappa_fixed_) return;
  const Vec& m = world_->mass();
  const auto& fixed = world_->fixedMask();
  const Vec& q = *ctx.q;
  const bool inertial = !ctx.quasi_static && ctx.dt > 0 && ctx.q_start && ctx.v_start;
  if (mean_node_mass_ == 0 && !node_dofs_.empty()) {
    // Mean mass of the nodes that can move (held nodes never meet the barrier's inertia).
    double sum = 0, all = 0;
    int count = 0;
    for (int x : node_dofs_) {
      all += m[x];
      if (fixed[x] && fixed[x + 1] && fixed[x + 2]) continue;
      sum += m[x];
      ++count;
    }
    mean_node_mass_ = count > 0 ? sum / count : all / static_cast<double>(node_dofs_.size());
  }
  auto residual = [&](int x) {
    Vec3 r = -f.segment<3>(x);
    if (inertial)
      r += m.segment<3>(x).cwiseProduct(q.segment<3>(x) - ctx.q_start->segment<3>(x) -
                                        ctx.dt * ctx.v_start->segment<3>(x)) /
           (ctx.dt * ctx.dt);
    for (int i = 0; i < 3; ++i)
      if (fixed[x + i]) r[i] = 0;
    return r;
  };
  double f_ref = 0;
  for (int x : node_dofs_) f_ref = std::max(f_ref, residual(x).norm());
  double k_min = 0;
  if (kappa_min_param_) {
    k_min = *kappa_min_param_;
  } else {
    k_min = f_ref / d_hat_;
    if (inertial) k_min = std::max(k_min, mean_node_mass_ / (ctx.dt * ctx.dt));
    k_min *= kappa_min_scale_;
  }
  if (k_min > 0) kappa_min_ = k_min;
  if (!(kappa_min_ > 0)) kappa_min_ = 1.0;  // nothing moves and no mass scale yet: any positive value
  const double k_max = 100 * kappa_min_;

  if (!kappa_initialized_) {
    // Balance: the kappa minimizing |r + kappa grad B| over the nodes the barrier acts on.
    for (int x : node_dofs_) barrier_grad_.segment<3>(x).setZero();
    Vec3 p0, p1, q0, q1;
    bool any = false;
    for (const Candidate& c : cand_) {
      pairNodes(q, c, p0, p1, q0, q1);
      pairBarrier(p0, p1, q0, q1, pairReach(c), c.d_hat, c.eps_x, 1, pb_);
      if (!pb_.active) continue;
      any = true;
      barrier_grad_.segment<3>(edges_[c.a].x0) += pb_.grad.segment<3>(0);
      barrier_grad_.segment<3>(edges_[c.a].x1) += pb_.grad.segment<3>(3);
      barrier_grad_.segment<3>(edges_[c.b].x0) += pb_.grad.segment<3>(6);
      barrier_grad_.segment<3>(edges_[c.b].x1) += pb_.grad.segment<3>(9);
    }
    for (const ObstacleCandidate& c : obstacle_cand_) {
      Vec3 n;
      const Scalar2 b = barrier(c.obstacle->signedDistance(node(q, c.x), &n) - c.reach, c.d_hat);
      if (b.d1 == 0) continue;
      any = true;
      barrier_grad_.segment<3>(c.x) += b.d1 * n;
    }
    kappa_ = kappa_min_;
    if (any) {
      double rg = 0, gg = 0;
      for (int x : node_dofs_) {
        Vec3 g = barrier_grad_.segment<3>(x);
        for (int i = 0; i < 3; ++i)
          if (fixed[x + i]) g[i] = 0;
        rg += residual(x).dot(g);
        gg += g.squaredNorm();
      }
      if (gg > 0) kappa_ = std::clamp(-rg / gg, kappa_min_, k_max);
      kappa_initialized_ = true;
    }
  } else {
    kappa_ = std::clamp(kappa_, kappa_min_, k_max);
    if (step_start_gap_ < prev_min_gap_ && step_start_gap_ < kappa_growth_gap_ * d_hat_)
      kappa_ = std::min(2 * kappa_, k_max);
  }
  prev_min_gap_ = step_start_gap_;
}

void IpcContact::pairDisplacement(const EvalContext& ctx, const Candidate& c, Vec12& dx) const {
  const int xs[4] = {edges_[c.a].x0, edges_[c.a].x1, edges_[c.b].x0, edges_[c.b].x1};
  for (int k = 0; k < 4; ++k) dx.segment<3>(3 * k) = ctx.q->segment<3>(xs[k]) - ctx.q_start->segment<3>(xs[k]);
}

void IpcContact::addForce(const EvalContext& ctx, const Vec& non_contact, Vec& f) {
  const Vec& q = *ctx.q;
  const Vec& q_lag = ctx.q_start ? *ctx.q_start : q;
  maybeRefresh(q, q_lag);
  if (need_kappa_) updateKappa(ctx, non_contact);
  const bool fric = mu_ > 0 && !ctx.quasi_static && ctx.q_start && ctx.dt > 0;
  const double eps_u = eps_v_ * ctx.dt;
  stats_ = {};
  Vec3 p0, p1, q0, q1;
  Vec12 dx;
  for (const Candidate& c : cand_) {
    pairNodes(q, c, p0, p1, q0, q1);
    pairBarrier(p0, p1, q0, q1, pairReach(c), c.d_hat, c.eps_x, 1, pb_);
    stats_.min_gap = std::min(stats_.min_gap, pb_.gap - c.offset);  // the true gap
    Vec12 F = Vec12::Zero();
    if (pb_.active) {
      ++stats_.active;
      F = -kappa_ * pb_.grad;
    }
    if (fric && c.lag.lambda_unit > 0) {
      const double w[4] = {1 - c.lag.s, c.lag.s, -(1 - c.lag.t), -c.lag.t};
      pairDisplacement(ctx, c, dx);
      frictionPotential<4>(w, dx, c.lag.n, mu_ * kappa_ * c.lag.lambda_unit, eps_u, 1, pf_);
      F -= pf_.grad;
    }
    f.segment<3>(edges_[c.a].x0) += F.segment<3>(0);
    f.segment<3>(edges_[c.a].x1) += F.segment<3>(3);
    f.segment<3>(edges_[c.b].x0) += F.segment<3>(6);
    f.segment<3>(edges_[c.b].x1) += F.segment<3>(9);
  }
  for (const ObstacleCandidate& c : obstacle_cand_) {
    Vec3 n;
    const double gap = c.obstacle->signedDistance(node(q, c.x), &n) - c.reach;
    stats_.min_gap = std::min(stats_.min_gap, gap - c.offset);  // the true gap
    const Scalar2 b = barrier(gap, c.d_hat);
    Vec3 F = Vec3::Zero();
    if (gap < c.d_hat) {
      ++stats_.active;
      F = -kappa_ * b.d1 * n;
    }
    if (fric && c.lambda_unit > 0) {  // lagged: normal force, tangent plane and surface motion
      const double w[1] = {1.0};
      frictionPotential<1>(w, obstacleSlide(ctx, c), c.n_lag, mu_ * kappa_ * c.lambda_unit, eps_u, 1, nf_);
      F -= nf_.grad;
    }
    f.segment<3>(c.x) += F;
  }
}

// K = -dF/dq = kappa d2B + d2D (friction potential with lagged normal force, normal and contact
// point): symmetric. One 12 x 12 block per candidate and one 3 x 3 per obstacle candidate, in
// candidate order, structural zeros when inactive (constant pattern within a step).
void IpcContact::addStiffness(const EvalContext& ctx, StiffnessSink& K) {
  const Vec& q = *ctx.q;
  const bool fric = mu_ > 0 && !ctx.quasi_static && ctx.q_start && ctx.dt > 0;
  const double eps_u = eps_v_ * ctx.dt;
  Vec3 p0, p1, q0, q1;
  Vec12 dx;
  int dofs[12];
  for (const Candidate& c : cand_) {
    pairNodes(q, c, p0, p1, q0, q1);
    pairBarrier(p0, p1, q0, q1, pairReach(c), c.d_hat, c.eps_x, 2, pb_);
    const bool rubbing = fric && c.lag.lambda_unit > 0;
    if (!pb_.active && !rubbing && !c.in_pattern) continue;
    if (pb_.active)
      block_ = kappa_ * pb_.hess;
    else
      block_.setZero();
    if (rubbing) {
      const double w[4] = {1 - c.lag.s, c.lag.s, -(1 - c.lag.t), -c.lag.t};
      pairDisplacement(ctx, c, dx);
      frictionPotential<4>(w, dx, c.lag.n, mu_ * kappa_ * c.lag.lambda_unit, eps_u, 2, pf_);
      block_ += pf_.hess;
    }
    const int xs[4] = {edges_[c.a].x0, edges_[c.a].x1, edges_[c.b].x0, edges_[c.b].x1};
    for (int a = 0; a < 4; ++a)
      for (int k = 0; k < 3; ++k) dofs[3 * a + k] = xs[a] + k;
    K.addBlock(dofs, block_);
  }
  for (const ObstacleCandidate& c : obstacle_cand_) {
    const Vec3 x = node(q, c.x);
    Vec3 n;
    const Scalar2 b = barrier(c.obstacle->signedDistance(x, &n) - c.reach, c.d_hat);
    // d2/dx2 of B(gap(x)): B'' n n^T + B' dn/dx (the normal turns on spheres and cylinders)
    Mat3 B = kappa_ * (b.d2 * n * n.transpose() + b.d1 * c.obstacle->distanceHessian(x));
    if (fric && c.lambda_unit > 0) {
      const double w[1] = {1.0};
      frictionPotential<1>(w, obstacleSlide(ctx, c), c.n_lag, mu_ * kappa_ * c.lambda_unit, eps_u, 2, nf_);
      B += nf_.hess;
    }
    K.addContiguous(c.x, B);
  }
}

double IpcContact::energy(const EvalContext& ctx) const {
  const Vec& q = *ctx.q;
  const bool fric = mu_ > 0 && !ctx.quasi_static && ctx.q_start && ctx.dt > 0;
  const double eps_u = eps_v_ * ctx.dt;
  double e = 0;
  PairBarrier pb;
  NodeFriction<4> pf;
  NodeFriction<1> nf;
  Vec3 p0, p1, q0, q1;
  Vec12 dx;
  for (const Candidate& c : cand_) {
    pairNodes(q, c, p0, p1, q0, q1);
    pairBarrier(p0, p1, q0, q1, pairReach(c), c.d_hat, c.eps_x, 0, pb);
    if (pb.active) e += kappa_ * (pb.gap > 0 ? pb.E : std::numeric_limits<double>::infinity());
    if (fric && c.lag.lambda_unit > 0) {
      const double w[4] = {1 - c.lag.s, c.lag.s, -(1 - c.lag.t), -c.lag.t};
      pairDisplacement(ctx, c, dx);
      frictionPotential<4>(w, dx, c.lag.n, mu_ * kappa_ * c.lag.lambda_unit, eps_u, 0, pf);
      e += pf.D;
    }
  }
  for (const ObstacleCandidate& c : obstacle_cand_) {
    const double gap = c.obstacle->signedDistance(node(q, c.x)) - c.reach;
    if (gap < c.d_hat) e += kappa_ * (gap > 0 ? barrier(gap, c.d_hat).v : std::numeric_limits<double>::infinity());
    if (fric && c.lambda_unit > 0) {
      const double w[1] = {1.0};
      frictionPotential<1>(w, obstacleSlide(ctx, c), c.n_lag, mu_ * kappa_ * c.lambda_unit, eps_u, 0, nf);
      e += nf.D;
    }
  }
  return e;
}

// CCD over every pair whose swept boxes (q and q + dq, grown by the radii) overlap: the largest
// fraction of dq that keeps every gap above ccd_gap_fraction of its current value, times
// ccd_safety when it limits the step.
double IpcContact::maxStepFraction(const Vec& q, const Vec& dq) {
  boxes_.resize(edges_.size());
  for (std::size_t e = 0; e < edges_.size(); ++e) {
    const Vec3 a = node(q, edges_[e].x0), b = node(q, edges_[e].x1);
    const Vec3 a1 = a + dq.segment<3>(edges_[e].x0), b1 = b + dq.segment<3>(edges_[e].x1);
    Aabb box = geometry::segmentBox(a, b, edges_[e].radius);
    box.lo = box.lo.cwiseMin(a1.cwiseMin(b1) - Vec3::Constant(edges_[e].radius));
    box.hi = box.hi.cwiseMax(a1.cwiseMax(b1) + Vec3::Constant(edges_[e].radius));
    boxes_[e] = box;
  }
  // The pairs of overlapping swept boxes, from a Verlet list (a Newton iteration moves the nodes
  // far less than its skin, the largest radius).
  q_end_ = q + dq;
  double t = 1;
  for (const auto& [a, b] : ccd_near_.pairs(q, &q_end_, 0.0, verlet_skin_, excludedByIndex())) {
    if (!boxes_[a].overlaps(boxes_[b])) continue;
    const EdgeRef &A = edges_[a], &B = edges_[b];
    double reach = A.radius + B.radius;  // less a start-up offset: the gap the barrier keeps positive
    if (start_offsets_)
      if (const StartPair* sp = findStart(start_edges_, std::min(a, b), std::max(a, b))) reach -= sp->offset;
    const CcdResult r = edgeEdgeCcd(node(q, A.x0), node(q, A.x1), node(q, B.x0), node(q, B.x1),
                                    dq.segment<3>(A.x0), dq.segment<3>(A.x1), dq.segment<3>(B.x0),
                                    dq.segment<3>(B.x1), reach, ccd_);
    t = std::min(t, r.t);
  }
  for (std::size_t i = 0; i < node_dofs_.size(); ++i)
    for (std::size_t j = 0; j < obstacles_.size(); ++j) {
      const Obstacle* p = obstacles_[j];
      const int x = node_dofs_[i];
      const Vec3 at = node(q, x), by = dq.segment<3>(x);
      double r = node_radius_[i];
      if (start_offsets_)
        if (const StartPair* sp = findStart(start_nodes_, static_cast<int>(i), static_cast<int>(j))) r -= sp->offset;
      switch (p->shape) {
        case Obstacle::Shape::Plane: t = std::min(t, nodePlaneCcd(at, by, p->origin, p->normal, r, ccd_).t); break;
        case Obstacle::Shape::Sphere:
          t = std::min(t, nodeRoundCcd(at, by, p->center, Vec3::Zero(), p->radius, r, ccd_).t);
          break;
        case Obstacle::Shape::Cylinder:
          t = std::min(t, nodeRoundCcd(at, by, p->origin, p->axis, p->radius, r, ccd_).t);
          break;
      }
    }
  const double fraction = t < 1 ? ccd_safety_ * t : 1.0;
  step_fraction_ = std::min(step_fraction_, fraction);
  return fraction;
}

void IpcContact::reportValues(std::vector<double>& out) const {
  out.push_back(kappa_);
  out.push_back(stats_.min_gap);
  out.push_back(step_fraction_);
}

void IpcContact::saveState(std::vector<double>& out) const {
  out.push_back(kappa_);
  out.push_back(kappa_initialized_ ? 1.0 : 0.0);
  out.push_back(prev_min_gap_);
  out.push_back(kappa_min_);
  out.push_back(start_captured_ ? 1.0 : 0.0);
  out.push_back(static_cast<double>(start_edges_.size()));
  out.push_back(static_cast<double>(start_nodes_.size()));
  for (const auto* list : {&start_edges_, &start_nodes_})
    for (const StartPair& sp : *list) {
      out.push_back(sp.a);
      out.push_back(sp.b);
      out.push_back(sp.offset);
      out.push_back(sp.d_hat);
    }
}

void IpcContact::loadState(const std::vector<double>& in) {
  kappa_ = in.at(0);
  kappa_initialized_ = in.at(1) != 0;
  prev_min_gap_ = in.at(2);
  kappa_min_ = in.at(3);
  start_edges_.clear();
  start_nodes_.clear();
  // A state of four values is from before the start pairs: a run that started with the plain barrier.
  start_captured_ = in.size() <= 4 || in.at(4) != 0;
  if (in.size() <= 4) return;
  // The pairs' counts and indexes come from a file: checked against this scene's edges, nodes and
  // obstacles before they index anything.
  auto count = [&](std::size_t i) {
    const double c = in.at(i);
    if (!(c >= 0 && c <= double(in.size()) && c == std::floor(c)))
      throw std::runtime_error("ipc: the checkpoint's start-pair count " + std::to_string(c) + " is not valid");
    return static_cast<std::size_t>(c);
  };
  const std::size_t edges = count(5), nodes = count(6);
  if (in.size() != 7 + 4 * (edges + nodes))
    throw std::runtime_error("ipc: the checkpoint holds " + std::to_string(in.size()) + " values for " +
                             std::to_string(edges + nodes) + " start pairs, expected " +
                             std::to_string(7 + 4 * (edges + nodes)));
  std::size_t k = 7;
  for (auto* list : {&start_edges_, &start_nodes_}) {
    const bool edge_list = list == &start_edges_;
    const double a_end = double(edge_list ? edges_.size() : node_dofs_.size());
    const double b_end = double(edge_list ? edges_.size() : obstacles_.size());
    for (std::size_t i = 0, n = edge_list ? edges : nodes; i < n; ++i, k += 4) {
      if (!(in[k] >= 0 && in[k] < a_end && in[k + 1] >= 0 && in[k + 1] < b_end))
        throw std::runtime_error("ipc: a start pair of the checkpoint, (" + std::to_string(in[k]) + ", " +
                                 std::to_string(in[k + 1]) + "), is not one of this scene's " +
                                 (edge_list ? "edge pairs" : "node-obstacle pairs"));
      list->push_back({static_cast<int>(in[k]), static_cast<int>(in[k + 1]), in[k + 2], in[k + 3]});
    }
  }
  start_offsets_ = false;
  for (const auto* list : {&start_edges_, &start_nodes_})
    for (const StartPair& sp : *list) start_offsets_ = start_offsets_ || sp.offset > 0;
}

}  // namespace rodsim::ipc
