// The smoothed Coulomb direction's factor g(tau) = tanh(a tau) / tau and its derivative.
#include <rodsim/geometry/smoothed_slip.h>

#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>

using namespace rodsim::geometry;

TEST_CASE("smoothed slip: g = tanh(a tau) / tau and (dg/dtau) / tau against finite differences, series near 0") {
  const double a = 7.5e4;  // imc's default slip tolerance nu = 1e-4 m/s
  for (double tau : {1e-12, 1e-9, 1.3e-9, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1.0}) {
    CAPTURE(tau);
    double g = 0, dg = 0;
    smoothedSlip(tau, a, g, dg);
    CHECK(g == doctest::Approx(std::tanh(a * tau) / tau).epsilon(1e-12));
    const double h = 1e-5 * tau;
    double gp = 0, gm = 0, unused = 0;
    smoothedSlip(tau + h, a, gp, unused);
    smoothedSlip(tau - h, a, gm, unused);
    // (dg/dtau) / tau; at tiny tau the series' limit -2 a^3 / 3
    const double fd = (gp - gm) / (2 * h) / tau;
    if (a * tau > 1e-3) CHECK(dg == doctest::Approx(fd).epsilon(1e-5));
    if (a * tau < 1e-4) CHECK(dg == doctest::Approx(-2 * a * a * a / 3).epsilon(1e-7));
  }
  // |phi| = g tau < 1 and continuous across the series' switch at a tau = 1e-4
  double g1 = 0, g2 = 0, d1 = 0, d2 = 0;
  smoothedSlip(1e-4 / a * (1 - 1e-9), a, g1, d1);
  smoothedSlip(1e-4 / a * (1 + 1e-9), a, g2, d2);
  CHECK(g1 == doctest::Approx(g2).epsilon(1e-12));
  CHECK(d1 == doctest::Approx(d2).epsilon(1e-6));
}
