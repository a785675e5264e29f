#include "ac_contact.h"

#include <rodsim/geometry/broad_phase.h>
#include <rodsim/geometry/segment_segment_distance.h>

#include <Eigen/Geometry>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <limits>

namespace rodsim::ac {

using geometry::closestSegmentPoints;

Schema AlartCurnierContact::schema() {
  Schema s{"alart-curnier",
           "Contact and exact Coulomb friction as the zero of the Alart-Curnier function, solved by "
           "nonsmooth Newton inside each implicit Newton iteration (Bertails-Descoubes et al. 2011): rod-obstacle "
           "(node vs plane, sphere, cylinder; spinning cylinders drag) and rod-rod (edge vs edge). Impulses r "
           "(N s) act as forces r/dt; no penetration at the end of the step (gap-rate constraint). With "
           "position-verlet: a velocity-level Moreau-Jean step per time step (lumped-mass Delassus W = H M^-1 H^T, "
           "contacts at the mid-step configuration, predicted end-of-step gap)."};
  s.add<double>("friction", 0.0, "Coulomb coefficient mu.").atLeast(0);
  declareContactSelection(s);
  s.add<bool>("rod_rod", true, "Rod-rod (and self) contact between edges; false: obstacles only.");
  s.add<double>("restitution", 0.0,
                "Newton restitution c: the normal velocity after an impact is at least c times the "
                "approach velocity (0: inelastic).")
      .range(0, 1);
  s.add<double>("margin", 0.0,
                "Extra distance (beyond half the radii and twice the motion over a step) within "
                "which pairs become contact candidates at the start of a step.")
      .unit("m").atLeast(0);
  s.add<double>("tolerance", 1e-10,
                "Contact solve converged when the relative natural-map residual (Siconos/FCLIB) is "
                "below this.")
      .greater(0).less(1);
  s.add<int>("max_iterations", 200, "Nonsmooth Newton iterations (linear solves of the 3n system) per contact solve.")
      .range(1, 1e6);
  s.add<double>("rho", 0.0,
                "Alart-Curnier parameter rho (s/kg: impulse per velocity) for every contact; 0: per "
                "contact, 1 / (mean diagonal of its Delassus block W_ii).")
      .unit("s/kg").atLeast(0);
  s.add<bool>("line_search", true, "Goldstein-Price line search on |f_AC|^2 (Bertails-Descoubes et al. 2011, "
              "Algorithm 2).");
  s.add<bool>("proximal", true, "Proximal-point globalization when the plain Newton stalls.");
  s.add<int>("frame_updates", 4,
             "Implicit Newton iterations per step in which rod-rod contact frames and closest points "
             "are re-evaluated; later iterations keep them (only the gap follows the iterate), which "
             "restores fast convergence when rods slide along each other.")
      .range(1, 1e6);
  s.add<double>("penetration_tolerance", 0.01,
                "Frozen frames (after frame_updates iterations) constrain the gap linearized along "
                "them; when the true overlap of two rods at an iterate exceeds this fraction of their "
                "mean radius, the solve fails (the step is halved with simulation.on_failure = "
                "\"substep\", or the run stops) instead of going on inside each other.")
      .greater(0);
  s.add<std::string>("newton_system", "auto",
                     "Linear system of each nonsmooth Newton step: 'reduced' factorizes J = F_u W + F_r "
                     "(3n unknowns; dense per rod, cheap for few contacts); 'unreduced' the sparse system "
                     "of Bertails-Descoubes et al. 2011, Eq. 7, with the rods' DOFs kept (same direction, far less "
                     "fill-in when many contacts share rods); 'auto' picks unreduced for groups of more than 64 contacts "
                     "with at least 15 per rod on average.")
      .choices({"auto", "reduced", "unreduced"});
  s.add<std::string>("unreduced_preconditioner", "auto",
                     "Preconditioner of GMRES on the unreduced systems: 'cholesky' factorizes A + G^T P G "
                     "on the rods' DOFs (J's proximal neighbour, eta + 1e-6/rho, without the sliding "
                     "contacts' slip-normal coupling; CHOLMOD supernodal); 'lu' the LU of the whole "
                     "unreduced matrix (UMFPACK); 'auto' the Cholesky where the group has fewer contact "
                     "rows than DOFs (3n < m), the LU otherwise. A Cholesky that fails or leaves GMRES "
                     "short of its tolerance gives way to the LU for that problem and the group's next 16.")
      .choices({"auto", "cholesky", "lu"});
  s.add<bool>("partition", true,
              "Solve each group of coupled contacts (sharing a rod, or rods joined by constraints) as "
              "its own problem (Bertails-Descoubes et al. 2011, Sec. 4.5); false: one problem for all contacts.");
  return s;
}

AlartCurnierContact::AlartCurnierContact(const Params& p)
    : Contact(p),
      mu_(p.real("friction")),
      restitution_(p.real("restitution")),
      margin_(p.real("margin")),
      rod_rod_(p.boolean("rod_rod")),
      partition_(p.boolean("partition")),
      frame_updates_(static_cast<int>(p.integer("frame_updates"))),
      penetration_tolerance_(p.real("penetration_tolerance")),
      rod_names_(p.optionalStrings("rods")),
      obstacle_names_(p.optionalStrings("obstacles")) {
  if (!(mu_ >= 0) || !std::isfinite(mu_)) throw ParamError("friction", "friction must be a finite number >= 0");
  options_.tolerance = p.real("tolerance");
  if (!(options_.tolerance > 0 && options_.tolerance < 1))
    throw ParamError("tolerance", "tolerance must be in (0, 1)");
  options_.max_iterations = static_cast<int>(p.integer("max_iterations"));
  if (options_.max_iterations < 1) throw ParamError("max_iterations", "max_iterations must be >= 1");
  options_.rho = p.real("rho");
  if (!(options_.rho >= 0)) throw ParamError("rho", "rho must be >= 0 (0: automatic)");
  options_.line_search = p.boolean("line_search");
  options_.proximal = p.boolean("proximal");
  const std::string system = p.string("newton_system");
  newton_system_ = system == "reduced" ? NewtonSystem::Reduced
                  : system == "unreduced" ? NewtonSystem::Unreduced
                                          : NewtonSystem::Auto;
  const std::string pre = p.string("unreduced_preconditioner");
  options_.unreduced_preconditioner = pre == "cholesky" ? Options::Preconditioner::Cholesky
                                      : pre == "lu"     ? Options::Preconditioner::Lu
                                                        : Options::Preconditioner::Auto;
}

void AlartCurnierContact::bind(World& world) {
  world_ = &world;
  // SDK 1.6: a stop request (SIGINT, SIGTERM to rodsim run) ends a contact solve between its
  // Newton iterations, so that the implicit solver abandons the step within one linear solve.
  const StopRequests* stops = worldCapability<StopRequests>(world);
  options_.stop = stops ? std::function<bool()>([stops] { return stops->stopRequested(); }) : std::function<bool()>();
  for (auto& solver : group_solvers_) solver->options().stop = options_.stop;
  rods_ = resolveRods(world, rod_names_, "rods");
  refuseClosedRods(rods_, "rods", "the alart-curnier contact model");
  obstacles_ = resolveObstacles(world, obstacle_names_, "obstacles");
  obstacle_ptrs_.clear();
  for (int i : obstacles_) obstacle_ptrs_.push_back(&world.obstacle(i));
  swept_.bind(rods_, obstacle_ptrs_);
}

void AlartCurnierContact::beginStep(const EvalContext& ctx) {
  const Vec& q = *ctx.q;
  const Vec* v = ctx.v_start;
  const double dt = ctx.dt;
  auto speed = [&](int dof) { return v && v->size() == q.size() ? v->segment<3>(dof).norm() : 0.0; };
  obstacle_cands_.clear();
  edge_cands_.clear();
  step_ = {};
  merged_.clear();
  frozen_ee_.clear();
  frozen_valid_ = false;
  // Node-obstacle candidates.
  for (int ri = 0; ri < static_cast<int>(rods_.size()); ++ri) {
    const Rod& rod = *rods_[ri];
    for (int n = 0, nodes = rod.numNodes(); n < nodes; ++n) {
      const int dof = rod.globalPositionDof(n);
      const Vec3 x = q.segment<3>(dof);
      const double rad = rod.nodeRadius(n);
      const double reach = margin_ + 0.5 * rad + 2 * dt * speed(dof) + 2 * dt * dt * 10.0;
      for (std::size_t k = 0; k < obstacles_.size(); ++k) {
        const int oi = obstacles_[k];
        const Obstacle& ob = *obstacle_ptrs_[k];
        double reach_o = reach;
        if (ob.shape == Obstacle::Shape::Cylinder) reach_o += 2 * dt * std::abs(ob.angular_velocity) * ob.radius;
        if (ob.signedDistance(x) - rad < reach_o) obstacle_cands_.push_back({ri, n, oi});
      }
    }
  }
  if (!rod_rod_) return;
  // Edge-edge candidates: sweep and prune over edge AABBs along the axis of largest spread (along
  // x, a rope lying along y had every pair of its edges overlap on the sweep axis: 1800 box tests
  // per step, the largest cost of an explicit step with contact). The pairs found do not depend on
  // the axis; edge_cands_ is sorted below.
  std::vector<Box>& boxes = boxes_;  // kept: no allocation per step once warm
  boxes.clear();
  for (int ri = 0; ri < static_cast<int>(rods_.size()); ++ri) {
    const Rod& rod = *rods_[ri];
    for (int e = 0, edges = rod.numEdges(); e < edges; ++e) {
      const int a = rod.globalPositionDof(e), b = rod.globalPositionDof(e + 1);
      const Vec3 xa = q.segment<3>(a), xb = q.segment<3>(b);
      const double radius = rod.radius(e), vmax = std::max(speed(a), speed(b));
      const double inflate = radius + 0.5 * margin_ + 0.25 * radius + dt * vmax + dt * dt * 10.0;
      boxes.push_back({xa.cwiseMin(xb).array() - inflate, xa.cwiseMax(xb).array() + inflate, ri, e, a, b, radius, vmax});
    }
  }
  const int axis = geometry::axisOfLargestSpread(boxes);
  std::sort(boxes.begin(), boxes.end(), [axis](const Box& x, const Box& y) { return x.lo[axis] < y.lo[axis]; });
  for (std::size_t i = 0; i < boxes.size(); ++i)
    for (std::size_t j = i + 1; j < boxes.size() && boxes[j].lo[axis] <= boxes[i].hi[axis]; ++j) {
      const Box *A = &boxes[i], *B = &boxes[j];
      if ((A->lo.array() > B->hi.array()).any() || (B->lo.array() > A->hi.array()).any()) continue;
      if (A->rod > B->rod || (A->rod == B->rod && A->edge > B->edge)) std::swap(A, B);
      if (A->rod == B->rod && excludedSelfPair(*rods_[A->rod], A->edge, B->edge)) continue;  // self contact: neighbours along the rod
      // Narrow phase: the boxes are inflated by about a radius each, so overlapping boxes admit
      // pairs up to ~2.5 radii apart (in a dense pile, most of them: 1638 points for 40 rods on a
      // mat where ~900 can close). Keep a pair if its gap is within the same reach as a node near
      // an obstacle: margin + r/2 + twice the motion over a step.
      {
        const int a0 = A->dof0, a1 = A->dof1, b0 = B->dof0, b1 = B->dof1;
        double s, t;
        closestSegmentPoints(q.segment<3>(a0), q.segment<3>(a1), q.segment<3>(b0), q.segment<3>(b1), s, t);
        const Vec3 pa = q.segment<3>(a0) + s * (q.segment<3>(a1) - q.segment<3>(a0));
        const Vec3 pb = q.segment<3>(b0) + t * (q.segment<3>(b1) - q.segment<3>(b0));
        const double gap = (pa - pb).norm() - A->radius - B->radius;
        const double vmax = A->speed + B->speed;
        const double reach = margin_ + 0.5 * std::max(A->radius, B->radius) + 2 * dt * vmax + 2 * dt * dt * 10.0;
        if (gap > reach) continue;
      }
      edge_cands_.push_back({A->rod, A->edge, B->rod, B->edge});
    }
  std::sort(edge_cands_.begin(), edge_cands_.end());
}

void AlartCurnierContact::buildPoints(const Vec& q) {
  points_.clear();
  for (const auto& c : obstacle_cands_) {
    const Rod& rod = *rods_[c[0]];
    const Obstacle& ob = world_->obstacle(c[2]);
    const int dof = rod.globalPositionDof(c[1]);
    const Vec3 x = q.segment<3>(dof);
    Vec3 n = Vec3::UnitZ();
    ContactPoint p;
    p.gap = ob.signedDistance(x, &n) - rod.nodeRadius(c[1]);
    p.key = {0, c[0], c[1], c[2], 0};
    const Vec3 t1 = n.unitOrthogonal(), t2 = n.cross(t1);
    p.frame.row(0) = n;
    p.frame.row(1) = t1;
    p.frame.row(2) = t2;
    p.nodes = 1;
    p.dof[0] = dof;
    p.weight[0] = 1;
    p.surface_velocity = ob.surfaceVelocity(x - p.gap * n - rod.nodeRadius(c[1]) * n);
    p.true_gap = p.gap;
    points_.push_back(p);
  }
  if (frozen_valid_) {
    // Iterates after the first `frame_updates` of the step: the rod-rod contacts, frames n, t1, t2
    // and closest-point parameters (s, t) of the last re-evaluation stay fixed, and the gap is the
    // linear function of q
    //   gap = n . (x_A(s) - x_B(t)) - r_A - r_B
    // (equal to the distance minus the radii at the freezing iterate; for two straight edges
    // crossing, n is normal to both and this is their distance whatever s and t). The contact is
    // then linear in q for the rest of the step (H constant, as in the paper's time stepping with
    // the frames of the start of the step, Sec. 4), and the implicit Newton iteration converges
    // as without contact. Re-evaluated at every iterate, H(q) misses the geometric term
    // (dH/dq)^T r / dt in the Jacobian and the iteration converges only linearly, with ratios up
    // to 0.9 (rods sliding along each other), or 0.99 with the true distance as the gap (it turns
    // with the closest points of nearly parallel edges): frictionless spaghetti failed to
    // converge in 50 iterations. The first iterations re-evaluate, so that a step that converges
    // quickly ends with the frames of its own end state (a frame lagging by one step leaves a
    // resting rod rocking at KE ~ 1e-11 J instead of 1e-14 J); the cost of freezing is a
    // penetration of the order of r theta^2 for a frame turned by theta during the step.
    for (ContactPoint p : frozen_ee_) {
      Vec3 d = Vec3::Zero();
      for (int j = 0; j < 4; ++j) d += p.weight[j] * q.segment<3>(p.dof[j]);  // x_A(s) - x_B(t)
      p.gap = p.frame.row(0).dot(d) - p.radii;
      p.point = p.weight[0] * q.segment<3>(p.dof[0]) + p.weight[1] * q.segment<3>(p.dof[1]);
      double s, t;
      closestSegmentPoints(q.segment<3>(p.dof[0]), q.segment<3>(p.dof[1]), q.segment<3>(p.dof[2]),
                           q.segment<3>(p.dof[3]), s, t);
      const Vec3 pa = q.segment<3>(p.dof[0]) + s * (q.segment<3>(p.dof[1]) - q.segment<3>(p.dof[0]));
      const Vec3 pb = q.segment<3>(p.dof[2]) + t * (q.segment<3>(p.dof[3]) - q.segment<3>(p.dof[2]));
      p.true_gap = (pa - pb).norm() - p.radii;  // reported (min_gap), not constrained
      p.frozen = true;
      points_.push_back(p);
    }
    // Pairs that were not contacts at the freezing iterate (a crossing moving on to the next
    // edge, a rod end arriving) still join (frozen from then on); a near-duplicate of a frozen
    // contact is dropped below. Without them, the full-size frictionless pile penetrated by
    // 2.3e-4 m (a crossing moving 0.3 mm per step onto an unconstrained edge).
  }
  std::vector<ContactKey> frozen_keys;
  if (frozen_valid_) {
    for (const ContactPoint& p : frozen_ee_) frozen_keys.push_back(p.key);
    std::sort(frozen_keys.begin(), frozen_keys.end());
  }
  for (const auto& c : edge_cands_) {
    if (frozen_valid_ && std::binary_search(frozen_keys.begin(), frozen_keys.end(), ContactKey{1, c[0], c[1], c[2], c[3]}))
      continue;
    const Rod &ra = *rods_[c[0]], &rb = *rods_[c[2]];
    const int a0 = ra.globalPositionDof(c[1]), a1 = ra.globalPositionDof(c[1] + 1);
    const int b0 = rb.globalPositionDof(c[3]), b1 = rb.globalPositionDof(c[3] + 1);
    const Vec3 xa0 = q.segment<3>(a0), xa1 = q.segment<3>(a1), xb0 = q.segment<3>(b0), xb1 = q.segment<3>(b1);
    double s, t;
    closestSegmentPoints(xa0, xa1, xb0, xb1, s, t);
    // A contact at a shared node is kept by one of the two edges only (the lower one).
    if ((s >= 1 && c[1] + 1 < ra.numEdges()) || (t >= 1 && c[3] + 1 < rb.numEdges())) continue;
    // Clamped at the first node of an edge while the previous edge of the same rod finds an
    // interior closest point: that one is the contact; this would be a near-duplicate row of W
    // (a kink-free rod crossing another one just before a node). Only when the previous edge is
    // itself a candidate of the pair (self-contact neighbours may be excluded).
    auto interiorOnPrevious = [&](bool sideA) {
      const int e = sideA ? c[1] : c[3];
      if (e == 0) return false;
      ContactKey pk = sideA ? ContactKey{0, c[0], e - 1, c[2], c[3]} : ContactKey{0, c[0], c[1], c[2], e - 1};
      std::array<int, 4> cand{pk[1], pk[2], pk[3], pk[4]};
      if (cand[0] > cand[2] || (cand[0] == cand[2] && cand[1] > cand[3])) cand = {cand[2], cand[3], cand[0], cand[1]};
      if (!std::binary_search(edge_cands_.begin(), edge_cands_.end(), cand)) return false;
      const Rod& rod = sideA ? ra : rb;
      const Vec3 y0 = q.segment<3>(rod.globalPositionDof(e - 1)), y1 = q.segment<3>(rod.globalPositionDof(e));
      double s2, t2;
      if (sideA) {
        closestSegmentPoints(y0, y1, xb0, xb1, s2, t2);
        return s2 > 0 && s2 < 1;
      }
      closestSegmentPoints(xa0, xa1, y0, y1, s2, t2);
      return t2 > 0 && t2 < 1;
    };
    if ((s <= 0 && interiorOnPrevious(true)) || (t <= 0 && interiorOnPrevious(false))) continue;
    const Vec3 pa = xa0 + s * (xa1 - xa0), pb = xb0 + t * (xb1 - xb0);
    Vec3 d = pa - pb;
    const double dist = d.norm();
    Vec3 n = dist > 1e-14 ? Vec3(d / dist) : Vec3((xa1 - xa0).cross(xb1 - xb0).normalized());
    if (!n.allFinite()) n = (xa1 - xa0).unitOrthogonal();
    ContactPoint p;
    p.key = {1, c[0], c[1], c[2], c[3]};
    p.gap = dist - ra.radius(c[1]) - rb.radius(c[3]);
    const Vec3 t1 = n.unitOrthogonal(), t2 = n.cross(t1);
    p.frame.row(0) = n;
    p.frame.row(1) = t1;
    p.frame.row(2) = t2;
    p.nodes = 4;
    p.dof = {a0, a1, b0, b1};
    p.weight = {1 - s, s, -(1 - t), -t};
    p.point = pa;
    p.merge_radius = 0.25 * std::min(ra.radius(c[1]), rb.radius(c[3]));
    p.radii = ra.radius(c[1]) + rb.radius(c[3]);
    p.true_gap = p.gap;
    points_.push_back(p);
  }
  // Near-duplicates: where a rod has a kink (a node) at a crossing, both edges next to the node
  // find an interior closest point, a few 1e-5 m apart, with the same normal: two rows of W that
  // are nearly equal (W singular, the split of the impulse between them undetermined, the
  // nonsmooth Newton stalls). Of contacts between the same two rods on the same or adjacent edges
  // (on both rods) and closer than a quarter of the smaller radius, keep the one with the smallest
  // gap. The choice is made once per step and kept for the step (merged_): re-choosing at every
  // Newton iterate flips between the two (their gaps differ by 1e-10 m) and the outer iteration
  // cycles.
  std::vector<char>& drop = drop_;  // kept between calls: no allocation per step once warm
  drop.assign(points_.size(), 0);
  bool any = false;
  for (std::size_t i = 0; i < points_.size(); ++i) {
    const ContactPoint& a = points_[i];
    if (a.key[0] != 1 || drop[i]) continue;
    for (std::size_t j = i + 1; j < points_.size(); ++j) {
      const ContactPoint& b = points_[j];
      if (b.key[0] != 1 || drop[j]) continue;
      if (b.key[1] != a.key[1] || b.key[3] != a.key[3]) continue;
      if (std::abs(b.key[2] - a.key[2]) > 1 || std::abs(b.key[4] - a.key[4]) > 1) continue;
      if ((b.point - a.point).norm() > std::min(a.merge_radius, b.merge_radius)) continue;
      if (a.frozen && b.frozen) continue;  // both kept when the frames were frozen
      any = true;
      if (a.frozen || b.frozen) {  // a frozen contact stays; the newcomer next to it goes
        if (b.frozen) {
          drop[i] = 1;
          break;
        }
        drop[j] = 1;
        continue;
      }
      auto ia = merged_.find(a.key), ib = merged_.find(b.key);
      bool drop_a;
      if (ia != merged_.end() && ia->second == b.key)
        drop_a = true;
      else if (ib != merged_.end() && ib->second == a.key)
        drop_a = false;
      else {
        drop_a = b.gap < a.gap;
        if (drop_a)
          merged_[a.key] = b.key;
        else
          merged_[b.key] = a.key;
      }
      if (drop_a) {
        drop[i] = 1;
        break;
      }
      drop[j] = 1;
    }
  }
  if (any) {
    std::size_t k = 0;
    for (std::size_t i = 0; i < points_.size(); ++i)
      if (!drop[i]) points_[k++] = points_[i];
    points_.resize(k);
  }
  if (frozen_valid_) {
    // Newcomers are frozen from their first iterate on, too: the contact set and H then settle
    // after finitely many iterations and Newton converges (re-evaluated newcomers brought the
    // linear convergence back: 31 frictionless spaghetti failed at step 100).
    for (const ContactPoint& p : points_)
      if (p.key[0] == 1 && !p.frozen) frozen_ee_.push_back(p);
    return;
  }
  frozen_ee_.clear();
  for (const ContactPoint& p : points_)
    if (p.key[0] == 1) frozen_ee_.push_back(p);
}

void AlartCurnierContact::buildComponents(const Eigen::SparseMatrix<double>& A, const std::vector<char>& fixed) {
  const int N = static_cast<int>(A.rows());
  // Union-find over free DOFs joined by a structural nonzero of A (Bertails-Descoubes et al., Sec. 4.5: strands coupled
  // through the dynamics; constraints that tie rods together show up here as coupling entries).
  UnionFind dofs;
  dofs.reset(N);
  for (int c = 0; c < A.outerSize(); ++c) {
    if (fixed[c]) continue;
    for (Eigen::SparseMatrix<double>::InnerIterator it(A, c); it; ++it) {
      const int r = static_cast<int>(it.row());
      if (r == c || fixed[r]) continue;
      dofs.unite(r, c);
    }
  }
  comps_.clear();
  comp_of_.assign(N, -1);
  local_of_.assign(N, -1);
  std::vector<int> id_of_root(N, -1);
  for (int i = 0; i < N; ++i) {
    if (fixed[i]) continue;
    const int root = dofs.find(i);
    if (id_of_root[root] < 0) {
      id_of_root[root] = static_cast<int>(comps_.size());
      comps_.push_back(std::make_unique<Component>());
    }
    Component& cp = *comps_[id_of_root[root]];
    comp_of_[i] = id_of_root[root];
    local_of_[i] = static_cast<int>(cp.dofs.size());
    cp.dofs.push_back(i);  // ascending, as i runs up
  }
  // Sub-matrix patterns in CSC: columns and rows keep the global order.
  for (auto& cpp : comps_) {
    Component& cp = *cpp;
    const int n = static_cast<int>(cp.dofs.size());
    std::vector<int> outer(n + 1, 0), inner;
    cp.src.clear();
    for (int lc = 0; lc < n; ++lc) {
      const int c = cp.dofs[lc];
      for (int p = A.outerIndexPtr()[c]; p < A.outerIndexPtr()[c + 1]; ++p) {
        const int r = A.innerIndexPtr()[p];
        if (fixed[r]) continue;
        inner.push_back(local_of_[r]);
        cp.src.push_back(p);
      }
      outer[lc + 1] = static_cast<int>(inner.size());
    }
    cp.A = Eigen::SparseMatrix<double>(n, n);
    cp.A.resizeNonZeros(static_cast<Eigen::Index>(inner.size()));
    std::copy(outer.begin(), outer.end(), cp.A.outerIndexPtr());
    std::copy(inner.begin(), inner.end(), cp.A.innerIndexPtr());
    cp.analyzed = false;
  }
}

bool AlartCurnierContact::fail(const std::string& why) {
  failure_ = why;
  std::fprintf(stderr, "alart-curnier '%s': %s\n", name().c_str(), why.c_str());
  return false;
}

// One Newton iteration's contact solve (Bertails-Descoubes et al., Sec. 4): the free step of the linearized system,
// the contacts at the iterate, their local velocities, the independent groups, the Delassus
// operator W of each, the Alart-Curnier solve of each group, and the step with the impulses (the
// groups, W's entries and the group solves shared with solveVelocity: ac_groups.cpp, ac_delassus.cpp).
bool AlartCurnierContact::solveLinearized(const LinearizedSystem& sys, Vec& dq) {
  const EvalContext& ctx = *sys.ctx;
  const double dt = ctx.dt;
  const auto t_start = std::chrono::steady_clock::now();
  failure_.clear();
  if (!(dt > 0)) return fail(fmt::format("needs a time step (the implicit-euler solver); dt = {}", dt));
  if (!factorizeComponents(*sys.A, *sys.b, *sys.fixed)) return false;
  frozen_valid_ = step_.solves >= frame_updates_;
  buildPoints(*ctx.q);
  if (!checkFrozenOverlap()) return false;
  keepMovableContacts();
  const int n = static_cast<int>(points_.size());
  int free_dofs = 0;
  for (char f : *sys.fixed) free_dofs += !f;
  ++step_.solves;
  if (n == 0) {
    dq = dq_free_;
    stats_ = {};
    recordNoContacts(t_start);
    return true;
  }
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < ntouched_[i]; ++k) comps_[touched_[i][k]]->contacts.push_back(i);
  localVelocities(ctx);
  nu_ = free_dofs > 0 ? 3.0 * n / free_dofs : 0.0;
  partitionIntoGroups(static_cast<int>(comps_.size()));
  chooseNewtonSystems();
  assembleDelassus(dt);
  GroupSolve how;
  how.t = ctx.t;
  how.dt = dt;
  how.options = options_;
  const int max_group = solveGroups(how);
  applyImpulses(dt, dq);
  recordSolve(max_group, t_start);
  if (std::getenv("RODSIM_AC_DEBUG")) printDebug(dq);
  return last_.converged || failNotConverged("contact solve");
}

