// The dense RSS operator of seed 002, Eqs. A.6-A.8: 8πη U = A F, relating the velocities U of all
// nodes of all rods in a force's scope to the force densities F at those nodes (force per unit
// length that the rods exert on the fluid, linear along every segment). Every node is a
// collocation point of every segment, so rods interact through the fluid.
#pragma once

#include "far_field.h"
#include "gmres.h"

#include <rodsim/linalg.h>

#include <Eigen/Dense>
#include <Eigen/LU>

#include <vector>

namespace rodsim::rss {

struct Segment {
  int start = 0, end = 0;  // node indexes (into the operator's node list)
};

class StokesletOperator {
 public:
  // nodes: number of collocation nodes; blob: ε of every node (a segment uses its nodes' ε,
  // which belong to one rod); rod_first_node: the first node of each rod plus `nodes` at the end
  // (the GMRES preconditioner's blocks); threads: for the assembly (0 = all cores).
  void setTopology(int nodes, std::vector<Segment> segments, std::vector<double> blob,
                   const std::vector<int>& rod_first_node, int threads);

  // A for the node positions x (size nodes). Rows 3i..3i+2 are node i's velocity.
  void assemble(const std::vector<Vec3>& x);
  const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>& matrix() const { return A_; }
  int numNodes() const { return nodes_; }

  // Solve A F = rhs: by dense LU with partial pivoting (the reference), or by GMRES from the
  // initial guess in F (warm start; the result says how far it got).
  void solveLu(const Vec& rhs, Vec& F);
  GmresResult solveGmres(const Vec& rhs, Vec& F, double tolerance, int max_iterations);
  // Refactor the GMRES preconditioner (each rod's self-interaction block) from the current A.
  void refreshPreconditioner() { gmres_.refreshPreconditioner(A_); }

 private:
  int nodes_ = 0, threads_ = 1;
  std::vector<Segment> segments_;
  std::vector<double> eps2_;                       // ε² per node
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> A_;
  FarFieldPoints far_;                          // Gauss points of every segment, this step
  struct RowScratch {  // per thread
    std::vector<double> far;   // farFieldRow's output, then the near field written over it
    std::vector<char> near;    // segment in the near field of this row's node
    std::vector<double> node;  // the row's node blocks, 6 symmetric entries x nodes
  };
  std::vector<RowScratch> scratch_;
  std::vector<int> rod_first_node_;  // first node of each rod, then the node count
  Eigen::PartialPivLU<Eigen::MatrixXd> lu_;
  Gmres gmres_;
};

}  // namespace rodsim::rss
