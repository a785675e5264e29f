// FCLIB HDF5 problems (only when built with libfclib: RODSIM_AC_HAVE_FCLIB).
#pragma once

#include "ac_solver.h"

namespace rodsim::ac {

bool isHdf5(const std::string& path);
// The local or global problem of an FCLIB file (2D local problems embedded in 3D). If guess_r is
// given and the file has /guesses, the first guess's r is written there.
Problem readFclib(const std::string& path, Vec* guess_r = nullptr);

}  // namespace rodsim::ac
