// The rod_der plugin's one entry point.
#include "der_rod.h"

#include <rodsim/plugin.h>

RODSIM_PLUGIN("rod_der", "0.1.0", registry) { registry.addRod<rodsim::DerRod>(); }
