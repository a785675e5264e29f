#include "ac_contact.h"

#include <Eigen/Geometry>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace rodsim::ac {

void closestSegmentPoints(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1, double& s, double& t) {
  // Minimize |p0 + s d1 - q0 - t d2|^2 over [0,1]^2 (normal equations, then clamping).
  const Vec3 d1 = p1 - p0, d2 = q1 - q0, w = p0 - q0;
  const double a = d1.dot(d1), e = d2.dot(d2), b = d1.dot(d2), c = d1.dot(w), f = d2.dot(w);
  const double tiny = 1e-300;
  auto clamp01 = [](double x) { return std::clamp(x, 0.0, 1.0); };
  if (a <= tiny && e <= tiny) {
    s = t = 0;
    return;
  }
  if (a <= tiny) {
    s = 0;
    t = clamp01(f / e);
    return;
  }
  if (e <= tiny) {
    t = 0;
    s = clamp01(-c / a);
    return;
  }
  const double denom = a * e - b * b;
  s = denom > 1e-14 * a * e ? clamp01((b * f - c * e) / denom) : 0.0;
  t = (b * s + f) / e;
  if (t < 0) {
    t = 0;
    s = clamp01(-c / a);
  } else if (t > 1) {
    t = 1;
    s = clamp01((b - c) / a);
  }
}

Schema AlartCurnierContact::schema() {
  Schema s{"alart-curnier",
           "Contact and exact Coulomb friction as the zero of the Alart-Curnier function, solved by "
           "nonsmooth Newton inside each implicit Newton iteration (seed 003): rod-obstacle (node vs "
           "plane, sphere, cylinder; spinning cylinders drag) and rod-rod (edge vs edge). Impulses r "
           "(N s) act as forces r/dt; no penetration at the end of the step (gap-rate constraint)."};
  s.add<double>("friction", 0.0, "Coulomb coefficient mu.").atLeast(0);
  s.add<std::vector<std::string>>("rods", std::vector<std::string>{},
                                  "Rods taking part (empty: all rods, self-contact included).");
  s.add<std::vector<std::string>>("obstacles", std::vector<std::string>{},
                                  "Obstacles taking part (empty: all).");
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
      .atLeast(1);
  s.add<double>("rho", 0.0,
                "Alart-Curnier parameter rho (s/kg: impulse per velocity) for every contact; 0: per "
                "contact, 1 / (mean diagonal of its Delassus block W_ii).")
      .unit("s/kg").atLeast(0);
  s.add<bool>("line_search", true, "Goldstein-Price line search on |f_AC|^2 (seed Algorithm 2).");
  s.add<bool>("proximal", true, "Proximal-point globalization when the plain Newton stalls.");
  return s;
}

AlartCurnierContact::AlartCurnierContact(const Params& p)
    : Contact(p),
      mu_(p.real("friction")),
      restitution_(p.real("restitution")),
      margin_(p.real("margin")),
      rod_rod_(p.boolean("rod_rod")),
      rod_names_(p.strings("rods")),
      obstacle_names_(p.strings("obstacles")) {
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
  solver_.options() = options_;
}

