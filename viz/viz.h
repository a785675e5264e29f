// The pictures layer, above the kernel like studies/: `rodsim render` (POV-Ray images, an ffmpeg
// movie) and `rodsim plot` (the standard plots of timeseries.csv, by the installed plot_run.py).
// Neither needs plugins: they read what a run wrote.
#pragma once

#include <string>
#include <vector>

namespace rodsim::viz {

// Usage lines of both verbs, for the kernel's help text.
extern const char* const kUsage;

// Runs `verb` ("render" or "plot") with the arguments after it; `executable` is rodsim's own path
// (plot finds plot_run.py relative to it). Returns the exit status; bad input throws InputError.
int runVerb(const std::string& verb, const std::vector<std::string>& args, const std::string& executable);

}  // namespace rodsim::viz
