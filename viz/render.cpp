#include "render.h"

#include "viz.h"
#include <rodsim/kernel/scene.h>  // InputError, closestMatch

#include <rodsim/process/pool.h>
#include <rodsim/process/spawn.h>
#include <rodsim/run_record/csv.h>

#include <rodsim/vtp/collection.h>
#include <rodsim/vtp/polydata.h>

#include <Eigen/Geometry>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <numbers>
#include <sstream>

#include <unistd.h>

namespace fs = std::filesystem;

namespace rodsim::viz {

using kernel::InputError;
using Vec3 = Eigen::Vector3d;

namespace {

// ---------------------------------------------------------------------------------------------
// Command line

double parseNumber(const std::string& text, const std::string& option) {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() && std::isfinite(v)) return v;
  } catch (const std::exception&) {
  }
  throw InputError(fmt::format("{} '{}': expected a number", option, text));
}

std::vector<double> parseList(const std::string& text, const std::string& option, std::size_t count) {
  std::vector<double> values;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) values.push_back(parseNumber(item, option));
  if (values.size() != count)
    throw InputError(fmt::format("{} '{}': expected {} comma-separated numbers", option, text, count));
  return values;
}

Vec3 parseVector(const std::string& text, const std::string& option) {
  const auto v = parseList(text, option, 3);
  return {v[0], v[1], v[2]};
}

// ---------------------------------------------------------------------------------------------
// What the run wrote

using FrameRef = vtp::CollectionEntry;  // a frame's time and file

// The frames listed in the run's .pvd collection (written atomically: a running simulation is fine).
std::vector<FrameRef> listFrames(const fs::path& run_dir) {
  const fs::path vtk = run_dir / "vtk";
  fs::path pvd;
  std::error_code ec;
  if (fs::is_directory(vtk, ec))
    for (const auto& entry : fs::directory_iterator(vtk))
      if (entry.path().extension() == ".pvd") pvd = entry.path();
  if (pvd.empty())
    throw InputError(fmt::format("{}: no VTK frames (vtk/*.pvd); is it the output directory of a run with \"vtk\" in "
                                 "[output] formats?", run_dir.string()));
  std::vector<FrameRef> frames;
  try {
    frames = vtp::readCollectionFile(pvd);
  } catch (const vtp::FormatError& e) {
    throw InputError(e.what());
  }
  if (frames.empty()) throw InputError(fmt::format("{}: no frames yet", pvd.string()));
  return frames;
}

struct ObstacleShape {
  std::string name, shape;  // plane | sphere | cylinder
  Vec3 point, direction;    // plane: point, normal; sphere: center; cylinder: a point on the axis, axis
  double radius = 0;
};

constexpr std::size_t kMaxObstacleLine = 4096;

std::vector<ObstacleShape> readObstacles(const fs::path& run_dir) {
  const fs::path file = run_dir / "vtk" / "obstacles.csv";
  std::vector<ObstacleShape> obstacles;
  std::error_code ec;
  if (!fs::exists(file, ec)) return obstacles;  // a scene without obstacles (or a run before they were recorded)
  // Bounded before it is read (issue 43): a regular file no larger than a scene (16 MiB), whose
  // rows (one per obstacle of a scene) are short.
  // Read with libs/run_record, which writes it (the kernel's OutputWriter).
  run_record::CsvTable table;
  try {
    table = run_record::parseCsv(kernel::readUserFile(file.string(), kernel::kMaxSceneBytes, "obstacles file"), file.string(),
                                 false, kMaxObstacleLine);
  } catch (const run_record::FormatError& e) {
    throw InputError(e.what());
  }
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const auto& cells = table.rows[r];
    const std::size_t number = table.lines[r];
    if (cells.size() != 9) throw InputError(fmt::format("{}:{}: expected 9 columns, found {}", file.string(), number, cells.size()));
    const std::string where = fmt::format("{}:{}", file.string(), number);
    ObstacleShape o;
    o.name = cells[0];
    o.shape = cells[1];
    o.point = {parseNumber(cells[2], where), parseNumber(cells[3], where), parseNumber(cells[4], where)};
    o.direction = {parseNumber(cells[5], where), parseNumber(cells[6], where), parseNumber(cells[7], where)};
    o.radius = parseNumber(cells[8], where);
    obstacles.push_back(o);
  }
  return obstacles;
}

// ---------------------------------------------------------------------------------------------
// Colours

struct Rgb {
  double r, g, b;
};

// One colour per rod, in rod order (the tab10 palette of matplotlib, as in the plotting scripts).
const Rgb kRodColours[] = {{0.122, 0.467, 0.706}, {1.000, 0.498, 0.055}, {0.173, 0.627, 0.173}, {0.839, 0.153, 0.157},
                           {0.580, 0.404, 0.741}, {0.549, 0.337, 0.294}, {0.890, 0.467, 0.761}, {0.498, 0.498, 0.498},
                           {0.737, 0.741, 0.133}, {0.090, 0.745, 0.812}};

