// The points of a VTK PolyData file written by rodsim (ASCII <Points> array), for tests that
// measure a rod's shape from its output frames.
#pragma once

#include "run_rodsim.h"

#include <doctest/doctest.h>

#include <Eigen/Core>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

namespace rodsim::test {

inline std::vector<Eigen::Vector3d> readVtpPoints(const std::filesystem::path& file) {
  const std::string text = readText(file);
  const auto a = text.find("<Points>");
  REQUIRE(a != std::string::npos);
  const auto b = text.find('>', text.find("<DataArray", a)) + 1;
  const auto c = text.find("</DataArray>", b);
  std::istringstream in(text.substr(b, c - b));
  std::vector<Eigen::Vector3d> p;
  double x, y, z;
  while (in >> x >> y >> z) p.emplace_back(x, y, z);
  return p;
}

}  // namespace rodsim::test
