// The per-pair part of Eq. 37 over a list of pairs at once (structure of arrays), the fast
// form of SpringDashpotContact::addForceReference (spring_dashpot_reference.cpp). See pair_kernel.cpp.
#pragma once

namespace rodsim::spring_dashpot {

// Node positions X, Y, Z and (when damped) displacements since the start of the evaluation's step
// UX, UY, UZ = q - q_start, one entry per node of the selected rods.
struct NodeArrays {
  const double *X, *Y, *Z;
  const double *UX, *UY, *UZ;
};

// The candidate pairs: node indexes of the two nodes of each element (a0, a1 for the first, b0, b1
// for the second) and r_a + r_b, n entries each, in list order.
struct PairArrays {
  const int *a0, *a1, *b0, *b1;
  const double* rsum;
  int n = 0;
};

// Per pair: the distance D of the closest points, their parameters s, t (lumelsky's), the unit
// normal n = (Q - P)/D (not finite where D = 0: the caller handles those pairs) and the normal force
// f_n = k eps - gamma dD/dt of Eq. 37 with eps = r_a + r_b - D (meaningful where eps > 0).
struct PairResults {
  double *D, *s, *t, *nx, *ny, *nz, *fn;
};

// damp: the dashpot term (gamma, dt > 0; UX.. read only then). parallel_tol as geometry::lumelsky.
void pairKernel(const NodeArrays& nodes, const PairArrays& pairs, bool damp, double k, double gamma, double dt,
                double parallel_tol, const PairResults& out);

}  // namespace rodsim::spring_dashpot
