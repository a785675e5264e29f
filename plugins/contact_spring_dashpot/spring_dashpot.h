// The "spring-dashpot" contact model: Gazzola et al.'s self-contact and rod-rod contact
// (Sec. IV.4, Eqs. 36-37): between the closest points of two elements, a linear spring on the overlap
// plus a dashpot on the normal velocity, for explicit solvers (and implicit ones: its Jacobian is
// exact); the same law between nodes and [[obstacle]]s, and regularized Coulomb friction on both
// (friction.h). See README.md.
#pragma once

#include "friction.h"

#include <rodsim/capabilities.h>
#include <rodsim/contact.h>
#include <rodsim/geometry/rod_edges.h>
#include <rodsim/geometry/segment_normal.h>
#include <rodsim/geometry/swept_check.h>
#include <rodsim/rod.h>

#include <optional>
#include <string>
#include <vector>

namespace rodsim::spring_dashpot {

class SpringDashpotContact final : public Contact,
                                   public ForceContact,
                                   public SweptContactCheck,
                                   public ContactPairReport {
  RODSIM_INTERFACES(SpringDashpotContact, ForceContact, SweptContactCheck, ContactPairReport)

 public:
  static Schema schema();
  explicit SpringDashpotContact(const Params& p);

  void bind(World& world) override;
  void beginStep(const EvalContext& ctx) override;
  // Eq. 37 on every pair of elements in contact, at the velocities ctx.velocity(i): the near list's
  // pairs at once (pair_kernel.cpp), then the forces of those in contact added in list order; then
  // their friction (friction > 0) and the node-obstacle contacts (friction.h).
  void addForce(const EvalContext& ctx, const Vec& non_contact, Vec& f) override;
  // The same, pair by pair in the plain form (spring_dashpot_reference.cpp; the tests check that
  // addForce gives bitwise this).
  void addForceReference(const EvalContext& ctx, const Vec& non_contact, Vec& f);
  // The pairs and node-obstacle contacts in contact at ctx.q with addForceReference's forces
  // (spring_dashpot_pairs.cpp), for output; changes nothing.
  void contactPairs(const EvalContext& ctx, std::vector<ContactRecord>& out) const override;
  // K = -dF/dq of Eq. 37 with v = (q - q_start)/dt: (k + gamma/dt) g g^T + gamma g (H v)^T - f_n H
  // (g, H: gradient and Hessian of the distance), one 12 x 12 block per pair in contact; then one
  // more per pair for its friction, and a 3 x 3 block per node on an obstacle (friction.h).
  void addStiffness(const EvalContext& ctx, StiffnessSink& K) override;
  // The same pair by pair over all candidates (spring_dashpot_reference.cpp; addStiffness emits
  // bitwise these entries in this order).
  void addStiffnessReference(const EvalContext& ctx, StiffnessSink& K);
  // The spring's energy sum k eps^2 / 2, pairs and node-obstacle contacts (dashpot and friction have none).
  double energy(const EvalContext& ctx) const override;
  bool usesObstacles() const override { return true; }
  ContactStats stats() const override { return stats_; }
  void findOverlaps(const Vec& q, std::vector<Overlap>& out) const override;
  // The kernel's continuous check of accepted steps (rodsim/geometry/swept_check.h), with this
  // model's neighbour exclusion; `swept_check = false` turns it off.
  bool findCrossing(const Vec& q_start, const Vec& q_end, Crossing& out) override;

  // --- inspection (tests, benchmark)
  int numCandidates() const { return static_cast<int>(cand_.size()); }
  int numEdges() const { return static_cast<int>(edges_.size()); }
  long long builds() const { return builds_; }
  // Pairs in the near list (the candidates within near reach, README.md "Broad phase") and its builds.
  int numNear() const { return static_cast<int>(near_.size()); }
  long long nearBuilds() const { return near_builds_; }
  double margin() const { return margin_; }
  // Swept checks done in full (sweep and prune, CCD) and skipped by the clearance bound.
  long long sweptFull() const { return swept_full_; }
  long long sweptSkipped() const { return swept_fast_; }
  // Pairs (a, b), a < b, of edge indexes (rod after rod) that interact in q, by the broad phase
  // (pairs closer than r_a + r_b, neighbours excluded), sorted; and the same by testing all pairs.
  std::vector<std::pair<int, int>> contactPairs(const Vec& q) const;
  std::vector<std::pair<int, int>> contactPairsAllPairs(const Vec& q) const;
  // True when edges a and b (indexes as above) are neighbours on one rod that never interact.
  bool excluded(int a, int b) const { return excludedPair(edges_[a], edges_[b]); }

 private:
  using EdgeRef = geometry::RodEdge;
  // Neighbour exclusion by arc length: edges of one rod whose rest arc-length gap is at most
  // exclusion x (r_a + r_b) never interact (README.md, "Neighbours"); adjacent edges (gap 0, they
  // share a node) whatever the exclusion.
  bool excludedPair(const EdgeRef& A, const EdgeRef& B) const {
    return A.rod == B.rod && geometry::arcGap(A, B) <= exclusion_ * (A.radius + B.radius);
  }
  Vec3 node(const Vec& q, int x) const { return q.segment<3>(x); }
  void buildCandidates(const Vec& q);
  // x_eval_ = the nodes of q (the swept check's fast path).
  void keepEvaluationNodes(const Vec& q);
  void maybeRefresh(const Vec& q);
  void pairNormal(const Vec& q, const EdgeRef& A, const EdgeRef& B, geometry::SegmentNormal& sn) const {
    geometry::segmentNormal(node(q, A.x0), node(q, A.x1), node(q, B.x0), node(q, B.x1), sn);
  }
  // Normal velocity dD/dt of a pair: sum_k w_k n . v_k (0 in quasi-static solves).
  double normalVelocity(const EvalContext& ctx, const EdgeRef& A, const EdgeRef& B,
                        const geometry::SegmentNormal& sn) const;
  // Whether the dashpot acts in this evaluation (a damping, a step with a start and a dt).
  bool dashpotOn(const EvalContext& ctx) const { return gamma_ > 0 && !ctx.quasi_static && ctx.q_start && ctx.dt > 0; }
  // Whether friction acts (a coefficient, implicit velocities: not in quasi-static solves).
  bool frictionOn(const EvalContext& ctx) const { return mu_ > 0 && !ctx.quasi_static && ctx.q_start && ctx.dt > 0; }
  // The friction of the rod-rod pair (A, B) if in contact at q (friction.h, pairFriction): its force
  // added to f, or its K = -dF/dq block to K. Both forms of addForce and addStiffness call these in
  // the same pair order, so fast and reference stay bitwise equal.
  void addPairFriction(const EvalContext& ctx, const EdgeRef& A, const EdgeRef& B, Vec* f,
                       StiffnessSink* K) const;
  // Node-obstacle contact and friction on every node of the selected rods and every selected obstacle
  // (friction.h, nodeObstacle): forces into f and the stats (active, min_gap, the swept check's
  // clearance), or K = -dF/dq into K.
  void addObstacleForces(const EvalContext& ctx, Vec& f, double& clearance);
  void addObstacleStiffness(const EvalContext& ctx, StiffnessSink& K) const;
  ContactLaw law(const EvalContext& ctx) const {
    return {k_, dashpotOn(ctx) ? gamma_ : 0.0, frictionOn(ctx) ? mu_ : 0.0, 1.0 / slip_velocity_};
  }
  // What the stiffness block of a pair in contact (overlap eps > 0, closest points sn) is made of, in
  // both forms of addStiffness: the 12 DOFs of its four nodes, their velocities v (0 without the
  // dashpot), g = dD/dx, f_n = k eps - gamma g . v (Eq. 37), and which nodes D depends on at all.
  struct PairTerms {
    int dofs[12];
    geometry::Vec12 v, g;
    double fn = 0;
    bool on[4];
  };
  void pairTerms(const EvalContext& ctx, bool damp, const EdgeRef& A, const EdgeRef& B,
                 const geometry::SegmentNormal& sn, double eps, PairTerms& p) const;

  // parameters
  double k_, gamma_, exclusion_, mu_, slip_velocity_;
  std::optional<double> margin_param_;
  bool swept_on_;
  std::optional<std::vector<std::string>> rod_names_, obstacle_names_;

  std::vector<Rod*> rods_;
  std::vector<const Obstacle*> obstacles_;
  // Per node of the selected rods (node_dofs_ order): radius, rod (index into rods_) and index on it.
  std::vector<double> node_radius_;
  std::vector<int> node_rod_, node_index_;
  geometry::RodEdges table_;  // the edges and nodes of the selected rods, and the broad phase
  const std::vector<EdgeRef>& edges_ = table_.edges();
  const std::vector<int>& node_dofs_ = table_.nodeDofs();  // x DOF of every node of the selected rods
  double margin_ = 0;           // m, Verlet-list margin
  geometry::SweptCrossingCheck swept_;

  // candidates (a Verlet list): pairs closer than r_a + r_b + margin when built, rebuilt when a
  // node has moved more than margin/2 since (then no other pair can be in contact).
  std::vector<std::pair<int, int>> cand_;
  geometry::NodeSnapshot x_cand_;  // node positions the candidates were built at
  // The list as structure of arrays for pair_kernel.cpp: node indexes of the two elements, r_a + r_b.
  std::vector<int> cand_a0_, cand_a1_, cand_b0_, cand_b1_;
  std::vector<double> cand_rsum_;
  // The near list, a Verlet list within the candidates: the candidates closer than r_a + r_b +
  // near_margin_ when it was made (indexes into cand_, ascending), valid while no node has moved more
  // than near_margin_/2 since (x_near_, node_dofs_ order); made again from the candidates otherwise
  // (makeNear). Only its pairs can be in contact, so the force is evaluated on it alone.
  std::vector<int> near_;
  std::vector<int> near_a0_, near_a1_, near_b0_, near_b1_;
  std::vector<double> near_rsum_;
  geometry::NodeSnapshot x_near_;
  double near_margin_ = 0;
  long long near_builds_ = 0;
  bool near_results_ = false;  // pD_, ps_, pt_, pn_ hold the near list's pairs at x_eval_
  std::vector<int> active_;    // per evaluation: the near list's pairs in contact
  void ensureNear(const Vec& q);
  double candidateMinGap(const Vec& q);
  void gatherNodes(const Vec& q, const Vec* q_start);
  // pD_, ps_, pt_, pn_, pfn_ large enough for n pairs (they only grow).
  void growPairResults(std::size_t n);
  // pair_kernel on all candidates at q, without the dashpot: their D, s, t, n in pD_ and the rest.
  void candidateDistances(const Vec& q);
  // Per evaluation: node positions and displacements q - q_start (node_dofs_ order), and per pair
  // D, s, t, n, f_n (pair_kernel.h).
  std::vector<double> nx_[3], nu_[3];
  std::vector<double> pD_, ps_, pt_, pn_[3], pfn_;
  long long builds_ = 0;

  // The swept check's fast path (findCrossing): the node positions of the last addForce and the
  // smallest clearance to the crossing distance there, min over pairs of d - (r_a + r_b)/2 (a lower
  // bound for the pairs not in the list).
  geometry::NodeSnapshot x_eval_;
  double clearance_eval_ = 0;
  double r_min_ = 0;
  long long swept_full_ = 0, swept_fast_ = 0;

  ContactStats stats_;
};

}  // namespace rodsim::spring_dashpot
