#include <rodsim/geometry/frames.h>
#include <rodsim/geometry/so3.h>

#include <cmath>
#include <numbers>

namespace rodsim::geometry {

double wrapAngle(double a) {
  constexpr double twoPi = 2.0 * std::numbers::pi;
  return a - twoPi * std::round(a / twoPi);
}

Vec3 anyPerpendicular(const Vec3& t) {
  int k = 0;
  if (std::abs(t.y()) < std::abs(t[k])) k = 1;
  if (std::abs(t.z()) < std::abs(t[k])) k = 2;
  Vec3 v = Vec3::Unit(k);
  v -= v.dot(t) * t;
  return v.normalized();
}

Vec3 perpendicularFromZ(const Vec3& t) {
  const Vec3 a = std::abs(t.z()) < 0.9 ? Vec3::UnitZ() : Vec3::UnitX();
  return (a - a.dot(t) * t).normalized();
}

Vec3 parallelTransport(const Vec3& v, const Vec3& a, const Vec3& b) {
  // Minimal rotation R taking a to b: R v = v - ((a+b)·v)/(1+a·b) (a+b) + 2 (a·v) b.
  const Vec3 s = a + b;
  return v - (s.dot(v) / (1.0 + a.dot(b))) * s + 2.0 * a.dot(v) * b;
}

Vec3 parallelTransportExp(const Vec3& u, const Vec3& a, const Vec3& b) {
  const Vec3 axis = a.cross(b);
  const double s = axis.norm(), c = a.dot(b);
  if (s < 1e-14) return u;
  return expSO3(axis * (std::atan2(s, c) / s)) * u;
}

double signedAngle(const Vec3& u, const Vec3& v, const Vec3& n) {
  return std::atan2(n.dot(u.cross(v)), u.dot(v));
}

Vec3 curvatureBinormal(const Vec3& e0, const Vec3& e1) {
  return 2.0 * e0.cross(e1) / (e0.norm() * e1.norm() + e0.dot(e1));  // Eq. 2
}

}  // namespace rodsim::geometry
