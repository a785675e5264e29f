#include <rodsim/geometry/rod_edges.h>

#include <algorithm>

namespace rodsim::geometry {

void RodEdges::bind(const std::vector<Rod*>& rods, const std::string& edge_word, const std::string& why) {
  edges_.clear();
  node_dofs_.clear();
  r_max_ = 0;
  for (int ri = 0; ri < static_cast<int>(rods.size()); ++ri) {
    const Rod& rod = *rods[ri];
    const std::vector<double> arc = restArcLengths(rod);
    const int base = static_cast<int>(node_dofs_.size());
    for (int i = 0; i < rod.numNodes(); ++i) node_dofs_.push_back(rod.globalPositionDof(i));
    for (int e = 0; e < rod.numEdges(); ++e) {
      RodEdge E;
      E.x0 = rod.globalPositionDof(e);
      E.x1 = rod.globalPositionDof(e + 1);
      E.n0 = base + e;
      E.n1 = base + e + 1;
      E.rod = ri;
      E.index = e;
      E.radius = rod.radius(e);
      E.s0 = arc[e];
      E.s1 = arc[e + 1];
      if (!(E.radius > 0))
        throw ParamError("rods", "rod '" + rod.name() + "' has a non-positive radius on " + edge_word + " " +
                                     std::to_string(e) + "; " + why);
      r_max_ = std::max(r_max_, E.radius);
      edges_.push_back(E);
    }
  }
  r_min_ = r_max_;
  for (const RodEdge& E : edges_) r_min_ = std::min(r_min_, E.radius);
  near_.bind(edges_, VerletPairs::Kind::Capsules);
}

void NodeSnapshot::take(const Vec& q, const std::vector<int>& node_dofs) {
  x_.resize(3 * static_cast<Eigen::Index>(node_dofs.size()));
  for (std::size_t i = 0; i < node_dofs.size(); ++i) x_.segment<3>(3 * i) = q.segment<3>(node_dofs[i]);
}

}  // namespace rodsim::geometry
