// Two threads sharing the parallel parts of a computation that one of them drives (the fluid
// worker of an overlapped step drives GMRES; the solver's thread, waiting for the result, helps).
// The driver posts a task in two parts and runs part 0; the helper runs part 1 if it is waiting in
// help(), otherwise the driver runs both. No allocation and no locks: the waits last microseconds.
#pragma once

#include <atomic>
#include <type_traits>

namespace rodsim::rss {

// Busy-wait hint for the short waits between the two threads.
inline void spinPause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

class TwoThreadTeam {
 public:
  // Driver: part(0) here and part(1) on the helper when there is one; returns when both are done.
  template <class Part> void run(Part&& part) {
    if (!helper_waiting_.load()) {
      part(0);
      part(1);
      return;
    }
    task_ = &part;
    call_ = [](void* f, int p) { (*static_cast<std::remove_reference_t<Part>*>(f))(p); };
    const unsigned seq = posted_.load() + 1;
    posted_.store(seq);
    part(0);
    while (finished_.load() != seq) spinPause();
  }

  // Helper: runs the posted parts until finished() is true. The driver must not let finished()
  // become true while a part it posted is outstanding (it waits for it in run()).
  template <class Finished> void help(Finished&& finished) {
    unsigned seen = posted_.load();
    helper_waiting_.store(true);
    while (!finished()) {
      const unsigned p = posted_.load();
      if (p == seen) {
        spinPause();
        continue;
      }
      call_(task_, 1);
      seen = p;
      finished_.store(p);
    }
    helper_waiting_.store(false);
  }

 private:
  std::atomic<bool> helper_waiting_{false};
  std::atomic<unsigned> posted_{0}, finished_{0};
  void* task_ = nullptr;
  void (*call_)(void*, int) = nullptr;
};

}  // namespace rodsim::rss
