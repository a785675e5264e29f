#include <rodsim/geometry/rod_params.h>

#include <string>

namespace rodsim::geometry {

// Shared by every rod model (der, cosserat): one declaration, one reference page entry each.
void declareMaterialParams(Schema& s) {
  s.required<double>("radius", "Cross-section radius r (h in the IMC paper).").unit("m").greater(0);
  s.add<double>("density", 1000.0, "Mass density rho.").unit("kg/m^3").greater(0);
  s.required<double>("youngs_modulus", "Young's modulus E.").unit("Pa").greater(0);
  s.add<double>("poisson_ratio", 0.5, "Poisson ratio nu: G = E / (2 (1 + nu)) unless shear_modulus is given.")
      .greater(-1)
      .atMost(0.5);
  s.optional<double>("shear_modulus", "Shear modulus G; overrides poisson_ratio.").unit("Pa").greater(0);
  s.optional<std::vector<int>>("point_mass_nodes",
                               "Nodes that carry an extra point mass (a tip mass, a bead), one per entry of "
                               "`point_masses`; negative counts from the end (-1 is the last node).");
  s.optional<std::vector<double>>("point_masses",
                                  "Point masses added to the lumped mass of `point_mass_nodes` (translation only): "
                                  "they have inertia and weight, no rotational inertia.")
      .unit("kg");
}

std::vector<std::pair<int, double>> readPointMasses(const Params& p, int nodes) {
  std::vector<std::pair<int, double>> out;
  if (!p.has("point_mass_nodes") && !p.has("point_masses")) return out;
  if (!p.has("point_mass_nodes") || !p.has("point_masses"))
    throw ParamError(p.has("point_masses") ? "point_masses" : "point_mass_nodes",
                     "'point_mass_nodes' and 'point_masses' go together (one mass per node)");
  const auto idx = p.integers("point_mass_nodes");
  const auto& mass = p.reals("point_masses");
  if (idx.size() != mass.size())
    throw ParamError("point_masses", "'point_masses' has " + std::to_string(mass.size()) + " entries but " +
                                         "'point_mass_nodes' has " + std::to_string(idx.size()));
  for (std::size_t k = 0; k < idx.size(); ++k) {
    const long long i = idx[k] < 0 ? idx[k] + nodes : idx[k];
    if (i < 0 || i >= nodes)
      throw ParamError("point_mass_nodes", "node " + std::to_string(idx[k]) + " is out of range for a rod of " +
                                               std::to_string(nodes) + " nodes");
    if (!(mass[k] >= 0)) throw ParamError("point_masses", "point masses must be >= 0 kg");
    out.emplace_back(static_cast<int>(i), mass[k]);
  }
  return out;
}

}  // namespace rodsim::geometry
