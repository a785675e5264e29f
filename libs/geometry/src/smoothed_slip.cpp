#include <rodsim/geometry/smoothed_slip.h>

#include <cmath>

namespace rodsim::geometry {

void smoothedSlip(double tau, double a, double& g, double& dg_over_tau) {
  const double y = a * tau;
  if (y < 1e-4) {  // tanh(y) = y - y^3/3 + O(y^5)
    g = a - a * a * a * tau * tau / 3;
    dg_over_tau = -2 * a * a * a / 3;
    return;
  }
  const double th = std::tanh(y), sech2 = 1 - th * th;
  g = th / tau;
  dg_over_tau = (y * sech2 - th) / (tau * tau * tau);
}

}  // namespace rodsim::geometry