// The viridis colour map at nine evenly spaced values (sRGB).
const Rgb kViridis[] = {{0.267, 0.005, 0.329}, {0.283, 0.141, 0.458}, {0.254, 0.265, 0.530},
                        {0.207, 0.372, 0.553}, {0.164, 0.471, 0.558}, {0.128, 0.567, 0.551},
                        {0.135, 0.659, 0.518}, {0.478, 0.821, 0.318}, {0.993, 0.906, 0.144}};

Rgb viridis(double s) {
  s = std::clamp(std::isfinite(s) ? s : 0.0, 0.0, 1.0) * 8;
  const int i = std::min(static_cast<int>(s), 7);
  const double f = s - i;
  const Rgb &a = kViridis[i], &b = kViridis[i + 1];
  return {a.r + f * (b.r - a.r), a.g + f * (b.g - a.g), a.b + f * (b.b - a.b)};
}

std::string srgb(const Rgb& c) { return fmt::format("srgb <{:.4f}, {:.4f}, {:.4f}>", c.r, c.g, c.b); }
// POV-Ray misses intersections with objects much smaller than its internal tolerances (a text 0.3 mm
// high in front of a knot of 1.6 mm rods): every length is written in units that put the camera
// 10 units from what it looks at.
struct PovUnits {
  double per_metre = 1;
  std::string point(const Vec3& v) const {
    return fmt::format("<{:.9g}, {:.9g}, {:.9g}>", per_metre * v.x(), per_metre * v.y(), per_metre * v.z());
  }
  double length(double metres) const { return per_metre * metres; }
  // A transformation whose local x, y, z axes are the given vectors and origin the given point.
  std::string matrix(const Vec3& x, const Vec3& y, const Vec3& z, const Vec3& origin) const {
    const double k = per_metre;
    return fmt::format("matrix <{:.9g},{:.9g},{:.9g}, {:.9g},{:.9g},{:.9g}, {:.9g},{:.9g},{:.9g}, {:.9g},{:.9g},{:.9g}>", k * x.x(),
                       k * x.y(), k * x.z(), k * y.x(), k * y.y(), k * y.z(), k * z.x(), k * z.y(), k * z.z(), k * origin.x(),
                       k * origin.y(), k * origin.z());
  }
};

// The value a frame's point `i` is coloured by: the array's value, a vector's length.
double fieldValue(const vtp::PointArray& a, std::size_t i) {
  const std::size_t c = static_cast<std::size_t>(a.components);
  if (c == 1) return a.values[i];
  double sum = 0;
  for (std::size_t k = 0; k < c; ++k) sum += a.values[i * c + k] * a.values[i * c + k];
  return std::sqrt(sum);
}

// The colour bar's title, with the unit of the arrays rodsim writes.
std::string fieldLabel(const vtp::PointArray& a) {
  const std::string name = a.components == 1 ? a.name : "|" + a.name + "|";
  if (a.name == "velocity") return name + " (m/s)";
  if (a.name == "twist_angle") return name + " (rad)";
  if (a.name == "radius") return name + " (m)";
  return name;
}

// ---------------------------------------------------------------------------------------------
// Camera

struct Camera {
  Vec3 position, look_at, right, up, forward;  // right, up, forward: unit, right-handed world
  double aspect = 4.0 / 3, fov = 0;            // fov: horizontal, radians
  double overlay_distance = 0;                 // text and colour bar: nearer than anything in the scene

  // A world point on the plane `overlay_distance` in front of the camera; (x, y) in units of the
  // image height from the image centre, y up.
  Vec3 screen(double x, double y) const { return position + overlay_distance * forward + screenScale() * (x * right + y * up); }
  double verticalFov() const { return 2 * std::atan(std::tan(fov / 2) / aspect); }
  double screenScale() const { return overlay_distance * 2 * std::tan(verticalFov() / 2); }
};

struct Bounds {
  Vec3 lo = Vec3::Constant(std::numeric_limits<double>::infinity());
  Vec3 hi = -Vec3::Constant(std::numeric_limits<double>::infinity());
  double max_radius = 0;
  void add(const Vec3& p, double r) {
    lo = lo.cwiseMin(p);
    hi = hi.cwiseMax(p);
    max_radius = std::max(max_radius, r);
  }
  Vec3 center() const { return (lo + hi) / 2; }
  double halfDiagonal() const { return (hi - lo).norm() / 2 + max_radius; }
};

