// The parameters both rod models declare: material constants and point masses.
#include <rodsim/geometry/rod_params.h>

#include <doctest/doctest.h>

#include <string>

using namespace rodsim::geometry;
using rodsim::ParamError;
using rodsim::Params;
using rodsim::Schema;
using rodsim::toValue;

TEST_CASE("declareMaterialParams declares the shared keys; readPointMasses resolves and checks them") {
  Schema s{"test", "rod parameters"};
  declareMaterialParams(s);
  for (const char* key : {"radius", "density", "youngs_modulus", "poisson_ratio", "shear_modulus",
                          "point_mass_nodes", "point_masses"}) {
    bool found = false;
    for (const auto& spec : s.params()) found = found || spec.name == key;
    CAPTURE(key);
    CHECK(found);
  }
  Params p("rod");
  CHECK(readPointMasses(p, 5).empty());
  p.set("point_mass_nodes", toValue(std::vector<int>{-1, 1}));
  p.set("point_masses", toValue(std::vector<double>{0.25, 0.5}));
  const auto m = readPointMasses(p, 5);
  REQUIRE(m.size() == 2);
  CHECK(m[0] == std::pair<int, double>{4, 0.25});
  CHECK(m[1] == std::pair<int, double>{1, 0.5});
  auto key = [](const Params& q, int nodes) {
    try {
      readPointMasses(q, nodes);
    } catch (const ParamError& e) {
      return e.key();
    }
    return std::string();
  };
  CHECK(key(p, 1) == "point_mass_nodes");  // node 1 out of range for one node
  Params half("rod");
  half.set("point_masses", toValue(std::vector<double>{1.0}));
  CHECK(key(half, 5) == "point_masses");
}
