// What end-to-end contact tests read from a run's output: numbers of summary.json, the nodes of
// final.csv by rod, and the gaps between rods (centre-line distance minus radii) and to the floor.
#pragma once

#include "csv_table.h"  // jsonNumber, readCsv

#include <doctest/doctest.h>

#include <Eigen/Core>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace rodsim::test {

// Closest distance between segments [p0, p1] and [q0, q1] (normal equations, then clamping).
inline double segmentDistance(const Eigen::Vector3d& p0, const Eigen::Vector3d& p1, const Eigen::Vector3d& q0,
                              const Eigen::Vector3d& q1) {
  const Eigen::Vector3d d1 = p1 - p0, d2 = q1 - q0, r = p0 - q0;
  const double a = d1.dot(d1), e = d2.dot(d2), f = d2.dot(r), c = d1.dot(r), b = d1.dot(d2);
  const double den = a * e - b * b;
  double s = den > 1e-18 ? std::clamp((b * f - c * e) / den, 0.0, 1.0) : 0.0;
  double t = (b * s + f) / e;
  if (t < 0) {
    t = 0;
    s = std::clamp(-c / a, 0.0, 1.0);
  } else if (t > 1) {
    t = 1;
    s = std::clamp((b - c) / a, 0.0, 1.0);
  }
  return (p0 + s * d1 - q0 - t * d2).norm();
}

// The nodes of final.csv, by rod name.
inline std::map<std::string, std::vector<Eigen::Vector3d>> finalNodes(const std::filesystem::path& final_csv) {
  const CsvTable t = readCsv(final_csv);
  std::map<std::string, std::vector<Eigen::Vector3d>> nodes;
  for (std::size_t i = 0; i < t.rows.size(); ++i)
    nodes[t.rows[i][t.col("rod")]].emplace_back(t.num(i, "x"), t.num(i, "y"), t.num(i, "z"));
  return nodes;
}

// Smallest gap (m) between two rods given by their nodes and radii: centre-line distance minus radii.
inline double rodGap(const std::vector<Eigen::Vector3d>& a, double radius_a, const std::vector<Eigen::Vector3d>& b,
                     double radius_b) {
  double gap = 1e9;
  for (std::size_t i = 0; i + 1 < a.size(); ++i)
    for (std::size_t j = 0; j + 1 < b.size(); ++j)
      gap = std::min(gap, segmentDistance(a[i], a[i + 1], b[j], b[j + 1]) - radius_a - radius_b);
  return gap;
}

// Smallest gap (m) of a rod's nodes to the floor z = 0.
inline double floorGap(const std::vector<Eigen::Vector3d>& nodes, double radius) {
  double gap = 1e9;
  for (const auto& x : nodes) gap = std::min(gap, x.z() - radius);
  return gap;
}

}  // namespace rodsim::test