Vec3 anyPerpendicular(const Vec3& n) {
  const Vec3 a = std::abs(n.x()) < 0.9 ? Vec3::UnitX() : Vec3::UnitY();
  return n.cross(a).normalized();
}

// Frames every drawn frame: looks at the centre of the rods' bounding box, from a three-quarter
// view above the ground (up: the first plane's normal, else +z), as near as the rods of every
// frame still fit the picture. Options override each part.
// `frames` calls its argument on each drawn frame, read one at a time.
using ForEachFrame = std::function<void(const std::function<void(const vtp::PolyLines&)>&)>;

Camera frameCamera(const RenderOptions& o, const Bounds& rods, const std::vector<ObstacleShape>& obstacles,
                   const ForEachFrame& frames) {
  Camera c;
  c.aspect = static_cast<double>(o.width) / o.height;
  c.fov = o.fov_degrees * std::numbers::pi / 180;
  Vec3 up = Vec3::UnitZ();
  for (const auto& ob : obstacles)
    if (ob.shape == "plane") {
      up = ob.direction.normalized();
      break;
    }
  if (o.up) up = o.up->normalized();
  c.look_at = o.look_at ? *o.look_at : rods.center();
  Vec3 direction;  // from the look-at point to the camera
  if (o.camera) {
    direction = *o.camera - c.look_at;
  } else {
    const Vec3 side = anyPerpendicular(up), front = up.cross(side);
    direction = 0.55 * side - 1.0 * front + 0.6 * up;
  }
  // Eigen leaves a zero vector as it is when normalizing it: test the direction itself, before any
  // POV-Ray scene (or scratch folder) is made.
  if (!(direction.norm() > 0) || !direction.allFinite())
    throw InputError(fmt::format("--camera {},{},{} is the point it looks at ({}): the camera needs a direction to look in",
                                 c.look_at.x() + direction.x(), c.look_at.y() + direction.y(), c.look_at.z() + direction.z(),
                                 o.look_at ? "--look-at" : "the rods' centre, the default --look-at"));
  c.forward = -direction.normalized();
  c.right = c.forward.cross(up);
  if (c.right.norm() < 1e-9) c.right = anyPerpendicular(c.forward);  // looking straight along up
  c.right.normalize();
  c.up = c.right.cross(c.forward);
  if (o.camera) {
    c.position = *o.camera;
  } else {
    // The nearest camera on that line that sees every tube (its node spheres) inside the picture,
    // a margin left around it and the right side kept for the colour bar.
    const double tan_x = std::tan(c.fov / 2) * (o.color == "rod" ? 0.92 : 0.78), tan_y = std::tan(c.verticalFov() / 2) * 0.88;
    double distance = 1e-6 * std::max(rods.halfDiagonal(), 1e-6);
    frames([&](const vtp::PolyLines& f) {
      const auto* radius = f.find("radius");
      for (std::size_t i = 0; i < f.numPoints(); ++i) {
        const Vec3 d = Vec3(f.points[3 * i], f.points[3 * i + 1], f.points[3 * i + 2]) - c.look_at;
        const double r = radius ? radius->values[i] : 0.0, depth = d.dot(c.forward);
        distance = std::max({distance, (std::abs(d.dot(c.right)) + r) / tan_x - depth + r,
                             (std::abs(d.dot(c.up)) + r) / tan_y - depth + r});
      }
    });
    c.position = c.look_at - distance * c.forward;
  }
  // Overlays go in front of the nearest rod point and the nearest obstacle surface.
  double nearest = (c.look_at - c.position).norm();
  frames([&](const vtp::PolyLines& f) {
    const auto* radius = f.find("radius");
    for (std::size_t i = 0; i < f.numPoints(); ++i) {
      const Vec3 p(f.points[3 * i], f.points[3 * i + 1], f.points[3 * i + 2]);
      nearest = std::min(nearest, (p - c.position).norm() - (radius ? radius->values[i] : 0.0));
    }
  });
  for (const auto& ob : obstacles) {
    double gap = 0;
    if (ob.shape == "plane") gap = std::abs((c.position - ob.point).dot(ob.direction.normalized()));
    else if (ob.shape == "sphere") gap = std::abs((c.position - ob.point).norm() - ob.radius);
    else {
      const Vec3 axis = ob.direction.normalized(), d = c.position - ob.point;
      gap = std::abs((d - d.dot(axis) * axis).norm() - ob.radius);
    }
    nearest = std::min(nearest, gap);
  }
  c.overlay_distance = std::max(0.25 * nearest, 1e-6 * (c.look_at - c.position).norm());
  return c;
}

// ---------------------------------------------------------------------------------------------
// The POV-Ray scene of one frame

struct Style {
  std::string color;  // "rod" or a point array
  std::string label;  // above the colour bar: the array, |.| for a vector's length, its unit
  double lo = 0, hi = 1;
  int time_decimals = 3;
  std::string font = "cyrvetic.ttf";  // a font of Debian's povray-includes
  PovUnits units;
};

