// The IMC energy of Eq. B.1 (moved from contact_imc's tests; E, dE, d2E are v, d1, d2).
#include <rodsim/geometry/penalty.h>

#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>

using namespace rodsim::geometry;

TEST_CASE("energy of Eq. B.1: value, first and second derivative on both branches and at the switches") {
  const double c = 2.0, db = 0.01;
  auto E = [&](double D) { return imcEnergy(D, c, db).v; };
  auto dE = [&](double D) { return imcEnergy(D, c, db).d1; };
  const double h = 1e-4 * db;
  for (double D : {1.0, c - db - 10 * h, c - db + 10 * h, c - 0.3 * db, c, c + 0.5 * db, c + db - 10 * h}) {
    CAPTURE(D);
    const PenaltyValue v = imcEnergy(D, c, db);
    CHECK(v.active);
    CHECK(v.quadratic == (D <= c - db));
    const double g = (E(D + h) - E(D - h)) / (2 * h), H = (dE(D + h) - dE(D - h)) / (2 * h);
    // relative 1e-6, or 1e-10 of the scale of E' (~ dbar) / E'' (~ 1) where they vanish
    CHECK(std::abs(v.d1 - g) <= 1e-6 * std::abs(v.d1) + 1e-12 * db);
    CHECK(std::abs(v.d2 - H) <= 1e-6 * std::abs(v.d2) + 1e-10);
  }
  CHECK_FALSE(imcEnergy(c + db, c, db).active);
  CHECK(imcEnergy(c + db + 1e-9, c, db).v == 0.0);
  // the branches meet: (c - D)^2 and softplus^2 differ by ~2 exp(-15) relative at D = c - delta
  const double lo = (c - db) * (1 - 1e-12), hi = (c - db) * (1 + 1e-12);
  CHECK(E(lo) == doctest::Approx(E(hi)).epsilon(1e-6));
  // and it vanishes to ~1e-13 (relative to delta^2) at the outer edge of the band
  CHECK(E(c + db - 1e-12) < 1e-12 * db * db);
}

