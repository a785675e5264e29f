// Running the external programs rodsim render and rodsim plot drive (povray, ffmpeg, python3),
// several at once; each started by rodsim::process::spawnLogged (no shell) and found on PATH by
// rodsim::process::findProgram.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace rodsim::viz {

struct Job {
  std::vector<std::string> argv;   // argv[0]: the program's path
  std::filesystem::path directory; // working directory; empty: the current one
  std::filesystem::path log;       // standard output and error go here
};

// Runs the jobs, at most `parallel` at a time, in order. With a non-empty `progress` label and a
// terminal on standard output, keeps one line "<label> k/N" up to date. Returns the index of the
// first job that failed (could not start, or exited with a non-zero status), after waiting for the
// jobs already running; none are started after a failure. Jobs run in batches show one count:
// `before` of `total` (0: jobs.size()) were done before this batch.
std::optional<std::size_t> runJobs(const std::vector<Job>& jobs, int parallel, const std::string& progress,
                                   std::size_t before = 0, std::size_t total = 0);

// The last `lines` lines of a text file (a child's log, for an error message).
std::string tailOf(const std::filesystem::path& file, int lines);

}  // namespace rodsim::viz
