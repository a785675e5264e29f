// rodsim optimize when configure found no pagmo2: the verb exists and says why it cannot run.
#include "optimize.h"

#include <rodsim/kernel/scene.h>

namespace rodsim::studies {

int optimizeCommand(const std::vector<std::string>&, const std::string&) {
  throw kernel::InputError("rodsim optimize: this rodsim was built without pagmo2 (Debian: libpagmo-dev); install it and reconfigure");
}

}  // namespace rodsim::studies
