// rodsim's one child-process engine: runs programs as children several at once (spawnLogged: no
// shell, a log per child, a parent-death signal), waits for them by their SIGCHLD, stops on
// SIGINT/SIGTERM and reports each child's exit status. The studies (`rodsim run` children of
// compare, sweep, fit, optimize) and the pictures (povray, ffmpeg, python3 of render and plot)
// both drive their children with it; what they print stays with them (the callbacks).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace rodsim::process {

// One child, and what became of it.
struct Child {
  std::size_t id = 0;                // the caller's index
  std::vector<std::string> argv;     // argv[0]: the program's path (findProgram)
  std::filesystem::path log;         // standard output and error; empty: /dev/null
  std::filesystem::path directory;   // working directory; empty: this process's
  // Set by the pool:
  pid_t pid = -1;
  int start_error = 0;               // errno when it could not be started (exit_code is then 127)
  int exit_code = -1;                // exit status, or 128 + the signal that ended it
  int signal = 0;                    // that signal, 0 when the child exited
  bool interrupted = false;          // still running when this process got SIGINT or SIGTERM
  double seconds = 0;                // wall time
};

// What a pool tells its caller besides each child's end (all optional).
struct PoolEvents {
  std::function<void(const Child&)> started;                         // a child started
  std::function<void(int signal, std::size_t running)> stopping;     // SIGINT/SIGTERM arrived
  std::function<void(const std::vector<const Child*>&)> tick;        // the running children, every tick_seconds
  double tick_seconds = 0;                                           // 0: no ticks
};

// Starts the children `next` hands out (nullopt: no more; it is not asked again), at most `jobs`
// at once, and calls `finished` for each as it ends, in the order they end (a child that could
// not start: at once, with start_error set). SIGINT or SIGTERM to this process: no new child
// starts, the running ones get SIGINT (rodsim run then writes a checkpoint and stops) and are
// waited for, and `finished` sees them with `interrupted` set. Returns false when interrupted.
// SIGCHLD, SIGINT and SIGTERM are blocked while it runs (it waits for them with sigtimedwait; a
// stop signal that arrived while they were blocked before, e.g. between two batches, is seen at
// once); the previous mask is restored after. An exception from a callback stops the running
// children (SIGTERM), waits for them and propagates.
bool runPool(int jobs, const std::function<std::optional<Child>()>& next, const std::function<void(const Child&)>& finished,
             const PoolEvents& events = {});

// Runs `children` in order, at most `jobs` at once, and stores what became of each in it. None
// starts after one failed (could not start, or did not exit with status 0) or after SIGINT or
// SIGTERM. Returns the index of the first (lowest-index) child that failed or was interrupted,
// nullopt when all exited with status 0. `finished` (optional) sees each child as it ends.
std::optional<std::size_t> runInOrder(std::vector<Child>& children, int jobs,
                                      const std::function<void(const Child&)>& finished = {});

// The last `lines` lines of a text file (a failed child's log, for an error message), each
// indented by two spaces; only the last 64 KiB are read (a log may be long, or one endless line).
std::string logTail(const std::filesystem::path& file, int lines);

}  // namespace rodsim::process
