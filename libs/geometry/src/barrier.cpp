#include <rodsim/geometry/barrier.h>

#include <cmath>

namespace rodsim::geometry {

Scalar2 barrier(double d, double d_hat) {
  Scalar2 b;
  if (d >= d_hat) return b;
  const double e = d - d_hat;  // < 0
  const double l = std::log(d / d_hat);
  b.v = -e * e * l;
  b.d1 = -2 * e * l - e * e / d;
  b.d2 = -2 * l - 4 * e / d + e * e / (d * d);
  return b;
}

Scalar2 mollifier(double x, double eps) {
  Scalar2 m;
  if (x >= eps) {
    m.v = 1;
    return m;
  }
  const double r = x / eps;
  m.v = (2 - r) * r;
  m.d1 = (2 - 2 * r) / eps;
  m.d2 = -2 / (eps * eps);
  return m;
}

}  // namespace rodsim::geometry