void AlartCurnierContact::bind(World& world) {
  world_ = &world;
  rods_.clear();
  if (rod_names_.empty()) {
    for (int i = 0; i < world.numRods(); ++i) rods_.push_back(&world.rod(i));
  } else {
    for (const auto& name : rod_names_) {
      Rod* r = world.findRod(name);
      if (!r) {
        std::string all;
        for (int i = 0; i < world.numRods(); ++i) all += (i ? ", '" : "'") + world.rod(i).name() + "'";
        throw ParamError("rods", "no rod named '" + name + "' (rods: " + all + ")");
      }
      rods_.push_back(r);
    }
  }
  obstacles_.clear();
  if (obstacle_names_.empty()) {
    for (int i = 0; i < world.numObstacles(); ++i) obstacles_.push_back(i);
  } else {
    for (const auto& name : obstacle_names_) {
      int found = -1;
      std::string all;
      for (int i = 0; i < world.numObstacles(); ++i) {
        if (world.obstacle(i).name == name) found = i;
        all += (i ? ", '" : "'") + world.obstacle(i).name + "'";
      }
      if (found < 0) throw ParamError("obstacles", "no obstacle named '" + name + "' (obstacles: " + all + ")");
      obstacles_.push_back(found);
    }
  }
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
  // Node-obstacle candidates.
  for (int ri = 0; ri < static_cast<int>(rods_.size()); ++ri) {
    const Rod& rod = *rods_[ri];
    for (int n = 0; n < rod.numNodes(); ++n) {
      const int dof = rod.globalPositionDof(n);
      const Vec3 x = q.segment<3>(dof);
      const double rad = rod.nodeRadius(n);
      const double reach = margin_ + 0.5 * rad + 2 * dt * speed(dof) + 2 * dt * dt * 10.0;
      for (int oi : obstacles_) {
        const Obstacle& ob = world_->obstacle(oi);
        double reach_o = reach;
        if (ob.shape == Obstacle::Shape::Cylinder) reach_o += 2 * dt * std::abs(ob.angular_velocity) * ob.radius;
        if (ob.signedDistance(x) - rad < reach_o) obstacle_cands_.push_back({ri, n, oi});
      }
    }
  }
  if (!rod_rod_) return;
  // Edge-edge candidates: sweep and prune over edge AABBs along x.
  struct Box {
    Eigen::Vector3d lo, hi;
    int rod, edge;
  };
  std::vector<Box> boxes;
  for (int ri = 0; ri < static_cast<int>(rods_.size()); ++ri) {
    const Rod& rod = *rods_[ri];
    for (int e = 0; e < rod.numEdges(); ++e) {
      const int a = rod.globalPositionDof(e), b = rod.globalPositionDof(e + 1);
      const Vec3 xa = q.segment<3>(a), xb = q.segment<3>(b);
      const double inflate = rod.radius(e) + 0.5 * margin_ + 0.25 * rod.radius(e) +
                             dt * std::max(speed(a), speed(b)) + dt * dt * 10.0;
      boxes.push_back({xa.cwiseMin(xb).array() - inflate, xa.cwiseMax(xb).array() + inflate, ri, e});
    }
  }
  std::sort(boxes.begin(), boxes.end(), [](const Box& x, const Box& y) { return x.lo.x() < y.lo.x(); });
  for (std::size_t i = 0; i < boxes.size(); ++i)
    for (std::size_t j = i + 1; j < boxes.size() && boxes[j].lo.x() <= boxes[i].hi.x(); ++j) {
      const Box &A = boxes[i], &B = boxes[j];
      if ((A.lo.array() > B.hi.array()).any() || (B.lo.array() > A.hi.array()).any()) continue;
      int ra = A.rod, ea = A.edge, rb = B.rod, eb = B.edge;
      if (ra > rb || (ra == rb && ea > eb)) {
        std::swap(ra, rb);
        std::swap(ea, eb);
      }
      if (ra == rb) {
        // Self contact: skip edges closer along the rod than about the sum of the radii.
        const Rod& rod = *rods_[ra];
        if (eb - ea <= 1) continue;
        double along = 0;
        for (int k = ea + 1; k < eb; ++k) along += rod.restVoronoiLength(k);
        if (along < 2 * (rod.radius(ea) + rod.radius(eb))) continue;
      }
      edge_cands_.push_back({ra, ea, rb, eb});
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
    points_.push_back(p);
  }
  for (const auto& c : edge_cands_) {
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
  std::vector<char> drop(points_.size(), 0);
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
      any = true;
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
}

bool AlartCurnierContact::solveLinearized(const LinearizedSystem& sys, Vec& dq) {
  const Eigen::SparseMatrix<double>& A = *sys.A;
  const Vec& b = *sys.b;
  const std::vector<char>& fixed = *sys.fixed;
  const EvalContext& ctx = *sys.ctx;
  const Vec& q = *ctx.q;
  const Vec& qn = *ctx.q_start;
  const double dt = ctx.dt;
  const int N = static_cast<int>(A.rows());
  const auto t_start = std::chrono::steady_clock::now();
  if (!(dt > 0)) {
    std::fprintf(stderr, "alart-curnier: needs a time step (the implicit-euler solver); dt = %g\n", dt);
    return false;
  }
  // Sparse LU of A; symbolic analysis only when the pattern changed.
  const bool same = static_cast<int>(a_outer_.size()) == A.outerSize() + 1 &&
                    static_cast<int>(a_inner_.size()) == A.nonZeros() &&
                    std::equal(a_outer_.begin(), a_outer_.end(), A.outerIndexPtr()) &&
                    std::equal(a_inner_.begin(), a_inner_.end(), A.innerIndexPtr());
  if (!same) {
    lu_.analyzePattern(A);
    a_outer_.assign(A.outerIndexPtr(), A.outerIndexPtr() + A.outerSize() + 1);
    a_inner_.assign(A.innerIndexPtr(), A.innerIndexPtr() + A.nonZeros());
  }
  lu_.factorize(A);
  if (lu_.info() != Eigen::Success) {
    std::fprintf(stderr, "alart-curnier '%s': the linearized system matrix is singular\n", name().c_str());
    return false;
  }
  rhs_ = b;
  dq_free_ = lu_.solve(rhs_);
  buildPoints(q);
  const int n = static_cast<int>(points_.size());
  if (n == 0) {
    dq = dq_free_;
    stats_ = {};
    last_ = {};
    last_.converged = true;
    nu_ = 0;
    ++step_.solves;
    step_.contacts = 0;
    step_.ac_norm = step_.nu = step_.rel = step_.abs = 0;
    step_.solve_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_start).count();
    return true;
  }
  // X = A^-1 H^T (fixed DOFs carry no impulse: their columns of H are dropped).
  X_.resize(N, 3 * n);
  for (int i = 0; i < n; ++i) {
    const ContactPoint& p = points_[i];
    for (int k = 0; k < 3; ++k) {
      rhs_.setZero();
      for (int j = 0; j < p.nodes; ++j)
        for (int c = 0; c < 3; ++c)
          if (!fixed[p.dof[j] + c]) rhs_[p.dof[j] + c] += p.weight[j] * p.frame(k, c);
      X_.col(3 * i + k) = lu_.solve(rhs_);
    }
  }
  // W = H X / dt^2 (exact zeros between independent rods stay out), and
  // q_loc = H (q_k - q_n + dq_free)/dt - surface velocity, normal row: (gap + H_N dq_free)/dt.
  std::vector<Eigen::Triplet<double>> trip;
  qloc_.setZero(3 * n);
  mu_vec_.setConstant(n, mu_);
  int free_dofs = 0;
  for (char f : fixed) free_dofs += !f;
  const double inv_dt2 = 1.0 / (dt * dt);
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
    for (int k = 0; k < 3; ++k) {
      const int row = 3 * i + k;
      for (int jc = 0; jc < 3 * n; ++jc) {
        double w = 0;
        for (int j = 0; j < p.nodes; ++j)
          for (int c = 0; c < 3; ++c) {
            const int g = p.dof[j] + c;
            if (!fixed[g]) w += p.weight[j] * p.frame(k, c) * X_(g, jc);
          }
        if (w != 0) trip.emplace_back(row, jc, w * inv_dt2);
      }
    }
  }
  SpMat W(3 * n, 3 * n);
  W.setFromTriplets(trip.begin(), trip.end());
  nu_ = free_dofs > 0 ? 3.0 * n / free_dofs : 0.0;
  // Warm start by contact identity.
  r_.setZero(3 * n);
  for (int i = 0; i < n; ++i) {
    auto it = warm_.find(points_[i].key);
    if (it != warm_.end()) r_.segment<3>(3 * i) = it->second;
  }
  solver_.setProblem(W, qloc_, mu_vec_);
  solver_.options() = options_;
  last_ = solver_.solve(r_);
  if (last_.converged) {
    // Polish: the relative natural map mixes velocities and impulses; a few more Newton steps
    // (quadratic near the solution) bring r to round-off so that the force r/dt the implicit
    // solver sees is exact to its own (absolute, N) tolerance.
    Options polish = options_;
    polish.tolerance = 1e-15;
    polish.max_iterations = 4;
    polish.proximal = false;
    solver_.options() = polish;
    Vec r_keep = r_;
    const Result more = solver_.solve(r_);
    if (!(more.residual.abs <= last_.residual.abs)) {
      r_ = r_keep;
    } else {
      last_.residual = more.residual;
      last_.ac_norm = more.ac_norm;
    }
    last_.iterations += more.iterations;
    solver_.options() = options_;
  }
  // The step and the bookkeeping, also when it failed (for the report).
  dq = dq_free_ + X_ * r_ / dt;
  warm_.clear();
  stats_ = {};
  for (int i = 0; i < n; ++i) {
    warm_[points_[i].key] = r_.segment<3>(3 * i);
    if (r_[3 * i] > 0) ++stats_.active;
    stats_.min_gap = std::min(stats_.min_gap, points_[i].gap);
  }
  ++step_.solves;
  step_.iterations += last_.iterations;
  step_.prox_iterations += last_.prox_iterations;
  step_.contacts = n;
  step_.ac_norm = last_.ac_norm;
  step_.nu = nu_;
  step_.rel = last_.residual.rel;
  step_.abs = last_.residual.abs;
  step_.failed = step_.failed || !last_.converged;
  step_.solve_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_start).count();
  if (std::getenv("RODSIM_AC_DEBUG"))
    std::fprintf(stderr, "ac: n=%d it=%d rel=%.2e abs=%.2e |dq|=%.3e |dqfree|=%.3e rN_sum=%.3e\n", n,
                 last_.iterations, last_.residual.rel, last_.residual.abs, dq.norm(), dq_free_.norm(),
                 [&] { double s = 0; for (int i = 0; i < n; ++i) s += r_[3 * i]; return s; }());
  if (const char* d = std::getenv("RODSIM_AC_DEBUG"); d && d[0] == '2')
    for (int i = 0; i < n; ++i) {
      const ContactPoint& p = points_[i];
      std::fprintf(stderr, "  #%d key=(%d %d %d %d %d) gap=%.3e n=(%.4f %.4f %.4f) w=(%.4f %.4f %.4f %.4f) r=(%.4e %.4e %.4e) u=(%.4e %.4e %.4e)\n", i,
                   p.key[0], p.key[1], p.key[2], p.key[3], p.key[4], p.gap, p.frame(0, 0), p.frame(0, 1), p.frame(0, 2),
                   p.weight[0], p.weight[1], p.weight[2], p.weight[3], r_[3 * i], r_[3 * i + 1], r_[3 * i + 2],
                   solver_.velocity()[3 * i], solver_.velocity()[3 * i + 1], solver_.velocity()[3 * i + 2]);
      std::fprintf(stderr, "     nat=%.3e mu=%g\n", naturalMap(solver_.velocity().segment<3>(3 * i), r_.segment<3>(3 * i), mu_vec_[i]).norm(), mu_vec_[i]);
    }
  if (!last_.converged) {
    std::fprintf(stderr,
                 "alart-curnier '%s': contact solve did not converge (%s): %d contacts, %d iterations, "
                 "natural-map residual rel %.3e abs %.3e (tolerance %.3e), |f_AC| %.3e\n",
                 name().c_str(), last_.message.c_str(), n, last_.iterations, last_.residual.rel,
                 last_.residual.abs, options_.tolerance, last_.ac_norm);
    return false;
  }
  return true;
}

std::vector<std::string> AlartCurnierContact::reportColumns() const {
  return {"contacts", "nu", "solves", "ac_iterations", "prox_iterations", "f_ac", "natmap_rel", "natmap_abs", "solve_ms"};
}

void AlartCurnierContact::reportValues(std::vector<double>& out) const {
  out = {static_cast<double>(step_.contacts), step_.nu, static_cast<double>(step_.solves),
         static_cast<double>(step_.iterations), static_cast<double>(step_.prox_iterations), step_.ac_norm,
         step_.rel, step_.abs, step_.solve_ms};
}

}  // namespace rodsim::ac