bool AlartCurnierContact::failNotConverged(const char* what) {
  return fail(fmt::format("{} did not converge ({}): {} contacts in {} groups, {} iterations, natural-map residual "
                          "rel {:.3e} abs {:.3e} (tolerance {:.3e}), |f_AC| {:.3e}",
                          what, last_.message, points_.size(), groups_.size(), last_.iterations, last_.residual.rel,
                          last_.residual.abs, options_.tolerance, last_.ac_norm));
}

// A (free DOFs) is block diagonal over the mechanical subsystems: components and their patterns
// only when A's pattern or the fixed mask changed; one LU per component; dq_free_ = A^-1 b.
bool AlartCurnierContact::factorizeComponents(const Eigen::SparseMatrix<double>& A, const Vec& b,
                                              const std::vector<char>& fixed) {
  const int N = static_cast<int>(A.rows());
  const bool same = static_cast<int>(a_outer_.size()) == A.outerSize() + 1 &&
                    static_cast<int>(a_inner_.size()) == A.nonZeros() &&
                    std::equal(a_outer_.begin(), a_outer_.end(), A.outerIndexPtr()) &&
                    std::equal(a_inner_.begin(), a_inner_.end(), A.innerIndexPtr()) && fixed == fixed_cache_;
  if (!same) {
    buildComponents(A, fixed);
    a_outer_.assign(A.outerIndexPtr(), A.outerIndexPtr() + A.outerSize() + 1);
    a_inner_.assign(A.innerIndexPtr(), A.innerIndexPtr() + A.nonZeros());
    fixed_cache_ = fixed;
  }
  dq_free_.setZero(N);
  for (auto& cpp : comps_) {
    Component& cp = *cpp;
    double* v = cp.A.valuePtr();
    for (std::size_t k = 0; k < cp.src.size(); ++k) v[k] = A.valuePtr()[cp.src[k]];
    const int nc = static_cast<int>(cp.dofs.size());
    bool ok;
    if (cp.isDense()) {
      cp.dense = Eigen::MatrixXd(cp.A);
      cp.dlu.compute(cp.dense);
      // PartialPivLU does not report singularity: check the pivots.
      const auto d = cp.dlu.matrixLU().diagonal().cwiseAbs();
      ok = d.allFinite() && d.minCoeff() > 1e-14 * d.maxCoeff();
    } else {
      if (!cp.analyzed) {
        cp.lu.umfpackControl()(UMFPACK_IRSTEP) = 0;  // no iterative refinement per column
        cp.lu.analyzePattern(cp.A);
        cp.analyzed = true;
      }
      cp.lu.factorize(cp.A);
      ok = cp.lu.info() == Eigen::Success;
    }
    if (!ok) return fail("the linearized system matrix is singular");
    rhs_.resize(nc);
    for (int l = 0; l < nc; ++l) rhs_[l] = b[cp.dofs[l]];
    if (cp.isDense())
      sol_ = cp.dlu.solve(rhs_);
    else
      sol_ = cp.lu.solve(rhs_);
    for (int l = 0; l < nc; ++l) dq_free_[cp.dofs[l]] = sol_[l];
    cp.contacts.clear();
  }
  return true;
}

