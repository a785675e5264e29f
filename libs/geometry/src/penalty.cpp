#include <rodsim/geometry/penalty.h>

#include <cmath>

namespace rodsim::geometry {

PenaltyValue imcEnergy(double D, double c, double dbar) {
  PenaltyValue v;
  if (D >= c + dbar) return v;
  v.active = true;
  const double x = c - D;
  if (D <= c - dbar) {  // Eq. B.1, first branch
    v.quadratic = true;
    v.v = x * x;
    v.d1 = -2 * x;
    v.d2 = 2;
    return v;
  }
  // Eq. B.1, second branch: sp = log(1 + exp(K1 x)) / K1, |K1 x| < 15 here.
  const double K1 = 15.0 / dbar;
  const double y = K1 * x;
  const double sp = std::log1p(std::exp(y)) / K1;
  const double sig = 1.0 / (1.0 + std::exp(-y));  // d sp / dx
  v.v = sp * sp;
  v.d1 = -2 * sp * sig;                                // dE/dD = -dE/dx
  v.d2 = 2 * (sig * sig + sp * K1 * sig * (1 - sig));  // d2E/dD2 = d2E/dx2
  return v;
}

}  // namespace rodsim::geometry
