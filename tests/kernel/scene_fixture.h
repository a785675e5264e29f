// A small valid scene that the kernel tests break one line at a time.
#pragma once

#include "run_rodsim.h"

#include <string>

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

// timeseries.csv without its wall_ms column, the one column that measures the machine, not the
// physics: two runs of a scene must agree on everything else.
inline std::string withoutWallClock(const std::string& csv) {
  std::string out;
  std::size_t pos = 0;
  while (pos < csv.size()) {
    std::size_t end = csv.find('\n', pos);
    if (end == std::string::npos) end = csv.size();
    const std::string line = csv.substr(pos, end - pos);
    const std::size_t c3 = line.find(',', line.find(',', line.find(',') + 1) + 1), c4 = line.find(',', c3 + 1);
    out += line.substr(0, c3) + line.substr(c4) + "\n";
    pos = end + 1;
  }
  return out;
}

}  // namespace rodsim::test