// Rod-rod contacts whose frames are frozen for the rest of the step must not overlap beyond the tolerance.
bool AlartCurnierContact::checkFrozenOverlap() {
  for (const ContactPoint& p : points_)
    if (p.frozen && p.true_gap < -penetration_tolerance_ * 0.5 * p.radii) {
      return fail(fmt::format("with frozen contact frames (after {} Newton iterations) edge {} of rod '{}' and "
                              "edge {} of rod '{}' overlap by {:.3e} m, more than penetration_tolerance x radius = "
                              "{:.3e} m; halve the step (simulation.on_failure = \"substep\") or raise frame_updates",
                              frame_updates_, p.key[2], rods_[p.key[1]]->name(), p.key[4], rods_[p.key[3]]->name(),
                              -p.true_gap, penetration_tolerance_ * 0.5 * p.radii));
    }
  return true;
}

// Components each contact touches (free DOFs of its nodes), into touched_ and ntouched_; contacts
// touching none (every node prescribed) cannot be moved by an impulse and are left out.
void AlartCurnierContact::keepMovableContacts() {
  const int n_all = static_cast<int>(points_.size());
  touched_.resize(n_all);
  ntouched_.assign(n_all, 0);
  {
    std::vector<ContactPoint> kept;
    kept.reserve(n_all);
    for (int i = 0; i < n_all; ++i) {
      const ContactPoint& p = points_[i];
      std::array<int, 4> t{};
      int nt = 0;
      for (int j = 0; j < p.nodes; ++j)
        for (int c = 0; c < 3; ++c) {
          const int comp = comp_of_[p.dof[j] + c];
          if (comp < 0 || std::find(t.begin(), t.begin() + nt, comp) != t.begin() + nt) continue;
          t[nt++] = comp;
        }
      if (nt == 0) continue;
      touched_[kept.size()] = t;
      ntouched_[kept.size()] = nt;
      kept.push_back(p);
    }
    points_.swap(kept);
  }
}

