// "cosserat-clamp": holds node positions and the full material frames (all three rotation DOFs) of
// elements of a cosserat rod, at rest or moving rigidly (optional `velocity`, `angular_velocity`
// about `center`, between `start` and `stop`: the twisted and pulled ends of Gazzola et al. (2018),
// Fig. 3). The generic `clamp` holds the same frame (Rod::frameDofs) for an element whose two nodes
// it holds; this constraint also holds frames of elements independently of their nodes and rotates
// whole frames about any axis.
#pragma once

#include "cosserat_rod.h"

#include <rodsim/constraint.h>

#include <string>
#include <vector>

namespace rodsim {

class CosseratClamp : public Constraint {
 public:
  static Schema schema();
  explicit CosseratClamp(const Params& p);
  void bind(World& world) override;
  const std::vector<int>& dofs() const override { return dofs_; }
  const std::vector<int>& positionDofs() const override { return position_dofs_; }
  void prescribe(double t, Vec& q) override;

 private:
  std::string rod_name_;
  std::vector<long long> node_params_, element_params_;
  CosseratRod* rod_ = nullptr;
  std::vector<int> elements_;
  std::vector<Vec3> p0_;
  std::vector<Mat3> Q0_;
  std::vector<int> dofs_, position_dofs_;
  Vec3 velocity_ = Vec3::Zero(), omega_ = Vec3::Zero(), center_ = Vec3::Zero();
  bool at_rest_ = false;     // velocity_ and omega_ zero: R_rest_ and p_rest_ hold at every time (bind)
  Mat3 R_rest_;
  std::vector<Vec3> p_rest_;
  // prescribe at rest: the last committed frame of each held element and the φ it gave (bitwise reuse)
  std::vector<Mat3> Qc_last_;
  std::vector<Vec3> phi_last_;
  std::vector<char> cached_;
  double start_ = 0, stop_ = 0;  // stop_ = +inf: moves forever
};

}  // namespace rodsim
