// Trefoil knot tightening (Tong et al. 2023, SI C.1), CI size: scenes/knots/trefoil.toml coarsened to 120
// nodes and pulled twice as fast (3 cm/s per end) for 3.5 s, from eps = sqrt(h/R) ~ 0.17 to ~0.26
// (about 30 s on one core). R = e / (2 pi), e the end-to-end shortening measured on the centerline
// (contour length minus end-to-end distance), as in scripts/plot_knot.py.
//
// What is asserted, and why these tolerances (docs/validation/contact-imc.md, "Trefoil knot"):
// - no penetration (min_gap > -delta): the knot can neither untie nor pass through itself;
// - the knot tightens monotonically (e decreases frame to frame after the first 0.5 s) and
//   reaches eps > 0.25;
// - the pulling force grows as the knot tightens (F at the end > 2 x F at eps ~ 0.21);
// - for 0.2 <= eps <= 0.3: eps^4/2 <= F h^2/EI <= 2.6 (eps^4/2 + mu sigma eps^3). This is a
//   REGRESSION BAND, not the 10 % agreement the issue asks for: the full-resolution run
//   (220 nodes, docs) gives F h^2/EI = 1.6-2.2 x the asymptotic law over this range, and the
//   same ratio at 140 nodes and at half the pulling speed, so the gap is neither resolution nor
//   rate; the lower bound is the frictionless leading-order law.
#include "run_rodsim.h"
#include "vtk_points.h"

#include <doctest/doctest.h>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

using namespace rodsim::test;

namespace {

using V3 = Eigen::Vector3d;

std::vector<std::vector<std::string>> readRows(const std::filesystem::path& file, std::vector<std::string>& header) {
  std::istringstream in(readText(file));
  std::string line;
  std::vector<std::vector<std::string>> rows;
  bool first = true;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) cells.push_back(cell);
    if (first) header = cells;
    else rows.push_back(cells);
    first = false;
  }
  return rows;
}

}  // namespace

TEST_CASE("a loose trefoil knot pulled apart tightens; the pulling force grows like eps^4/2 + mu sigma eps^3 (regression band)") {
  const double h = 0.0016, E = 1.8e5, mu = 0.1, sigma = 0.492, delta = 1e-5;
  const double EI = E * M_PI * std::pow(h, 4) / 4;
  auto dir = scratchDir("imc-knot");
  CommandResult res = runRodsim(
      "run scenes/knots/trefoil.toml --quiet --output " + dir.string() +
      " --set rod.rope.nodes=120 --set simulation.duration=3.5 --set output.every=0.25"
      " --set 'constraint.left.velocity=[-0.03, 0, 0]' --set 'constraint.right.velocity=[0.03, 0, 0]'");
  INFO(res.output);
  REQUIRE(res.status == 0);

  std::vector<std::string> header;
  const auto ts = readRows(dir / "timeseries.csv", header);
  auto col = [&](const std::string& n) {
    auto it = std::find(header.begin(), header.end(), n);
    REQUIRE(it != header.end());
    return static_cast<int>(it - header.begin());
  };
  const int ct = col("t"), cl = col("pull_left_x"), cr = col("pull_right_x"), cg = col("min_gap");
  double min_gap = 1e300;
  for (const auto& r : ts)
    if (!r[cg].empty()) min_gap = std::min(min_gap, std::stod(r[cg]));
  MESSAGE("min gap ", min_gap, " m");
  CHECK(min_gap > -delta);

  // mean pulling force over +-0.1 s around t
  auto force = [&](double t) {
    double s = 0;
    int n = 0;
    for (const auto& r : ts)
      if (std::abs(std::stod(r[ct]) - t) <= 0.1 + 1e-9) {
        s += (std::stod(r[cr]) - std::stod(r[cl])) / 2;
        ++n;
      }
    REQUIRE(n > 0);
    return s / n;
  };

  double prev_e = 1e300, F_early = -1, F_last = 0, eps_last = 0;
  int compared = 0;
  for (int k = 1; k <= 14; ++k) {
    const double t = 0.25 * k;
    const auto p = readVtpPoints(dir / "vtk" / ("frame_" + std::to_string(k) + ".vtp"));
    REQUIRE(p.size() == 120);
    double contour = 0;
    for (std::size_t i = 0; i + 1 < p.size(); ++i) contour += (p[i + 1] - p[i]).norm();
    const double e = contour - (p.back() - p.front()).norm();
    const double eps = std::sqrt(h / (e / (2 * M_PI)));
    const double Fbar = force(t) * h * h / EI;
    const double theory = std::pow(eps, 4) / 2 + mu * sigma * std::pow(eps, 3);
    CAPTURE(t);
    CAPTURE(eps);
    MESSAGE("t = ", t, "  e = ", e, " m  eps = ", eps, "  F h^2/EI = ", Fbar, "  theory ", theory, "  ratio ",
            Fbar / theory);
    if (t >= 0.5) CHECK(e < prev_e);  // monotone tightening
    prev_e = e;
    if (eps >= 0.2 && eps <= 0.3) {
      ++compared;
      CHECK(Fbar >= std::pow(eps, 4) / 2);
      CHECK(Fbar <= 2.6 * theory);
    }
    if (F_early < 0 && eps >= 0.21) F_early = force(t);
    F_last = force(t);
    eps_last = eps;
  }
  CHECK(eps_last > 0.25);
  CHECK(compared >= 4);
  CHECK(F_last > 2 * F_early);
}
