#include "children.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <map>
#include <sstream>

extern char** environ;

namespace rodsim::viz {

namespace fs = std::filesystem;

std::string findProgram(const std::string& program) {
  if (program.find('/') != std::string::npos) return access(program.c_str(), X_OK) == 0 ? program : "";
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / program;
    if (access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate)) return candidate.string();
  }
  return {};
}

namespace {

pid_t start(const Job& job) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!job.directory.empty()) posix_spawn_file_actions_addchdir_np(&actions, job.directory.c_str());
  // The log path is made absolute first: the chdir above happens before the open.
  const std::string log = job.log.empty() ? "/dev/null" : fs::absolute(job.log).string();
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> argv;
  for (const std::string& a : job.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int err = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return err == 0 ? pid : -1;
}

}  // namespace

std::optional<std::size_t> runJobs(const std::vector<Job>& jobs, int parallel, const std::string& progress) {
  const bool show = !progress.empty() && isatty(STDOUT_FILENO);
  std::map<pid_t, std::size_t> running;
  std::optional<std::size_t> failed;
  std::size_t next = 0, done = 0;
  while (done < jobs.size()) {
    while (!failed && next < jobs.size() && static_cast<int>(running.size()) < parallel) {
      const pid_t pid = start(jobs[next]);
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
      std::printf("\r%s %zu/%zu", progress.c_str(), done, jobs.size());
      std::fflush(stdout);
    }
  }
  if (show) std::printf("\n");
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
