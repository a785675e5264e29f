// Helpers of the rodsim::geometry tests: packing node coordinates, the central differences of
// tests/support and the tolerance of a central difference. A test file says
// `using namespace rodsim::geometry::test;`.
#pragma once

#include "finite_differences.h"

#include <rodsim/geometry/types.h>

#include <limits>

namespace rodsim::geometry::test {

using rodsim::test::fdGradient;
using rodsim::test::fdJacobian;
using rodsim::test::relErr;

inline Vec12 pack(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
  Vec12 x;
  x << a, b, c, d;
  return x;
}

// Relative error bound of a central difference (f(x + h) - f(x - h)) / 2h of a function whose
// coordinates and derivatives are O(1): truncation h^2 f'''/6 plus round-off eps |f| / h. `c`
// covers the O(1) constants (third derivatives of a distance between unit-size segments a unit
// apart, the norm over 12 or 144 entries): O(h^2 + eps/h), 100 times over.
inline double centralTolerance(double h, double c = 100.0) {
  return c * (h * h + std::numeric_limits<double>::epsilon() / h);
}

}  // namespace rodsim::geometry::test
