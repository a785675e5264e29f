// ContactPairReport of alart-curnier (SDK 1.8). The model has no force at a configuration: it solves
// impulses r = (r_n, r_t1, r_t2) per contact over a step (Alart and Curnier's mixed formulation). What
// it reports is the last solve's contacts with a positive normal impulse, each impulse divided by the
// step (ctx.dt): the mean contact force over that step, with the contact's frame (n from B to A) and
// its nodes' weights (+ on side A, - on side B). Nothing is solved again.
#include "ac_contact.h"

namespace rodsim::ac {

void AlartCurnierContact::contactPairs(const EvalContext& ctx, std::vector<ContactRecord>& out) const {
  if (!(ctx.dt > 0)) return;
  const std::size_t n = points_.size();
  if (static_cast<std::size_t>(r_.size()) != 3 * n) return;  // no solve yet with these contacts
  for (std::size_t i = 0; i < n; ++i) {
    const ContactPoint& p = points_[i];
    const double rn = r_[Eigen::Index(3 * i)];
    if (!(rn > 0)) continue;
    ContactRecord rec;
    const Vec3 normal = p.frame.row(0).transpose();
    rec.normal = normal;
    rec.normal_force = rn / ctx.dt * normal;
    rec.friction_force = (r_[Eigen::Index(3 * i + 1)] * p.frame.row(1).transpose() +
                          r_[Eigen::Index(3 * i + 2)] * p.frame.row(2).transpose()) /
                         ctx.dt;
    rec.gap = p.gap;
    if (p.key[0] == 0) {  // (0, rod, node, obstacle, 0)
      rec.rod_a = rods_[std::size_t(p.key[1])]->name();
      rec.edge_a = p.key[2];
      rec.rod_b = world_->obstacle(p.key[3]).name;
      rec.obstacle = true;
    } else {  // (1, rod A, edge A, rod B, edge B)
      rec.rod_a = rods_[std::size_t(p.key[1])]->name();
      rec.edge_a = p.key[2];
      rec.rod_b = rods_[std::size_t(p.key[3])]->name();
      rec.edge_b = p.key[4];
    }
    const Vec3 on_a = rec.normal_force + rec.friction_force;
    for (int k = 0; k < p.nodes && k < 4; ++k) {
      rec.node_dofs[k] = p.dof[std::size_t(k)];
      rec.node_forces[k] = p.weight[std::size_t(k)] * on_a;
    }
    out.push_back(std::move(rec));
  }
}

}  // namespace rodsim::ac
