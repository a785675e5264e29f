// Registration of the cosserat_ground plugin: ground (wall response and anisotropic friction with
// rolling) and muscle-torque (travelling muscle couple), the slithering snake of Gazzola et al. (2018).
#include "cosserat_ground.h"

#include <rodsim/plugin.h>

RODSIM_PLUGIN("cosserat_ground", "0.1.0", registry) {
  registry.addForce<rodsim::ground::Ground>();
  registry.addForce<rodsim::ground::MuscleTorque>();
}
