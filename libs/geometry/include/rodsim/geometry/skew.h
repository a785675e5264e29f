// The cross-product matrix: skew(v) w = v x w, [v]x in the papers' notation.
// Inline: it is built inside the DER stencil Hessians and the Cosserat rotation passes.
#pragma once

#include <rodsim/geometry/types.h>

namespace rodsim::geometry {

inline Mat3 skew(const Vec3& v) {
  Mat3 m;
  m << 0, -v.z(), v.y(), v.z(), 0, -v.x(), -v.y(), v.x(), 0;
  return m;
}

}  // namespace rodsim::geometry