// q_loc = H (q_k - q_n + dq_free)/dt - surface velocity, normal row: (gap + H_N dq_free)/dt.
void AlartCurnierContact::localVelocities(const EvalContext& ctx) {
  const int n = static_cast<int>(points_.size());
  const Vec& q = *ctx.q;
  const Vec& qn = *ctx.q_start;
  const double dt = ctx.dt;
  qloc_.setZero(3 * n);
  mu_vec_.setConstant(n, mu_);
  for (int i = 0; i < n; ++i) {
    const ContactPoint& p = points_[i];
    Vec3 disp = Vec3::Zero(), dfree = Vec3::Zero(), vprev = Vec3::Zero();
    for (int j = 0; j < p.nodes; ++j) {
      disp += p.weight[j] * (q.segment<3>(p.dof[j]) - qn.segment<3>(p.dof[j]));
      dfree += p.weight[j] * dq_free_.segment<3>(p.dof[j]);
      if (ctx.v_start) vprev += p.weight[j] * ctx.v_start->segment<3>(p.dof[j]);
    }
    const Vec3 u_t = p.frame * ((disp + dfree) / dt - p.surface_velocity);
    qloc_.segment<3>(3 * i) = u_t;
    qloc_[3 * i] = (p.gap + p.frame.row(0).dot(dfree)) / dt;
    if (restitution_ > 0) {
      const double approach = p.frame.row(0).dot(vprev - p.surface_velocity);
      if (approach < 0 && p.gap <= 0) qloc_[3 * i] += restitution_ * approach;
    }
  }
}