// A flat object in screen space: local x along the image's right, y up, z into the picture; sx, sy
// in units of the image height.
std::string screenMatrix(const Camera& c, const PovUnits& units, const Vec3& origin, double sx, double sy) {
  const double scale = c.screenScale();
  return units.matrix(c.right * sx * scale, c.up * sy * scale, c.forward * sy * scale, origin);
}

// A POV-Ray string literal's contents: the words with its two special characters escaped.
std::string povString(const std::string& words) {
  std::string out;
  for (char ch : words) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out;
}

std::string text(const Camera& c, const Style& s, const std::string& words, double x, double y, double height) {
  return fmt::format(
      "text {{ ttf \"{}\" \"{}\" 0.01, 0 texture {{ pigment {{ srgb 0.12 }} finish {{ ambient 1 diffuse 0 }} }} no_shadow\n"
      "  {} }}\n",
      s.font, povString(words), screenMatrix(c, s.units, c.screen(x, y), height, height));
}

std::string colourBar(const Camera& c, const Style& s) {
  const double half_width = c.aspect / 2, x = half_width - 0.1, y = -0.3, w = 0.035, h = 0.6;
  std::string map;
  for (int i = 0; i <= 8; ++i) map += fmt::format("[{:.4f} color {}] ", i / 8.0, srgb(viridis(i / 8.0)));
  std::string out = fmt::format(
      "box {{ <0, 0, 0>, <1, 0.9999, 0.01> texture {{ pigment {{ gradient y color_map {{ {} }} }} finish {{ ambient 1 diffuse 0 }} }}\n"
      "  no_shadow {} }}\n",
      map, screenMatrix(c, s.units, c.screen(x, y), w, h));
  const double size = 0.035;
  out += text(c, s, fmt::format("{:.3g}", s.hi), x - 0.005, y + h + 0.012, size);
  out += text(c, s, fmt::format("{:.3g}", s.lo), x - 0.005, y - 0.012 - size * 0.75, size);
  // Right-aligned at the picture's margin (a glyph of this font is about 0.55 of its height wide).
  const double title_width = 0.55 * size * static_cast<double>(s.label.size());
  out += text(c, s, s.label, std::min(x - 0.02, half_width - 0.03 - title_width), y + h + 0.06, size);
  return out;
}

std::string obstacleObjects(const std::vector<ObstacleShape>& obstacles, const Bounds& rods, const PovUnits& u) {
  const double extent = std::max(rods.halfDiagonal(), 1e-6);
  std::string out;
  for (const auto& o : obstacles) {
    if (o.shape == "plane") {
      // A disc around the rods (an infinite plane draws a horizon), checkered at a tenth of their size.
      const Vec3 n = o.direction.normalized();
      const Vec3 center = rods.center() - (rods.center() - o.point).dot(n) * n;
      const double cell = std::pow(10.0, std::floor(std::log10(extent / 2)));
      const Vec3 a = anyPerpendicular(n), b = n.cross(a);
      out += fmt::format(
          "disc {{ {}, {}, {:.9g}\n"
          "  texture {{ pigment {{ checker color srgb 0.93 color srgb 0.84 {} }} finish {{ ambient 0.25 diffuse 0.75 }} }} }}\n",
          u.point(center), u.point(n), u.length(4 * extent), u.matrix(cell * a, cell * n, cell * b, o.point));
    } else if (o.shape == "sphere") {
      out += fmt::format("sphere {{ {}, {:.9g} texture {{ pigment {{ srgb 0.75 }} finish {{ ambient 0.2 diffuse 0.7 specular 0.2 }} }} }}\n",
                         u.point(o.point), u.length(o.radius));
    } else {
      // A cylinder as long as the rods' extent around the point of its axis nearest to them.
      const Vec3 axis = o.direction.normalized();
      const Vec3 mid = o.point + (rods.center() - o.point).dot(axis) * axis;
      const double half = extent + o.radius;
      out += fmt::format(
          "cylinder {{ {}, {}, {:.9g} texture {{ pigment {{ srgb 0.75 }} finish {{ ambient 0.2 diffuse 0.7 specular 0.2 }} }} }}\n",
          u.point(mid - half * axis), u.point(mid + half * axis), u.length(o.radius));
    }
  }
  return out;
}

// Rods as chains of spheres at the nodes and cones (cylinders) between them: tubes of the nodes'
// radii. Coloured per rod (one texture per rod) or per node by a field (segments by their mean).
constexpr double kJointInset = 0.998;

