#include "cosserat_clamp.h"
#include "cosserat_rod.h"

#include <rodsim/plugin.h>

RODSIM_PLUGIN("rod_cosserat", "0.1.0", registry) {
  registry.addRod<rodsim::CosseratRod>();
  registry.addConstraint<rodsim::CosseratClamp>();
}
