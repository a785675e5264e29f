// Registration of the fluid_rss plugin: the "rss" force.
#include "rss_force.h"

#include <rodsim/plugin.h>

RODSIM_PLUGIN("fluid_rss", "0.1.0", registry) { registry.addForce<rodsim::rss::RssForce>(); }
