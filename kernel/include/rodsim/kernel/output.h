// What a run writes: summary.json, timeseries.csv, final.csv, vtk/<name>.pvd + frames (their
// formats: libs/run_record, libs/vtp).
// Every file is written as the run goes and flushed, so an interrupted run keeps what it had.
#pragma once

#include <rodsim/kernel/world.h>

#include <chrono>
#include <cstdint>
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
  std::string run_id;    // random, per run (a restart keeps it): which run a checkpoint belongs to
  std::string identity;  // hash of the setup (scene, referenced files, --set values, plugins)
  long long steps = 0;
  double sim_time = 0, wall_time_s = 0;
  long long newton_iterations = 0;
  long long step_cuts = 0;  // failed steps retried with half the step (on_failure = "substep")
  long long steps_cut_for_crossing = 0;  // of those, steps a swept check found a crossing in
  long long steps_with_contact = 0, contact_iterations = 0;
  double contact_wall_ms = 0;
  double min_gap = std::numeric_limits<double>::infinity();
  std::vector<double> report_sums;  // per report column, summed over the timeseries rows after row 0
  long long report_rows = 0;         // those rows (not in a checkpoint: the row schedule gives it)
};

// timeseries.csv is written in whole rows: rows are formatted into a buffer that goes to the file
// when it fills, at least once a second, and before every checkpoint and at the end (flushRows).
// A write that fails part-way (full disk) is cut back to the last whole row.
class OutputWriter {
 public:
  // A new run into `dir` (created and cleared by RunDirectory).
  OutputWriter(const Scene& scene, std::string dir, std::vector<std::string> probe_names);
  // Continues the output of an interrupted run: keeps the first `rows_kept` timeseries rows (the
  // last one of step `last_row_step`) and the first frame_times.size() frames, drops what the run
  // wrote after its checkpoint. InputError if the directory lacks rows or frames the checkpoint
  // counts on.
  OutputWriter(const Scene& scene, std::string dir, long long rows_kept, long long last_row_step,
               std::vector<double> frame_times);
  ~OutputWriter();

  void writeFrame(KernelWorld& world);  // next vtk frame
  // `now`: the caller's clock reading (steady_clock) for the flush interval, so that a row costs no
  // clock read of its own.
  void writeRow(long long step, double t, int iterations, double wall_ms, const ContactStats& contacts,
                double kinetic, double elastic, const std::vector<double>& probes,
                std::chrono::steady_clock::time_point now);
  void flushRows();  // the buffered rows to timeseries.csv (OutputError if the disk refuses them)
  void writeFinal(KernelWorld& world);  // final.csv
  void writeSummary(const RunSummary& s, const KernelWorld& world);  // const: reads contact column names
  std::string summaryText(const RunSummary& s, const KernelWorld& world) const;  // what writeSummary writes

  const std::string& dir() const { return dir_; }
  const std::vector<double>& frameTimes() const { return frame_times_; }

 private:
  void writePvd();
  void openTimeseries(bool truncate);
  void writeObstacles();  // vtk/obstacles.csv: the scene's fixed geometry, for `rodsim render`

  const Scene& scene_;
  std::string dir_;
  int timeseries_ = -1;               // file descriptor of timeseries.csv, -1 without csv output
  std::uintmax_t timeseries_size_ = 0;  // bytes of whole rows in the file
  std::string rows_;                  // formatted rows not yet written
  std::chrono::steady_clock::time_point last_flush_;
  std::vector<double> frame_times_;
};

// Writes `text` to `path` atomically (temporary file, then rename).
void writeFileAtomic(const std::string& path, const std::string& text);

}  // namespace rodsim::kernel
