// The closed-form segment moments T_{n,m} and blocks of the regularized Stokeslet segment (Tong et
// al. 2023, SI Eqs. A.2-A.6) against quadrature, in every geometric regime: target off the segment, at an
// end, on the segment, on its line beyond either end (where the naive logarithm cancels), far away.
#include "quadrature.h"
#include "near_field.h"
#include "segment_integrals.h"

#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace rodsim;
using namespace rodsim::rss;

namespace {

struct Case {
  std::string name;
  Vec3 r0, e;
  double eps;
};

std::vector<Case> cases() {
  const Vec3 e(0.3, -0.2, 0.9);
  std::vector<Case> c = {
      {"off the segment", Vec3(0.4, 0.7, -0.1), e, 0.05},
      {"at the start node", Vec3::Zero(), e, 0.1},
      {"at the end node", e, e, 0.1},
      {"on the segment", 0.3 * e, e, 0.02},
      {"on the line before the start", -2.0 * e, e, 0.05},
      {"on the line beyond the end", 3.0 * e, e, 0.05},
      {"far beyond the end, tiny blob", 40.0 * e, e, 0.01},
      {"far off the side", Vec3(30, -20, 10), e, 0.1},
      {"blob larger than the segment", Vec3(0.1, 0.2, 0.3), e, 2.0},
  };
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> U(-2, 2);
  for (int i = 0; i < 20; ++i)
    c.push_back({"random " + std::to_string(i), Vec3(U(rng), U(rng), U(rng)), Vec3(U(rng), U(rng), U(rng)),
                 0.02 + 0.2 * std::abs(U(rng))});
  return c;
}

double Rof(const Case& c, double a) { return std::sqrt((c.r0 - a * c.e).squaredNorm() + c.eps * c.eps); }

}  // namespace

TEST_CASE("segment moments T_{n,m} match quadrature in every regime") {
  for (const Case& c : cases()) {
    CAPTURE(c.name);
    const SegmentMoments T = segmentMoments(c.r0, c.e, c.eps);
    const std::vector<std::pair<double, double>> pairs = {
        {T.T0m1, gaussLegendre01([&](double a) { return 1.0 / Rof(c, a); })},
        {T.T1m1, gaussLegendre01([&](double a) { return a / Rof(c, a); })},
        {T.T0m3, gaussLegendre01([&](double a) { return std::pow(Rof(c, a), -3); })},
        {T.T1m3, gaussLegendre01([&](double a) { return a * std::pow(Rof(c, a), -3); })},
        {T.T2m3, gaussLegendre01([&](double a) { return a * a * std::pow(Rof(c, a), -3); })},
        {T.T3m3, gaussLegendre01([&](double a) { return a * a * a * std::pow(Rof(c, a), -3); })},
    };
    for (std::size_t k = 0; k < pairs.size(); ++k) {
      CAPTURE(k);
      // Relative to the size of the moment; the recursions for n = 2, 3 lose digits in the far
      // field (a cancellation of order (|r0| / |e|)^2 each), still far below 1e-8.
      CHECK(std::abs(pairs[k].first - pairs[k].second) <= 1e-9 * std::abs(pairs[k].second) + 1e-14);
    }
  }
}

TEST_CASE("segment blocks reproduce the integral of Eq. A.2 for each hat function") {
  for (const Case& c : cases()) {
    CAPTURE(c.name);
    Mat3 A0, A1;
    segmentBlocks(c.r0, c.e, c.eps, A0, A1);
    const double len = c.e.norm();
    auto kernel = [&](double a) -> Mat3 { return len * regularizedStokeslet(c.r0 - a * c.e, c.eps); };
    const Mat3 Q0 = gaussLegendre01([&](double a) -> Mat3 { return (1 - a) * kernel(a); });
    const Mat3 Q1 = gaussLegendre01([&](double a) -> Mat3 { return a * kernel(a); });
    CHECK((A0 - Q0).norm() <= 1e-9 * Q0.norm());
    CHECK((A1 - Q1).norm() <= 1e-9 * Q1.norm());
    CHECK((A0 - A0.transpose()).norm() <= 1e-15 * A0.norm());  // symmetric up to round-off
  }
}

TEST_CASE("far from the segment the blocks tend to the point Stokeslet of the whole segment") {
  // 8πη u = |e| S(r_mid) (f_k + f_{k+1}) / 2 + O((|e| / r)^2).
  const Vec3 e(0.0, 0.0, 0.01);
  for (double dist : {1.0, 10.0}) {
    const Vec3 r0(dist, 0.3 * dist, 0.0);
    Mat3 A0, A1;
    segmentBlocks(r0, e, 1e-3, A0, A1);
    const Mat3 point = 0.5 * e.norm() * regularizedStokeslet(r0 - 0.5 * e, 1e-3);
    const double rel = (A0 + A1 - 2.0 * point).norm() / (2.0 * point.norm());
    CHECK(rel < 0.1 * std::pow(e.norm() / dist, 2));
  }
}

TEST_CASE("the batched near field gives segmentBlocks' blocks bitwise, in every regime") {
  // nearFieldBlocks (the operator's fast form) does segmentBlocks' operations in the same order,
  // vectorized across segments: every entry must be the same double. Cases in the quadrature's
  // domain (isFarField) are flagged instead, and left to segmentBlocks.
  const std::vector<Case> all = cases();
  NearFieldBatch batch;
  batch.resize(static_cast<int>(all.size()) + 16);  // more than one vector of every width, and a tail
  for (int repeat = 0; batch.count + static_cast<int>(all.size()) <= batch.capacity && repeat < 2; ++repeat)
    for (std::size_t i = 0; i < all.size() && batch.count < batch.capacity; ++i)
      batch.add(static_cast<int>(i), all[i].r0, all[i].e, all[i].eps * all[i].eps);
  nearFieldBlocks(batch);
  constexpr int kRow[6] = {0, 1, 2, 0, 0, 1}, kCol[6] = {0, 1, 2, 1, 2, 2};
  int compared = 0;
  for (int j = 0; j < batch.count; ++j) {
    const Case& c = all[batch.segment[j]];
    CAPTURE(c.name);
    const bool far = (c.r0 - 0.5 * c.e).squaredNorm() >= 16.0 * c.e.squaredNorm();
    CHECK((batch.quadrature[j] != 0) == far);
    if (far) continue;
    Mat3 A_start, A_end;
    const double eps2 = c.eps * c.eps;
    segmentBlocks(c.r0, c.e, eps2, std::sqrt(c.r0.squaredNorm() + eps2), std::sqrt((c.r0 - c.e).squaredNorm() + eps2),
                  A_start, A_end);
    const Mat3 whole = A_start + A_end;
    for (int k = 0; k < 6; ++k) {
      CHECK(batch.out[k * batch.capacity + j] == whole(kRow[k], kCol[k]));
      CHECK(batch.out[(6 + k) * batch.capacity + j] == A_end(kRow[k], kCol[k]));
    }
    ++compared;
  }
  CHECK(compared >= 20);
}
