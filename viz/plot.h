// `rodsim plot OUT_DIR`: energies, linear solves per step, contacts and minimum gap, probes, as PNG
// files in OUT_DIR, drawn by plot_run.py (matplotlib), installed beside rodsim in share/rodsim/.
#pragma once

#include <string>
#include <vector>

namespace rodsim::viz {

struct PlotOptions {
  std::string run_dir;
  bool quiet = false;
};

PlotOptions parsePlotArguments(const std::vector<std::string>& args);

// `executable`: rodsim's path; the script is ../share/rodsim/plot_run.py from its folder, in the
// build tree and after `cmake --install` alike.
int runPlot(const PlotOptions& options, const std::string& executable);

}  // namespace rodsim::viz