std::string rodObjects(const vtp::PolyLines& f, const Style& s) {
  const PovUnits& u = s.units;
  const vtp::PointArray* radius = f.find("radius");
  const vtp::PointArray* field = s.color == "rod" ? nullptr : f.find(s.color);
  auto node = [&](std::int64_t i) { return Vec3(f.points[3 * i], f.points[3 * i + 1], f.points[3 * i + 2]); };
  auto nodeRadius = [&](std::int64_t i) { return radius ? radius->values[i] : 0.0; };
  auto fieldColour = [&](double value) { return viridis((value - s.lo) / (s.hi - s.lo > 0 ? s.hi - s.lo : 1.0)); };
  std::string out = "#declare RodFinish = finish { ambient 0.15 diffuse 0.7 specular 0.35 roughness 0.015 }\n";
  std::int64_t begin = 0;
  for (std::size_t rod = 0; rod < f.offsets.size(); ++rod) {
    const std::int64_t end = f.offsets[rod];
    out += "union {\n";
    for (std::int64_t k = begin; k < end; ++k) {
      const std::int64_t i = f.connectivity[k];
      const std::string paint = field ? fmt::format(" texture {{ pigment {{ color {} }} finish {{ RodFinish }} }}",
                                                    srgb(fieldColour(fieldValue(*field, i))))
                                      : "";
      out += fmt::format("  sphere {{ {}, {:.9g}{} }}\n", u.point(node(i)), u.length(nodeRadius(i)), paint);
      if (k + 1 == end) continue;
      const std::int64_t j = f.connectivity[k + 1];
      if ((node(j) - node(i)).norm() < 1e-12) continue;  // POV-Ray refuses a degenerate cone
      const std::string segment_paint =
          field ? fmt::format(" texture {{ pigment {{ color {} }} finish {{ RodFinish }} }}",
                              srgb(fieldColour((fieldValue(*field, i) + fieldValue(*field, j)) / 2)))
                : "";
      // Open (no end discs) and a hair thinner than the spheres: surfaces that coincide at a joint
      // shade as dark specks.
      out += fmt::format("  cone {{ {}, {:.9g}, {}, {:.9g} open{} }}\n", u.point(node(i)), u.length(kJointInset * nodeRadius(i)),
                         u.point(node(j)), u.length(kJointInset * nodeRadius(j)), segment_paint);
    }
    if (!field)
      out += fmt::format("  texture {{ pigment {{ color {} }} finish {{ RodFinish }} }}\n",
                         srgb(kRodColours[rod % std::size(kRodColours)]));
    out += "}\n";
    begin = end;
  }
  return out;
}

std::string povScene(const vtp::PolyLines& f, double time, const Camera& c, const Style& s,
                     const std::vector<ObstacleShape>& obstacles, const Bounds& rods) {
  const double distance = (c.look_at - c.position).norm();
  // Explicit camera vectors (no look_at): the image's right is `right`, whatever the handedness.
  const PovUnits& u = s.units;
  auto direction = [](const Vec3& v) { return fmt::format("<{:.9g}, {:.9g}, {:.9g}>", v.x(), v.y(), v.z()); };
  const double direction_length = 0.5 * c.aspect / std::tan(c.fov / 2);
  std::string out = fmt::format(
      "#version 3.7;\n"
      "global_settings {{ assumed_gamma 1.0 }}\n"
      "background {{ color srgb <1, 1, 1> }}\n"
      "camera {{ perspective location {} direction {} right {} up {} }}\n"
      "light_source {{ {} color rgb 1.0 }}\n"
      "light_source {{ {} color rgb 0.45 shadowless }}\n",
      u.point(c.position), direction(c.forward * direction_length), direction(c.right * c.aspect), direction(c.up),
      u.point(c.position + distance * (0.8 * c.up - 0.5 * c.right + 0.3 * c.forward)),
      u.point(c.position + distance * (0.2 * c.up + 0.7 * c.right)));
  out += obstacleObjects(obstacles, rods, u);
  out += rodObjects(f, s);
  const double top = 0.5, left = -c.aspect / 2;
  out += text(c, s, fmt::format("t = {:.{}f} s", time, s.time_decimals), left + 0.03, top - 0.07, 0.045);
  if (s.color != "rod") out += colourBar(c, s);
  return out;
}

// ---------------------------------------------------------------------------------------------

std::vector<std::size_t> selectFrames(const RenderOptions& o, const std::vector<FrameRef>& frames) {
  std::vector<std::size_t> chosen;
  if (o.frame == "all") {
    for (std::size_t k = 0; k < frames.size(); ++k) chosen.push_back(k);
  } else if (o.frame == "last") {
    chosen.push_back(frames.size() - 1);
  } else {
    const double t = parseNumber(o.frame, "--frame");
    std::size_t best = 0;
    for (std::size_t k = 1; k < frames.size(); ++k)
      if (std::abs(frames[k].time - t) < std::abs(frames[best].time - t)) best = k;
    chosen.push_back(best);
  }
  return chosen;
}

