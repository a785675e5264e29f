// SO(3) is rodsim::geometry's (libs/geometry, rodsim/geometry/so3.h). This header only keeps the
// names cosserat_clamp.cpp uses (cosserat::expSO3, cosserat::logSO3) while that file is being
// changed on another branch; delete it once cosserat_clamp.cpp includes <rodsim/geometry/so3.h>
// and calls geometry::expSO3 / geometry::logSO3.
#pragma once

#include <rodsim/geometry/so3.h>

namespace rodsim::cosserat {

using geometry::expSO3;
using geometry::logSO3;

}  // namespace rodsim::cosserat
