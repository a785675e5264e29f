// A contact model that offers no coupling to any solver (test plugin): no force, no impulses. Every
// in-tree contact model now couples to every in-tree solver, so the kernel's composition check
// (a solver's Schema::require against what a contact provides) is tested with this one.
#include <rodsim/plugin.h>

namespace {

class InertContact final : public rodsim::Contact {
 public:
  static rodsim::Schema schema() {
    rodsim::Schema s{"test-inert-contact", "A contact model without any coupling to a solver (test plugin)."};
    rodsim::declareContactSelection(s);
    return s;
  }
  explicit InertContact(const rodsim::Params& p) : Contact(p) {}
};

}  // namespace

RODSIM_PLUGIN("test_inert_contact", "1.0.0", registry) { registry.addContact<InertContact>(); }