int decimalsFor(const std::vector<FrameRef>& frames) {
  double spacing = std::numeric_limits<double>::infinity();
  for (std::size_t k = 1; k < frames.size(); ++k) spacing = std::min(spacing, frames[k].time - frames[k - 1].time);
  if (!std::isfinite(spacing) || spacing <= 0) return 3;
  return std::clamp(static_cast<int>(std::ceil(-std::log10(spacing) - 1e-9)), 1, 6);
}

}  // namespace

RenderOptions parseRenderArguments(const std::vector<std::string>& args) {
  RenderOptions o;
  const std::string usage = std::string("usage:\n") + kUsage;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw InputError(fmt::format("option {} needs a value\n{}", arg, usage));
      return args[++i];
    };
    if (arg == "--frame") {
      o.frame = value();
      o.frame_given = true;
      if (o.frame != "last" && o.frame != "all") parseNumber(o.frame, "--frame (last, all or a time in s)");
    } else if (arg == "--output") o.output = value();
    else if (arg == "--movie") o.movie = value();
    else if (arg == "--fps") {
      o.fps = parseNumber(value(), "--fps");
      if (o.fps <= 0) throw InputError("--fps: expected a positive number");
    } else if (arg == "--size") {
      const std::string size = value();
      int w = 0, h = 0;
      char x = 0, extra = 0;
      if (std::sscanf(size.c_str(), "%d%c%d%c", &w, &x, &h, &extra) != 3 || x != 'x' || w < 16 || h < 16 || w > 8192 || h > 8192)
        throw InputError(fmt::format("--size '{}': expected WIDTHxHEIGHT in pixels, each 16 to 8192 (e.g. 800x600)", size));
      o.width = w;
      o.height = h;
    } else if (arg == "--color" || arg == "--colour") o.color = value();
    else if (arg == "--range") {
      const auto r = parseList(value(), "--range", 2);
      if (!(r[1] > r[0])) throw InputError("--range LO,HI: HI must be above LO");
      o.range = std::pair{r[0], r[1]};
    } else if (arg == "--camera") o.camera = parseVector(value(), "--camera");
    else if (arg == "--look-at") o.look_at = parseVector(value(), "--look-at");
    else if (arg == "--up") {
      o.up = parseVector(value(), "--up");
      if (o.up->norm() == 0) throw InputError("--up: a zero vector");
    } else if (arg == "--fov") {
      o.fov_degrees = parseNumber(value(), "--fov");
      if (o.fov_degrees <= 0 || o.fov_degrees >= 180) throw InputError("--fov: degrees between 0 and 180");
    } else if (arg == "--jobs") {
      const double n = parseNumber(value(), "--jobs");
      if (n < 1 || n > 4096 || n != std::floor(n)) throw InputError("--jobs: expected a whole number from 1 to 4096");
      o.jobs = static_cast<int>(n);
    } else if (arg == "--plane") {
      const auto v = parseList(value(), "--plane", 6);
      if (Eigen::Vector3d(v[3], v[4], v[5]).norm() == 0) throw InputError("--plane X,Y,Z,NX,NY,NZ: the normal is zero");
      o.planes.push_back({v[0], v[1], v[2], v[3], v[4], v[5]});
    } else if (arg == "--keep-pov") o.keep_pov = true;
    else if (arg == "--quiet") o.quiet = true;
    else if (!arg.empty() && arg[0] == '-') throw InputError(fmt::format("unknown option '{}' of render\n{}", arg, usage));
    else if (o.run_dir.empty()) o.run_dir = arg;
    else throw InputError(fmt::format("unexpected argument '{}'\n{}", arg, usage));
  }
  if (o.run_dir.empty()) throw InputError("'render' needs the output directory of a run\n" + usage);
  if (!o.movie.empty()) {
    if (!o.frame_given) o.frame = "all";
    else if (o.frame != "all") throw InputError("--movie needs --frame all (the default with --movie)");
    if (fs::path(o.movie).extension() != ".mp4") throw InputError(fmt::format("--movie '{}': expected a .mp4 file", o.movie));
  }
  return o;
}

