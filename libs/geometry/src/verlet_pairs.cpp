#include <rodsim/geometry/verlet_pairs.h>

#include <rodsim/geometry/segment_segment_distance.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace rodsim::geometry {

void VerletPairs::bindEdges(std::vector<Edge> edges, Kind kind) {
  kind_ = kind;
  edges_ = std::move(edges);
  node_dofs_.clear();
  for (const Edge& e : edges_) {
    node_dofs_.push_back(e.x0);
    node_dofs_.push_back(e.x1);
  }
  std::sort(node_dofs_.begin(), node_dofs_.end());
  node_dofs_.erase(std::unique(node_dofs_.begin(), node_dofs_.end()), node_dofs_.end());
  x_.resize(3 * static_cast<Eigen::Index>(node_dofs_.size()));
  boxes_.resize(edges_.size());
  pairs_.clear();
  reach_ = -1;
}

double VerletPairs::largestMove(const Eigen::VectorXd& q) const {
  double worst2 = 0;
  for (std::size_t i = 0; i < node_dofs_.size(); ++i) {
    const double d2 = (q.segment<3>(node_dofs_[i]) - x_.segment<3>(3 * i)).squaredNorm();
    if (!(d2 <= worst2)) worst2 = std::isnan(d2) ? std::numeric_limits<double>::infinity() : d2;
  }
  return std::sqrt(worst2);
}

bool VerletPairs::valid(const Eigen::VectorXd& q, const Eigen::VectorXd* q_end, double pad) const {
  if (!(reach_ >= pad)) return false;
  const double lim = reach_ - pad;
  return largestMove(q) <= lim && (!q_end || largestMove(*q_end) <= lim);
}

void VerletPairs::build(const Eigen::VectorXd& q, const Eigen::VectorXd* q_end, double pad, double skin) {
  for (std::size_t i = 0; i < node_dofs_.size(); ++i) x_.segment<3>(3 * i) = q.segment<3>(node_dofs_[i]);
  // Built at q: a node may reach its q_end position too before the next build.
  reach_ = pad + skin + (q_end ? largestMove(*q_end) : 0.0);
  for (std::size_t e = 0; e < edges_.size(); ++e)
    boxes_[e] = segmentBox(q.segment<3>(edges_[e].x0), q.segment<3>(edges_[e].x1), edges_[e].radius + reach_);
  sap_.query(boxes_, pairs_);
  ++builds_;
}

bool VerletPairs::near(const Eigen::VectorXd& q, int a, int b) const {
  const Edge &A = edges_[a], &B = edges_[b];
  return segmentDistance(q.segment<3>(A.x0), q.segment<3>(A.x1), q.segment<3>(B.x0), q.segment<3>(B.x1)) <
         A.radius + B.radius + 2 * reach_;
}

}  // namespace rodsim::geometry
