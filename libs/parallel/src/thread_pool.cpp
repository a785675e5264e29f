#include <rodsim/parallel/thread_pool.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

namespace rodsim::parallel {

namespace {

thread_local bool t_inside_task = false;

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// How long an idle worker polls for the next task before it sleeps on a futex. A step of an explicit
// solver is a dozen parallel loops separated by short serial stretches (forces, output): polling
// through those costs nothing measurable, while a futex wake-up per loop costs tens of microseconds.
// Between runs, or while the caller does long serial work, the worker sleeps and uses no processor.
constexpr auto kSpinTime = std::chrono::microseconds(500);

constexpr std::uint64_t pack(std::uint32_t gen, int parts, int next) {
  return static_cast<std::uint64_t>(gen) << 32 | static_cast<std::uint64_t>(parts) << 16 |
         static_cast<std::uint64_t>(next);
}
constexpr std::uint32_t generationOf(std::uint64_t s) { return static_cast<std::uint32_t>(s >> 32); }
constexpr int partsOf(std::uint64_t s) { return static_cast<int>((s >> 16) & 0xffff); }
constexpr int nextOf(std::uint64_t s) { return static_cast<int>(s & 0xffff); }

// Sets the calling thread's "inside a task" flag for the lifetime of the guard.
struct InsideTask {
  bool before = t_inside_task;
  InsideTask() { t_inside_task = true; }
  ~InsideTask() { t_inside_task = before; }
};

}  // namespace

int resolveThreadCount(int requested) {
  if (requested < 0) throw std::invalid_argument("thread count " + std::to_string(requested) + " is negative");
  if (requested > 0) return requested;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

ThreadPool::ThreadPool(int threads)
    : threads_(std::clamp(threads, 1, 0xffff / kPartsPerThread)),
      errors_(static_cast<std::size_t>(maxParts())) {
  workers_.reserve(static_cast<std::size_t>(threads_ - 1));
  for (int k = 1; k < threads_; ++k) workers_.emplace_back([this] { workerLoop(); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_seq_cst);
  state_.store(pack(generation_ + 1, 0, 0), std::memory_order_seq_cst);
  wake_.fetch_add(1, std::memory_order_seq_cst);
  wake_.notify_all();
  for (std::thread& w : workers_) w.join();
}

bool ThreadPool::insideTask() { return t_inside_task; }

void ThreadPool::runPart(int part) {
  try {
    task_(context_, part);
  } catch (...) {
    errors_[static_cast<std::size_t>(part)] = std::current_exception();
  }
  completed_.fetch_add(1, std::memory_order_release);
}

void ThreadPool::claimParts(std::uint32_t gen) {
  std::uint64_t s = state_.load(std::memory_order_acquire);
  while (generationOf(s) == gen && nextOf(s) < partsOf(s)) {
    // A successful claim of (gen, k): the caller cannot start another generation (and rewrite task_)
    // before this part has ended, since it waits for every part of this one.
    if (state_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel, std::memory_order_acquire)) {
      runPart(nextOf(s));
      s = state_.load(std::memory_order_acquire);
    }
  }
}

void ThreadPool::workerLoop() {
  t_inside_task = true;  // a worker only ever runs parts: a loop it starts runs on it, serially
  std::uint32_t seen = 0;
  for (;;) {
    auto start = std::chrono::steady_clock::now();
    int polls = 0;
    std::uint32_t gen;
    while ((gen = generationOf(state_.load(std::memory_order_acquire))) == seen) {
      cpuRelax();
      if (++polls % 64 != 0 || std::chrono::steady_clock::now() - start < kSpinTime) continue;
      // Sleep. The caller reads sleepers_ after publishing a generation and bumping wake_, and this
      // thread reads the generation after counting itself in sleepers_ (all sequentially consistent):
      // either the caller sees the sleeper and wakes it, or this thread sees the new generation.
      const std::uint32_t w = wake_.load(std::memory_order_seq_cst);
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      if (generationOf(state_.load(std::memory_order_seq_cst)) == seen) wake_.wait(w, std::memory_order_seq_cst);
      sleepers_.fetch_sub(1, std::memory_order_seq_cst);
      start = std::chrono::steady_clock::now();
    }
    seen = gen;
    if (stop_.load(std::memory_order_acquire)) return;
    claimParts(gen);
  }
}

void ThreadPool::run(int parts, Task task, void* context) {
  parts = std::min(parts, maxParts());
  bool expected = false;
  if (parts <= 1 || t_inside_task || !busy_.compare_exchange_strong(expected, true, std::memory_order_acquire)) {
    // One part, a nested loop or a second caller: every part here, in order, as one thread would.
    InsideTask inside;
    for (int k = 0; k < parts; ++k) task(context, k);
    return;
  }
  task_ = task;
  context_ = context;
  completed_.store(0, std::memory_order_relaxed);
  const std::uint32_t gen = ++generation_;
  state_.store(pack(gen, parts, 1), std::memory_order_seq_cst);  // part 0 is the caller's
  wake_.fetch_add(1, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0) wake_.notify_all();
  {
    InsideTask inside;
    runPart(0);
    claimParts(gen);  // what no worker has claimed yet
  }
  for (int polls = 0; completed_.load(std::memory_order_acquire) != parts; ++polls) {
    cpuRelax();
    if (polls > 4096) std::this_thread::yield();  // ~0.1 ms: a worker was descheduled inside its part
  }
  busy_.store(false, std::memory_order_release);
  for (int k = 0; k < parts; ++k)
    if (errors_[static_cast<std::size_t>(k)]) {
      std::exception_ptr e = std::move(errors_[static_cast<std::size_t>(k)]);
      for (int j = k; j < parts; ++j) errors_[static_cast<std::size_t>(j)] = nullptr;
      std::rethrow_exception(e);
    }
}

}  // namespace rodsim::parallel
