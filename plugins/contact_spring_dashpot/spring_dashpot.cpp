#include "spring_dashpot.h"

#include "pair_kernel.h"

#include <rodsim/geometry/segment_segment_distance.h>

#include <algorithm>
#include <cmath>

namespace rodsim::spring_dashpot {

using geometry::Aabb;
using geometry::segmentBox;
using geometry::segmentDistance;
using geometry::SegmentNormal;

Schema SpringDashpotContact::schema() {
  Schema s{"spring-dashpot",
           "Self-contact and rod-rod contact of Gazzola et al. 2018 (Sec. IV.4, Eqs. 36-37): between the closest "
           "points of two elements closer than r_i + r_j, a linear spring on the overlap eps = r_i + r_j - d_min "
           "plus a dashpot on the normal velocity, F = H(eps) [k eps - gamma d(d_min)/dt] n, applied to the four "
           "nodes with the weights of the distance gradient. Neighbours along a rod are excluded by arc length; "
           "candidates from a sweep-and-prune broad phase with a Verlet margin. A force contact (explicit "
           "solvers add it to their kicks and bound their step with its stiffness; its Jacobian is exact, so "
           "implicit solvers can drive it too). The same law between the nodes and [[obstacle]]s (planes, spheres, "
           "spinning cylinders) on the overlap r - d, never pulling; regularized Coulomb friction "
           "mu f_n tanh(|v_T|/v_s) against the tangential relative velocity, rod-rod and rod-obstacle."};
  s.add<double>("stiffness", 3e5,
                "Spring constant k_sc of Eq. 37 (force per metre of overlap), rod-rod pairs and node-obstacle "
                "contacts. Default 3e5: impacts of ~0.5 m/s of millimetre rods overlap < 1 % of r with every solver "
                "(README.md, \"Defaults\"); Gazzola et al.'s Fig. 9 uses 1e4, its plectoneme scenes set their own.")
      .unit("N/m")
      .atLeast(0);
  s.add<double>("damping", 0.0,
                "Dashpot constant gamma_sc of Eq. 37 on the normal velocity of the closest points (Gazzola et al.'s "
                "Fig. 9: 10). Default 0: the dashpot switches on with a jump gamma v_n at contact, which a "
                "backward-Euler step (implicit-euler, the explicit solvers' implicit contact step) cannot solve "
                "when gamma dt / m is large; those steps dissipate impacts themselves. Zero in quasi-static solves.")
      .unit("kg/s")
      .atLeast(0);
  s.add<double>("friction", 0.0,
                "Coulomb coefficient mu, rod-rod and rod-obstacle: the tangential force is -mu f_n tanh(|v_T|/v_s) "
                "v_T/|v_T| against the tangential relative velocity v_T of the closest points (of the node and "
                "the surface point under it), f_n the normal force. 0: frictionless, as in Gazzola et al.'s Eq. 37.")
      .atLeast(0);
  s.add<double>("slip_velocity", 1e-3,
                "Regularization v_s of the Coulomb law: below about v_s the friction is viscous (slope "
                "mu f_n / v_s), above it it is mu f_n; a contact that Coulomb would stick creeps at "
                "v_s atanh(F_t / (mu f_n)) (README.md, \"Friction\": why 1e-3).")
      .unit("m/s")
      .greater(0);
  s.add<double>("exclusion", 0.4 * M_PI,
                "Neighbour exclusion: elements of one rod whose rest arc-length gap is at most exclusion x "
                "(r_i + r_j) never interact (adjacent elements never do). The default 0.4 pi (0.8 pi r for equal radii, PyElastica's rule) "
                "sees no false contact in a rod bent to any radius of curvature above 1.1 r.")
      .atLeast(0);
  s.optional<double>("margin",
                     "Verlet margin of the candidate list: pairs closer than r_i + r_j + margin when the list is "
                     "built; it is rebuilt (sweep and prune) when a node has moved more than margin/2 since. "
                     "Default: a quarter of the largest radius.")
      .unit("m")
      .greater(0);
  s.add<bool>("swept_check", true,
              "Continuous check of every accepted step (the kernel rejects a step in which two elements passed "
              "through each other: centre-line distance below half the sum of the radii; "
              "rodsim/geometry/swept_check.h). Off: a soft spring may let fast rods tunnel unseen.");
  declareContactSelection(s);
  return s;
}

SpringDashpotContact::SpringDashpotContact(const Params& p)
    : Contact(p),
      k_(p.real("stiffness")),
      gamma_(p.real("damping")),
      exclusion_(p.real("exclusion")),
      mu_(p.real("friction")),
      slip_velocity_(p.real("slip_velocity")),
      swept_on_(p.boolean("swept_check")) {
  if (p.has("margin")) margin_param_ = p.real("margin");
  rod_names_ = p.optionalStrings("rods");
  obstacle_names_ = p.optionalStrings("obstacles");
}

void SpringDashpotContact::bind(World& world) {
  rods_ = resolveRods(world, rod_names_, "rods");
  refuseClosedRods(rods_, "rods", "the spring-dashpot contact model");
  table_.bind(rods_, "element", "spring-dashpot needs the cross-section radius (contact when d_min < r_i + r_j)");
  margin_ = margin_param_ ? *margin_param_ : 0.25 * table_.maxRadius();
  near_margin_ = margin_ / 16;
  r_min_ = table_.minRadius();
  // Obstacles: node against surface (every node of the selected rods, with its own radius).
  obstacles_.clear();
  for (int i : resolveObstacles(world, obstacle_names_, "obstacles")) obstacles_.push_back(&world.obstacle(i));
  node_radius_.clear();
  node_rod_.clear();
  node_index_.clear();
  for (std::size_t ri = 0; ri < rods_.size(); ++ri)
    for (int i = 0; i < rods_[ri]->numNodes(); ++i) {
      node_radius_.push_back(rods_[ri]->nodeRadius(i));
      node_rod_.push_back(static_cast<int>(ri));
      node_index_.push_back(i);
    }
  if (!obstacles_.empty())
    for (std::size_t i = 0; i < node_radius_.size(); ++i)
      if (!(node_radius_[i] > 0))
        throw ParamError("rods", "rod '" + rods_[node_rod_[i]]->name() + "' has a non-positive radius on node " +
                                     std::to_string(node_index_[i]) +
                                     "; spring-dashpot needs it for obstacle contact (contact when d < r)");
  swept_.bind(rods_, obstacles_);
  cand_.clear();
  x_cand_.clear();
  x_near_.clear();
  x_eval_.clear();
  stats_ = {};
}

// The candidate list: boxes grown by r + margin/2 overlap for every pair closer than
// r_a + r_b + margin, so the sweep and prune misses none; the exact distance then keeps those.
void SpringDashpotContact::buildCandidates(const Vec& q) {
  cand_.clear();
  table_.closePairs(
      q, 0.5 * margin_, [this](const EdgeRef& A, const EdgeRef& B) { return excludedPair(A, B); },
      [this](int a, int b, double d) {
        if (d < edges_[a].radius + edges_[b].radius + margin_) cand_.emplace_back(a, b);
      });
  const std::size_t nc = cand_.size();
  cand_a0_.resize(nc);
  cand_a1_.resize(nc);
  cand_b0_.resize(nc);
  cand_b1_.resize(nc);
  cand_rsum_.resize(nc);
  for (std::size_t j = 0; j < nc; ++j) {
    const EdgeRef &A = edges_[cand_[j].first], &B = edges_[cand_[j].second];
    cand_a0_[j] = A.n0;
    cand_a1_[j] = A.n1;
    cand_b0_[j] = B.n0;
    cand_b1_[j] = B.n1;
    cand_rsum_[j] = A.radius + B.radius;
  }
  x_cand_.take(q, node_dofs_);
  x_near_.clear();  // the near list is made again from these candidates
  ++builds_;
}

// Every node within margin/2 of where the list was built: a pair left out (d >= r_a + r_b + margin
// then) is still at d >= r_a + r_b (moving each node by at most delta moves every point of a segment by
// at most delta), so it cannot be in contact and the list is exact, not an approximation.
void SpringDashpotContact::maybeRefresh(const Vec& q) {
  if (x_cand_.empty() || x_cand_.movedBeyond(q, node_dofs_, 0.5 * margin_)) buildCandidates(q);
}

void SpringDashpotContact::beginStep(const EvalContext& ctx) { maybeRefresh(*ctx.q); }

void SpringDashpotContact::keepEvaluationNodes(const Vec& q) { x_eval_.take(q, node_dofs_); }

// Node positions (and displacements q - q_start when given) into the arrays pair_kernel reads.
void SpringDashpotContact::gatherNodes(const Vec& q, const Vec* q_start) {
  const std::size_t nn = node_dofs_.size();
  for (int c = 0; c < 3; ++c) {
    nx_[c].resize(nn);
    nu_[c].resize(nn);
  }
  for (std::size_t i = 0; i < nn; ++i)
    for (int c = 0; c < 3; ++c) nx_[c][i] = q[node_dofs_[i] + c];
  if (q_start)
    for (std::size_t i = 0; i < nn; ++i)
      for (int c = 0; c < 3; ++c) nu_[c][i] = q[node_dofs_[i] + c] - (*q_start)[node_dofs_[i] + c];
}

// The near list valid at q (and the candidates: maybeRefresh): made again, from the exact distances
// of all candidates, when a node has moved more than near_margin_/2 since it was made. A candidate
// left out was at D >= r_a + r_b + near_margin_, and moving every node by at most near_margin_/2
// changes D by at most near_margin_ (as for the candidate list), so it is still at D >= r_a + r_b: not
// in contact. On the coiled plectoneme the list holds 786 candidates (margin r/4), the near list 283
// (reach margin/16) and 263 pairs are in contact; its nodes move so little that the near list is made
// again every ~2000 steps. Reach margin/4 (409 pairs) was 1.0 us per step slower, margin/32 0.3 us
// faster in the coiled state and no faster over the whole run (benchmarks/README.md).
void SpringDashpotContact::ensureNear(const Vec& q) {
  if (!x_near_.empty() && !x_cand_.empty() && cand_.empty()) {
    // No candidates (a rod not yet near itself): the near list stays empty until they change.
    if (!x_cand_.movedBeyond(q, node_dofs_, 0.5 * margin_)) return;
    buildCandidates(q);
  } else if (!x_near_.empty() && !x_cand_.empty()) {
    // maybeRefresh's test and the near list's in one pass over the nodes
    const double lim2 = 0.25 * margin_ * margin_, near2 = 0.25 * near_margin_ * near_margin_;
    bool moved = false, moved_far = false;
    for (std::size_t i = 0; i < node_dofs_.size(); ++i) {
      const Vec3 x = q.segment<3>(node_dofs_[i]);
      moved |= (x - x_near_.node(i)).squaredNorm() > near2;
      moved_far |= (x - x_cand_.node(i)).squaredNorm() > lim2;
    }
    if (moved_far) buildCandidates(q);
    else if (!moved) return;
  } else {
    maybeRefresh(q);
  }
  candidateDistances(q);
  const std::size_t nc = cand_.size();
  near_.clear();
  near_a0_.clear();
  near_a1_.clear();
  near_b0_.clear();
  near_b1_.clear();
  near_rsum_.clear();
  for (std::size_t j = 0; j < nc; ++j) {
    if (!(pD_[j] < cand_rsum_[j] + near_margin_)) continue;
    near_.push_back(static_cast<int>(j));
    near_a0_.push_back(cand_a0_[j]);
    near_a1_.push_back(cand_a1_[j]);
    near_b0_.push_back(cand_b0_[j]);
    near_b1_.push_back(cand_b1_[j]);
    near_rsum_.push_back(cand_rsum_[j]);
  }
  x_near_.take(q, node_dofs_);
  ++near_builds_;
}

// Eq. 37 (addForceReference, spring_dashpot_reference.cpp, says it pair by pair): the nodes
// gathered into arrays, then closest points, normal and f_n = k eps - gamma dD/dt of every pair of the
// near list in one vectorized pass (pair_kernel.cpp), then f_n dD/dx (dD/dx_k = w_k n) added to the
// four nodes of each pair in contact, in list order (the near list is in candidate order: the sums,
// and the result, are bitwise the reference's).
void SpringDashpotContact::addForce(const EvalContext& ctx, const Vec& /*non_contact*/, Vec& f) {
  const Vec& q = *ctx.q;
  ensureNear(q);
  const bool damp = dashpotOn(ctx);
  const std::size_t nc = near_.size();
  growPairResults(nc);
  if (nc > 0) {  // (without pairs, e.g. a straight rod, not even the nodes are gathered)
    gatherNodes(q, damp ? ctx.q_start : nullptr);
    const NodeArrays nodes{nx_[0].data(), nx_[1].data(), nx_[2].data(),
                           nu_[0].data(), nu_[1].data(), nu_[2].data()};
    const PairArrays pairs{near_a0_.data(), near_a1_.data(), near_b0_.data(), near_b1_.data(), near_rsum_.data(),
                           static_cast<int>(nc)};
    const PairResults res{pD_.data(), ps_.data(), pt_.data(), pn_[0].data(), pn_[1].data(), pn_[2].data(),
                          pfn_.data()};
    // geometry::segmentNormal's default parallel tolerance
    pairKernel(nodes, pairs, damp, k_, gamma_, ctx.dt, 1e-8, res);
  }
  near_results_ = true;

  // Stats, and the pairs in contact listed without a branch (some 260 of 283 on the coiled
  // plectoneme, in no predictable pattern), then their forces.
  stats_ = {};
  // Pairs not in the near list are at d >= r_a + r_b here (ensureNear): clearance >= (r_a + r_b)/2.
  double clearance = r_min_;
  active_.resize(std::max(nc, active_.size()));
  int na = 0;
  for (std::size_t j = 0; j < nc; ++j) {
    const double D = pD_[j];
    const double eps = near_rsum_[j] - D;  // Eq. 37's overlap (Eq. 36: d_min)
    stats_.min_gap = std::min(stats_.min_gap, -eps);
    clearance = std::min(clearance, D - 0.5 * near_rsum_[j]);
    active_[na] = static_cast<int>(j);
    na += eps > 0;  // H(eps)
  }
  stats_.active = na;
  // The list is sorted by the first element a, and consecutive pairs share it: its two nodes'
  // forces are carried in registers through each run of one a (stored when a changes) instead of
  // going through memory at every pair, which chained every pair's adds to the previous one's
  // stores. Each f entry still receives its terms in list order (the second element's nodes are
  // never the first's: adjacent elements are excluded), so the sums are bitwise the reference's.
  int run_a = -1;
  Vec3 fa0 = Vec3::Zero(), fa1 = Vec3::Zero();
  const EdgeRef* RA = nullptr;
  for (int i = 0; i < na; ++i) {
    const int j = active_[i];
    const double D = pD_[j];
    const int a = cand_[near_[j]].first;
    const EdgeRef &A = edges_[a], &B = edges_[cand_[near_[j]].second];
    if (a != run_a) {
      if (RA) {
        f.segment<3>(RA->x0) = fa0;
        f.segment<3>(RA->x1) = fa1;
      }
      run_a = a;
      RA = &A;
      fa0 = f.segment<3>(A.x0);
      fa1 = f.segment<3>(A.x1);
    }
    if (!(D > 0)) {
      // Centre lines that meet: the normal of segmentNormal's fallback (rare; pair by pair).
      const double eps = near_rsum_[j] - D;
      SegmentNormal sn;
      pairNormal(q, A, B, sn);
      double fn = k_ * eps;
      if (damp) fn -= gamma_ * normalVelocity(ctx, A, B, sn);
      const Vec3 F = fn * sn.n;
      fa0 += sn.w[0] * F;
      fa1 += sn.w[1] * F;
      f.segment<3>(B.x0) += sn.w[2] * F;
      f.segment<3>(B.x1) += sn.w[3] * F;
      continue;
    }
    const double fn = pfn_[j], s = ps_[j], t = pt_[j];
    const Vec3 F(fn * pn_[0][j], fn * pn_[1][j], fn * pn_[2][j]);
    fa0 += -(1 - s) * F;
    fa1 += -s * F;
    f.segment<3>(B.x0) += (1 - t) * F;
    f.segment<3>(B.x1) += t * F;
  }
  if (RA) {
    f.segment<3>(RA->x0) = fa0;
    f.segment<3>(RA->x1) = fa1;
  }
  // Friction of the pairs in contact, in list order (after all normal forces, as the reference).
  if (frictionOn(ctx))
    for (int i = 0; i < na; ++i) {
      const int j = active_[i];
      addPairFriction(ctx, edges_[cand_[near_[j]].first], edges_[cand_[near_[j]].second], &f, nullptr);
    }
  // The smallest gap of the candidates (ContactStats): an active pair's when there is one (all are
  // in the near list); else that of all candidates, as the reference reports it.
  if (stats_.active == 0 && nc < cand_.size()) stats_.min_gap = candidateMinGap(q);
  if (!obstacles_.empty()) addObstacleForces(ctx, f, clearance);
  clearance_eval_ = clearance;
  keepEvaluationNodes(q);
}

void SpringDashpotContact::addPairFriction(const EvalContext& ctx, const EdgeRef& A, const EdgeRef& B,
                                           Vec* f, StiffnessSink* K) const {
  const Vec& q = *ctx.q;
  SegmentNormal sn;
  pairNormal(q, A, B, sn);
  const double rsum = A.radius + B.radius;
  // In contact, and centre lines apart (where they meet, D = 0, there is no tangent plane: no friction).
  if (!(rsum - sn.D > 0) || !(sn.D > 1e-12 * rsum)) return;
  const int xs[4] = {A.x0, A.x1, B.x0, B.x1};
  Vec3 x[4];
  geometry::Vec12 u, F;
  for (int k = 0; k < 4; ++k) {
    x[k] = node(q, xs[k]);
    u.segment<3>(3 * k) = x[k] - ctx.q_start->segment<3>(xs[k]);
  }
  const ContactLaw lw = law(ctx);
  if (!K) {
    if (pairFriction(x, u, ctx.dt, sn, rsum, lw, F, nullptr))
      for (int k = 0; k < 4; ++k) f->segment<3>(xs[k]) += F.segment<3>(3 * k);
    return;
  }
  geometry::Mat12 block;
  if (!pairFriction(x, u, ctx.dt, sn, rsum, lw, F, &block)) return;
  int dofs[12];
  for (int k = 0; k < 4; ++k)
    for (int c = 0; c < 3; ++c) dofs[3 * k + c] = xs[k] + c;
  K->addBlock(dofs, block);
}

// Node-obstacle contact (friction.h, nodeObstacle) on every node and obstacle: a few flops per node and
// obstacle per evaluation, no list needed (scenes with obstacles have few of them).
void SpringDashpotContact::addObstacleForces(const EvalContext& ctx, Vec& f, double& clearance) {
  const Vec& q = *ctx.q;
  const ContactLaw lw = law(ctx);
  const bool moving = (lw.gamma > 0 || lw.mu > 0);
  Vec3 F, u;
  for (std::size_t i = 0; i < node_dofs_.size(); ++i) {
    const int x = node_dofs_[i];
    const Vec3 xi = node(q, x);
    if (moving) u = xi - ctx.q_start->segment<3>(x);
    for (const Obstacle* o : obstacles_) {
      const double gap = nodeObstacle(*o, xi, node_radius_[i], moving ? &u : nullptr, ctx.dt, lw, F, nullptr);
      stats_.min_gap = std::min(stats_.min_gap, gap);
      // the swept check's crossing distance for a node is r/2 from the surface
      clearance = std::min(clearance, gap + 0.5 * node_radius_[i]);
      if (!(gap < 0)) continue;
      ++stats_.active;
      f.segment<3>(x) += F;
    }
  }
}

void SpringDashpotContact::addObstacleStiffness(const EvalContext& ctx, StiffnessSink& K) const {
  const Vec& q = *ctx.q;
  const ContactLaw lw = law(ctx);
  const bool moving = (lw.gamma > 0 || lw.mu > 0);
  Vec3 F, u;
  Mat3 B;
  for (std::size_t i = 0; i < node_dofs_.size(); ++i) {
    const int x = node_dofs_[i];
    const Vec3 xi = node(q, x);
    if (moving) u = xi - ctx.q_start->segment<3>(x);
    for (const Obstacle* o : obstacles_)
      if (nodeObstacle(*o, xi, node_radius_[i], moving ? &u : nullptr, ctx.dt, lw, F, &B) < 0 && F.squaredNorm() > 0)
        K.addContiguous(x, B);
  }
}

void SpringDashpotContact::growPairResults(std::size_t n) {
  for (int c = 0; c < 3; ++c) pn_[c].resize(std::max(n, pn_[c].size()));
  pD_.resize(std::max(n, pD_.size()));
  ps_.resize(pD_.size());
  pt_.resize(pD_.size());
  pfn_.resize(pD_.size());
}

void SpringDashpotContact::candidateDistances(const Vec& q) {
  near_results_ = false;  // pD_ and the rest now hold all candidates
  gatherNodes(q, nullptr);
  const std::size_t nc = cand_.size();
  growPairResults(nc);
  const NodeArrays nodes{nx_[0].data(), nx_[1].data(), nx_[2].data(), nullptr, nullptr, nullptr};
  const PairArrays all{cand_a0_.data(), cand_a1_.data(), cand_b0_.data(), cand_b1_.data(), cand_rsum_.data(),
                       static_cast<int>(nc)};
  // geometry::segmentNormal's default parallel tolerance
  pairKernel(nodes, all, false, k_, 0.0, 1.0, 1e-8,
             {pD_.data(), ps_.data(), pt_.data(), pn_[0].data(), pn_[1].data(), pn_[2].data(), pfn_.data()});
}

// min over the candidates of D - (r_a + r_b) at q.
double SpringDashpotContact::candidateMinGap(const Vec& q) {
  candidateDistances(q);
  double g = ContactStats{}.min_gap;
  for (std::size_t j = 0; j < cand_.size(); ++j) g = std::min(g, -(cand_rsum_[j] - pD_[j]));
  return g;
}

// sum_k w_k n . v_k with v = (q - q_start)/dt (EvalContext::velocity), one division per pair.
double SpringDashpotContact::normalVelocity(const EvalContext& ctx, const EdgeRef& A, const EdgeRef& B,
                                            const SegmentNormal& sn) const {
  const int xs[4] = {A.x0, A.x1, B.x0, B.x1};
  const Vec& q = *ctx.q;
  const Vec& q0 = *ctx.q_start;
  Vec3 dx = Vec3::Zero();
  for (int k = 0; k < 4; ++k) dx += sn.w[k] * (q.segment<3>(xs[k]) - q0.segment<3>(xs[k]));
  return sn.n.dot(dx) / ctx.dt;
}

// A node with w_k = 0 (a clamped or pinned closest point at the other end of its element:
// point-edge, point-point) has zero rows and columns in g g^T and in H, unless its element's
// parameter is interior (then the Schur term of H reaches both nodes of the element): on[k] false,
// and the stiffness forms emit the same K with up to 4x fewer entries.
void SpringDashpotContact::pairTerms(const EvalContext& ctx, bool damp, const EdgeRef& A, const EdgeRef& B,
                                     const SegmentNormal& sn, double eps, PairTerms& p) const {
  const int xs[4] = {A.x0, A.x1, B.x0, B.x1};
  for (int k = 0; k < 4; ++k)
    for (int c = 0; c < 3; ++c) {
      p.dofs[3 * k + c] = xs[k] + c;
      p.v[3 * k + c] = damp ? ctx.velocity(xs[k] + c) : 0.0;
    }
  for (int k = 0; k < 4; ++k) p.g.segment<3>(3 * k) = sn.w[k] * sn.n;
  p.fn = k_ * eps - (damp ? gamma_ * p.g.dot(p.v) : 0.0);
  for (int k = 0; k < 4; ++k) p.on[k] = sn.w[k] != 0.0 || (k < 2 ? sn.s_free : sn.t_free);
}

// K = -dF/dq as addStiffnessReference (spring_dashpot_reference.cpp: the formula and why), bitwise:
// the same blocks in the same order, over the near list (the only pairs that can be in contact) and,
// when q is the configuration of the last addForce (the explicit solvers' stability bound asks right
// after the force), with the closest points, distance and normal that addForce computed
// (pair_kernel.cpp, bitwise segmentNormal's; an end parameter is one at 0 or 1, as lumelsky flags it).
void SpringDashpotContact::addStiffness(const EvalContext& ctx, StiffnessSink& K) {
  const Vec& q = *ctx.q;
  ensureNear(q);
  bool reuse = near_results_ && !x_eval_.empty();
  for (std::size_t i = 0; reuse && i < node_dofs_.size(); ++i)
    reuse = (q.segment<3>(node_dofs_[i]).array() == x_eval_.node(i).array()).all();
  const bool damp = dashpotOn(ctx);
  const double vd = damp ? ctx.velocityDerivative() : 0.0;
  SegmentNormal sn;
  PairTerms p;
  geometry::Mat12 hess;
  geometry::Vec12 hv, ag, dg;
  for (std::size_t j = 0; j < near_.size(); ++j) {
    const EdgeRef &A = edges_[cand_[near_[j]].first], &B = edges_[cand_[near_[j]].second];
    if (reuse && pD_[j] > 0) {
      const double s = ps_[j], t = pt_[j];
      sn.D = pD_[j];
      sn.s = s;
      sn.t = t;
      sn.n = Vec3(pn_[0][j], pn_[1][j], pn_[2][j]);
      sn.w[0] = -(1 - s);
      sn.w[1] = -s;
      sn.w[2] = 1 - t;
      sn.w[3] = t;
      sn.s_free = !(s <= 0.0 || s >= 1.0);
      sn.t_free = !(t <= 0.0 || t >= 1.0);
    } else {
      pairNormal(q, A, B, sn);
    }
    const double eps = A.radius + B.radius - sn.D;
    if (!(eps > 0)) continue;
    pairTerms(ctx, damp, A, B, sn, eps, p);
    const geometry::Vec12& g = p.g;
    // The block (k + gamma/dt) g g^T + gamma g (H v)^T - f_n H written entry by entry as it is
    // emitted, with the reference's operations in its order (Eigen's outer products multiply the
    // evaluated left factor (k + gamma/dt) g_r, resp. gamma g_r, by the right one), instead of three
    // passes over a 12 x 12 block.
    const bool curved = sn.D > 1e-12 * (A.radius + B.radius);
    if (curved) {
      // the distance's curvature (closed form, rodsim/geometry/segment_normal.h); none where the
      // centre lines meet (D = 0: no Hessian)
      geometry::segmentDistanceHessian(node(q, A.x0), node(q, A.x1), node(q, B.x0), node(q, B.x1), sn, hess);
      if (damp) hv.noalias() = hess * p.v;
    }
    const double sgg = k_ + gamma_ * vd;
    for (int i = 0; i < 12; ++i) {
      ag[i] = sgg * g[i];
      dg[i] = gamma_ * g[i];
    }
    // Only the nodes the pair's distance depends on (pairTerms).
    for (int l = 0; l < 4; ++l) {
      if (!p.on[l]) continue;
      for (int k = 0; k < 4; ++k) {
        if (!p.on[k]) continue;
        for (int c = 0; c < 3; ++c)
          for (int r = 0; r < 3; ++r) {
            const int R = 3 * k + r, C = 3 * l + c;
            double x = g[C] * ag[R];
            if (curved) {
              if (damp) x += hv[C] * dg[R];
              x -= p.fn * hess(R, C);
            }
            K.add(p.dofs[R], p.dofs[C], x);
          }
      }
    }
  }
  if (frictionOn(ctx))
    for (std::size_t j = 0; j < near_.size(); ++j)
      addPairFriction(ctx, edges_[cand_[near_[j]].first], edges_[cand_[near_[j]].second], nullptr, &K);
  if (!obstacles_.empty()) addObstacleStiffness(ctx, K);
}

double SpringDashpotContact::energy(const EvalContext& ctx) const {
  const Vec& q = *ctx.q;
  double e = 0;
  for (const auto& ab : contactPairs(q)) {
    const EdgeRef &A = edges_[ab.first], &B = edges_[ab.second];
    const double eps =
        A.radius + B.radius - segmentDistance(node(q, A.x0), node(q, A.x1), node(q, B.x0), node(q, B.x1));
    e += 0.5 * k_ * eps * eps;
  }
  for (std::size_t i = 0; i < node_dofs_.size(); ++i)
    for (const Obstacle* o : obstacles_) {
      const double eps = node_radius_[i] - o->signedDistance(node(q, node_dofs_[i]));
      if (eps > 0) e += 0.5 * k_ * eps * eps;
    }
  return e;
}

std::vector<std::pair<int, int>> SpringDashpotContact::contactPairs(const Vec& q) const {
  std::vector<Aabb> boxes(edges_.size());
  for (std::size_t e = 0; e < edges_.size(); ++e)
    boxes[e] = segmentBox(node(q, edges_[e].x0), node(q, edges_[e].x1), edges_[e].radius);
  std::vector<std::pair<int, int>> pairs, out;
  geometry::SweepAndPrune sap;
  sap.query(boxes, pairs);
  for (const auto& ab : pairs) {
    const EdgeRef &A = edges_[ab.first], &B = edges_[ab.second];
    if (excludedPair(A, B)) continue;
    if (segmentDistance(node(q, A.x0), node(q, A.x1), node(q, B.x0), node(q, B.x1)) < A.radius + B.radius)
      out.push_back(ab);
  }
  return out;
}

std::vector<std::pair<int, int>> SpringDashpotContact::contactPairsAllPairs(const Vec& q) const {
  std::vector<std::pair<int, int>> out;
  const int n = static_cast<int>(edges_.size());
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) {
      const EdgeRef &A = edges_[a], &B = edges_[b];
      if (excludedPair(A, B)) continue;
      if (segmentDistance(node(q, A.x0), node(q, A.x1), node(q, B.x0), node(q, B.x1)) < A.radius + B.radius)
        out.emplace_back(a, b);
    }
  return out;
}

