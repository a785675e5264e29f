// rodsim::process's engine (libs/process/include/rodsim/process/pool.h) with /bin/sh children: jobs
// in parallel, exit statuses and signals, a child that cannot start, stop at the first failure, and
// SIGINT to the driver (the running children get SIGINT and are reported interrupted).
#include <rodsim/process/pool.h>

#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace fs = std::filesystem;
using rodsim::process::Child;

namespace {

Child shell(const std::string& script, std::size_t id = 0, const fs::path& log = {}) {
  Child c;
  c.id = id;
  c.argv = {"/bin/sh", "-c", script};
  c.log = log;
  return c;
}

double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

TEST_CASE("runPool runs jobs at once and reports each exit status, signal and start error") {
  std::vector<Child> queue{shell("sleep 0.4; exit 0", 0), shell("sleep 0.4; exit 3", 1), shell("kill -TERM $$", 2)};
  Child missing;
  missing.id = 3;
  missing.argv = {"/nonexistent/program"};
  queue.push_back(missing);
  std::size_t next = 0;
  std::vector<Child> ended(queue.size());
  const auto start = std::chrono::steady_clock::now();
  const bool completed = rodsim::process::runPool(
      4, [&]() -> std::optional<Child> { return next < queue.size() ? std::optional<Child>(queue[next++]) : std::nullopt; },
      [&](const Child& c) { ended[c.id] = c; });
  CHECK(completed);
  CHECK(seconds(start) < 0.75);  // the two sleeps ran at once
  CHECK(ended[0].exit_code == 0);
  CHECK(ended[1].exit_code == 3);
  CHECK(ended[1].signal == 0);
  CHECK(ended[2].signal == SIGTERM);
  CHECK(ended[2].exit_code == 128 + SIGTERM);
  CHECK(ended[3].start_error == ENOENT);
  CHECK(ended[3].exit_code == 127);
  CHECK(ended[0].seconds >= 0.35);
}

TEST_CASE("runInOrder stops at the first failure and returns it; logTail gives the end of its log") {
  const fs::path dir = fs::temp_directory_path() / ("rodsim-test-process-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::vector<Child> children{shell("exit 0"), shell("echo one; echo two; echo three; exit 5", 0, dir / "b.log"), shell("exit 0"),
                              shell("exit 0")};
  const auto failed = rodsim::process::runInOrder(children, 1);
  REQUIRE(failed.has_value());
  CHECK(*failed == 1);
  CHECK(children[1].exit_code == 5);
  CHECK(children[2].pid == -1);  // not started after the failure
  CHECK(rodsim::process::logTail(dir / "b.log", 2) == "  two\n  three\n");
  std::vector<Child> fine{shell("exit 0"), shell("exit 0")};
  CHECK_FALSE(rodsim::process::runInOrder(fine, 2).has_value());
  fs::remove_all(dir);
}

TEST_CASE("SIGINT to the driver: nothing new starts, the running children get SIGINT and are reported interrupted") {
  std::vector<Child> ended;
  std::size_t handed = 0;
  const auto start = std::chrono::steady_clock::now();
  rodsim::process::PoolEvents events;
  events.started = [&](const Child&) {
    if (handed == 2) ::kill(::getpid(), SIGINT);  // blocked while the pool runs: the pool takes it
  };
  int stopping_signal = 0;
  events.stopping = [&](int sig, std::size_t) { stopping_signal = sig; };
  const bool completed = rodsim::process::runPool(
      2,
      [&]() -> std::optional<Child> { return handed < 5 ? std::optional<Child>(shell("exec sleep 5", handed++)) : std::nullopt; },
      [&](const Child& c) { ended.push_back(c); }, events);
  CHECK_FALSE(completed);
  CHECK(stopping_signal == SIGINT);
  CHECK(handed == 2);
  REQUIRE(ended.size() == 2);
  for (const Child& c : ended) {
    CHECK(c.interrupted);
    CHECK(c.signal == SIGINT);
  }
  CHECK(seconds(start) < 4);
}
