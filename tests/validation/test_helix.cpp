// A helix with its natural curvature is stress free: zero residual, it stays put.
#include "csv_table.h"
#include "run_rodsim.h"

#include <doctest/doctest.h>

#include <cmath>
#include <sstream>
#include <vector>

using namespace rodsim::test;

TEST_CASE("a helix in its rest shape stays put without a single linear solve") {
  auto dir = scratchDir("helix-stress-free");
  CommandResult r = runRodsim("run scenes/validation/helix_stress_free.toml --quiet --output " + dir.string());
  INFO(r.output);
  REQUIRE(r.status == 0);
  auto series = readNumericCsv(dir / "timeseries.csv");
  REQUIRE(series.size() == 101);
  const double e2e0 = series.front()[8];
  for (const auto& row : series) {
    CHECK(row[2] == 0);               // iterations: the initial guess already has zero residual
    CHECK(std::abs(row[6]) < 1e-20);  // kinetic energy, J
    CHECK(std::abs(row[7]) < 1e-20);  // elastic energy, J (EA L ~ 1.9 N m: round-off level)
    CHECK(std::abs(row[8] - e2e0) < 1e-14);
  }
}
