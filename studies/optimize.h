// rodsim optimize: minimize or maximize a statistic of a probe over bounded scene keys with CMA-ES
// (pagmo2). Format, outputs, determinism and resuming: docs/inverse.md.
#pragma once

#include <string>
#include <vector>

namespace rodsim::studies {

// `rodsim optimize ARGS...` (the arguments after the verb). Returns 0, 3 when interrupted; throws
// InputError (exit 2) on bad input before anything is written.
int optimizeCommand(const std::vector<std::string>& args, const std::string& executable);

}  // namespace rodsim::studies