// Each group's free DOFs (of the components it touches) and its Newton system, reduced or unreduced.
void AlartCurnierContact::chooseNewtonSystems() {
  const int n = static_cast<int>(points_.size());
  const int nc = static_cast<int>(comps_.size());
  std::vector<char> counted(nc, 0);
  std::vector<int> components(groups_.size(), 0), incidences(groups_.size(), 0);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < ntouched_[i]; ++k) {
      ++incidences[group_of_[i]];
      if (!counted[touched_[i][k]]) {
        counted[touched_[i][k]] = 1;
        ++components[group_of_[i]];
        groups_[group_of_[i]].dofs += static_cast<int>(comps_[touched_[i][k]]->dofs.size());
      }
    }
  // The reduced J = F_u W + F_r fills in through W's dense (3k x 3k) block of every rod with k
  // contacts, the unreduced system along the rods: measured on mats and piles of 22-node rods,
  // unreduced wins from ~15 contacts per rod (mats of 20-76 rods: 2-25x), reduced below (a
  // 76-spaghetti pile with ~10 per rod: 2x), and for small groups either costs little.
  for (std::size_t gi = 0; gi < groups_.size(); ++gi) {
    Group& g = groups_[gi];
    g.unreduced = newton_system_ == NewtonSystem::Unreduced ||
                  (newton_system_ == NewtonSystem::Auto && g.contacts.size() > 64 &&
                   incidences[gi] >= 15 * components[gi]);
  }
}

