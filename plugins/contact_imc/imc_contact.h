// The "imc" contact model: rod-rod (and node-obstacle) penalty contact with fully implicit friction
// (Tong et al. 2023, Sec. 3, SI Appendix B). See README.md.
#pragma once

#include "friction.h"
#include "imc_energy.h"

#include <rodsim/capabilities.h>
#include <rodsim/geometry/rod_edges.h>
#include <rodsim/geometry/swept_check.h>
#include <rodsim/contact.h>
#include <rodsim/rod.h>

#include <optional>
#include <string>
#include <vector>

namespace rodsim::imc {

using geometry::Aabb;
using geometry::SweepAndPrune;

class ImcContact final : public Contact, public ForceContact, public SweptContactCheck, public ContactPairReport {
  RODSIM_INTERFACES(ImcContact, ForceContact, SweptContactCheck, ContactPairReport)

 public:
  static Schema schema();
  explicit ImcContact(const Params& p);

  void bind(World& world) override;
  void beginStep(const EvalContext& ctx) override;
  void addForce(const EvalContext& ctx, const Vec& non_contact, Vec& f) override;
  void addStiffness(const EvalContext& ctx, StiffnessSink& K) override;
  double energy(const EvalContext& ctx) const override;
  bool usesObstacles() const override { return true; }
  ContactStats stats() const override { return stats_; }
  // Every pair of edges (self-contact neighbours excluded as for contact) and every node inside an
  // obstacle that overlaps in q (imc_overlaps.cpp).
  void findOverlaps(const Vec& q, std::vector<Overlap>& out) const override;
  // Two edges (neighbours excluded as for contact) or a node and an obstacle that passed through
  // each other between q_start and q_end (rodsim/geometry/swept_check.h).
  bool findCrossing(const Vec& q_start, const Vec& q_end, Crossing& out) override {
    return swept_.find(
        q_start, q_end,
        [this](const geometry::SweptCrossingCheck::Edge& a, const geometry::SweptCrossingCheck::Edge& b) {
          return excludedSelfPair(edges_[a.id], edges_[b.id]);
        },
        out);
  }

  // The active pairs and node-obstacle contacts at ctx.q with addForce's forces (imc_pairs.cpp).
  void contactPairs(const EvalContext& ctx, std::vector<ContactRecord>& out) const override;

  // --- inspection (tests, benchmark)
  struct Timing {
    double broad_s = 0;      // edge boxes + sweep and prune
    double filter_s = 0;     // exact distance check of the broad-phase pairs -> candidates
    double narrow_s = 0;     // per-evaluation pair energies, forces, friction and Jacobians
    long long builds = 0, refreshes = 0, evaluations = 0, pair_evaluations = 0;
  };
  const Timing& timing() const { return timing_; }
  double stiffness() const { return k_; }
  // Checkpoint: the stiffness of the last step (the fallback when a step's residual is zero).
  void saveState(std::vector<double>& out) const override { out.push_back(k_); }
  void loadState(const std::vector<double>& in) override { k_ = in.at(0); }
  double margin() const { return margin_; }
  int numCandidates() const { return static_cast<int>(cand_.size()); }
  int numObstacleCandidates() const { return static_cast<int>(obstacle_cand_.size()); }
  int numEdges() const { return static_cast<int>(edges_.size()); }
  // Broad-phase pairs (the Verlet list) before exclusion and the distance check.
  int numBroadPairs() const { return table_.numNearPairs(); }

 private:
  using EdgeRef = geometry::RodEdge;
  struct Pair {
    int a, b;                 // edge indexes, a < b
    bool in_pattern = false;  // its stiffness block is always emitted (see buildCandidates)
    double build_gap = 0;     // m, its gap where the candidates were built
  };
  struct ObstacleCandidate {
    int x = 0;            // global x DOF of the node
    double radius = 0;
    const Obstacle* obstacle = nullptr;
  };

  // Self-contact exclusion: edges of one rod closer along it (rest arc length between them) than
  // the contact distance r_a + r_b + delta plus the exclusion margin never form a pair.
  bool excludedSelfPair(const EdgeRef& A, const EdgeRef& B) const {
    return A.rod == B.rod && geometry::arcGap(A, B) <= A.radius + B.radius + delta_ + self_exclusion_;
  }
  void buildCandidates(const Vec& q);
  void maybeRefresh(const Vec& q);
  // True for a candidate that cannot be in its force band at a configuration whose nodes moved at
  // most `moved` from where the candidates were built: its gap then exceeds build_gap - 2 moved
  // (each segment's points moved at most `moved`), here above delta by far more than round-off.
  bool surelyApart(const Pair& p, double moved) const {
    return p.build_gap - 2 * moved > delta_ + 1e-9 * (edges_[p.a].radius + edges_[p.b].radius);
  }
  void updateStiffness(const EvalContext& ctx, const Vec& f);
  Vec3 node(const Vec& q, int x) const { return q.segment<3>(x); }
  // Node velocities (implicit, (x - x_0)/dt) of a pair.
  void pairVelocity(const EvalContext& ctx, const EdgeRef& A, const EdgeRef& B, Vec12& v) const;

  // parameters
  double mu_, delta_, nu_, K2_, scale_;
  std::optional<double> k_fixed_, margin_param_;
  std::optional<std::vector<std::string>> rod_names_, obstacle_names_;

  World* world_ = nullptr;
  geometry::RodEdges table_;          // the edges and nodes of the selected rods, and the broad phase
  const std::vector<EdgeRef>& edges_ = table_.edges();
  const std::vector<int>& node_dofs_ = table_.nodeDofs();  // x DOF of every node of the selected rods
  std::vector<double> node_radius_;   // m, same order
  std::vector<const Obstacle*> obstacles_;
  std::vector<std::string> rod_names_bound_;  // names of the selected rods, by RodEdge::rod
  geometry::SweptCrossingCheck swept_;  // the continuous check of accepted steps
  double h_max_ = 0, self_exclusion_ = 0;

  // candidates (rebuilt each step, SI B.2)
  std::vector<Pair> cand_;
  std::vector<ObstacleCandidate> obstacle_cand_;
  std::vector<int> cand_nodes_;       // x DOFs of the nodes of candidate pairs (unique)
  std::vector<char> node_mark_;       // per global DOF, scratch for cand_nodes_
  geometry::NodeSnapshot x_cand_;     // node positions the candidates were built at
  double moved_ = 0;                  // m, the largest node move from there at the last addForce
  double margin_ = 0;                 // m, candidate margin of this step
  double pattern_band_ = 0;  // candidates with a gap below delta + this are in the Jacobian's pattern

  // stiffness (SI B.3)
  double k_ = 0;
  bool need_k_ = true;

  // last evaluation
  ContactStats stats_;
  Timing timing_;
  PairEvaluation pe_;
  FrictionResult fr_;
  Mat12 block_;
};

}  // namespace rodsim::imc
