// The points of a VTK PolyData frame written by rodsim (either encoding), for tests that measure a
// rod's shape from its output frames. Tests including this link rodsim::vtp.
#pragma once

#include "run_rodsim.h"

#include <doctest/doctest.h>

#include <Eigen/Core>
#include <rodsim/vtp/polydata.h>

#include <filesystem>
#include <string>
#include <vector>

namespace rodsim::test {

inline std::vector<Eigen::Vector3d> readVtpPoints(const std::filesystem::path& file) {
  const rodsim::vtp::PolyLines frame = rodsim::vtp::readPolyLinesFile(file);
  std::vector<Eigen::Vector3d> p;
  for (std::size_t i = 0; i < frame.numPoints(); ++i) p.emplace_back(frame.points[3 * i], frame.points[3 * i + 1], frame.points[3 * i + 2]);
  return p;
}

}  // namespace rodsim::test
