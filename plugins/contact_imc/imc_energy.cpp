#include "imc_energy.h"

#include <cmath>

namespace rodsim::imc {

void evaluatePair(const Vec3& xi0, const Vec3& xi1, const Vec3& xj0, const Vec3& xj1, double h_s, double delta,
                  double k, int order, PairEvaluation& out) {
  const double inv = 1.0 / h_s;
  edgeDistance(xi0 * inv, xi1 * inv, xj0 * inv, xj1 * inv, 0, out.dist);
  out.gap = (out.dist.D - 2.0) * h_s;
  out.e = imcEnergy(out.dist.D, 2.0, delta * inv);
  out.force.setZero();
  if (order >= 2) out.dforce.setZero();
  out.energy = 0;
  if (!out.e.active) return;
  edgeDistance(xi0 * inv, xi1 * inv, xj0 * inv, xj1 * inv, order, out.dist);
  out.energy = k * out.e.v;
  out.force = -(k * inv * out.e.d1) * out.dist.grad;
  if (order >= 2)
    out.dforce = -(k * inv * inv) * (out.e.d2 * out.dist.grad * out.dist.grad.transpose() + out.e.d1 * out.dist.hess);
}

}  // namespace rodsim::imc
