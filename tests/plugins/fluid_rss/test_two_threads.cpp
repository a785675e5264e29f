// The two-thread pieces of rss's overlapped step: the team that splits GMRES products, and the
// operator's row assembly shared by two threads, which must give the one-thread operator bit for bit.
#include "stokeslet_operator.h"
#include "two_thread_team.h"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

using namespace rodsim;
using namespace rodsim::rss;

namespace {

// Helices side by side (rods of per_rod nodes each, 4 mm apart): the near and far field both present.
struct Helices {
  int n = 0;
  std::vector<Segment> segments;
  std::vector<int> first_node;
  std::vector<Vec3> x;
  std::vector<double> blob;
  Helices(int per_rod, int rods) : n(per_rod * rods), blob(per_rod * rods, 1.02e-3) {
    for (int r = 0; r < rods; ++r) {
      first_node.push_back(r * per_rod);
      for (int i = 0; i < per_rod; ++i) {
        const double s = 0.25 * i;
        x.emplace_back(0.01 * std::cos(s) + 0.004 * r, 0.01 * std::sin(s), -0.005 * i);
        if (i + 1 < per_rod) segments.push_back({r * per_rod + i, r * per_rod + i + 1});
      }
    }
    first_node.push_back(n);
  }
};

}  // namespace

TEST_CASE("a two-thread team runs every part once, with or without a helper") {
  TwoThreadTeam team;
  std::vector<int> runs(2, 0);
  // No helper waiting: the driver runs both parts itself.
  team.run([&](int part) { ++runs[part]; });
  CHECK(runs == std::vector<int>{1, 1});

  // A helper waits in help() until the driver says it is done; parts 1 go to it once it waits.
  std::atomic<bool> done{false};
  std::atomic<int> helper_parts{0};
  std::thread helper([&] { team.help([&] { return done.load(); }); });
  const std::thread::id driver = std::this_thread::get_id();
  // Tasks until a hundred second parts ran on the helper (it takes a moment to start, longer on a
  // busy machine; at most 20 s), each part recorded once.
  std::vector<char> part0, part1;
  const auto start = std::chrono::steady_clock::now();
  while (helper_parts.load() < 100 && std::chrono::steady_clock::now() - start < std::chrono::seconds(20)) {
    const std::size_t t = part0.size();
    part0.push_back(0);
    part1.push_back(0);
    team.run([&](int part) {
      (part == 0 ? part0 : part1)[t] += 1;
      if (part == 1 && std::this_thread::get_id() != driver) helper_parts.fetch_add(1);
    });
  }
  done.store(true);
  helper.join();
  std::size_t wrong = 0;
  for (std::size_t t = 0; t < part0.size(); ++t) wrong += part0[t] != 1 || part1[t] != 1;
  CHECK(wrong == 0);
  MESSAGE(helper_parts.load() << " of " << part0.size() << " second parts ran on the helper");
  CHECK(helper_parts.load() > 0);
}

TEST_CASE("the operator assembled by two threads sharing its rows is the one-thread operator, bit for bit") {
  const Helices h(40, 3);
  const int n = h.n;
  StokesletOperator one, two;
  one.setTopology(n, h.segments, h.blob, h.first_node, 1);
  two.setTopology(n, h.segments, h.blob, h.first_node, 1);
  one.assemble(h.x);
  two.prepareAssembly(h.x);
  std::thread other([&] { two.assembleRows(1); });
  two.assembleRows(0);
  other.join();
  two.waitAssembled();
  Eigen::MatrixXd a, b;
  one.diagonalBlock(0, 3 * n, a);
  two.diagonalBlock(0, 3 * n, b);
  CHECK((a - b).cwiseAbs().maxCoeff() == 0.0);
  CHECK(a.norm() > 0);

  // Products split with a helper are the one-thread products, bit for bit.
  TwoThreadTeam team;
  two.setTeam(&team);
  std::atomic<bool> done{false};
  std::thread helper([&] { team.help([&] { return done.load(); }); });
  Vec v = Vec::LinSpaced(3 * n, -1.0, 2.0), y1(3 * n), y2(3 * n);
  for (int k = 0; k < 50; ++k) {
    one.apply(v.data(), y1.data());
    two.apply(v.data(), y2.data());
    CHECK((y1 - y2).cwiseAbs().maxCoeff() == 0.0);
    v = y1 / y1.norm();
  }
  done.store(true);
  helper.join();
}

TEST_CASE("the operator's product is the dense product for even and odd node counts, with or without a helper") {
  // apply() takes block rows in pairs: an odd row count, overall or in one thread's half, leaves a
  // row done as the partner of its neighbour. Each row's sum is its own (a row's sum does not depend on
  // its partner), so the helper's split gives the one-thread product bit for bit.
  for (const int per_rod : {2, 3, 40, 41}) {
    CAPTURE(per_rod);
    const Helices h(per_rod, per_rod < 10 ? 1 : 3);
    const int n = h.n;
    StokesletOperator op;
    op.setTopology(n, h.segments, h.blob, h.first_node, 1);
    op.assemble(h.x);
    Eigen::MatrixXd dense;
    op.diagonalBlock(0, 3 * n, dense);  // the stored operator as a dense matrix
    const Vec v = Vec::LinSpaced(3 * n, -1.0, 2.0);
    Vec y1(3 * n), y2(3 * n);
    op.apply(v.data(), y1.data());
    const Vec exact = dense * v;
    // Both sum the same double products in different orders: round-off of a 3n-term dot product.
    CHECK((y1 - exact).cwiseAbs().maxCoeff() <= 1e-13 * 3 * n * dense.cwiseAbs().maxCoeff() * v.cwiseAbs().maxCoeff());

    TwoThreadTeam team;
    op.setTeam(&team);
    std::atomic<bool> done{false};
    std::thread helper([&] { team.help([&] { return done.load(); }); });
    op.apply(v.data(), y2.data());
    done.store(true);
    helper.join();
    op.setTeam(nullptr);
    CHECK((y1 - y2).cwiseAbs().maxCoeff() == 0.0);
  }
}
