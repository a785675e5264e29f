// The "ipc" contact model: Incremental Potential Contact for rods (clamped log barrier on the gap
// between edges and against planes, CCD-bounded Newton steps, adaptive barrier stiffness, lagged
// smoothed friction). See README.md.
#pragma once

#include "ipc_distance.h"
#include "ipc_friction.h"

#include <rodsim/capabilities.h>
#include <rodsim/geometry/broad_phase.h>
#include <rodsim/geometry/ccd.h>
#include <rodsim/geometry/verlet_pairs.h>
#include <rodsim/contact.h>
#include <rodsim/rod.h>

#include <optional>
#include <string>
#include <vector>

namespace rodsim::ipc {

// Rods placed exactly touching overlap by round-off: the kernel lets overlaps down to this fraction
// of the pair's radii through (kernel/world.cpp, kOverlapRoundOff); deeper ones are real overlaps,
// refused at bind (ipc_overlaps.cpp), and shallower ones start with the barrier's zero below contact.
constexpr double kTouchRoundOff = 1e-9;

using geometry::Aabb;
using geometry::CcdOptions;
using geometry::CcdResult;
using geometry::edgeEdgeCcd;
using geometry::nodePlaneCcd;
using geometry::nodeRoundCcd;

class IpcContact final : public Contact, public ForceContact, public StepBoundContact, public ContactPairReport {
  RODSIM_INTERFACES(IpcContact, ForceContact, StepBoundContact, ContactPairReport)

 public:
  static Schema schema();
  explicit IpcContact(const Params& p);

  void bind(World& world) override;
  void beginStep(const EvalContext& ctx) override;
  void addForce(const EvalContext& ctx, const Vec& non_contact, Vec& f) override;
  // The candidates in their barrier band (or rubbing) at ctx.q with addForce's forces (ipc_pairs.cpp), for
  // output; changes nothing.
  void contactPairs(const EvalContext& ctx, std::vector<ContactRecord>& out) const override;
  void addStiffness(const EvalContext& ctx, StiffnessSink& K) override;
  double energy(const EvalContext& ctx) const override;
  double maxStepFraction(const Vec& q, const Vec& dq) override;
  bool usesObstacles() const override { return true; }
  ContactStats stats() const override { return stats_; }
  // Every pair of edges (self-contact neighbours excluded as for contact) and every node inside an
  // obstacle that overlaps in q (ipc_overlaps.cpp).
  void findOverlaps(const Vec& q, std::vector<Overlap>& out) const override;
  std::vector<std::string> reportColumns() const override { return {"kappa", "min_gap", "ccd_fraction"}; }
  void reportValues(std::vector<double>& out) const override;
  // Checkpoint: barrier stiffness, whether it was initialized, the last step's minimum gap and
  // kappa_min (read by later steps), then the pairs that started inside d_hat (StartPair).
  void saveState(std::vector<double>& out) const override;
  void loadState(const std::vector<double>& in) override;

  // --- inspection (tests)
  double kappa() const { return kappa_; }
  double kappaMin() const { return kappa_min_; }
  double dHat() const { return d_hat_; }
  int numCandidates() const { return static_cast<int>(cand_.size()); }
  int numObstacleCandidates() const { return static_cast<int>(obstacle_cand_.size()); }
  // Smallest CCD fraction returned during the last step (1 when never limited).
  double lastStepFraction() const { return step_fraction_; }
  // Pairs that started inside d_hat and still have their own barrier (README, "Start-up").
  int numStartPairs() const { return static_cast<int>(start_edges_.size() + start_nodes_.size()); }
  // Off: every pair gets the plain barrier from the first step on, also one that starts inside
  // d_hat (IPC as published). For the tests of the barrier terms, which place pairs inside d_hat
  // at their first step; call before the first step.
  void useInitialGaps(bool on) { use_initial_gaps_ = on; }

 private:
  struct EdgeRef {
    int x0 = 0, x1 = 0;     // global x DOF of the two nodes
    int rod = 0;            // index into the selected rods
    double radius = 0;      // m
    double s0 = 0, s1 = 0;  // rest arc length of the two nodes (m)
  };
  // A pair that was inside the barrier band when the run started (README, "Start-up: pairs inside
  // d_hat"): its barrier acts on gap + offset and switches on below its own d_hat (<= d_hat_), so
  // that it pushes with no force where the pair started. Edges a < b, or node index a (into
  // node_dofs_) and obstacle index b (into obstacles_).
  struct StartPair {
    int a = 0, b = 0;
    double offset = 0;  // m; > 0 only for a pair that started closer than kStartGapFloor d_hat (touching)
    double d_hat = 0;   // m; the pair's activation gap (on gap + offset)
  };
  struct Candidate {
    int a = 0, b = 0;       // edge indexes, a < b
    double offset = 0, d_hat = 0;  // the barrier's gap offset and activation gap (StartPair; else 0, d_hat_)
    double eps_x = 0;       // mollifier threshold on |e_a x e_b|^2 (m^4), from rest lengths
    FrictionLag lag;        // closest points, normal, unit-kappa normal force at the step start
    bool in_pattern = false;  // its stiffness block is always emitted (see buildCandidates)
  };
  struct ObstacleCandidate {
    int x = 0;              // global x DOF of the node
    double radius = 0;      // the node's radius
    double reach = 0;       // radius - offset: the barrier acts on distance - reach
    double offset = 0, d_hat = 0;  // as Candidate's
    const Obstacle* obstacle = nullptr;
    double lambda_unit = 0; // unit-kappa normal force at the step start
    Vec3 n_lag = Vec3::UnitZ();       // normal at the step start (the friction's tangent plane)
    Vec3 surface_step = Vec3::Zero(); // dt times the velocity of the surface point under the node
  };

