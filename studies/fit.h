// rodsim fit: estimate scene keys from measured probe values by bounded nonlinear least squares
// (Ceres Solver). Format, outputs and validation: docs/inverse.md.
#pragma once

#include <string>
#include <vector>

namespace rodsim::studies {

// `rodsim fit ARGS...` (the arguments after the verb). Returns 0, 3 when a run failed, the fit
// failed or it was interrupted; throws InputError (exit 2) on bad input before anything is written.
int fitCommand(const std::vector<std::string>& args, const std::string& executable);

}  // namespace rodsim::studies
