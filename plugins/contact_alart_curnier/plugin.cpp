// Registration of the alart-curnier contact model.
#include "ac_contact.h"

#include <rodsim/plugin.h>

RODSIM_PLUGIN("contact_alart_curnier", "0.1.0", registry) {
  registry.addContact<rodsim::ac::AlartCurnierContact>();
}
