// The planar elastica of a cantilever under a dead tip load, solved by shooting (reference for
// the large-deflection validation). Nondimensional: s in [0, 1], p = F L^2 / (E I).
#pragma once

#include <array>
#include <cmath>
#include <utility>

namespace rodsim::test {

// theta'' = p cos(theta), theta(0) = 0 (clamped along +x, load along -z), theta'(1) = 0 (free
// end); x' = cos(theta), z' = sin(theta). Returns the tip (x, z) / L. RK4 with `steps` steps;
// bisection on theta'(0), which lies in [-p, 0] (|M(0)| <= F L) and raises theta'(1) monotonically.
inline std::pair<double, double> elasticaTip(double p, int steps = 4000) {
  using State = std::array<double, 4>;  // theta, theta', x, z
  auto rate = [p](const State& y) { return State{y[1], p * std::cos(y[0]), std::cos(y[0]), std::sin(y[0])}; };
  auto shoot = [&](double kappa0) {
    State y{0, kappa0, 0, 0};
    const double h = 1.0 / steps;
    for (int i = 0; i < steps; ++i) {
      State k1 = rate(y), y2, y3, y4;
      for (int j = 0; j < 4; ++j) y2[j] = y[j] + 0.5 * h * k1[j];
      State k2 = rate(y2);
      for (int j = 0; j < 4; ++j) y3[j] = y[j] + 0.5 * h * k2[j];
      State k3 = rate(y3);
      for (int j = 0; j < 4; ++j) y4[j] = y[j] + h * k3[j];
      State k4 = rate(y4);
      for (int j = 0; j < 4; ++j) y[j] += h / 6 * (k1[j] + 2 * k2[j] + 2 * k3[j] + k4[j]);
    }
    return y;
  };
  double lo = -p, hi = 0;
  for (int it = 0; it < 80; ++it) {
    const double mid = 0.5 * (lo + hi);
    (shoot(mid)[1] > 0 ? hi : lo) = mid;
  }
  const State tip = shoot(0.5 * (lo + hi));
  return {tip[2], tip[3]};
}

}  // namespace rodsim::test
