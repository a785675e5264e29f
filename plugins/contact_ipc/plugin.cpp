// Registration of the contact_ipc plugin: the "ipc" contact model.
#include "ipc_contact.h"

#include <rodsim/plugin.h>

RODSIM_PLUGIN("contact_ipc", "0.1.0", registry) { registry.addContact<rodsim::ipc::IpcContact>(); }
