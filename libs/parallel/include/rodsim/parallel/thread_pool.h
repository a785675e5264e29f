// A persistent pool of threads that runs a task in a fixed number of parts (README.md). The parts are
// fixed by the caller (blockRange below): which thread runs a part never changes what it computes, so
// a loop split this way gives the same results for every thread count as long as each item is computed
// from inputs no other item writes. Idle threads claim the parts still unclaimed; the caller runs part
// 0 and then claims the rest too, so that a worker the system has not scheduled delays nothing (the
// caller does its part instead of waiting for it to wake).
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <thread>
#include <utility>
#include <vector>

namespace rodsim::parallel {

// The number of threads `requested` stands for: itself when >= 1, every hardware thread for 0.
int resolveThreadCount(int requested);

// [begin, end) of block `k` of `parts` contiguous blocks of [0, n): near-equal sizes, inner boundaries
// multiples of `align` (>= 1), so that blocks of double arrays start on whole cache lines. A block may
// be empty when n is small; the blocks cover [0, n) in order whatever `parts` is.
inline std::pair<int, int> blockRange(int n, int parts, int k, int align) {
  auto boundary = [&](int j) {
    if (j >= parts) return n;
    const long long b = static_cast<long long>(n) * j / parts;
    const long long a = (b + align / 2) / align * align;
    return static_cast<int>(a < n ? a : n);
  };
  return {boundary(k), boundary(k + 1)};
}

class ThreadPool {
 public:
  using Task = void (*)(void* context, int part);

  // threads >= 1: threads - 1 workers are started here and kept until destruction (1: none).
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return threads_; }

  // A loop may be split into up to this many parts per thread: on a machine shared with other work a
  // thread can run at half speed for a while, and the others then take more of the smaller parts.
  static constexpr int kPartsPerThread = 4;
  int maxParts() const { return kPartsPerThread * threads_; }

  // Runs task(context, k) for k = 0 .. parts-1 (parts <= maxParts()), each part once, on the calling
  // thread or on a worker, claimed in order by whichever is free; returns when every part has ended. If parts threw, rethrows the
  // exception of the lowest such part. Allocates nothing (an exception's own storage aside). Called
  // from inside a part of any pool (a nested loop), with parts <= 1 or by a second thread while the
  // pool is busy, all parts run on the calling thread, in order.
  void run(int parts, Task task, void* context);

  // True on a thread that is running a part of some pool's task (a worker, or a caller inside run()).
  static bool insideTask();

 private:
  void workerLoop();
  // Claims and runs unclaimed parts of generation `gen` until none is left.
  void claimParts(std::uint32_t gen);
  void runPart(int part);

  int threads_ = 1;
  std::vector<std::thread> workers_;
  // The task of the current generation; written by the caller before it publishes the generation.
  Task task_ = nullptr;
  void* context_ = nullptr;
  std::vector<std::exception_ptr> errors_;  // one per part
  // generation (bits 32-63), parts (bits 16-31), next unclaimed part (bits 0-15): one word, so that a
  // claim (compare-and-swap) holds only while its generation is current and its part unclaimed.
  std::atomic<std::uint64_t> state_{0};
  std::uint32_t generation_ = 0;      // the caller's count of runs
  std::atomic<int> completed_{0};     // parts of the current generation that have ended
  std::atomic<std::uint32_t> wake_{0};  // futex word idle workers sleep on; bumped by every run
  std::atomic<int> sleepers_{0};        // workers blocked on wake_
  std::atomic<bool> busy_{false};       // a run() is in progress (a second caller runs serially)
  std::atomic<bool> stop_{false};
};

}  // namespace rodsim::parallel
