// Fixed (or spinning) rigid geometry that rods can touch: [[obstacle]] tables of the scene.
// The kernel validates them; contact models that support obstacles read them from the World.
#pragma once

#include <rodsim/linalg.h>

#include <string>

namespace rodsim {

struct Obstacle {
  enum class Shape { Plane, Sphere, Cylinder };
  std::string name;
  Shape shape = Shape::Plane;
  Vec3 origin = Vec3::Zero();  // plane: a point on it; cylinder: a point on its axis
  Vec3 normal = Vec3::UnitZ(); // plane: unit normal pointing to the free side
  Vec3 center = Vec3::Zero();  // sphere
  Vec3 axis = Vec3::UnitZ();   // cylinder: unit axis
  double radius = 0;           // sphere, cylinder (m)
  double angular_velocity = 0; // cylinder spinning about its axis (rad/s), right-handed

  // Signed distance (m) from point p to the surface (positive outside) and the unit outward
  // normal at the closest surface point.
  double signedDistance(const Vec3& p, Vec3* n = nullptr) const {
    switch (shape) {
      case Shape::Plane: {
        if (n) *n = normal;
        return (p - origin).dot(normal);
      }
      case Shape::Sphere: {
        const Vec3 d = p - center;
        const double r = d.norm();
        if (n) *n = r > 0 ? Vec3(d / r) : Vec3::UnitZ();
        return r - radius;
      }
      case Shape::Cylinder: {
        const Vec3 d = p - origin;
        const Vec3 radial = d - d.dot(axis) * axis;
        const double r = radial.norm();
        if (n) *n = r > 0 ? Vec3(radial / r) : Vec3(axis.unitOrthogonal());
        return r - radius;
      }
    }
    if (n) *n = normal;  // unreachable
    return 0;
  }
  // Second derivative of signedDistance at p: the derivative of the normal, d n / d p. Zero for a
  // plane; (I - n n^T) / |p - center| for a sphere; (P - n n^T) / r for a cylinder, P the
  // projection across the axis and r the distance from it (zero on the axis or the center, where
  // the normal is not defined).
  Mat3 distanceHessian(const Vec3& p) const {
    Vec3 n;
    const double r = signedDistance(p, &n) + radius;
    if (shape == Shape::Plane || !(r > 0)) return Mat3::Zero();
    const Mat3 across = shape == Shape::Cylinder ? Mat3(Mat3::Identity() - axis * axis.transpose()) : Mat3::Identity();
    return (across - n * n.transpose()) / r;
  }
  // Velocity (m/s) of the obstacle's material point at p (nonzero for a spinning cylinder).
  Vec3 surfaceVelocity(const Vec3& p) const {
    if (shape != Shape::Cylinder || angular_velocity == 0) return Vec3::Zero();
    return angular_velocity * axis.cross(Vec3(p - origin));
  }
  // d surfaceVelocity / d p (constant: omega [axis]x for a spinning cylinder).
  Mat3 surfaceVelocityGradient() const {
    if (shape != Shape::Cylinder || angular_velocity == 0) return Mat3::Zero();
    Mat3 cross;
    cross << 0, -axis.z(), axis.y(), axis.z(), 0, -axis.x(), -axis.y(), axis.x(), 0;
    return angular_velocity * cross;
  }
};

}  // namespace rodsim
