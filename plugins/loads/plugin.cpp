// Registration of the loads plugin: gravity, point-load, damping.
#include "loads.h"

#include <rodsim/plugin.h>

RODSIM_PLUGIN("loads", "0.1.0", registry) {
  registry.addForce<rodsim::loads::Gravity>();
  registry.addForce<rodsim::loads::PointLoad>();
  registry.addForce<rodsim::loads::Damping>();
}
