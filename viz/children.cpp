#include "children.h"

#include <rodsim/process/spawn.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <fstream>
#include <map>
#include <sstream>

namespace rodsim::viz {

namespace fs = std::filesystem;

std::optional<std::size_t> runJobs(const std::vector<Job>& jobs, int parallel, const std::string& progress,
                                   std::size_t before, std::size_t total) {
  const bool show = !progress.empty() && isatty(STDOUT_FILENO);
  if (total == 0) total = jobs.size();
  std::map<pid_t, std::size_t> running;
  std::optional<std::size_t> failed;
  std::size_t next = 0, done = 0;
  while (done < jobs.size()) {
    while (!failed && next < jobs.size() && static_cast<int>(running.size()) < parallel) {
      const pid_t pid = process::spawnLogged(jobs[next].argv, jobs[next].log, jobs[next].directory);
      if (pid < 0) {
        failed = next;
        ++done;
      } else {
        running[pid] = next;
      }
      ++next;
    }
    if (running.empty()) break;  // a failure stopped new starts and nothing is left running
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) break;
    const auto it = running.find(pid);
    if (it == running.end()) continue;  // not ours
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0) && (!failed || it->second < *failed)) failed = it->second;
    running.erase(it);
    ++done;
    if (show) {
      std::printf("\r%s %zu/%zu", progress.c_str(), before + done, total);
      std::fflush(stdout);
    }
  }
  if (show && (failed || before + jobs.size() >= total)) std::printf("\n");
  return failed;
}

std::string tailOf(const fs::path& file, int lines) {
  // Only the last 64 KiB of a regular file are read: a log may be long, or hold one endless line.
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

}  // namespace rodsim::viz
