#include "imc_energy.h"

#include <cmath>

namespace rodsim::imc {

EnergyValue imcEnergy(double D, double c, double dbar) {
  EnergyValue v;
  if (D >= c + dbar) return v;
  v.active = true;
  const double x = c - D;
  if (D <= c - dbar) {  // Eq. B.1, first branch
    v.quadratic = true;
    v.E = x * x;
    v.dE = -2 * x;
    v.d2E = 2;
    return v;
  }
  // Eq. B.1, second branch: sp = log(1 + exp(K1 x)) / K1, |K1 x| < 15 here.
  const double K1 = 15.0 / dbar;
  const double y = K1 * x;
  const double sp = std::log1p(std::exp(y)) / K1;
  const double sig = 1.0 / (1.0 + std::exp(-y));  // d sp / dx
  v.E = sp * sp;
  v.dE = -2 * sp * sig;                                       // dE/dD = -dE/dx
  v.d2E = 2 * (sig * sig + sp * K1 * sig * (1 - sig));       // d2E/dD2 = d2E/dx2
  return v;
}

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
  out.energy = k * out.e.E;
  out.force = -(k * inv * out.e.dE) * out.dist.grad;
  if (order >= 2)
    out.dforce = -(k * inv * inv) * (out.e.d2E * out.dist.grad * out.dist.grad.transpose() + out.e.dE * out.dist.hess);
}

}  // namespace rodsim::imc
