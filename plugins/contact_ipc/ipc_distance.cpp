#include "ipc_distance.h"

namespace rodsim::ipc {

namespace {

constexpr double kParallelWeight = 0.5;  // w of the endpoint terms (see ipc_distance.h)

}  // namespace

void pairBarrier(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1, double R, double d_hat,
                 double eps_x, int order, PairBarrier& out) {
  // The distance alone first: most candidate pairs lie beyond d_hat, and for them the derivatives
  // of the distance (a 12 x 12 Hessian) would be thrown away.
  geometry::EdgeDistance dist;
  geometry::edgeDistance(p0, p1, q0, q1, 0, dist);
  out.gap = dist.D - R;
  out.type = dist.type;
  out.E = 0;
  out.grad.setZero();
  if (order >= 2) out.hess.setZero();
  out.active = out.gap < d_hat;
  if (!out.active) {
    out.mollifier = 1;
    return;
  }
  if (order >= 1) geometry::edgeDistance(p0, p1, q0, q1, order, dist);
  // Edge-edge (full segment distance) term: b(D - R), grad b' dD, Hess b'' dD dD^T + b' d2D.
  const Scalar2 bf = barrier(out.gap, d_hat);
  Vec12 cross_grad;
  Mat12 cross_hess;
  const double x = edgeCrossSquared(p0, p1, q0, q1, order >= 1 ? &cross_grad : nullptr, order >= 2 ? &cross_hess : nullptr);
  const Scalar2 m = mollifier(x, eps_x);
  out.mollifier = m.v;
  if (m.v >= 1) {  // not nearly parallel: plain barrier on the segment distance
    out.E = bf.v;
    if (order >= 1) out.grad = bf.d1 * dist.grad;
    if (order >= 2) out.hess = bf.d2 * dist.grad * dist.grad.transpose() + bf.d1 * dist.hess;
    return;
  }
  // Endpoint terms: p0, p1 against segment q; q0, q1 against segment p.
  const Vec3* nodes[4] = {&p0, &p1, &q0, &q1};
  double Ep = 0;
  Vec12 gp = Vec12::Zero();
  Mat12 hp = Mat12::Zero();
  PointSegmentDistance ps;
  for (int k = 0; k < 4; ++k) {
    const int a = k < 2 ? 2 : 0;  // first node of the other segment
    pointSegmentDistance(*nodes[k], *nodes[a], *nodes[a + 1], order, ps);
    const Scalar2 bk = barrier(ps.D - R, d_hat);
    if (bk.v == 0 && bk.d1 == 0) continue;
    Ep += bk.v;
    if (order < 1) continue;
    const int slot[3] = {k, a, a + 1};
    for (int i = 0; i < 3; ++i) gp.segment<3>(3 * slot[i]) += bk.d1 * ps.grad.segment<3>(3 * i);
    if (order < 2) continue;
    const Mat9 h = bk.d2 * ps.grad * ps.grad.transpose() + bk.d1 * ps.hess;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) hp.block<3, 3>(3 * slot[i], 3 * slot[j]) += h.block<3, 3>(3 * i, 3 * j);
  }
  Ep *= kParallelWeight;
  gp *= kParallelWeight;
  hp *= kParallelWeight;
  // E = m Ef + (1 - m) Ep, product rule with dm = m' dx, d2m = m'' dx dx^T + m' d2x.
  out.E = m.v * bf.v + (1 - m.v) * Ep;
  if (order < 1) return;
  const Vec12 gf = bf.d1 * dist.grad;
  const Vec12 dm = m.d1 * cross_grad;
  out.grad = m.v * gf + (1 - m.v) * gp + (bf.v - Ep) * dm;
  if (order < 2) return;
  const Mat12 hf = bf.d2 * dist.grad * dist.grad.transpose() + bf.d1 * dist.hess;
  const Mat12 d2m = m.d2 * cross_grad * cross_grad.transpose() + m.d1 * cross_hess;
  const Vec12 dg = gf - gp;
  out.hess = m.v * hf + (1 - m.v) * hp + dm * dg.transpose() + dg * dm.transpose() + (bf.v - Ep) * d2m;
}

}  // namespace rodsim::ipc
