// What a run writes: summary.json, timeseries.csv, final.csv, vtk/<name>.pvd + frames.
// Every file is written as the run goes and flushed, so an interrupted run keeps what it had.
#pragma once

#include "world.h"

#include <cstdio>
#include <string>
#include <vector>

namespace rodsim::kernel {

struct RunSummary {
  std::string status = "running";  // "running" | "ok" | "failed"
  std::string reason;
  long long steps = 0;
  double sim_time = 0, wall_time_s = 0;
  long long newton_iterations = 0;
  long long steps_with_contact = 0, contact_iterations = 0;
  double contact_wall_ms = 0;
  double min_gap = std::numeric_limits<double>::infinity();
};

class OutputWriter {
 public:
  OutputWriter(const Scene& scene, std::string dir, std::vector<std::string> probe_names);
  ~OutputWriter();

  void writeFrame(KernelWorld& world);  // next vtk frame
  void writeRow(long long step, double t, int iterations, double wall_ms, const ContactStats& contacts,
                double kinetic, double elastic, const std::vector<double>& probes);
  void writeFinal(KernelWorld& world);  // final.csv
  void writeSummary(const RunSummary& s, const KernelWorld& world);

  const std::string& dir() const { return dir_; }

 private:
  void writePvd();

  const Scene& scene_;
  std::string dir_;
  std::FILE* timeseries_ = nullptr;
  std::vector<double> frame_times_;
};

// Writes `text` to `path` atomically (temporary file, then rename).
void writeFileAtomic(const std::string& path, const std::string& text);

}  // namespace rodsim::kernel
