#include <rodsim/geometry/point_point_distance.h>

namespace rodsim::geometry {

void pointPointSq(const Vec3& a, const Vec3& b, double& g, Vec6* dg, Mat6* d2g) {
  const Vec3 d = a - b;
  g = d.squaredNorm();
  if (dg) *dg << 2 * d, -2 * d;
  if (d2g) {
    const Mat3 I2 = 2 * Mat3::Identity();
    *d2g << I2, -I2, -I2, I2;
  }
}

}  // namespace rodsim::geometry
