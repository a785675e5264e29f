// A plugin built for another ABI version (RODSIM_ABI_VERSION is overridden on the command line).
#include <rodsim/plugin.h>

RODSIM_PLUGIN("bad_abi", "0.0.1", registry) { (void)registry; }
