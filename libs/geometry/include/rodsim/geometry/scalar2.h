// A scalar function's value with its first and second derivatives with respect to its one
// argument: what the barrier, the mollifier and the IMC penalty return (barrier.h, penalty.h).
#pragma once

namespace rodsim::geometry {

struct Scalar2 {
  double v = 0, d1 = 0, d2 = 0;  // value, first and second derivative
};

}  // namespace rodsim::geometry
