// What a run writes: summary.json, timeseries.csv, final.csv, vtk/<name>.pvd + frames.
// Every file is written as the run goes and flushed, so an interrupted run keeps what it had.
#pragma once

#include "world.h"

#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace rodsim::kernel {

// Output could not be written (disk full, directory removed): the run stops with status 3.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct RunSummary {
  std::string status = "running";  // "running" | "ok" | "failed"
  std::string reason;
  long long steps = 0;
  double sim_time = 0, wall_time_s = 0;
  long long newton_iterations = 0;
  long long step_cuts = 0;  // failed steps retried with half the step (on_failure = "substep")
  long long steps_cut_for_crossing = 0;  // of those, steps a swept check found a crossing in
  long long steps_with_contact = 0, contact_iterations = 0;
  double contact_wall_ms = 0;
  double min_gap = std::numeric_limits<double>::infinity();
  std::vector<double> report_sums;  // per contact report column, summed over steps
};

class OutputWriter {
 public:
  OutputWriter(const Scene& scene, std::string dir, std::vector<std::string> probe_names);
  // Continues the output of an interrupted run: keeps timeseries rows up to `step` and the
  // first frame_times.size() frames, drops what the run wrote after its checkpoint.
  OutputWriter(const Scene& scene, std::string dir, long long step, std::vector<double> frame_times);
  ~OutputWriter();

  void writeFrame(KernelWorld& world);  // next vtk frame
  void writeRow(long long step, double t, int iterations, double wall_ms, const ContactStats& contacts,
                double kinetic, double elastic, const std::vector<double>& probes);
  void writeFinal(KernelWorld& world);  // final.csv
  void writeSummary(const RunSummary& s, const KernelWorld& world);  // const: reads contact column names

  const std::string& dir() const { return dir_; }
  const std::vector<double>& frameTimes() const { return frame_times_; }

 private:
  void writePvd();
  void appendTimeseries(const std::string& line);

  const Scene& scene_;
  std::string dir_;
  std::FILE* timeseries_ = nullptr;
  std::vector<double> frame_times_;
};

// Writes `text` to `path` atomically (temporary file, then rename).
void writeFileAtomic(const std::string& path, const std::string& text);

}  // namespace rodsim::kernel