// The step dq = dq_free + A^-1 H^T r / dt, component by component; then the warm starts and the
// contact statistics (also when the solve failed, for the report).
void AlartCurnierContact::applyImpulses(double dt, Vec& dq) {
  const int n = static_cast<int>(points_.size());
  dq = dq_free_;
  for (auto& cpp : comps_) {
    Component& cp = *cpp;
    const int kc = static_cast<int>(cp.contacts.size());
    if (kc == 0) continue;
    if (groupUnreduced(cp)) {  // no X: A_c^-1 (H_c^T r)
      const int me = static_cast<int>(&cpp - comps_.data());
      rhs_.setZero(static_cast<Eigen::Index>(cp.dofs.size()));
      for (int i : cp.contacts)
        forEachHEntry(points_[i], [&](int comp, int local, const Vec3& h) {
          if (comp == me) rhs_[local] += h.dot(r_.segment<3>(3 * i));
        });
      sol_ = cp.isDense() ? Vec(cp.dlu.solve(rhs_)) : Vec(cp.lu.solve(rhs_));
    } else {
      rhs_.resize(3 * kc);
      for (int a = 0; a < kc; ++a) rhs_.segment<3>(3 * a) = r_.segment<3>(3 * cp.contacts[a]);
      sol_.noalias() = cp.X * rhs_;
    }
    for (std::size_t l = 0; l < cp.dofs.size(); ++l) dq[cp.dofs[l]] += sol_[l] / dt;
  }
  storeWarmStarts();
  stats_ = {};
  for (int i = 0; i < n; ++i) {
    if (r_[3 * i] > 0) ++stats_.active;
    stats_.min_gap = std::min(stats_.min_gap, points_[i].true_gap);
  }
}

