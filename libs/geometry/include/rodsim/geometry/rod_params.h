// Parameters every rod model declares the same way (der, cosserat): material constants and point
// masses. One declaration, one entry per key in the generated parameter reference.
#pragma once

#include <rodsim/params.h>

#include <utility>
#include <vector>

namespace rodsim::geometry {

// Parameters every rod model shares: radius, density, youngs_modulus, poisson_ratio,
// shear_modulus, point_mass_nodes, point_masses (geometry.*: declareCenterlineParams, centerline.h).
void declareMaterialParams(Schema& s);

// The point masses of `point_mass_nodes` / `point_masses` (declared by declareMaterialParams):
// (node index, kg), negative nodes resolved from the end; ParamError on a length mismatch, a node
// out of range or a negative mass. Empty when the rod has none.
std::vector<std::pair<int, double>> readPointMasses(const Params& p, int nodes);

}  // namespace rodsim::geometry
