// The `alart-curnier` Contact (kind Impulse): rod-obstacle and rod-rod contact with exact Coulomb
// friction, solved inside each Newton iteration of the implicit solver (see README.md for the
// mapping from the solver's linearized system to the local problem u = W r + q).
#pragma once

#include "ac_band_inverse.h"
#include "ac_solver.h"
#include "ac_union_find.h"

#include <rodsim/geometry/swept_check.h>
#include <rodsim/sdk.h>

#include <Eigen/LU>
#include <Eigen/UmfPackSupport>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace rodsim::ac {

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
  double radii = 0;                      // rod-rod: r_A + r_B
  double true_gap = 0;                   // closest distance minus radii at the iterate (= gap for obstacles)
  bool frozen = false;                   // frame and (s, t) kept from an earlier iterate of the step
};

// Self contact: edges ea < eb of one rod that are adjacent, or closer along the rod (the rest
// Voronoi lengths of the nodes between them) than twice the sum of their radii, are never a
// contact pair (ac_overlaps.cpp; used by the candidate search and the initial-overlap check).
bool excludedSelfPair(const Rod& rod, int ea, int eb);

class AlartCurnierContact final : public Contact,
                                  public LinearizedImpulseContact,
                                  public VelocityImpulseContact,
                                  public SweptContactCheck,
                                  public ContactPairReport {
  RODSIM_INTERFACES(AlartCurnierContact, LinearizedImpulseContact, VelocityImpulseContact, SweptContactCheck,
                    ContactPairReport)

 public:
  static Schema schema();
  explicit AlartCurnierContact(const Params& p);

  bool usesObstacles() const override { return true; }
  void bind(World& world) override;
  // Checkpoint: the warm-start impulses by contact identity (a restart continues bit for bit).
  void saveState(std::vector<double>& out) const override {
    for (const auto& [key, r] : warm_) {  // in key order
      out.insert(out.end(), key.begin(), key.end());
      out.insert(out.end(), r.data(), r.data() + 3);
    }
  }
  void loadState(const std::vector<double>& in) override {
    warm_.clear();
    for (std::size_t k = 0; k + 8 <= in.size(); k += 8) {
      ContactKey key;
      for (int j = 0; j < 5; ++j) key[j] = static_cast<int>(in[k + j]);
      warm_.push_back({key, Vec3(in[k + 5], in[k + 6], in[k + 7])});
    }
    sortWarmStarts();
  }
  void beginStep(const EvalContext& ctx) override;
  // Two edges (self-contact neighbours excluded; none without rod_rod) or a node and an obstacle
  // that passed through each other between q_start and q_end (rodsim/geometry/swept_check.h).
  bool findCrossing(const Vec& q_start, const Vec& q_end, Crossing& out) override {
    return swept_.find(
        q_start, q_end,
        [this](const geometry::SweptCrossingCheck::Edge& a, const geometry::SweptCrossingCheck::Edge& b) {
          return !rod_rod_ || (a.rod == b.rod && excludedSelfPair(*rods_[a.rod], a.index, b.index));
        },
        out);
  }
  bool solveLinearized(const LinearizedSystem& sys, Vec& dq) override;
  // Explicit solvers: the velocity-level (Moreau-Jean) step with the lumped mass, W = H M^-1 H^T
  // (ac_velocity_step.cpp; README.md, "Explicit solvers: the velocity-level step").
  bool solveVelocity(const VelocityContactProblem& problem, Vec& dv) override;
  std::string failureReason() const override { return failure_; }
  ContactStats stats() const override { return stats_; }
  // Overlapping edge pairs and nodes inside obstacles in q (ac_overlaps.cpp).
  void findOverlaps(const Vec& q, std::vector<Overlap>& out) const override;
  // Per step (timeseries.csv "<name>.<column>", mean in summary.json): see README.md, "Report".
  std::vector<std::string> reportColumns() const override;
  void reportValues(std::vector<double>& out) const override;

  // The contacts of the last contact solve with a positive normal impulse, their impulses divided by
  // ctx.dt (the mean force over the step), for output (ac_pairs.cpp, SDK 1.8).
  void contactPairs(const EvalContext& ctx, std::vector<ContactRecord>& out) const override;

  // For tests and reporting: the last contact solve.
  const Result& lastResult() const { return last_; }
  const std::vector<ContactPoint>& contacts() const { return points_; }
  const Vec& impulses() const { return r_; }  // N s, (n, t1, t2) per contact
  int candidates() const { return static_cast<int>(obstacle_cands_.size() + edge_cands_.size()); }
  // nu = 3 n / m of the paper (contacts over free DOFs) in the last solve.
  double nu() const { return nu_; }

  // One independent group of the last solve (Bertails-Descoubes et al., Sec. 4.5, Fig. 5): contacts coupled through W,
  // i.e. sharing a connected component of the linearized system A (a rod, or rods joined by
  // constraints); solved as its own Alart-Curnier problem.
  struct Group {
    std::vector<int> contacts;  // indices into contacts()
    int dofs = 0;               // free DOFs of the components it touches
    double nu = 0;              // 3 n_g / dofs (n_g: every contact point of the group, open ones included)
    int active = 0;             // contacts with r_N > 0 after the solve (the paper's "active" contacts)
    bool unreduced = false;     // Newton systems with the rods' DOFs kept (the paper's Eq. 7), W not formed
    Result result;
  };
  const std::vector<Group>& groups() const { return groups_; }
  // Connected components of A's free DOFs (the mechanical subsystems) in the last solve.
  int numComponents() const { return static_cast<int>(comps_.size()); }

 private:
  void buildPoints(const Vec& q);
  // Connected components of the free DOFs in A's pattern (union-find over its off-diagonal
  // entries), each with its sub-matrix pattern; redone when A's pattern or the fixed mask changes.
  void buildComponents(const Eigen::SparseMatrix<double>& A, const std::vector<char>& fixed);
  // The parts of solveLinearized, in order (ac_contact.cpp, and the shared ones below).
  bool factorizeComponents(const Eigen::SparseMatrix<double>& A, const Vec& b, const std::vector<char>& fixed);
  bool checkFrozenOverlap();
  void keepMovableContacts();
  void localVelocities(const EvalContext& ctx);
  void chooseNewtonSystems();
  void applyImpulses(double dt, Vec& dq);

  // The parts both steps share, the implicit one (solveLinearized) and the velocity-level one
  // (solveVelocity): the independent groups, each group's Delassus operator W_g, the group solves.
  //
  // Groups (ac_groups.cpp; Bertails-Descoubes et al., Sec. 4.5): contacts that share a unit are coupled through W, and
  // the groups are the connected sets of the contact-unit graph. The units a contact touches are
  // touched_[i][0 .. ntouched_[i]), numbered below num_units: the connected components of A for the
  // implicit step, the nodes (their x DOF) for the velocity step, whose lumped mass couples nothing
  // else. Fills groups_, group_of_ and local_ (a contact's index in its group); one group for all
  // contacts with partition = false.
  void partitionIntoGroups(int num_units);
  // W_g's entries (ac_delassus.cpp), in the group's local contact indexing, one list per group:
  // W = H A^-1 H^T / dt^2 from X_c = A_c^-1 H_c^T per component (implicit step) and
  // W = H M^-1 H^T over the nodes the contacts share (velocity step).
  void assembleDelassus(double dt);
  void assembleLumpedDelassus(const Vec& mass, const std::vector<char>& fixed);
  void clearDelassus() {
    if (group_w_.size() < groups_.size()) group_w_.resize(groups_.size());
    for (std::size_t gi = 0; gi < groups_.size(); ++gi) group_w_[gi].clear();
  }
  // The nonzero entries of scale * B, B the 3x3 block of W between contacts i and j (one group),
  // appended to that group's list (rows, then columns; setProblem sums duplicates in list order).
  void addDelassusBlock(int i, int j, const Mat3& B, double scale) {
    auto& t = group_w_[group_of_[i]];
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c)
        if (B(r, c) != 0) t.emplace_back(3 * local_[i] + r, 3 * local_[j] + c, B(r, c) * scale);
  }
  // An unreduced group's problem (the paper's Eq. 7): its components' A side by side, G = H / dt on their
  // free DOFs and diag(W); W itself is never formed (ac_delassus.cpp).
  void setUnreducedProblem(const Group& g, Solver& solver, const Vec& q, const Vec& mu, double dt);
  // How the group solves differ between the two steps (ac_groups.cpp).
  struct GroupSolve {
    bool velocity = false;  // the velocity step's problem (else the implicit step's)
    double t = 0, dt = 0;
    Options options;        // the solver's options for this step's problems
  };
  // Each group's Alart-Curnier problem (the paper's Eq. 8), warm-started by contact identity: r_ and u_all_
  // for every contact, last_ for the whole solve; returns the largest group.
  int solveGroups(const GroupSolve& how);
  bool solveGroup(int gi, const GroupSolve& how);
  // step_ after a solve (both steps): with contacts, and without any.
  void recordSolve(int max_group, std::chrono::steady_clock::time_point t_start);
  void recordNoContacts(std::chrono::steady_clock::time_point t_start);
  void printDebug(const Vec& dq) const;
  Vec3 nodePos(const Vec& q, int dof) const { return q.segment<3>(dof); }
  // The entries of H (contact frame rows n, t1, t2 times the node weights) on the free DOFs of
  // contact p: f(component, local DOF in it, h) with h the three rows' coefficients of that DOF.
  template <class F> void forEachHEntry(const ContactPoint& p, F&& f) const {
    for (int j = 0; j < p.nodes; ++j)
      for (int c = 0; c < 3; ++c)
        if (const int gd = p.dof[j] + c, cp = comp_of_[gd]; cp >= 0)  // prescribed DOFs take no impulse
          f(cp, local_of_[gd], Vec3(p.weight[j] * p.frame.col(c)));
  }

  double mu_, restitution_, margin_;
  bool rod_rod_, partition_;
  int frame_updates_;
  double penetration_tolerance_;  // of the mean radius, checked on frozen rod-rod contacts
  std::string failure_;           // why the last solveLinearized failed ("" when it did not)
  bool fail(const std::string& why);  // records why, prints it to stderr, returns false
  bool failNotConverged(const char* what);  // fail() with the last solve's figures
  enum class NewtonSystem { Auto, Reduced, Unreduced } newton_system_;
  std::optional<std::vector<std::string>> rod_names_, obstacle_names_;
  Options options_;
  // RODSIM_AC_LOG: a file to append one line per group solve to (scripts/plot_ac_convergence.py);
  // read once, not at every solve.
  std::string log_path_ = [] {
    const char* p = std::getenv("RODSIM_AC_LOG");
    return std::string(p ? p : "");
  }();

  World* world_ = nullptr;
  std::vector<Rod*> rods_;
  std::vector<int> obstacles_;
  std::vector<const Obstacle*> obstacle_ptrs_;  // world_->obstacle(obstacles_[k])
  geometry::SweptCrossingCheck swept_;  // the continuous check of accepted steps
  // candidates rebuilt once per step at the committed state
  std::vector<std::array<int, 3>> obstacle_cands_;  // rod index, node, obstacle index
  std::vector<std::array<int, 4>> edge_cands_;      // rodA, edgeA, rodB, edgeB
  struct Box {  // beginStep's edge AABBs (kept between steps: no allocation once warm)
    Vec3 lo, hi;
    int rod, edge;
    int dof0, dof1;       // the edge's nodes' global x DOFs
    double radius, speed;  // the edge's radius, its nodes' larger speed
  };
  std::vector<Box> boxes_;

  std::vector<ContactPoint> points_;
  std::vector<char> drop_;  // buildPoints: near-duplicates to drop
  std::map<ContactKey, ContactKey> merged_;  // this step: dropped near-duplicate -> the one kept
  // Rod-rod contacts of this step, chosen at the first iterate with their frame and closest-point
  // parameters, which then stay fixed for the step (see buildPoints).
  std::vector<ContactPoint> frozen_ee_;
  bool frozen_valid_ = false;
  // Impulses of the last solve by contact identity, sorted by key (a flat vector rather than a
  // map: rewritten every step, where a map allocated a node per contact).
  std::vector<std::pair<ContactKey, Vec3>> warm_;
  const Vec3* warmStart(const ContactKey& key) const {
    const auto it = std::lower_bound(warm_.begin(), warm_.end(), key,
                                     [](const std::pair<ContactKey, Vec3>& w, const ContactKey& k) { return w.first < k; });
    return it != warm_.end() && it->first == key ? &it->second : nullptr;
  }
  // Sorted by key (a solve's contacts have distinct keys: one per candidate).
  void sortWarmStarts() {
    std::sort(warm_.begin(), warm_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  // warm_ from the contacts and impulses r_ of this solve.
  void storeWarmStarts() {
    warm_.clear();
    for (std::size_t i = 0; i < points_.size(); ++i) warm_.push_back({points_[i].key, r_.segment<3>(3 * i)});
    sortWarmStarts();
  }
  // A is block diagonal over the mechanical subsystems: each component is factorized on its own
  // and X = A^-1 H^T is computed per component for the contacts touching it only.
  struct Component {
    std::vector<int> dofs;             // global free DOFs, ascending
    Eigen::SparseMatrix<double> A;     // A restricted to dofs (local indexing)
    std::vector<int> src;              // value k of A_c = value src[k] of the system's A
    Eigen::UmfPackLU<Eigen::SparseMatrix<double>> lu;  // large components
    Eigen::MatrixXd dense;                              // small ones (<= kDenseComponent DOFs)
    Eigen::PartialPivLU<Eigen::MatrixXd> dlu;
    bool analyzed = false;
    bool isDense() const { return dofs.size() <= kDenseComponent; }
    std::vector<int> contacts;         // this solve: contacts touching the component
    Eigen::MatrixXd X;                 // this solve: A_c^-1 H_c^T (3 columns per contact)
    BandInverse band_inverse;          // this solve, unreduced groups: A_c^-1 inside A_c's band
    bool band_inverse_ok = false;
    Eigen::MatrixXd inverse;           // this solve, dense components, if needed beyond the band: A_c^-1
  };
  // A rod of up to ~60 nodes: a dense LU (n^3/3 flops) and dense multi-column solves beat a sparse
  // LU's per-call overhead (UMFPACK's symbolic bookkeeping and iterative refinement per column).
  static constexpr std::size_t kDenseComponent = 256;
  // Wider bands (not a rod's) take one sparse solve per contact and direction for diag(W).
  static constexpr int kMaxBandInverse = 64;
  std::vector<std::unique_ptr<Component>> comps_;
  std::vector<int> comp_of_, local_of_;  // per global DOF: component and local index (-1: fixed)
  std::vector<char> fixed_cache_;
  std::vector<int> a_outer_, a_inner_;  // pattern of the last analyzed A
  std::vector<Group> groups_;
  // The last solve: the units each contact touches (up to 4: components of A, or the velocity
  // step's nodes), its group and its index in the group; an unreduced group's components have no
  // X = A_c^-1 H_c^T.
  std::vector<std::array<int, 4>> touched_;
  std::vector<int> ntouched_, group_of_, local_;
  bool groupUnreduced(const Component& cp) const { return groups_[group_of_[cp.contacts.front()]].unreduced; }
  UnionFind union_find_;              // partitionIntoGroups (buildComponents: its own, per pattern)
  std::vector<int> group_of_root_;    // partitionIntoGroups: scratch
  std::vector<Group> spare_groups_;   // partitionIntoGroups: Group objects to reuse
  // solveVelocity: node incidences (x DOF, contact, node slot), sorted by DOF
  std::vector<std::array<int, 3>> node_contacts_;
  std::vector<char> open_;  // solveGroups: contacts of open groups (natural map exactly 0)
  // Per group index, kept between solves (no allocation once warm): W_g's entries, and the
  // group's q, mu and r.
  std::vector<std::vector<Eigen::Triplet<double>>> group_w_;
  struct GroupWork {
    Vec q, mu, r;
  };
  std::vector<GroupWork> group_work_;
  std::vector<std::unique_ptr<Solver>> group_solvers_;
  Eigen::MatrixXd rhs_block_;
  Vec rhs_, sol_, dq_free_, r_, qloc_, mu_vec_, u_all_, u_group_;
  Result last_;
  ContactStats stats_;
  double nu_ = 0;
  // Per-step report, reset by beginStep: contact solves (= implicit Newton iterations) and the
  // sum of their AC iterations and wall time; the other fields are those of the last solve.
  struct StepReport {
    int solves = 0, iterations = 0, prox_iterations = 0, contacts = 0, groups = 0, max_group = 0;
    int factorizations = 0, gmres_iterations = 0;  // unreduced Newton systems (LUs of K, solves with them)
    double ac_norm = 0, nu = 0, rel = 0, abs = 0, solve_ms = 0;
    bool failed = false;
  } step_;
};

}  // namespace rodsim::ac