// A solve without contacts: an empty, converged result.
void AlartCurnierContact::recordNoContacts(std::chrono::steady_clock::time_point t_start) {
  groups_.clear();
  last_ = {};
  last_.converged = true;
  nu_ = 0;
  step_.contacts = step_.groups = step_.max_group = 0;
  step_.ac_norm = step_.nu = step_.rel = step_.abs = 0;
  step_.solve_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_start).count();
}

void AlartCurnierContact::recordSolve(int max_group, std::chrono::steady_clock::time_point t_start) {
  const int n = static_cast<int>(points_.size());
  step_.iterations += last_.iterations;
  step_.prox_iterations += last_.prox_iterations;
  step_.contacts = n;
  step_.groups = static_cast<int>(groups_.size());
  step_.max_group = max_group;
  step_.ac_norm = last_.ac_norm;
  step_.nu = nu_;
  step_.rel = last_.residual.rel;
  step_.abs = last_.residual.abs;
  step_.failed = step_.failed || !last_.converged;
  step_.solve_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_start).count();
}

// RODSIM_AC_DEBUG=1: one line per solve on stderr; =2: and one per contact.
void AlartCurnierContact::printDebug(const Vec& dq) const {
  const int n = static_cast<int>(points_.size());
  if (std::getenv("RODSIM_AC_DEBUG"))
    std::fprintf(stderr, "ac: n=%d groups=%d it=%d rel=%.2e abs=%.2e |dq|=%.3e |dqfree|=%.3e rN_sum=%.3e\n", n,
                 int(groups_.size()), last_.iterations, last_.residual.rel, last_.residual.abs, dq.norm(),
                 dq_free_.norm(), [&] { double s = 0; for (int i = 0; i < n; ++i) s += r_[3 * i]; return s; }());
  if (const char* d = std::getenv("RODSIM_AC_DEBUG"); d && d[0] == '2')
    for (int i = 0; i < n; ++i) {
      const ContactPoint& p = points_[i];
      std::fprintf(stderr, "  #%d key=(%d %d %d %d %d) group=%d gap=%.3e n=(%.4f %.4f %.4f) w=(%.4f %.4f %.4f %.4f) r=(%.4e %.4e %.4e) u=(%.4e %.4e %.4e)\n", i,
                   p.key[0], p.key[1], p.key[2], p.key[3], p.key[4], group_of_[i], p.gap, p.frame(0, 0), p.frame(0, 1), p.frame(0, 2),
                   p.weight[0], p.weight[1], p.weight[2], p.weight[3], r_[3 * i], r_[3 * i + 1], r_[3 * i + 2],
                   u_all_[3 * i], u_all_[3 * i + 1], u_all_[3 * i + 2]);
      std::fprintf(stderr, "     nat=%.3e mu=%g\n", naturalMap(u_all_.segment<3>(3 * i), r_.segment<3>(3 * i), mu_vec_[i]).norm(), mu_vec_[i]);
    }
}

std::vector<std::string> AlartCurnierContact::reportColumns() const {
  return {"contacts", "nu", "solves", "ac_iterations", "prox_iterations", "f_ac", "natmap_rel", "natmap_abs", "solve_ms",
          "groups", "max_group", "factorizations", "gmres_iterations"};
}

void AlartCurnierContact::reportValues(std::vector<double>& out) const {
  // Appended (the kernel gathers every component's values in one vector).
  out.insert(out.end(), {static_cast<double>(step_.contacts), step_.nu, static_cast<double>(step_.solves),
                         static_cast<double>(step_.iterations), static_cast<double>(step_.prox_iterations),
                         step_.ac_norm, step_.rel, step_.abs, step_.solve_ms, static_cast<double>(step_.groups),
                         static_cast<double>(step_.max_group), static_cast<double>(step_.factorizations),
                         static_cast<double>(step_.gmres_iterations)});
}

}  // namespace rodsim::ac
