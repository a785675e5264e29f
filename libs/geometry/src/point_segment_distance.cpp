#include <rodsim/geometry/point_point_distance.h>
#include <rodsim/geometry/point_segment_distance.h>

#include <algorithm>
#include <cmath>

namespace rodsim::geometry {

namespace {

// D = sqrt(g) from the squared distance g over N coordinates (D > 0 wherever it is used: D > R).
template <int N>
void sqrtDistance(double g, const Eigen::Matrix<double, N, 1>& dg, const Eigen::Matrix<double, N, N>& d2g, int order,
                  double& D, Eigen::Matrix<double, N, 1>& grad, Eigen::Matrix<double, N, N>& hess) {
  D = std::sqrt(std::max(g, 0.0));
  if (order < 1) return;
  const double Ds = std::max(D, 1e-300);
  grad = dg / (2 * Ds);
  if (order < 2) return;
  hess = d2g / (2 * Ds) - grad * grad.transpose() / Ds;
}

}  // namespace

// Eq. 12 squared: g = |w|^2 - (w.e)^2/|e|^2, w = p - a, e = b - a.
void pointEdgeSq(const Vec3& p, const Vec3& a, const Vec3& b, double& g, Vec9* dg, Mat9* d2g) {
  const Vec3 w = p - a, e = b - a;
  const double s = w.dot(e), L = e.squaredNorm();
  g = w.squaredNorm() - s * s / L;
  if (!dg && !d2g) return;
  const Vec3 gw = 2 * w - 2 * s / L * e;
  const Vec3 ge = -2 * s / L * w + 2 * s * s / (L * L) * e;
  // Chain to (p, a, b): w = p - a, e = b - a.
  if (dg) {
    dg->segment<3>(0) = gw;
    dg->segment<3>(3) = -gw - ge;
    dg->segment<3>(6) = ge;
  }
  if (d2g) {
    const Mat3 I = Mat3::Identity();
    const Mat3 Hww = 2 * I - 2 / L * e * e.transpose();
    const Mat3 Hwe = -2 / L * (e * w.transpose() + s * I) + 4 * s / (L * L) * e * e.transpose();
    const Mat3 Hee = -2 / L * w * w.transpose() + 4 * s / (L * L) * (w * e.transpose() + e * w.transpose()) +
                     2 * s * s / (L * L) * I - 8 * s * s / (L * L * L) * e * e.transpose();
    Eigen::Matrix<double, 6, 9> A = Eigen::Matrix<double, 6, 9>::Zero();
    A.block<3, 3>(0, 0) = I;
    A.block<3, 3>(0, 3) = -I;
    A.block<3, 3>(3, 3) = -I;
    A.block<3, 3>(3, 6) = I;
    Eigen::Matrix<double, 6, 6> Hz;
    Hz << Hww, Hwe, Hwe.transpose(), Hee;
    *d2g = A.transpose() * Hz * A;
  }
}

void pointSegmentDistance(const Vec3& p, const Vec3& a, const Vec3& b, int order, PointSegmentDistance& out) {
  const Vec3 e = b - a;
  const double L = e.squaredNorm();
  const double t = L > 0 ? (p - a).dot(e) / L : 0.0;
  out.grad.setZero();
  if (order >= 2) out.hess.setZero();
  if (t > 0 && t < 1) {  // Eq. 12: projection inside the segment
    out.type = DistanceType::PointEdge;
    double g;
    Vec9 dg;
    Mat9 d2g;
    pointEdgeSq(p, a, b, g, order >= 1 ? &dg : nullptr, order >= 2 ? &d2g : nullptr);
    sqrtDistance<9>(g, dg, d2g, order, out.D, out.grad, out.hess);
    return;
  }
  // Eq. 11: the nearer end (a for t <= 0, b for t >= 1)
  out.type = DistanceType::PointPoint;
  const int slot = t <= 0 ? 1 : 2;
  double g;
  Eigen::Matrix<double, 6, 1> dg, grad6;
  Eigen::Matrix<double, 6, 6> d2g, hess6;
  pointPointSq(p, t <= 0 ? a : b, g, order >= 1 ? &dg : nullptr, order >= 2 ? &d2g : nullptr);
  sqrtDistance<6>(g, dg, d2g, order, out.D, grad6, hess6);
  if (order < 1) return;
  out.grad.segment<3>(0) = grad6.segment<3>(0);
  out.grad.segment<3>(3 * slot) = grad6.segment<3>(3);
  if (order < 2) return;
  const int s[2] = {0, slot};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) out.hess.block<3, 3>(3 * s[i], 3 * s[j]) = hess6.block<3, 3>(3 * i, 3 * j);
}

}  // namespace rodsim::geometry
