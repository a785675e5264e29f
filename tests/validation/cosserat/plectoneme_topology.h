// Link, twist and writhe of a rod from rodsim's VTK output (Lk = Tw + Wr, Calugareanu-White), as
// scripts/plot_plectoneme.py computes them, for the plectoneme and solenoid validation
// (docs/validation/cosserat.md, "Plectonemes and solenoids").
#pragma once

#include "run_rodsim.h"

#include <doctest/doctest.h>

#include <Eigen/Geometry>
#include <rodsim/vtp/polydata.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

namespace rodsim::test {

using V3 = Eigen::Vector3d;

// The points (name "Points") or a 3-component point array of a VTK frame, in either encoding.
inline std::vector<V3> readVtpVectors(const rodsim::vtp::PolyLines& frame, const std::string& name) {
  const std::vector<double>* values = &frame.points;
  if (name != "Points") {
    const rodsim::vtp::PointArray* array = frame.find(name);
    REQUIRE(array != nullptr);
    REQUIRE(array->components == 3);
    values = &array->values;
  }
  std::vector<V3> out;
  for (std::size_t i = 0; i + 2 < values->size(); i += 3) out.emplace_back((*values)[i], (*values)[i + 1], (*values)[i + 2]);
  return out;
}

// Twist in turns: (1/2 pi) sum of the angles from the parallel transport of d1_i (projected normal to
// edge i) onto edge i+1 to d1_{i+1}, about t_{i+1}.
inline double twistTurns(const std::vector<V3>& x, const std::vector<V3>& d1) {
  const std::size_t ne = x.size() - 1;
  std::vector<V3> t(ne), m(ne);
  for (std::size_t i = 0; i < ne; ++i) {
    t[i] = (x[i + 1] - x[i]).normalized();
    m[i] = (d1[i] - d1[i].dot(t[i]) * t[i]).normalized();
  }
  double total = 0;
  for (std::size_t i = 0; i + 1 < ne; ++i) {
    V3 u = m[i];
    const V3 c = t[i].cross(t[i + 1]);
    const double s = c.norm(), co = t[i].dot(t[i + 1]);
    if (s > 1e-14) {
      const V3 k = c / s;
      u = u * co + k.cross(u) * s + k * k.dot(u) * (1 - co);
    }
    total += std::atan2(u.cross(m[i + 1]).dot(t[i + 1]), u.dot(m[i + 1]));
  }
  return total / (2 * M_PI);
}

// Writhe of a polygon by the Gauss double integral, exact per pair of segments (the signed solid
// angle of Klenin and Langowski 2000): Wr = (1/2 pi) sum_{i < j - 1} Omega_ij.
inline double writhe(const std::vector<V3>& p) {
  const std::size_t n = p.size() - 1;
  auto unit = [](const V3& v) {
    const double l = v.norm();
    return l > 1e-300 ? V3(v / l) : V3(V3::Zero());
  };
  auto as = [](double v) { return std::asin(std::clamp(v, -1.0, 1.0)); };
  double w = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 2; j < n; ++j) {
      const V3 &p1 = p[i], &p2 = p[i + 1], &p3 = p[j], &p4 = p[j + 1];
      const V3 r13 = p3 - p1, r14 = p4 - p1, r23 = p3 - p2, r24 = p4 - p2;
      const V3 n1 = unit(r13.cross(r14)), n2 = unit(r14.cross(r24)), n3 = unit(r24.cross(r23)),
               n4 = unit(r23.cross(r13));
      const double om = as(n1.dot(n2)) + as(n2.dot(n3)) + as(n3.dot(n4)) + as(n4.dot(n1));
      const double sg = (p4 - p3).cross(p2 - p1).dot(r13);
      w += sg > 0 ? om : (sg < 0 ? -om : 0.0);
    }
  return w / (2 * M_PI);
}

struct Topology {
  double tw = 0, wr = 0, stretch = 0, end_z = 0, max_lateral = 0;
  std::vector<V3> x;
};

// Tw, Wr (centre line extended at both ends along z by 1000 L, the closure of a rod whose ends stay
// on the z axis), the arc length over `rest_length`, the end-to-end z and the largest distance of a
// node from the z axis, from one VTK frame.
inline Topology topology(const std::filesystem::path& vtp, double rest_length) {
  const rodsim::vtp::PolyLines frame = rodsim::vtp::readPolyLinesFile(vtp);
  Topology t;
  t.x = readVtpVectors(frame, "Points");
  const std::vector<V3> d1 = readVtpVectors(frame, "director_m1");
  REQUIRE(d1.size() >= t.x.size() - 1);
  t.tw = twistTurns(t.x, d1);
  std::vector<V3> ext;
  ext.push_back(t.x.front() - V3(0, 0, 1000 * rest_length));
  ext.insert(ext.end(), t.x.begin(), t.x.end());
  ext.push_back(t.x.back() + V3(0, 0, 1000 * rest_length));
  t.wr = writhe(ext);
  double arc = 0;
  for (std::size_t i = 0; i + 1 < t.x.size(); ++i) arc += (t.x[i + 1] - t.x[i]).norm();
  t.stretch = arc / rest_length;
  t.end_z = t.x.back().z() - t.x.front().z();
  for (const V3& p : t.x) t.max_lateral = std::max(t.max_lateral, std::hypot(p.x(), p.y()));
  return t;
}

}  // namespace rodsim::test
