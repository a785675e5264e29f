#include "children.h"

#include <rodsim/process/spawn.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <deque>
#include <fstream>
#include <map>

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
  std::ifstream in(file);
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
