// IPC's clamped log barrier and edge-edge mollifier (moved from contact_ipc's tests).
#include <rodsim/geometry/barrier.h>

#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>

using namespace rodsim::geometry;

namespace {

constexpr double d_hat = 0.1;

}  // namespace

TEST_CASE("barrier b(d) = -(d - d_hat)^2 ln(d/d_hat): derivatives by finite differences, C2 at d_hat") {
  for (double d : {1e-3, 0.01, 0.05, 0.09, 0.0999}) {
    CAPTURE(d);
    const Scalar2 b = barrier(d, d_hat);
    const double h = 1e-7 * d;
    const double d1 = (barrier(d + h, d_hat).v - barrier(d - h, d_hat).v) / (2 * h);
    const double d2 = (barrier(d + h, d_hat).d1 - barrier(d - h, d_hat).d1) / (2 * h);
    CHECK(b.v > 0);
    CHECK(b.d1 < 0);  // repulsive
    CHECK(b.d1 == doctest::Approx(d1).epsilon(1e-6));
    CHECK(b.d2 == doctest::Approx(d2).epsilon(1e-6));
  }
  // C2 at d_hat: b ~ e^3/d_hat, b' ~ 3 e^2/(2 d_hat)... all three vanish as e = d_hat - d -> 0
  const double e = 1e-6 * d_hat;
  const Scalar2 b = barrier(d_hat - e, d_hat);
  CHECK(std::abs(b.v) < 1e-15);
  CHECK(std::abs(b.d1) < 1e-10);
  CHECK(std::abs(b.d2) < 1e-4);
  const Scalar2 z = barrier(d_hat, d_hat);
  CHECK(z.v == 0);
  CHECK(z.d1 == 0);
  CHECK(z.d2 == 0);
}

TEST_CASE("mollifier m(x): 0 at parallel, C1 at eps, derivatives") {
  const double eps = 0.3;
  CHECK(mollifier(0, eps).v == 0);
  CHECK(mollifier(eps, eps).v == 1);
  CHECK(mollifier(eps * (1 - 1e-9), eps).d1 == doctest::Approx(0).epsilon(1e-6));
  for (double x : {0.01, 0.1, 0.25}) {
    const double h = 1e-7;
    CHECK(mollifier(x, eps).d1 == doctest::Approx((mollifier(x + h, eps).v - mollifier(x - h, eps).v) / (2 * h)));
    CHECK(mollifier(x, eps).d2 == doctest::Approx((mollifier(x + h, eps).d1 - mollifier(x - h, eps).d1) / (2 * h)));
  }
}

