// Starting the external programs rodsim drives: the `rodsim run` children of compare, sweep, fit
// and optimize (studies/), and povray, ffmpeg and python3 for render and plot (viz/). One way to
// start a child, so that both layers give it the same standard streams and signal state.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace rodsim::process {

// Starts argv[0] (a path: no PATH search, see findProgram) with `argv`, without a shell (fork, exec):
// - standard output and error go to `log` (created or truncated; /dev/null when empty);
// - standard input reads /dev/null (a child never waits on the terminal);
// - in `directory` (empty: this process's working directory; `log` is taken before the change);
// - with no signal blocked and SIGINT and SIGTERM at their defaults, whatever this process blocks or
//   ignores (a pool that waits with sigtimedwait blocks them; a shell's `cmd &` ignores SIGINT), so
//   that an interrupt reaches the child as the user expects;
// - with a parent-death signal (SIGTERM, Linux prctl): a child of a driver killed with SIGKILL is
//   stopped, not orphaned (a rodsim run child writes a checkpoint and stops, as on any SIGTERM).
//   Linux sends it when the thread that started the child ends: start children from a thread
//   that lives as long as they do (the drivers start them from their main thread).
// Returns the child's pid, or -1 with the error number in *error (when given).
pid_t spawnLogged(const std::vector<std::string>& argv, const std::filesystem::path& log,
                  const std::filesystem::path& directory = {}, int* error = nullptr);

// How many children to run at once: `jobs` when it is positive (a --jobs option), else the number
// of hardware threads (at least 1).
int jobsOrCores(int jobs);

// The full path of `program` on PATH (a name with a '/' is checked as it is), empty when it is not
// there or not executable.
std::string findProgram(const std::string& program);

}  // namespace rodsim::process
