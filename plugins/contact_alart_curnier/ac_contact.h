// The `alart-curnier` Contact (kind Impulse): rod-obstacle and rod-rod contact with exact Coulomb
// friction, solved inside each Newton iteration of the implicit solver (see README.md for the
// mapping from the solver's linearized system to the local problem u = W r + q).
#pragma once

#include "ac_solver.h"

#include <rodsim/sdk.h>

#include <Eigen/UmfPackSupport>

#include <array>
#include <map>
#include <tuple>
#include <vector>

namespace rodsim::ac {

// Closest points of segments [p0, p1] and [q0, q1]: parameters s, t in [0, 1].
void closestSegmentPoints(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1, double& s, double& t);

// Contact identity: (kind, a, b, c, d). Obstacle: (0, rod, node, obstacle, 0); rod-rod:
// (1, rodA, edgeA, rodB, edgeB).
using ContactKey = std::array<int, 5>;

// One contact at the current iterate: frame rows (n, t1, t2), up to 4 weighted nodes.
struct ContactPoint {
  ContactKey key{};
  Mat3 frame = Mat3::Identity();  // rows: n (from B to A), t1, t2
  int nodes = 0;
  std::array<int, 4> dof{};       // global x DOF of each node
  std::array<double, 4> weight{}; // + on side A, - on side B
  double gap = 0;                 // m, distance minus radii (> 0 apart)
  Vec3 surface_velocity = Vec3::Zero();  // obstacle material velocity at the contact (m/s)
  Vec3 point = Vec3::Zero();             // contact point on side A's centerline (rod-rod)
  double merge_radius = 0;               // rod-rod: near-duplicates closer than this are merged
};

class AlartCurnierContact final : public Contact {
 public:
  static Schema schema();
  explicit AlartCurnierContact(const Params& p);

  Kind kind() const override { return Kind::Impulse; }
  bool usesObstacles() const override { return true; }
  void bind(World& world) override;
  // Checkpoint: the warm-start impulses by contact identity (a restart continues bit for bit).
  void saveState(std::vector<double>& out) const override {
    for (const auto& [key, r] : warm_) {
      out.insert(out.end(), key.begin(), key.end());
      out.insert(out.end(), r.data(), r.data() + 3);
    }
  }
  void loadState(const std::vector<double>& in) override {
    warm_.clear();
    for (std::size_t k = 0; k + 8 <= in.size(); k += 8) {
      ContactKey key;
      for (int j = 0; j < 5; ++j) key[j] = static_cast<int>(in[k + j]);
      warm_[key] = Vec3(in[k + 5], in[k + 6], in[k + 7]);
    }
  }
  void beginStep(const EvalContext& ctx) override;
  bool solveLinearized(const LinearizedSystem& sys, Vec& dq) override;
  ContactStats stats() const override { return stats_; }
  // Per step (timeseries.csv "<name>.<column>", mean in summary.json): see README.md, "Report".
  std::vector<std::string> reportColumns() const override;
  void reportValues(std::vector<double>& out) const override;

  // For tests and reporting: the last contact solve.
  const Result& lastResult() const { return last_; }
  const std::vector<ContactPoint>& contacts() const { return points_; }
  const Vec& impulses() const { return r_; }  // N s, (n, t1, t2) per contact
  int candidates() const { return static_cast<int>(obstacle_cands_.size() + edge_cands_.size()); }
  // nu = 3 n / m of the seed (contacts over free DOFs) in the last solve.
  double nu() const { return nu_; }

 private:
  void buildPoints(const Vec& q);
  Vec3 nodePos(const Vec& q, int dof) const { return q.segment<3>(dof); }

  double mu_, restitution_, margin_;
  bool rod_rod_;
  std::vector<std::string> rod_names_, obstacle_names_;
  Options options_;

  World* world_ = nullptr;
  std::vector<Rod*> rods_;
  std::vector<int> obstacles_;
  // candidates rebuilt once per step at the committed state
  std::vector<std::array<int, 3>> obstacle_cands_;  // rod index, node, obstacle index
  std::vector<std::array<int, 4>> edge_cands_;      // rodA, edgeA, rodB, edgeB

  std::vector<ContactPoint> points_;
  std::map<ContactKey, ContactKey> merged_;  // this step: dropped near-duplicate -> the one kept
  std::map<ContactKey, Vec3> warm_;  // impulses of the last solve, by contact identity
  Solver solver_;
  Eigen::UmfPackLU<Eigen::SparseMatrix<double>> lu_;
  std::vector<int> a_outer_, a_inner_;  // pattern of the last analyzed A
  Eigen::MatrixXd X_;                   // A^-1 H^T
  Vec rhs_, dq_free_, r_, qloc_, mu_vec_;
  Result last_;
  ContactStats stats_;
  double nu_ = 0;
  // Per-step report, reset by beginStep: contact solves (= implicit Newton iterations) and the
  // sum of their AC iterations and wall time; the other fields are those of the last solve.
  struct StepReport {
    int solves = 0, iterations = 0, prox_iterations = 0, contacts = 0;
    double ac_norm = 0, nu = 0, rel = 0, abs = 0, solve_ms = 0;
    bool failed = false;
  } step_;
};

}  // namespace rodsim::ac
