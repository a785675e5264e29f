// Registration of the contact_imc plugin: the "imc" contact model.
#include "imc_contact.h"

#include <rodsim/plugin.h>

RODSIM_PLUGIN("contact_imc", "0.1.0", registry) { registry.addContact<rodsim::imc::ImcContact>(); }
