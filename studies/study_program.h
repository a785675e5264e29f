// `rodsim fit` and `rodsim optimize` run as programs of their own (rodsim-fit, rodsim-optimize in
// <prefix>/libexec/rodsim/, the build tree's libexec/rodsim/): Ceres Solver, pagmo2 and the BLAS,
// MKL and TBB they bring are loaded by those two only. Linked into rodsim, they made every
// `rodsim run` map them at start-up (27 ms and 6,600 page faults of a 32 ms start; the fit's and
// the optimizer's own child runs paid it too).
#pragma once

#include <string>
#include <vector>

namespace rodsim::studies {

// Replaces this process by `program` (found next to `executable`: ../libexec/rodsim/, or in
// $RODSIM_LIBEXEC_DIR), called as `program --rodsim EXECUTABLE ARGS...`, so that its child runs
// use this rodsim. Returns only by throwing InputError (exit 2): the program is missing or cannot
// be started. `verb` names the command in that message.
[[noreturn]] void execStudyProgram(const std::string& program, const std::string& verb,
                                   const std::vector<std::string>& args, const std::string& executable);

}  // namespace rodsim::studies
