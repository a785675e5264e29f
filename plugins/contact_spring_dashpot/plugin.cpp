// Registration of the contact_spring_dashpot plugin: the "spring-dashpot" contact model.
#include "spring_dashpot.h"

#include <rodsim/plugin.h>

RODSIM_PLUGIN("contact_spring_dashpot", "0.1.0", registry) {
  registry.addContact<rodsim::spring_dashpot::SpringDashpotContact>();
}
