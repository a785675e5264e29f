#include <rodsim/geometry/swept_check.h>

#include <algorithm>
#include <cmath>

namespace rodsim::geometry {

namespace {

// Target: the centre-line distance reaches fraction (r_a + r_b); the iteration stops within 1e-6
// of the starting margin above it (a head-on approach lands on it in one iterate).
CcdOptions crossingOptions() {
  CcdOptions o;
  o.gap_fraction = 0;
  o.tolerance = 1e-6;
  o.max_iterations = 200;
  return o;
}

}  // namespace

void SweptCrossingCheck::bind(const std::vector<Rod*>& rods, const std::vector<const Obstacle*>& obstacles) {
  rods_ = rods;
  obstacles_ = obstacles;
  edges_.clear();
  nodes_.clear();
  for (int ri = 0; ri < static_cast<int>(rods.size()); ++ri) {
    const Rod& rod = *rods[ri];
    for (int e = 0; e < rod.numEdges(); ++e)
      edges_.push_back({rod.globalPositionDof(e), rod.globalPositionDof(e + 1), ri, e, rod.radius(e),
                        static_cast<int>(edges_.size())});
    for (int n = 0; n < rod.numNodes(); ++n) nodes_.push_back({rod.globalPositionDof(n), ri, n, rod.nodeRadius(n)});
  }
  boxes_.resize(edges_.size());
  near_.bind(edges_, VerletPairs::Kind::Boxes);
  skin_ = 0;
  for (const Edge& e : edges_) skin_ = std::max(skin_, e.radius);
}

void SweptCrossingCheck::sweptBoxes(const Vec& q0, const Vec& q1) {
  for (std::size_t e = 0; e < edges_.size(); ++e) {
    const Edge& E = edges_[e];
    const Vec3 a0 = q0.segment<3>(E.x0), b0 = q0.segment<3>(E.x1), a1 = q1.segment<3>(E.x0), b1 = q1.segment<3>(E.x1);
    const Vec3 pad = Vec3::Constant(E.radius);
    boxes_[e].lo = a0.cwiseMin(b0).cwiseMin(a1.cwiseMin(b1)) - pad;
    boxes_[e].hi = a0.cwiseMax(b0).cwiseMax(a1.cwiseMax(b1)) + pad;
  }
}

bool SweptCrossingCheck::edgePair(const Vec& q0, const Vec& q1, const Edge& A, const Edge& B, Crossing& out) const {
  static const CcdOptions opt = crossingOptions();
  const double R = kCrossingFraction * (A.radius + B.radius);
  const Vec3 p0 = q0.segment<3>(A.x0), p1 = q0.segment<3>(A.x1), r0 = q0.segment<3>(B.x0), r1 = q0.segment<3>(B.x1);
  const CcdResult c = edgeEdgeCcd(p0, p1, r0, r1, q1.segment<3>(A.x0) - p0, q1.segment<3>(A.x1) - p1,
                                  q1.segment<3>(B.x0) - r0, q1.segment<3>(B.x1) - r1, R, opt);
  if (!(c.gap0 > 0) || !(c.t < 1)) return false;  // already that close at the start, or never
  out.rod_a = rods_[A.rod]->name();
  out.rod_b = rods_[B.rod]->name();
  out.edge_a = A.index;
  out.edge_b = B.index;
  out.time_fraction = c.t;
  out.distance = c.gap0 + R;
  return true;
}

bool SweptCrossingCheck::nodesAgainstObstacles(const Vec& q0, const Vec& q1, Crossing& out) const {
  if (obstacles_.empty()) return false;
  static const CcdOptions opt = crossingOptions();
  for (const Node& n : nodes_) {
    const Vec3 x = q0.segment<3>(n.x), dx = q1.segment<3>(n.x) - x;
    const double r = kCrossingFraction * n.radius;
    for (const Obstacle* o : obstacles_) {
      // A node above a plane at both ends of the step, by more than round-off, cannot have crossed
      // it (its distance is linear in t): most nodes, without the CCD and its exact end distance.
      if (o->shape == Obstacle::Shape::Plane && (x - o->origin).dot(o->normal) - r > 0 &&
          (x + dx - o->origin).dot(o->normal) - r > 1e-12 * (1 + std::abs(r)))
        continue;
      CcdResult c;
      switch (o->shape) {
        case Obstacle::Shape::Plane: c = nodePlaneCcd(x, dx, o->origin, o->normal, r, opt); break;
        case Obstacle::Shape::Sphere: c = nodeRoundCcd(x, dx, o->center, Vec3::Zero(), o->radius, r, opt); break;
        case Obstacle::Shape::Cylinder: c = nodeRoundCcd(x, dx, o->origin, o->axis, o->radius, r, opt); break;
      }
      if (!(c.gap0 > 0)) continue;  // already that deep at the start
      if (!(c.t < 1) && o->signedDistance(x + dx) - r > 0) continue;
      out.rod_a = rods_[n.rod]->name();
      out.rod_b = o->name;
      out.edge_a = n.index;
      out.edge_b = -1;
      out.time_fraction = c.t;
      out.distance = c.gap0 + r;
      return true;
    }
  }
  return false;
}

}  // namespace rodsim::geometry
