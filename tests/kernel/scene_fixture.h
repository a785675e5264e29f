// A small valid scene that the kernel tests break one line at a time.
#pragma once

#include "run_rodsim.h"

#include <string>
#include <vector>

namespace rodsim::test {

// Line numbers matter: tests assert them.
inline const char* kValidScene = R"(# line 1
[simulation]
duration = 0.02
dt = 0.01

[solver]
type = "implicit-euler"

[[rod]]
name = "beam"
model = "der"
nodes = 11
radius = 0.01
density = 1000.0
youngs_modulus = 1e6
geometry = { shape = "straight", start = [0, 0, 0], end = [0.5, 0, 0] }

[[force]]
type = "gravity"

[[constraint]]
name = "root"
type = "clamp"
rod = "beam"
nodes = [0, 1]

[output]
every = 0.01

[[probe]]
name = "tip_z"
type = "node-position"
rod = "beam"
node = -1
component = "z"
)";

// kValidScene with line `line` (1-based) replaced by `text`.
inline std::string sceneWithLine(int line, const std::string& text) {
  std::string s = kValidScene, out;
  int n = 1;
  std::size_t pos = 0;
  while (pos < s.size()) {
    std::size_t end = s.find('\n', pos);
    if (end == std::string::npos) end = s.size();
    out += (n == line ? text : s.substr(pos, end - pos)) + "\n";
    pos = end + 1;
    ++n;
  }
  return out;
}

// The fixture scene, `duration` long, with a frame every 0.02 s and a checkpoint every 0.05 s (all kept).
inline std::string checkpointScene(double duration) {
  std::string s = sceneWithLine(28, "every = 0.02\ncheckpoint_every = 0.05\ncheckpoint_keep = 100");
  s.replace(s.find("duration = 0.02"), 15, "duration = " + std::to_string(duration));
  return s;
}

// The fixture scene made to run about two seconds (Release), for signals and locks to arrive
// while it steps. The sanitizer build runs it far slower, so a tenth of the duration still lasts
// several seconds there (the SIGTERM test, which runs it to the end twice, took 219 s under ASan
// with the full duration and takes 36 s with a tenth).
inline std::string longRunScene() {
#ifdef RODSIM_SANITIZED
  const std::string duration = "duration = 4.0";
#else
  const std::string duration = "duration = 40.0";
#endif
  std::string s = sceneWithLine(28, "every = 0.5");
  s.replace(s.find("duration = 0.02"), 15, duration);
  s.replace(s.find("nodes = 11"), 10, "nodes = 200");
  return s;
}

// timeseries.csv without its wall-clock columns: `wall_ms` and every report column whose name ends
// in `_ms` (rss's assembly_ms and solve_ms, alart-curnier's solve_ms). They measure the machine, not
// the physics: two runs of a scene must agree on everything else.
inline std::string withoutWallClock(const std::string& csv) {
  std::vector<bool> timing;  // per column, from the header
  std::string out;
  std::size_t pos = 0;
  while (pos < csv.size()) {
    std::size_t end = csv.find('\n', pos);
    if (end == std::string::npos) end = csv.size();
    const std::string line = csv.substr(pos, end - pos);
    std::size_t column = 0, cell = 0;
    std::string kept;
    for (std::size_t comma = 0; comma != std::string::npos; cell = comma + 1, ++column) {
      comma = line.find(',', cell);
      const std::string value = line.substr(cell, comma == std::string::npos ? std::string::npos : comma - cell);
      if (pos == 0) timing.push_back(value.size() > 3 && value.compare(value.size() - 3, 3, "_ms") == 0);
      if (column < timing.size() && timing[column]) continue;
      kept += (kept.empty() && column == 0 ? "" : ",") + value;
    }
    out += kept + "\n";
    pos = end + 1;
  }
  return out;
}

}  // namespace rodsim::test