int runRender(const RenderOptions& o) {
  const fs::path run_dir = o.run_dir;
  if (!fs::is_directory(run_dir)) throw InputError(fmt::format("{}: no such directory", o.run_dir));
  // The renderers first: a missing one is a setup problem, reported before any work.
  const std::string povray = process::findProgram("povray");
  if (povray.empty())
    throw InputError("rodsim render needs POV-Ray to draw the frames: 'povray' is not on PATH. Install the Debian "
                     "packages 'povray' and 'povray-includes' (sudo apt-get install povray povray-includes; "
                     "scripts/setup.sh installs them)");
  const std::string font_dir = "/usr/share/povray-3.7/include";
  if (!fs::exists(fs::path(font_dir) / "cyrvetic.ttf"))
    throw InputError(fmt::format("rodsim render needs the fonts of POV-Ray ({}/cyrvetic.ttf is missing): install the "
                                 "Debian package 'povray-includes' (sudo apt-get install povray-includes)", font_dir));
  std::string ffmpeg;
  if (!o.movie.empty()) {
    ffmpeg = process::findProgram("ffmpeg");
    if (ffmpeg.empty())
      throw InputError("rodsim render --movie needs ffmpeg to make the movie: 'ffmpeg' is not on PATH. Install the "
                       "Debian package 'ffmpeg' (sudo apt-get install ffmpeg; scripts/setup.sh installs it)");
  }

  const std::vector<FrameRef> refs = listFrames(run_dir);
  const std::vector<std::size_t> chosen = selectFrames(o, refs);
  // Frames are read one at a time, when needed (each pass over them reads them again), so memory
  // holds one frame whatever their number (issue 43: a .pvd of 1e6 frames); the last one read is
  // kept, so a single frame is read once.
  std::optional<std::pair<std::size_t, vtp::PolyLines>> last_read;
  auto frame = [&](std::size_t n) -> const vtp::PolyLines& {
    if (!last_read || last_read->first != n) {
      last_read.reset();
      try {
        last_read.emplace(n, vtp::readPolyLinesFile(refs[chosen[n]].file));
      } catch (const vtp::FormatError& e) {
        throw InputError(e.what());
      }
    }
    return last_read->second;
  };
  const ForEachFrame each_frame = [&](const std::function<void(const vtp::PolyLines&)>& fn) {
    for (std::size_t n = 0; n < chosen.size(); ++n) fn(frame(n));
  };
  std::vector<ObstacleShape> obstacles = readObstacles(run_dir);
  for (const auto& p : o.planes)
    obstacles.push_back({"--plane", "plane", Vec3(p[0], p[1], p[2]), Vec3(p[3], p[4], p[5]).normalized(), 0.0});

  Style style;
  style.color = o.color;
  style.time_decimals = decimalsFor(refs);
  if (frame(0).numPoints() == 0) throw InputError(fmt::format("{}: the frame has no rods", refs[chosen.front()].file));
  if (o.color != "rod") {
    std::vector<std::string> names{"rod"};
    for (const auto& a : frame(0).point_data) names.push_back(a.name);
    if (!frame(0).find(o.color)) {
      const std::string near = kernel::closestMatch(o.color, names);
      throw InputError(fmt::format("--color '{}': the frames have no such point array{}; choose one of: {}", o.color,
                                   near.empty() ? "" : " (did you mean '" + near + "'?)", fmt::join(names, ", ")));
    }
    style.label = fieldLabel(*frame(0).find(o.color));
    style.lo = std::numeric_limits<double>::infinity();
    style.hi = -style.lo;
  }
  Bounds rods;
  each_frame([&](const vtp::PolyLines& f) {
    if (o.color != "rod")
      if (const auto* a = f.find(o.color))
        for (std::size_t i = 0; i < f.numPoints(); ++i) {
          style.lo = std::min(style.lo, fieldValue(*a, i));
          style.hi = std::max(style.hi, fieldValue(*a, i));
        }
    const auto* radius = f.find("radius");
    for (std::size_t i = 0; i < f.numPoints(); ++i)
      rods.add({f.points[3 * i], f.points[3 * i + 1], f.points[3 * i + 2]}, radius ? radius->values[i] : 0.0);
  });
  if (o.color != "rod") {
    if (o.range) std::tie(style.lo, style.hi) = *o.range;
    if (!(style.hi > style.lo)) style.hi = style.lo + 1;  // a constant field: one colour
  }
  const Camera camera = frameCamera(o, rods, obstacles, each_frame);
  style.units.per_metre = 10 / (camera.look_at - camera.position).norm();

  // Where the images go: one frame to --output FILE (default run/render/frame_<k>.png); all frames
  // to the folder --output (default run/render/) as frame_00000.png, ... (numbered for ffmpeg).
  const bool single = chosen.size() == 1 && o.frame != "all";
  const fs::path images = single ? (o.output.empty() ? run_dir / "render" : fs::path(o.output).parent_path())
                                 : (o.output.empty() ? run_dir / "render" : fs::path(o.output));
  std::error_code ec;
  fs::create_directories(images.empty() ? fs::path(".") : images, ec);
  if (ec) throw InputError(fmt::format("cannot create {}: {}", images.string(), ec.message()));
  // POV-Ray's file-access policy (Debian's povray.conf) lets it write only below its working
  // directory: each job runs in a scratch folder and its image is moved out afterwards.
  // Named by process, so that two renders into one folder do not share it.
  const fs::path work = (images.empty() ? fs::path(".") : images) / fmt::format(".povray-{}", ::getpid());
  fs::create_directories(work, ec);
  if (ec) throw InputError(fmt::format("cannot create {}: {}", work.string(), ec.message()));

  // In batches of a few frames per povray process: the POV-Ray scenes, jobs and image names of one
  // batch at a time, whatever the number of frames.
  const int parallel = process::jobsOrCores(o.jobs);
  const std::size_t batch = 8 * static_cast<std::size_t>(parallel);
  const auto target = [&](std::size_t n) {
    return single && !o.output.empty() ? fs::path(o.output) : images / fmt::format("frame_{:05d}.png", single ? chosen[n] : n);
  };
  for (std::size_t first = 0; first < chosen.size(); first += batch) {
    const std::size_t stop = std::min(chosen.size(), first + batch);
    std::vector<process::Child> jobs;
    for (std::size_t n = first; n < stop; ++n) {
      const std::string stem = fmt::format("frame_{:05d}", single ? chosen[n] : n);
      std::ofstream(work / (stem + ".pov")) << povScene(frame(n), refs[chosen[n]].time, camera, style, obstacles, rods);
      process::Child job;
      job.argv = {povray, "+I" + stem + ".pov", "+O" + stem + ".png", fmt::format("+W{}", o.width), fmt::format("+H{}", o.height),
                  "+FN8", "-D", "-V", "+WT1", "+A0.1", "+AM2", "+R2", "+L" + font_dir};
      job.directory = work;
      job.log = work / (stem + ".log");
      jobs.push_back(job);
    }
    // On a terminal, one line "render: frame k/N" kept up to date over the batches.
    const bool show = !o.quiet && isatty(STDOUT_FILENO);
    std::size_t done = first;
    const auto failed = process::runInOrder(jobs, parallel, [&](const process::Child&) {
      if (show) std::printf("\rrender: frame %zu/%zu", ++done, chosen.size()), std::fflush(stdout);
    });
    if (show && (failed || stop == chosen.size())) std::printf("\n");
    if (failed && jobs[*failed].interrupted) {
      std::fprintf(stderr, "rodsim render: interrupted\n");
      return 3;
    }
    if (failed) {
      std::fprintf(stderr, "rodsim render: povray failed on %s (log: %s):\n%s\n", jobs[*failed].argv[1].c_str() + 2,
                   jobs[*failed].log.c_str(), process::logTail(jobs[*failed].log, 12).c_str());
      return 3;
    }
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      const std::string stem = fs::path(jobs[j].argv[2].substr(2)).stem().string();
      const fs::path to = target(first + j);
      fs::rename(work / (stem + ".png"), to, ec);
      if (ec) fs::copy_file(work / (stem + ".png"), to, fs::copy_options::overwrite_existing);
      if (o.keep_pov) {
        fs::rename(work / (stem + ".pov"), fs::path(to).replace_extension(".pov"), ec);
      }
      fs::remove(work / (stem + ".pov"), ec);
      fs::remove(work / (stem + ".log"), ec);
      fs::remove(work / (stem + ".png"), ec);
    }
  }
  fs::remove(work, ec);
  // Frames of an earlier, longer render into this folder would end up in the movie.
  if (!single)
    for (std::size_t n = chosen.size(); fs::exists(images / fmt::format("frame_{:05d}.png", n), ec); ++n)
      fs::remove(images / fmt::format("frame_{:05d}.png", n), ec);

  if (!o.movie.empty()) {
    // x264 wants even sizes; pad an odd one by a pixel.
    std::vector<process::Child> movie(1);
    movie[0].argv = {ffmpeg, "-y", "-loglevel", "error", "-framerate", fmt::format("{}", o.fps), "-i", (images / "frame_%05d.png").string(),
                  "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-crf", "20", o.movie};
    movie[0].log = images / "ffmpeg.log";
    if (process::runInOrder(movie, 1)) {
      std::fprintf(stderr, "rodsim render: ffmpeg failed (log: %s):\n%s\n", movie[0].log.c_str(),
                   process::logTail(movie[0].log, 12).c_str());
      return 3;
    }
    fs::remove(movie[0].log, ec);
  }
  if (!o.quiet) {
    if (single) std::printf("%s (t = %.6g s)\n", target(0).c_str(), refs[chosen.front()].time);
    else std::printf("%zu frames in %s\n", chosen.size(), images.c_str());
    if (!o.movie.empty()) std::printf("%s\n", o.movie.c_str());
  }
  return 0;
}

}  // namespace rodsim::viz
