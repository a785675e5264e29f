#include <rodsim/geometry/centerline.h>
#include <rodsim/geometry/frames.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <sstream>

namespace rodsim::geometry {

namespace {

std::string fmt(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

void checkDistinct(const std::vector<Vec3>& pts, const std::string& key) {
  if (pts.size() < 2) throw ParamError(key, "a rod needs at least 2 points, got " + std::to_string(pts.size()));
  for (std::size_t i = 0; i + 1 < pts.size(); ++i) {
    if (!pts[i].allFinite()) throw ParamError(key, "point " + std::to_string(i) + " is not finite");
    if ((pts[i + 1] - pts[i]).norm() <= 1e-12 * std::max(1.0, pts[i].norm()))
      throw ParamError(key, "points " + std::to_string(i) + " and " + std::to_string(i + 1) +
                                " coincide (zero-length edge)");
  }
}

int requireNodes(const Params& p, const std::string& shape) {
  if (!p.has("nodes"))
    throw ParamError("nodes", "geometry shape '" + shape + "' needs 'nodes' (number of nodes, >= 2)");
  const long long n = p.integer("nodes");
  if (n < 2) throw ParamError("nodes", "a rod needs at least 2 nodes, got " + std::to_string(n));
  if (n > 100000000) throw ParamError("nodes", "too many nodes: " + std::to_string(n));
  return static_cast<int>(n);
}

double requireReal(const Params& p, const std::string& key, const std::string& shape) {
  if (!p.has(key)) throw ParamError(key, "geometry shape '" + shape + "' needs '" + key + "'");
  const double v = p.real(key);
  if (!(v > 0)) throw ParamError(key, "'" + key + "' must be > 0, got " + fmt(v));
  return v;
}

}  // namespace

std::vector<Vec3> straightCenterline(const Vec3& a, const Vec3& b, int nodes) {
  std::vector<Vec3> x(nodes);
  for (int i = 0; i < nodes; ++i) x[i] = a + (b - a) * (double(i) / (nodes - 1));
  x.back() = b;
  return x;
}

std::vector<Vec3> helixCenterline(const HelixSpec& h, int nodes) {
  const double twoPi = 2.0 * std::numbers::pi;
  const Vec3 a = h.axis.normalized();
  const Vec3 b1 = anyPerpendicular(a);
  const Vec3 b2 = (h.right_handed ? 1.0 : -1.0) * a.cross(b1);
  const double R = h.radius;
  const double turns = h.axial_length / h.pitch;
  const double helix_arc = turns * std::hypot(twoPi * R, h.pitch);
  const double phi_end = twoPi * turns;
  const int edges = nodes - 1;

  std::vector<Vec3> x;
  x.reserve(nodes);
  double base = 0;  // axial position of the helix start
  int n_helix = edges;
  if (h.lead > 0) {
    if (edges < 3)
      throw ParamError("nodes", "a helix with a lead needs at least 4 nodes (lead, hook, helix), got " +
                                    std::to_string(nodes));
    const double hook = std::sqrt(2.0) * R;
    const double ds = (h.lead + hook + helix_arc) / edges;
    int n_lead = std::max(1, int(std::lround(h.lead / ds)));
    int n_hook = std::max(1, int(std::lround(hook / ds)));
    while (edges - n_lead - n_hook < 1) (n_lead >= n_hook ? n_lead : n_hook)--;
    n_helix = edges - n_lead - n_hook;
    for (int k = 0; k <= n_lead; ++k) x.push_back(h.origin + (h.lead * k / n_lead) * a);
    base = h.lead + R;
    const Vec3 p0 = x.back();
    const Vec3 p1 = h.origin + base * a + R * b1;
    for (int k = 1; k <= n_hook; ++k) x.push_back(p0 + (p1 - p0) * (double(k) / n_hook));
  }
  for (int k = (h.lead > 0 ? 1 : 0); k <= n_helix; ++k) {
    const double phi = phi_end * k / n_helix;
    x.push_back(h.origin + (base + h.pitch * phi / twoPi) * a + R * (std::cos(phi) * b1 + std::sin(phi) * b2));
  }
  return x;
}

std::vector<Vec3> circleCenterline(const Vec3& center, const Vec3& axis, double radius, int nodes) {
  const Vec3 a = axis.normalized();
  const Vec3 b1 = anyPerpendicular(a), b2 = a.cross(b1);
  std::vector<Vec3> x(nodes);
  for (int k = 0; k < nodes; ++k) {
    const double phi = 2.0 * std::numbers::pi * k / nodes;
    x[k] = center + radius * (std::cos(phi) * b1 + std::sin(phi) * b2);
  }
  return x;
}

std::vector<Vec3> resamplePolyline(const std::vector<Vec3>& pts, int nodes) {
  std::vector<double> s(pts.size(), 0.0);
  for (std::size_t i = 1; i < pts.size(); ++i) s[i] = s[i - 1] + (pts[i] - pts[i - 1]).norm();
  const double total = s.back();
  std::vector<Vec3> x(nodes);
  std::size_t seg = 0;
  for (int k = 0; k < nodes; ++k) {
    const double sk = total * k / (nodes - 1);
    while (seg + 2 < pts.size() && s[seg + 1] < sk) ++seg;
    const double len = s[seg + 1] - s[seg];
    const double w = len > 0 ? std::clamp((sk - s[seg]) / len, 0.0, 1.0) : 0.0;
    x[k] = pts[seg] + w * (pts[seg + 1] - pts[seg]);
  }
  x.front() = pts.front();
  x.back() = pts.back();
  return x;
}

std::vector<Vec3> readPointsCsv(const std::string& path, const std::string& key) {
  // A user's file: a regular file (/dev/zero or a FIFO would never end) of bounded size, so what is
  // read and the points kept are bounded too.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw ParamError(key, "point file '" + path + "' is not a regular file");
  if (std::filesystem::file_size(path, ec) > kMaxPointFileBytes)
    throw ParamError(key, "point file '" + path + "' is larger than 64 MiB, more than a rod's points may be");
  std::ifstream in(path);
  if (!in) throw ParamError(key, "cannot open point file '" + path + "'");
  std::vector<Vec3> pts;
  std::string line;
  int lineno = 0;
  bool first_data_line = true;
  while (std::getline(in, line)) {
    ++lineno;
    const auto start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos || line[start] == '#') continue;
    std::string row = line;
    std::replace(row.begin(), row.end(), ',', ' ');
    std::replace(row.begin(), row.end(), ';', ' ');
    std::istringstream ss(row);
    double v[3];
    std::string rest;
    const bool ok = bool(ss >> v[0] >> v[1] >> v[2]) && !(ss >> rest);
    if (!ok) {
      if (first_data_line) {  // a header line
        first_data_line = false;
        continue;
      }
      throw ParamError(key, "'" + path + "' line " + std::to_string(lineno) + ": expected 'x,y,z', got '" +
                                line + "'");
    }
    first_data_line = false;
    pts.emplace_back(v[0], v[1], v[2]);
  }
  if (pts.size() < 2)
    throw ParamError(key, "'" + path + "' holds " + std::to_string(pts.size()) + " point(s); a rod needs at least 2");
  return pts;
}

std::vector<Vec3> buildCenterline(const Params& p) {
  const std::string shape = p.string("geometry.shape");
  // Keys that only some shapes use: giving one to another shape is almost certainly a mistake.
  static const char* const optional_keys[][2] = {
      {"geometry.start", "straight"},       {"geometry.end", "straight"},
      {"geometry.helix_radius", "helix"},   {"geometry.pitch", "helix"},
      {"geometry.axial_length", "helix"},   {"geometry.points", "polyline"},
      {"geometry.file", "points"},          {"geometry.circle_radius", "circle"}};
  for (const auto& k : optional_keys)
    if (p.has(k[0]) && shape != k[1])
      throw ParamError(k[0], std::string("'") + k[0] + "' is used by geometry shape '" + k[1] +
                                 "', not by '" + shape + "'");

  std::vector<Vec3> x;
  if (shape == "straight") {
    const int n = requireNodes(p, shape);
    for (const char* k : {"geometry.start", "geometry.end"})
      if (!p.has(k)) throw ParamError(k, std::string("geometry shape 'straight' needs '") + k + "'");
    const Vec3 a = p.vec3("geometry.start"), b = p.vec3("geometry.end");
    if ((b - a).norm() <= 0) throw ParamError("geometry.end", "'geometry.end' equals 'geometry.start'");
    x = straightCenterline(a, b, n);
  } else if (shape == "helix") {
    const int n = requireNodes(p, shape);
    HelixSpec h;
    h.radius = requireReal(p, "geometry.helix_radius", shape);
    h.pitch = requireReal(p, "geometry.pitch", shape);
    h.axial_length = requireReal(p, "geometry.axial_length", shape);
    h.origin = p.vec3("geometry.origin");
    h.axis = p.vec3("geometry.axis");
    if (!(h.axis.norm() > 0)) throw ParamError("geometry.axis", "'geometry.axis' must be a nonzero vector");
    h.right_handed = p.string("geometry.handedness") != "left";
    h.lead = p.real("geometry.lead");
    if (h.lead < 0) throw ParamError("geometry.lead", "'geometry.lead' must be >= 0, got " + fmt(h.lead));
    x = helixCenterline(h, n);
  } else if (shape == "circle") {
    const int n = requireNodes(p, shape);
    if (n < 3) throw ParamError("nodes", "geometry shape 'circle' needs at least 3 nodes, got " + std::to_string(n));
    const double R = requireReal(p, "geometry.circle_radius", shape);
    const Vec3 axis = p.vec3("geometry.axis");
    if (!(axis.norm() > 0)) throw ParamError("geometry.axis", "'geometry.axis' must be a nonzero vector");
    x = circleCenterline(p.vec3("geometry.origin"), axis, R, n);
  } else if (shape == "polyline" || shape == "points") {
    const std::string key = shape == "polyline" ? "geometry.points" : "geometry.file";
    std::vector<Vec3> pts;
    if (!p.has(key)) throw ParamError(key, "geometry shape '" + shape + "' needs '" + key + "'");
    pts = shape == "polyline" ? p.points(key) : readPointsCsv(p.string(key), key);
    checkDistinct(pts, key);
    x = p.has("nodes") ? resamplePolyline(pts, requireNodes(p, shape)) : pts;
  } else {
    throw ParamError("geometry.shape", "unknown geometry shape '" + shape +
                                           "' (valid: circle, helix, points, polyline, straight)");
  }
  checkDistinct(x, "geometry.shape");
  return x;
}

void declareCenterlineParams(Schema& s) {
  s.required<std::string>("geometry.shape", "Initial centerline.")
      .choices({"straight", "helix", "circle", "polyline", "points"});
  s.optional<Vec3>("geometry.start", "straight: position of the first node.").unit("m");
  s.optional<Vec3>("geometry.end", "straight: position of the last node.").unit("m");
  s.add<Vec3>("geometry.origin", Vec3(0, 0, 0),
              "helix: point on the axis where the rod starts (the lead starts here; without a lead the helix "
              "starts at this axial position). circle: the centre.")
      .unit("m");
  s.add<Vec3>("geometry.axis", Vec3(0, 0, 1),
              "helix: axis direction, pointing from the start to the end. circle: normal of its plane (the nodes "
              "go round it counterclockwise).");
  s.optional<double>("geometry.helix_radius", "helix: radius of the helix.").unit("m").greater(0);
  s.optional<double>("geometry.pitch", "helix: axial advance per turn.").unit("m").greater(0);
  s.optional<double>("geometry.axial_length", "helix: axial extent of the helical part.").unit("m").greater(0);
  s.add<std::string>("geometry.handedness", "right", "helix: handedness.").choices({"right", "left"});
  s.add<double>("geometry.lead", 0.0,
                "helix: length of a straight segment on the axis from origin before the helix, joined to the "
                "helix start by a straight 45-degree hook; 0: no lead, no hook.")
      .unit("m")
      .atLeast(0);
  s.optional<double>("geometry.circle_radius",
                     "circle: radius. The `nodes` nodes are equally spaced on it (angles 2 pi k / nodes, k = 0 .. "
                     "nodes - 1, no node repeated): a closed rod joins the last node to the first, an open rod leaves "
                     "that gap.")
      .unit("m")
      .greater(0);
  s.optional<std::vector<Vec3>>("geometry.points", "polyline: the points [[x, y, z], ...].").unit("m");
  s.optional<std::string>("geometry.file", "points: CSV file of x,y,z rows (optional header line).").path();
  s.add<std::string>("rest_shape", "initial",
                     "initial: the initial shape is stress free (natural curvature and twist from it); straight: "
                     "naturally straight and untwisted (rest edge lengths from the initial shape).")
      .choices({"initial", "straight"});
  s.add<Vec3>("initial_velocity", Vec3(0, 0, 0), "Initial velocity of every node.").unit("m/s");
}

}  // namespace rodsim::geometry
