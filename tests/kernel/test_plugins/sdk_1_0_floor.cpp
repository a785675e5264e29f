// A contact plugin as a third party wrote it against SDK 1.0 (tests/kernel/sdk_1_0 comes first on
// its include path and RODSIM_SDK_MINOR is 0): a soft floor z = 0 under every node, offered through
// the 1.0 capability ForceContact. The kernel of a later 1.x must load it and drive it.
#include <rodsim/plugin.h>

#include <algorithm>

namespace {

class SoftFloor final : public rodsim::Contact, public rodsim::ForceContact {
  RODSIM_INTERFACES(SoftFloor, rodsim::ForceContact)

 public:
  static rodsim::Schema schema() {
    rodsim::Schema s{"sdk10-floor", "A linear penalty floor at z = 0 (test plugin built against SDK 1.0)."};
    s.add<double>("stiffness", 1e3, "Penalty stiffness.").unit("N/m").greater(0);
    return s;
  }
  explicit SoftFloor(const rodsim::Params& p) : Contact(p), k_(p.real("stiffness")) {}
  void bind(rodsim::World& world) override { world_ = &world; }
  void addForce(const rodsim::EvalContext& ctx, const rodsim::Vec&, rodsim::Vec& f) override {
    forEachNode(ctx, [&](int z, double depth) { f[z] += k_ * depth; });
  }
  void addStiffness(const rodsim::EvalContext& ctx, rodsim::StiffnessSink& K) override {
    forEachNode(ctx, [&](int z, double) { K.add(z, z, k_); });
  }
  double energy(const rodsim::EvalContext& ctx) const override {
    double e = 0;
    forEachNode(ctx, [&](int, double depth) { e += 0.5 * k_ * depth * depth; });
    return e;
  }

 private:
  // Calls f(z DOF, depth below the floor) for every node below z = 0.
  template <class F> void forEachNode(const rodsim::EvalContext& ctx, F&& f) const {
    for (int r = 0; r < world_->numRods(); ++r) {
      const rodsim::Rod& rod = world_->rod(r);
      for (int n = 0; n < rod.numNodes(); ++n) {
        const int z = rod.globalPositionDof(n) + 2;
        if ((*ctx.q)[z] < 0) f(z, -(*ctx.q)[z]);
      }
    }
  }
  double k_;
  rodsim::World* world_ = nullptr;
};

}  // namespace

RODSIM_PLUGIN("sdk10_floor", "1.0.0", registry) { registry.addContact<SoftFloor>(); }
