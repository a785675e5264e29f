// Rods the Cosserat rod tests share.
#pragma once

#include "cosserat_rod.h"

#include <rodsim/testing/fake_world.h>

#include <string>

namespace rodsim::test {

// A helix laid out on a straight rest shape (every element bent, twisted and strained), soft enough
// that finite differences resolve its forces.
inline Params helixRodParams(int nodes) {
  return testing::makeParams(CosseratRod::schema(), {{"nodes", nodes},
                                                     {"radius", 0.02},
                                                     {"density", 1000.0},
                                                     {"youngs_modulus", 1e6},
                                                     {"shear_modulus", 3e5},
                                                     {"geometry.shape", std::string("helix")},
                                                     {"geometry.helix_radius", 0.2},
                                                     {"geometry.pitch", 0.3},
                                                     {"geometry.axial_length", 0.6},
                                                     {"rest_shape", std::string("straight")}},
                             "rod");
}

}  // namespace rodsim::test
