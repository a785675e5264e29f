// rodsim fit when configure found no Ceres Solver: the verb exists and says why it cannot run.
#include "fit.h"

#include <rodsim/kernel/scene.h>

namespace rodsim::studies {

int fitCommand(const std::vector<std::string>&, const std::string&) {
  throw kernel::InputError("rodsim fit: this rodsim was built without Ceres Solver (Debian: libceres-dev); install it and reconfigure");
}

}  // namespace rodsim::studies