void SpringDashpotContact::findOverlaps(const Vec& q, std::vector<Overlap>& out) const {
  for (const auto& ab : contactPairs(q)) {
    const EdgeRef &A = edges_[ab.first], &B = edges_[ab.second];
    const double gap =
        segmentDistance(node(q, A.x0), node(q, A.x1), node(q, B.x0), node(q, B.x1)) - (A.radius + B.radius);
    out.push_back({rods_[A.rod]->name(), rods_[B.rod]->name(), A.index, B.index, gap});
  }
  // Nodes inside an obstacle (node against surface, as the contact).
  for (std::size_t i = 0; i < node_dofs_.size(); ++i)
    for (const Obstacle* o : obstacles_) {
      const double gap = o->signedDistance(node(q, node_dofs_[i])) - node_radius_[i];
      if (gap < 0) out.push_back({rods_[node_rod_[i]]->name(), o->name, node_index_[i], -1, gap});
    }
}

// A crossing is a pair whose centre-line distance falls below (r_a + r_b)/2 somewhere on the linear
// motion q(tau) = q_start + tau (q_end - q_start) (rodsim/geometry/swept_check.h). Fast path: with
// x_e the nodes at the last force evaluation, every node of q(tau) is within
// delta = max_i max(|x_i(q_start) - x_e,i|, |x_i(q_end) - x_e,i|) of x_e (the distance to a point is
// convex along a line), every point of a segment too (convex combinations), so every pair's distance
// is at least its distance at x_e minus 2 delta. When 2 delta is below the smallest clearance
// d - (r_a + r_b)/2 at x_e (pairs outside the list: at least min r), no pair can cross: the full
// check (swept boxes, sweep and prune, CCD) is skipped. Otherwise it runs.
bool SpringDashpotContact::findCrossing(const Vec& q_start, const Vec& q_end, Crossing& out) {
  if (!swept_on_) return false;
  if (!x_eval_.empty() && clearance_eval_ > 0) {
    double d2 = 0;
    for (std::size_t i = 0; i < node_dofs_.size(); ++i) {
      const Vec3 xe = x_eval_.node(i);
      d2 = std::max(d2, (q_start.segment<3>(node_dofs_[i]) - xe).squaredNorm());
      d2 = std::max(d2, (q_end.segment<3>(node_dofs_[i]) - xe).squaredNorm());
    }
    if (2 * std::sqrt(d2) < clearance_eval_) {
      ++swept_fast_;
      return false;
    }
  }
  ++swept_full_;
  return swept_.find(
      q_start, q_end,
      [this](const geometry::SweptCrossingCheck::Edge& a, const geometry::SweptCrossingCheck::Edge& b) {
        return excludedPair(edges_[a.id], edges_[b.id]);
      },
      out);
}

}  // namespace rodsim::spring_dashpot
