// Centerline builders for rod models: straight, helix (with an optional lead on the axis), circle,
// polyline and CSV point files, and the geometry.* parameters that select them. Errors are
// rodsim::ParamError naming the offending key. Units: m. Used by rod_der and rod_cosserat.
#pragma once

#include <cstdint>

#include <rodsim/geometry/types.h>
#include <rodsim/params.h>

#include <string>
#include <vector>

namespace rodsim::geometry {

struct HelixSpec {
  Vec3 origin = Vec3::Zero();
  Vec3 axis = Vec3::UnitZ();   // direction of advance (normalized by the builder)
  double radius = 0;           // m
  double pitch = 0;            // axial advance per turn, m
  double axial_length = 0;     // axial extent of the helical part, m
  bool right_handed = true;
  double lead = 0;             // straight segment on the axis before the helix, m
};

// `nodes` equally spaced points from a to b.
std::vector<Vec3> straightCenterline(const Vec3& a, const Vec3& b, int nodes);

// Helix about `axis` through `origin`. Without a lead the rod is the helix alone, starting at
// origin + radius * b1 (b1: deterministic unit vector ⟂ axis). With lead > 0 the rod starts at
// origin with a straight segment of length `lead` on the axis, then a straight 45° "hook" joins
// origin + lead*axis to the helix start origin + (lead + radius)*axis + radius*b1, then the helix
// over `axial_length`. Nodes are spaced about uniformly by arc length (each straight piece gets at
// least one edge; the helix is uniform in arc length).
std::vector<Vec3> helixCenterline(const HelixSpec& h, int nodes);

// `nodes` points equally spaced on the circle of `radius` about `center` in the plane normal to
// `axis` (angles 2 pi k / nodes, k = 0 .. nodes - 1: the first point is not repeated at the end),
// counterclockwise about axis, starting at center + radius * anyPerpendicular(axis) (frames.h).
std::vector<Vec3> circleCenterline(const Vec3& center, const Vec3& axis, double radius, int nodes);

// `nodes` points uniformly spaced by arc length along the polyline through `points`.
std::vector<Vec3> resamplePolyline(const std::vector<Vec3>& points, int nodes);

// Rows "x,y,z" (commas and/or whitespace), an optional header line, blank lines and lines starting
// with '#' ignored. Throws ParamError(key, ...) with the file name and line number.
// The file must be a regular file of at most kMaxPointFileBytes (ParamError otherwise).
inline constexpr std::uintmax_t kMaxPointFileBytes = std::uintmax_t(64) << 20;
std::vector<Vec3> readPointsCsv(const std::string& path, const std::string& key = "geometry.file");

// The centerline described by the rod parameters geometry.* and nodes (declared below).
std::vector<Vec3> buildCenterline(const Params& p);

// Declares geometry.shape and the keys of each shape (geometry.*), rest_shape and initial_velocity.
void declareCenterlineParams(Schema& s);

}  // namespace rodsim::geometry
