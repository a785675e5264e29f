#include <rodsim/geometry/segment_segment_distance.h>
#include <rodsim/geometry/skew.h>

#include <algorithm>
#include <cmath>

namespace rodsim::geometry {

namespace {

double clamp01(double x) { return std::clamp(x, 0.0, 1.0); }
bool atEnd(double x) { return x <= 0.0 || x >= 1.0; }

// D = sqrt(g) and its derivatives from those of g (n coordinates), scattered into the 12-vector
// slots `idx` (node indexes 0..3).
template <int N>
void fromSquared(double g, const Eigen::Matrix<double, N, 1>& dg, const Eigen::Matrix<double, N, N>& d2g,
                 const int (&idx)[N / 3], int order, EdgeDistance& out) {
  const double D = std::sqrt(std::max(g, 0.0));
  out.D = D;
  out.grad.setZero();
  if (order >= 2) out.hess.setZero();
  if (order < 1) return;
  const double Ds = std::max(D, 1e-150);  // D = 0: coincident centerlines, gradient undefined
  const Eigen::Matrix<double, N, 1> dD = dg / (2 * Ds);
  for (int a = 0; a < N / 3; ++a) out.grad.segment<3>(3 * idx[a]) = dD.template segment<3>(3 * a);
  if (order < 2) return;
  const Eigen::Matrix<double, N, N> H = d2g / (2 * Ds) - dD * dD.transpose() / Ds;
  for (int a = 0; a < N / 3; ++a)
    for (int b = 0; b < N / 3; ++b) out.hess.block<3, 3>(3 * idx[a], 3 * idx[b]) = H.template block<3, 3>(3 * a, 3 * b);
}

}  // namespace

DistanceType ClosestPoints::type() const {
  if (s_end && t_end) return DistanceType::PointPoint;
  if (s_end || t_end) return DistanceType::PointEdge;
  return DistanceType::EdgeEdge;
}

// Closest points of two segments, minimizing |p0 + s d1 - q0 - t d2| over [0,1]^2 (Eq. 10): the
// unconstrained minimizer on the lines, s clamped, t from s and clamped, s recomputed from a
// clamped t. For parallel (or degenerate) edges s is pinned to 0.
ClosestPoints lumelsky(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1, double parallel_tol) {
  ClosestPoints cp;
  const Vec3 d1 = p1 - p0, d2 = q1 - q0, r = p0 - q0;
  const double a = d1.squaredNorm(), e = d2.squaredNorm(), f = d2.dot(r);
  const double b = d1.dot(d2), c = d1.dot(r);
  const double denom = a * e - b * b;  // |d1 x d2|^2
  if (a <= 0 || e <= 0 || denom <= parallel_tol * a * e) {
    cp.parallel = true;
    cp.s = 0;
    cp.s_end = true;
  } else {
    cp.s = clamp01((b * f - c * e) / denom);
    cp.s_end = atEnd(cp.s);
  }
  cp.t = e > 0 ? (b * cp.s + f) / e : 0.0;
  if (cp.t <= 0 || cp.t >= 1) {
    cp.t = clamp01(cp.t);
    cp.t_end = true;
    const double s_new = a > 0 ? clamp01((b * cp.t - c) / a) : 0.0;
    cp.s = s_new;
    cp.s_end = atEnd(s_new);
  }
  return cp;
}

// Eq. 13 squared: g = (r.u)^2 / |u|^2, r = c - a, u = e1 x e2, e1 = b - a, e2 = d - c.
void edgeEdgeSq(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d, double& g, Vec12* dg, Mat12* d2g) {
  const Vec3 r = c - a, e1 = b - a, e2 = d - c, u = e1.cross(e2);
  const double cc = r.dot(u), U = u.squaredNorm();
  g = cc * cc / U;
  if (!dg && !d2g) return;
  const Mat3 I = Mat3::Identity();
  const Vec3 g_r = 2 * cc / U * u;
  const Vec3 g_u = 2 * cc / U * r - 2 * cc * cc / (U * U) * u;
  // z = (r, e1, e2); du/dz = [0, -[e2]x, [e1]x]
  Eigen::Matrix<double, 3, 9> Ju = Eigen::Matrix<double, 3, 9>::Zero();
  Ju.block<3, 3>(0, 3) = -skew(e2);
  Ju.block<3, 3>(0, 6) = skew(e1);
  Eigen::Matrix<double, 9, 1> gz;
  gz.segment<3>(0) = g_r;
  gz.segment<6>(3) = (Ju.transpose() * g_u).segment<6>(3);
  // x = (a, b, c, d) -> z
  Eigen::Matrix<double, 9, 12> A = Eigen::Matrix<double, 9, 12>::Zero();
  A.block<3, 3>(0, 0) = -I;
  A.block<3, 3>(0, 6) = I;
  A.block<3, 3>(3, 0) = -I;
  A.block<3, 3>(3, 3) = I;
  A.block<3, 3>(6, 6) = -I;
  A.block<3, 3>(6, 9) = I;
  if (dg) *dg = A.transpose() * gz;
  if (d2g) {
    const Mat3 Hrr = 2 / U * u * u.transpose();
    const Mat3 Hru = 2 / U * (u * r.transpose() + cc * I) - 4 * cc / (U * U) * u * u.transpose();
    const Mat3 Huu = 2 / U * r * r.transpose() - 4 * cc / (U * U) * (r * u.transpose() + u * r.transpose()) -
                     2 * cc * cc / (U * U) * I + 8 * cc * cc / (U * U * U) * u * u.transpose();
    Eigen::Matrix<double, 3, 9> Jr = Eigen::Matrix<double, 3, 9>::Zero();
    Jr.block<3, 3>(0, 0) = I;
    Eigen::Matrix<double, 9, 9> Hz = Jr.transpose() * Hrr * Jr + Jr.transpose() * Hru * Ju +
                                     Ju.transpose() * Hru.transpose() * Jr + Ju.transpose() * Huu * Ju;
    // second derivative of u itself (bilinear in e1, e2): d2(l.(e1 x e2))/de1 de2 = -[l]x
    const Mat3 S = skew(g_u);
    Hz.block<3, 3>(3, 6) -= S;
    Hz.block<3, 3>(6, 3) += S;
    *d2g = A.transpose() * Hz * A;
  }
}

void edgeDistance(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1, int order, EdgeDistance& out,
                  double parallel_tol) {
  out.cp = lumelsky(p0, p1, q0, q1, parallel_tol);
  out.type = out.cp.type();
  const Vec3* x[4] = {&p0, &p1, &q0, &q1};
  double g = 0;
  switch (out.type) {
    case DistanceType::PointPoint: {  // Eq. 11
      const int ia = out.cp.s < 0.5 ? 0 : 1, ib = out.cp.t < 0.5 ? 2 : 3;
      Eigen::Matrix<double, 6, 1> dg;
      Eigen::Matrix<double, 6, 6> d2g;
      pointPointSq(*x[ia], *x[ib], g, order >= 1 ? &dg : nullptr, order >= 2 ? &d2g : nullptr);
      const int idx[2] = {ia, ib};
      fromSquared<6>(g, dg, d2g, idx, order, out);
      break;
    }
    case DistanceType::PointEdge: {  // Eq. 12: the point is the pinned end
      int ip, ia, ib;
      if (out.cp.s_end) {
        ip = out.cp.s < 0.5 ? 0 : 1;
        ia = 2;
        ib = 3;
      } else {
        ip = out.cp.t < 0.5 ? 2 : 3;
        ia = 0;
        ib = 1;
      }
      Eigen::Matrix<double, 9, 1> dg;
      Eigen::Matrix<double, 9, 9> d2g;
      pointEdgeSq(*x[ip], *x[ia], *x[ib], g, order >= 1 ? &dg : nullptr, order >= 2 ? &d2g : nullptr);
      const int idx[3] = {ip, ia, ib};
      fromSquared<9>(g, dg, d2g, idx, order, out);
      break;
    }
    case DistanceType::EdgeEdge: {  // Eq. 13
      Vec12 dg;
      Mat12 d2g;
      edgeEdgeSq(p0, p1, q0, q1, g, order >= 1 ? &dg : nullptr, order >= 2 ? &d2g : nullptr);
      const int idx[4] = {0, 1, 2, 3};
      fromSquared<12>(g, dg, d2g, idx, order, out);
      break;
    }
  }
}

double segmentDistance(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1) {
  const ClosestPoints cp = lumelsky(p0, p1, q0, q1);
  return ((p0 + cp.s * (p1 - p0)) - (q0 + cp.t * (q1 - q0))).norm();
}

// x = |e_a|^2 |e_b|^2 - (e_a . e_b)^2 (Lagrange's identity): polynomial, so its derivatives are
// exact and cheap.
double edgeCrossSquared(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1, Vec12* grad, Mat12* hess) {
  const Vec3 ea = p1 - p0, eb = q1 - q0;
  const double A = ea.squaredNorm(), B = eb.squaredNorm(), C = ea.dot(eb);
  const double x = A * B - C * C;
  if (grad) {
    const Vec3 ga = 2 * B * ea - 2 * C * eb, gb = 2 * A * eb - 2 * C * ea;
    *grad << -ga, ga, -gb, gb;
  }
  if (hess) {
    const Mat3 I = Mat3::Identity();
    const Mat3 Haa = 2 * B * I - 2 * eb * eb.transpose();
    const Mat3 Hbb = 2 * A * I - 2 * ea * ea.transpose();
    const Mat3 Hab = 4 * ea * eb.transpose() - 2 * eb * ea.transpose() - 2 * C * I;  // d ga / d eb
    // nodes (p0, p1) = (-ea, +ea) and (q0, q1) = (-eb, +eb)
    const double sa[2] = {-1, 1};
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) {
        const double s = sa[i] * sa[j];
        hess->block<3, 3>(3 * i, 3 * j) = s * Haa;
        hess->block<3, 3>(6 + 3 * i, 6 + 3 * j) = s * Hbb;
        hess->block<3, 3>(3 * i, 6 + 3 * j) = s * Hab;
        hess->block<3, 3>(6 + 3 * j, 3 * i) = s * Hab.transpose();
      }
  }
  return x;
}

void closestSegmentPoints(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1, double& s, double& t) {
  // Minimize |p0 + s d1 - q0 - t d2|^2 over [0,1]^2 (normal equations, then clamping).
  const Vec3 d1 = p1 - p0, d2 = q1 - q0, w = p0 - q0;
  const double a = d1.dot(d1), e = d2.dot(d2), b = d1.dot(d2), c = d1.dot(w), f = d2.dot(w);
  const double tiny = 1e-300;
  auto clamp01 = [](double x) { return std::clamp(x, 0.0, 1.0); };
  if (a <= tiny && e <= tiny) {
    s = t = 0;
    return;
  }
  if (a <= tiny) {
    s = 0;
    t = clamp01(f / e);
    return;
  }
  if (e <= tiny) {
    t = 0;
    s = clamp01(-c / a);
    return;
  }
  const double denom = a * e - b * b;
  s = denom > 1e-14 * a * e ? clamp01((b * f - c * e) / denom) : 0.0;
  t = (b * s + f) / e;
  if (t < 0) {
    t = 0;
    s = clamp01(-c / a);
  } else if (t > 1) {
    t = 1;
    s = clamp01((b - c) / a);
  }
}

}  // namespace rodsim::geometry
