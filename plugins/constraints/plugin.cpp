// Registration of the constraints plugin: clamp, rotate, translate.
#include "rigid_constraints.h"

#include <rodsim/plugin.h>

RODSIM_PLUGIN("constraints", "0.1.0", registry) {
  registry.addConstraint<rodsim::constraints::Clamp>();
  registry.addConstraint<rodsim::constraints::Rotate>();
  registry.addConstraint<rodsim::constraints::Translate>();
}
