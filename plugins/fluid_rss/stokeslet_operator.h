// The dense RSS operator of Tong et al. (2023), Eqs. A.6-A.8: 8πη U = A F, relating the velocities U of all
// nodes of all rods in a force's scope to the force densities F at those nodes (force per unit
// length that the rods exert on the fluid, linear along every segment). Every node is a
// collocation point of every segment, so rods interact through the fluid.
#pragma once

#include "far_field.h"
#include "near_field.h"
#include "gmres.h"
#include "two_thread_team.h"

#include <rodsim/linalg.h>

#include <Eigen/Dense>
#include <Eigen/LU>

#include <atomic>
#include <vector>

namespace rodsim::rss {

struct Segment {
  int start = 0, end = 0;  // node indexes (into the operator's node list)
};

// Storage: every 3x3 block of A is symmetric (the regularized Stokeslet is), so block (i, j) is
// kept as its six entries xx yy zz xy xz yz, in six arrays per block row: entry k of block (i, j)
// at [(6 i + k) nodes + j]. Two thirds of the memory a dense matrix takes, and the products that
// dominate GMRES stream it (memory bound at M = 10: 2040 x 2040, 22 MB instead of 33).
class StokesletOperator : public LinearOperator {
 public:
  // nodes: number of collocation nodes; blob: ε of every node (a segment uses its nodes' ε,
  // which belong to one rod); rod_first_node: the first node of each rod plus `nodes` at the end
  // (the GMRES preconditioner's blocks); threads: for the assembly (0 = all cores).
  void setTopology(int nodes, std::vector<Segment> segments, std::vector<double> blob,
                   const std::vector<int>& rod_first_node, int threads);

  // A for the node positions x (size nodes), on `threads` threads. Rows 3i..3i+2 are node i's
  // velocity.
  void assemble(const std::vector<Vec3>& x);
  // The same, shared by threads of the caller's own: prepareAssembly(x) once (x must outlive the
  // assembly), then any number of threads call assembleRows with distinct slots (0 or 1, or below
  // `threads`); each claims blocks of rows until none is left. waitAssembled() returns once every
  // row is written.
  void prepareAssembly(const std::vector<Vec3>& x);
  void assembleRows(int slot);
  void waitAssembled() const;
  int numNodes() const { return nodes_; }
  // y = A x (3 nodes entries each, node-major), on `threads` threads, or split with the team's
  // helper when a team is set (setTeam; nullptr: none).
  void apply(const double* x, double* y) const override;
  void setTeam(TwoThreadTeam* team) {
    team_ = team;
    gmres_.setTeam(team);
  }
  // Rows and columns first .. first + size - 1 of A, dense (size and first multiples of 3).
  void diagonalBlock(int first, int size, Eigen::MatrixXd& out) const override;

  // Solve A F = rhs: by dense LU with partial pivoting (the reference), or by GMRES from the
  // initial guess in F (warm start; the result says how far it got).
  void solveLu(const Vec& rhs, Vec& F);
  GmresResult solveGmres(const Vec& rhs, Vec& F, double tolerance, int max_iterations);
  // Refactor the GMRES preconditioner (each rod's self-interaction block) from the current A.
  void refreshPreconditioner() { gmres_.refreshPreconditioner(*this); }
  bool hasPreconditioner() const { return gmres_.hasPreconditioner(); }

 private:
  int nodes_ = 0, threads_ = 1;
  std::vector<Segment> segments_;
  std::vector<double> eps2_;                       // ε² per node
  // A, six symmetric entries per block (see above), stored in single precision: the GMRES products
  // stream A every iteration and are bound by memory bandwidth (22 MB in double at M = 10); every
  // solve, GMRES and LU alike, uses this rounded A, whose 6e-8 relative rounding is far below the
  // solver tolerance (1e-6) and next to the far field's own 3.5e-9 quadrature error.
  std::vector<float> sym_;
  mutable std::vector<double> x_split_;         // apply(): x as three arrays (x, y, z components)
  Eigen::MatrixXd dense_;                       // solveLu(): A expanded
  FarFieldPoints far_;                          // Gauss points of every segment, this step
  struct RowScratch {  // per thread
    std::vector<double> far;   // farFieldRow's output, then the near field written over it
    std::vector<char> near;    // segment in the near field of this row's node
    NearFieldBatch near_field;  // those segments, for the closed forms
  };
  std::vector<RowScratch> scratch_;  // per thread slot
  void assembleRow(int i, RowScratch& scratch);
  const std::vector<Vec3>* x_ = nullptr;     // positions being assembled
  std::atomic<int> next_row_{0}, rows_done_{0};  // rows claimed, rows written
  std::vector<int> rod_first_node_;  // first node of each rod, then the node count
  Eigen::PartialPivLU<Eigen::MatrixXd> lu_;
  Gmres gmres_;
  TwoThreadTeam* team_ = nullptr;
};

}  // namespace rodsim::rss
