// anchor-spring: a linear spring that pulls one node of one rod toward a fixed point.
//
// The complete example of docs/writing-a-plugin.md. With x the node position (m), a the anchor
// (m) and k the stiffness (N/m):
//
//   potential energy  E(x) = 1/2 k |x - a|^2           (J)
//   force             F(x) = -dE/dx = -k (x - a)       (N, on the node's x, y, z DOFs)
//   stiffness         K    = -dF/dx =  k I3            (N/m, the Hessian of E)
//
// The spring is a support, not an applied load: it is NOT multiplied by ctx.load_scale (the static
// solver ramps loads with it; a support must be fully present from the first load increment).
#include <rodsim/sdk.h>

#include <string>

namespace {

class AnchorSpring final : public rodsim::Force {
 public:
  // Declared once: validates scenes, prints `rodsim describe anchor-spring`, feeds the docs.
  static rodsim::Schema schema() {
    rodsim::Schema s{"anchor-spring",
                     "Linear spring of stiffness k pulling one node toward a fixed anchor point: "
                     "F = -k (x - anchor), E = k |x - anchor|^2 / 2, K = k I."};
    s.required<std::string>("rod", "Name of the rod the spring is attached to.");
    s.add<int>("node", -1, "Node the spring pulls; negative indexes count from the end (-1: last node).");
    s.required<rodsim::Vec3>("anchor", "Fixed point the node is pulled toward.").unit("m");
    s.required<double>("stiffness", "Spring stiffness k.").unit("N/m").greater(0);
    return s;
  }

  // Params are already validated against schema(): types, ranges and required keys are checked.
  explicit AnchorSpring(const rodsim::Params& p)
      : Force(p),
        rod_name_(p.string("rod")),
        node_(p.integer("node")),
        anchor_(p.vec3("anchor")),
        k_(p.real("stiffness")) {}

  // What the schema cannot check: the rod exists and has that node. A ParamError names the key;
  // the kernel prefixes the scene file:line:column of that key.
  void bind(rodsim::World& world) override {
    rodsim::Rod* rod = world.findRod(rod_name_);
    if (!rod) {
      std::string names;
      for (int i = 0; i < world.numRods(); ++i) names += (i ? ", '" : "'") + world.rod(i).name() + "'";
      throw rodsim::ParamError("rod", "no rod named '" + rod_name_ + "' (rods: " + names + ")");
    }
    const int node = rod->resolveNode(node_);
    if (node < 0)
      throw rodsim::ParamError("node", "node " + std::to_string(node_) + " is out of range: rod '" + rod_name_ +
                                           "' has " + std::to_string(rod->numNodes()) + " nodes (0.." +
                                           std::to_string(rod->numNodes() - 1) + ", or -1..-" +
                                           std::to_string(rod->numNodes()) + ")");
    dof_ = rod->globalPositionDof(node);  // global index of x; y and z follow
  }

  // F = -k (x - a), added in global indexing.
  void addForce(const rodsim::EvalContext& ctx, rodsim::Vec& f) override {
    f.segment<3>(dof_) -= k_ * (position(ctx) - anchor_);
  }

  // K = -dF/dx = k I3. Always the same three entries in the same order, so the kernel refills the
  // existing sparse matrix instead of rebuilding it.
  void addStiffness(const rodsim::EvalContext& /*ctx*/, rodsim::StiffnessSink& K) override {
    for (int i = 0; i < 3; ++i) K.add(dof_ + i, dof_ + i, k_);
  }

  double potentialEnergy(const rodsim::EvalContext& ctx) const override {
    return 0.5 * k_ * (position(ctx) - anchor_).squaredNorm();
  }

 private:
  rodsim::Vec3 position(const rodsim::EvalContext& ctx) const { return ctx.q->segment<3>(dof_); }

  std::string rod_name_;
  long long node_;
  rodsim::Vec3 anchor_;
  double k_;
  int dof_ = -1;
};

}  // namespace

// The one exported entry point: plugin name and version, then the registration body.
RODSIM_PLUGIN("anchor-spring", "1.0.0", registry) { registry.addForce<AnchorSpring>(); }