  bool excludedSelfPair(const EdgeRef& A, const EdgeRef& B) const;
  // The same by edge index, for the Verlet lists.
  auto excludedByIndex() const {
    return [this](int a, int b) { return excludedSelfPair(edges_[a], edges_[b]); };
  }
  // bind(): the barrier is undefined on overlapping rods, so `allow_initial_overlap = true` cannot
  // be honoured; refused (ParamError) when the initial configuration overlaps (ipc_overlaps.cpp).
  void refuseInitialOverlap(const Vec& q) const;
  // The pairs inside d_hat at the first step (captureStartPairs), relaxed toward the plain barrier at
  // every later step start as they open (relaxStartPairs), and looked up by (a, b).
  void captureStartPairs(const Vec& q);
  void relaxStartPairs(const Vec& q);
  bool startPair(double gap, double reach, StartPair& out) const;
  static const StartPair* findStart(const std::vector<StartPair>& pairs, int a, int b);
  void buildCandidates(const Vec& q, const Vec& q_lag);
  void maybeRefresh(const Vec& q, const Vec& q_lag);
  void updateKappa(const EvalContext& ctx, const Vec& f);
  Vec3 node(const Vec& q, int x) const { return q.segment<3>(x); }
  void pairNodes(const Vec& q, const Candidate& c, Vec3& p0, Vec3& p1, Vec3& q0, Vec3& q1) const;
  void pairDisplacement(const EvalContext& ctx, const Candidate& c, Vec12& dx) const;
  // The node's displacement over the step relative to the surface under it (friction).
  Vec3 obstacleSlide(const EvalContext& ctx, const ObstacleCandidate& c) const {
    return node(*ctx.q, c.x) - ctx.q_start->segment<3>(c.x) - c.surface_step;
  }
  // The distance at which the pair's barrier gap is zero: the radii, less a start-up offset.
  double pairReach(const Candidate& c) const { return edges_[c.a].radius + edges_[c.b].radius - c.offset; }
  // A gap on the scale of d_hat_ for the stiffness growth rule: a start pair's gap scaled by
  // d_hat_ / its own d_hat (exactly the gap for every other pair).
  double scaledGap(double gap, double pair_d_hat) const { return pair_d_hat == d_hat_ ? gap : gap * (d_hat_ / pair_d_hat); }

  // parameters
  std::optional<double> d_hat_param_, kappa_fixed_, kappa_min_param_, margin_param_;
  double kappa_min_scale_, kappa_growth_gap_, mu_, eps_v_, parallel_eps_;
  CcdOptions ccd_;
  double ccd_safety_;
  std::optional<std::vector<std::string>> rod_names_, obstacle_names_;
  bool allow_initial_overlap_ = false;

  World* world_ = nullptr;
  std::vector<Rod*> rods_bound_;  // the selected rods, by EdgeRef::rod (contactPairs names them)
  std::vector<EdgeRef> edges_;
  std::vector<double> edge_rest_length_;
  std::vector<int> node_dofs_;       // x DOF of every node of the selected rods
  std::vector<double> node_radius_;  // m, same order
  std::vector<const Obstacle*> obstacles_;
  double d_hat_ = 0, h_max_ = 0, self_exclusion_ = 0, mean_node_mass_ = 0;

  // candidates (rebuilt each step and when a node moved farther than margin/2)
  double verlet_skin_ = 0;           // m, the skin of both Verlet lists: the smallest radius
  geometry::VerletPairs near_;      // the broad phase of the candidates
  std::vector<Aabb> boxes_;          // the swept boxes of maxStepFraction
  geometry::VerletPairs ccd_near_;   // its broad phase
  Vec q_end_;                        // q + dq there
  std::vector<Candidate> cand_;
  std::vector<ObstacleCandidate> obstacle_cand_;
  Vec q_cand_;
  double margin_ = 0;
  double dt_ = 0;            // the step's dt (surface motion of spinning obstacles)
  double pattern_band_ = 0;  // candidates with a gap below d_hat + this are in the Jacobian's pattern

  // barrier stiffness (N/m): adaptive as in IPC
  double kappa_ = 0, kappa_min_ = 0, prev_min_gap_ = -1;
  bool kappa_initialized_ = false, need_kappa_ = true;
  double step_start_gap_ = 0;        // min gap (scaledGap) over the candidates at the step start
  Vec barrier_grad_;                 // scratch, global: unit-kappa barrier gradient for the balance

  // pairs inside d_hat at the start of the run, sorted by (a, b)
  std::vector<StartPair> start_edges_, start_nodes_;
  bool start_captured_ = false, use_initial_gaps_ = true;
  bool start_offsets_ = false;  // some start pair has offset > 0 (maxStepFraction looks its reach up)

  // last evaluation / step
  ContactStats stats_;
  double step_fraction_ = 1;
  PairBarrier pb_;
  NodeFriction<4> pf_;
  NodeFriction<1> nf_;
  Mat12 block_;
};

}  // namespace rodsim::ipc
