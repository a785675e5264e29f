// The swimmer of scenes/cosserat/swimmer.toml (Gazzola et al. 2018, Sec. V.3, Fig. 11 settings) end to end
// through rodsim: the muscle-activated rod of the snake in a slender-body fluid (Eqs. 43-44) swims toward
// its head; its centre of mass advances by the paper's "forward average scaled speed" per activation
// period. docs/validation/cosserat.md, "Swimming at low Reynolds number", tabulates the same numbers.
#include "run_rodsim.h"
#include "vtk_points.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

using namespace rodsim::test;

namespace {

// Centre of mass of a uniform rod with equal elements: the lumped node masses are the Voronoi lengths,
// half at the two ends.
Eigen::Vector3d centreOfMass(const std::vector<Eigen::Vector3d>& p) {
  Eigen::Vector3d c = Eigen::Vector3d::Zero();
  double w = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double wi = (i == 0 || i + 1 == p.size()) ? 0.5 : 1.0;
    c += wi * p[i];
    w += wi;
  }
  return c / w;
}

}  // namespace

TEST_CASE("swimmer (Sec. V.3, Fig. 11 settings) swims toward its head at the paper's scaled speed 0.055 L/T_m") {
  // Six periods, a frame at the end of each (t = 0, 1, ..., 6 s: frame_k at t = k T_m).
  const auto dir = scratchDir("cosserat-swimmer");
  CommandResult res = runRodsim(fmt::format("run scenes/cosserat/swimmer.toml --quiet --output {} --set output.every=1.0",
                                            dir.string()));
  INFO(res.output);
  REQUIRE(res.status == 0);
  std::vector<Eigen::Vector3d> com;
  for (int k = 0; k <= 6; ++k) {
    const auto pts = readVtpPoints(dir / "vtk" / fmt::format("frame_{}.vtp", k));
    REQUIRE(pts.size() == 51);
    com.push_back(centreOfMass(pts));
  }
  std::string per;
  for (int k = 1; k <= 6; ++k) per += fmt::format(" {:.5f}", com[k].x() - com[k - 1].x());
  const Eigen::Vector3d d = com[6] - com[5];  // the sixth period; L = 1 m, T_m = 1 s: d.x() is in L/T_m
  MESSAGE(fmt::format("swimmer: forward advance per period (L/T_m), periods 1-6:{}; lateral in the sixth {:.2e}", per, d.y()));
  // The paper (Fig. 11e-f, Sec. V.3): "the forward average scaled speed ... approach v ~ 0.055". Its two
  // digits mean 0.0545-0.0555; the settings leave the fluid density open (we take PyElastica's, the
  // authors' port) and the swimmer still speeds up by 0.07 % from the fifth period to the sixth. Band:
  // 0.055 +- 3 %. Measured here 0.05457 (0.8 % below the paper's value); the regression band below
  // (+-0.3 %) holds it.
  CHECK(d.x() > 0.055 * 0.97);
  CHECK(d.x() < 0.055 * 1.03);
  CHECK(d.x() == doctest::Approx(0.05457).epsilon(3e-3));
  // A planar swimmer with symmetric amplitudes goes straight: the lateral drift per period is below
  // 1 % of the advance, and nothing leaves the plane of the muscle couples.
  CHECK(std::abs(d.y()) < 0.01 * d.x());
  CHECK(std::abs(com[6].z()) < 1e-9);
  // The gait is periodic from the third period on: successive advances within 2 %.
  CHECK(std::abs((com[6].x() - com[5].x()) / (com[4].x() - com[3].x()) - 1) < 0.02);
}
