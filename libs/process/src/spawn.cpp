#include <rodsim/process/spawn.h>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <sstream>
#include <thread>

namespace rodsim::process {

namespace fs = std::filesystem;

pid_t spawnLogged(const std::vector<std::string>& argv, const fs::path& log, const fs::path& directory, int* error) {
  // fork + exec rather than posix_spawn: only the child itself can ask for a parent-death signal.
  // Everything the child needs is prepared here; between fork and exec it makes only
  // async-signal-safe calls.
  const std::string log_path = log.empty() ? "/dev/null" : fs::absolute(log).string();  // before the chdir
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  if (argv.empty()) {
    if (error) *error = EINVAL;
    return -1;
  }
  int report[2];  // the child writes errno here when it cannot exec; closed by a successful exec
  if (::pipe2(report, O_CLOEXEC) != 0) {
    if (error) *error = errno;
    return -1;
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    auto fail = [&]() {
      const int e = errno;
      if (::write(report[1], &e, sizeof e) < 0) _exit(127);
      _exit(127);
    };
    ::close(report[0]);
    // A child must not outlive a driver that was killed (SIGKILL cannot be caught, so the driver
    // cannot stop its children): SIGTERM then ends it as a stop request would (rodsim run writes a
    // checkpoint). getppid after prctl: the parent may have died before the request was made.
    if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0) fail();
    if (::getppid() != parent) _exit(128 + SIGTERM);
    sigset_t none;
    sigemptyset(&none);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    if (::sigaction(SIGINT, &dfl, nullptr) != 0 || ::sigaction(SIGTERM, &dfl, nullptr) != 0) fail();
    if (::sigprocmask(SIG_SETMASK, &none, nullptr) != 0) fail();
    if (!directory.empty() && ::chdir(directory.c_str()) != 0) fail();
    const int out = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int in = ::open("/dev/null", O_RDONLY);
    if (out < 0 || in < 0 || ::dup2(out, STDOUT_FILENO) < 0 || ::dup2(out, STDERR_FILENO) < 0 || ::dup2(in, STDIN_FILENO) < 0) fail();
    if (out > STDERR_FILENO) ::close(out);
    if (in > STDERR_FILENO) ::close(in);
    ::execv(args[0], args.data());
    fail();
  }
  ::close(report[1]);
  int err = pid < 0 ? errno : 0;
  if (pid > 0) {
    int child_errno = 0;
    ssize_t n;
    while ((n = ::read(report[0], &child_errno, sizeof child_errno)) < 0 && errno == EINTR) {
    }
    if (n == static_cast<ssize_t>(sizeof child_errno)) {  // it could not exec: reap it, report why
      ::waitpid(pid, nullptr, 0);
      err = child_errno;
    }
  }
  ::close(report[0]);
  if (error) *error = err;
  return err == 0 ? pid : -1;
}

int jobsOrCores(int jobs) {
  return jobs > 0 ? jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

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

}  // namespace rodsim::process
