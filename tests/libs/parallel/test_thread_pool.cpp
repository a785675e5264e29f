// rodsim::parallel::ThreadPool and blockRange: every part runs once whatever the thread count, nested
// loops run on the calling thread, exceptions come back from the lowest part that threw.
#include <rodsim/parallel/thread_pool.h>

#include <doctest/doctest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

using rodsim::parallel::blockRange;
using rodsim::parallel::ThreadPool;

TEST_CASE("blockRange covers [0, n) in order, inner boundaries on multiples of the alignment") {
  for (int n : {0, 1, 7, 8, 9, 100, 1000, 60003})
    for (int parts : {1, 2, 3, 4, 7})
      for (int align : {1, 8}) {
        CAPTURE(n);
        CAPTURE(parts);
        CAPTURE(align);
        int expected_begin = 0;
        for (int k = 0; k < parts; ++k) {
          const auto [b, e] = blockRange(n, parts, k, align);
          CHECK(b == expected_begin);
          CHECK(e >= b);
          if (k + 1 < parts && e < n) CHECK(e % align == 0);
          expected_begin = e;
        }
        CHECK(expected_begin == n);
      }
  // near-equal: two blocks of 60003 items differ by less than one alignment
  const auto [b0, e0] = blockRange(60003, 2, 0, 8);
  const auto [b1, e1] = blockRange(60003, 2, 1, 8);
  CHECK(std::abs((e0 - b0) - (e1 - b1)) <= 8);
}

TEST_CASE("every part runs exactly once, on any thread count, many times over") {
  for (int threads : {1, 2, 3, 4}) {
    ThreadPool pool(threads);
    CHECK(pool.threads() == threads);
    CHECK(pool.maxParts() == ThreadPool::kPartsPerThread * threads);
    std::vector<std::atomic<int>> runs(static_cast<std::size_t>(pool.maxParts()));
    for (int round = 0; round < 2000; ++round) {
      struct Ctx {
        std::vector<std::atomic<int>>* runs;
      } ctx{&runs};
      // every count of parts from 1 to maxParts in turn: parts beyond the threads are claimed too
      const int parts = 1 + round % pool.maxParts();
      pool.run(parts, [](void* c, int k) { (*static_cast<Ctx*>(c)->runs)[static_cast<std::size_t>(k)]++; }, &ctx);
    }
    for (int k = 0; k < pool.maxParts(); ++k) {
      int expected = 0;  // rounds whose part count exceeded k
      for (int round = 0; round < 2000; ++round) expected += (1 + round % pool.maxParts()) > k;
      CHECK(runs[static_cast<std::size_t>(k)].load() == expected);
    }
  }
}

TEST_CASE("a loop started inside a part runs whole on the calling thread") {
  ThreadPool pool(2);
  struct Ctx {
    ThreadPool* pool;
    std::atomic<int> inner{0};
    std::atomic<int> nested_flag{0};
  } ctx{&pool};
  pool.run(2, [](void* c, int) {
    auto& x = *static_cast<Ctx*>(c);
    if (ThreadPool::insideTask()) x.nested_flag++;
    x.pool->run(2, [](void* c2, int) { static_cast<Ctx*>(c2)->inner++; }, c);
  }, &ctx);
  CHECK(ctx.nested_flag.load() == 2);
  CHECK(ctx.inner.load() == 4);  // 2 outer parts x 2 inner parts
  CHECK_FALSE(ThreadPool::insideTask());
}

TEST_CASE("the exception of the lowest part that threw comes back; the pool runs on afterwards") {
  ThreadPool pool(3);
  auto throwing = [](void*, int k) {
    if (k >= 1) throw std::runtime_error("part " + std::to_string(k));
  };
  for (int round = 0; round < 50; ++round) {
    try {
      pool.run(3, throwing, nullptr);
      FAIL("no exception");
    } catch (const std::runtime_error& e) {
      CHECK(std::string(e.what()) == "part 1");
    }
  }
  std::atomic<int> ok{0};
  pool.run(3, [](void* c, int) { (*static_cast<std::atomic<int>*>(c))++; }, &ok);
  CHECK(ok.load() == 3);
}

TEST_CASE("thread counts: 0 is every hardware thread, negative is refused") {
  CHECK(rodsim::parallel::resolveThreadCount(3) == 3);
  CHECK(rodsim::parallel::resolveThreadCount(0) >= 1);
  CHECK_THROWS_AS(rodsim::parallel::resolveThreadCount(-1), std::invalid_argument);
}
