#include <rodsim/process/pool.h>
#include <rodsim/process/spawn.h>

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <fstream>
#include <sstream>

namespace rodsim::process {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

// Blocks SIGCHLD, SIGINT and SIGTERM for the lifetime of the pool so that sigtimedwait receives
// them; restores the previous mask after consuming what is left pending.
class WatchedSignals {
 public:
  WatchedSignals() {
    sigemptyset(&set_);
    for (int s : {SIGCHLD, SIGINT, SIGTERM}) sigaddset(&set_, s);
    pthread_sigmask(SIG_BLOCK, &set_, &previous_);
  }
  ~WatchedSignals() {
    const timespec zero{0, 0};
    while (sigtimedwait(&set_, nullptr, &zero) > 0) {
    }
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }
  WatchedSignals(const WatchedSignals&) = delete;
  WatchedSignals& operator=(const WatchedSignals&) = delete;
  // The next watched signal within `seconds`, 0 on timeout.
  int wait(double seconds) {
    timespec ts{static_cast<time_t>(seconds), static_cast<long>((seconds - std::floor(seconds)) * 1e9)};
    const int sig = sigtimedwait(&set_, nullptr, &ts);
    return sig > 0 ? sig : 0;
  }
  // A SIGINT or SIGTERM already pending, without waiting.
  bool stopPending() {
    sigset_t pending;
    sigpending(&pending);
    return sigismember(&pending, SIGINT) == 1 || sigismember(&pending, SIGTERM) == 1;
  }

 private:
  sigset_t set_{}, previous_{};
};

struct Running {
  Child child;
  Clock::time_point started;
};

// The end of a waited child, as Child reports it.
void ended(Child& c, int status, Clock::time_point started) {
  c.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  c.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  c.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + c.signal;
}

}  // namespace

bool runPool(int jobs, const std::function<std::optional<Child>()>& next, const std::function<void(const Child&)>& finished,
             const PoolEvents& events) {
  WatchedSignals signals;
  std::vector<Running> running;
  bool stopping = false, exhausted = false;
  auto last_tick = Clock::now();
  const double wait = events.tick && events.tick_seconds > 0 ? events.tick_seconds : 5.0;
  try {
    while (true) {
      stopping = stopping || signals.stopPending();
      while (!stopping && !exhausted && running.size() < static_cast<std::size_t>(std::max(1, jobs))) {
        std::optional<Child> c = next();
        if (!c) {
          exhausted = true;
          break;
        }
        int error = 0;
        c->pid = spawnLogged(c->argv, c->log, c->directory, &error);
        if (c->pid < 0) {
          c->start_error = error;
          c->exit_code = 127;
          finished(*c);
          continue;
        }
        running.push_back({std::move(*c), Clock::now()});
        if (events.started) events.started(running.back().child);
      }
      if (running.empty()) break;
      int sig = signals.wait(wait);
      // A Ctrl-C reaches the children too; one that already ended of it must not count as finished.
      if (sig == SIGCHLD && signals.stopPending()) sig = signals.wait(0);
      if ((sig == SIGINT || sig == SIGTERM) && !stopping) {
        stopping = true;
        if (events.stopping) events.stopping(sig, running.size());
        for (Running& r : running) {
          r.child.interrupted = true;
          ::kill(r.child.pid, SIGINT);
        }
      }
      for (std::size_t i = 0; i < running.size();) {
        int status = 0;
        if (::waitpid(running[i].child.pid, &status, WNOHANG) != running[i].child.pid) {
          ++i;
          continue;
        }
        Running r = std::move(running[i]);
        running.erase(running.begin() + static_cast<long>(i));
        ended(r.child, status, r.started);
        finished(r.child);
      }
      if (events.tick && events.tick_seconds > 0 && Clock::now() - last_tick > std::chrono::duration<double>(events.tick_seconds)) {
        last_tick = Clock::now();
        std::vector<const Child*> now;
        for (const Running& r : running) now.push_back(&r.child);
        events.tick(now);
      }
    }
  } catch (...) {
    // A callback failed: the children still running are stopped, not left behind.
    for (Running& r : running) ::kill(r.child.pid, SIGTERM);
    for (Running& r : running) ::waitpid(r.child.pid, nullptr, 0);
    throw;
  }
  return !stopping;
}

std::optional<std::size_t> runInOrder(std::vector<Child>& children, int jobs, const std::function<void(const Child&)>& finished) {
  std::size_t next = 0;
  bool failed = false;
  for (std::size_t i = 0; i < children.size(); ++i) children[i].id = i;
  runPool(
      jobs,
      [&]() -> std::optional<Child> {
        if (failed || next == children.size()) return std::nullopt;
        return children[next++];
      },
      [&](const Child& c) {
        children[c.id] = c;
        if (c.exit_code != 0) failed = true;
        if (finished) finished(c);
      });
  for (std::size_t i = 0; i < children.size(); ++i)
    if (children[i].exit_code != 0 || children[i].interrupted) return i;
  return std::nullopt;
}

std::string logTail(const fs::path& file, int lines) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return {};
  std::ifstream bytes(file, std::ios::binary | std::ios::ate);
  const std::streamoff size = bytes.tellg();
  const std::streamoff start = std::max<std::streamoff>(0, size - 64 * 1024);
  bytes.seekg(start);
  std::string text(static_cast<std::size_t>(std::max<std::streamoff>(0, size - start)), '\0');
  bytes.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(std::max<std::streamsize>(0, bytes.gcount())));
  std::istringstream in(text);
  std::deque<std::string> last;
  for (std::string line; std::getline(in, line);) {
    last.push_back(line);
    if (static_cast<int>(last.size()) > lines) last.pop_front();
  }
  std::string out;
  for (const auto& l : last) out += "  " + l + "\n";
  return out;
}

}  // namespace rodsim::process
