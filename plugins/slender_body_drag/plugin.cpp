// Registration of the slender_body_drag plugin: slender-body-drag.
#include "slender_body_drag.h"

#include <rodsim/plugin.h>

RODSIM_PLUGIN("slender_body_drag", "0.1.0", registry) {
  registry.addForce<rodsim::sbt::SlenderBodyDrag>();
}
