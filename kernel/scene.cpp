// Scene parsing and validation. Every error names file:line:column, the key, what was expected
// and what was found; unknown names list the choices and the closest match.
#include <rodsim/kernel/scene.h>

#include "toml_depth.h"

#include <rodsim/user_files/bounded_read.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace rodsim::kernel {

const Location& ComponentSpec::at(const std::string& key) const {
  auto it = keys.find(key);
  return it == keys.end() ? where : it->second;
}

Schema simulationSchema() {
  Schema s{"simulation", "[simulation]: run length, time step, seed and threads."};
  s.optional<std::string>("name", "Run name; default: the scene file's stem. Names the default output directory.");
  s.required<double>("duration", "Simulated time.").unit("s").greater(0);
  s.required<double>("dt", "Time step.").unit("s").greater(0);
  s.add<int>("seed", 0, "Seed for anything random (perturbations).").atLeast(0);
  s.add<std::string>("on_failure", "stop",
                     "What a failed step does: stop (exit 3, everything so far written) or substep (retry it "
                     "as two half steps, recursively, at most max_step_cuts halvings; counted in summary.json).")
      .choices({"stop", "substep"});
  s.add<int>("max_step_cuts", 4, "Halvings of a failed step allowed with on_failure = \"substep\".").range(0, 30);
  s.add<int>("threads", 1,
             "Threads the run uses (rodsim run --threads N sets it): the World spreads its rods over them, and rods "
             "and solvers their long loops over elements and DOFs, each in fixed contiguous blocks, so that the "
             "results are bit for bit those of one thread. 0: every hardware thread. 1 (default) for measurements "
             "and for runs side by side (rodsim sweep, compare).")
      .range(0, 1024);
  return s;
}

Schema outputSchema() {
  Schema s{"output", "[output]: where and how often results are written."};
  s.optional<std::string>("dir", "Output directory, relative to the working directory; default out/<simulation.name>. --output overrides.");
  s.add<double>("every", 0.01,
                "Simulated time between VTK frames; 0: the final frame only. Default: 0.01 s, or dt when the time "
                "step is longer.")
      .unit("s").atLeast(0);
  s.add<std::vector<std::string>>("formats", std::vector<std::string>{"vtk", "csv"}, "Files to write besides summary.json.")
      .choices({"vtk", "csv"});
  s.add<std::string>("vtk_format", "binary",
                     "Encoding of the VTK frames: \"binary\" (XML appended raw data, zlib-compressed, the exact doubles) "
                     "or \"ascii\" (text, 9 significant digits). ParaView opens both.")
      .choices({"binary", "ascii"});
  s.optional<double>("timeseries_every",
                     "Simulated time between timeseries.csv rows; 0: every step. Default: every step for runs of up "
                     "to 10000 steps; a longer run writes a row every max(10, ceil(steps / 10000)) steps and one "
                     "for the last step. summary.json counts every step either way.")
      .unit("s").atLeast(0);
  s.add<double>("checkpoint_every", 0.0,
                "Simulated time between checkpoints (output dir/checkpoints/); 0: none. Continue a run with "
                "`rodsim run --restart DIR`. SIGINT and SIGTERM always write one and stop; SIGUSR1 writes one and goes on.")
      .unit("s").atLeast(0);
  s.add<double>("checkpoint_wall", 0.0, "Wall-clock time between checkpoints; 0: none.").unit("s").atLeast(0);
  s.add<int>("checkpoint_keep", 3, "Checkpoints kept (the newest).").range(1, 1000);
  return s;
}

Schema probeSchema() {
  Schema s{"probe", "[[probe]]: an extra column in timeseries.csv."};
  s.required<std::string>("name", "Column name.");
  s.required<std::string>("type", "What to measure.")
      .choices({"node-position", "node-velocity", "constraint-force", "end-to-end", "kinetic-energy", "center-of-mass",
                "constraint-torque", "stretch", "internal-force", "curvature", "internal-couple", "contact-force",
                "external-force"});
  s.optional<std::string>("rod", "Rod name (every type but constraint-force and constraint-torque).");
  s.add<int>("node", -1,
             "Node index; negative counts from the end. stretch and internal-force: the element (edge) index "
             "instead; curvature and internal-couple: a node between two elements.");
  s.optional<std::string>("constraint", "Constraint name (constraint-force, constraint-torque).");
  s.add<std::string>("component", "norm",
                     "Vector component. kinetic-energy: the translational kinetic energy of the rod's nodes, "
                     "(1/2) sum m_i v_i^2 in J, of one velocity component (x, y, z) or of all three (norm); the "
                     "rotational kinetic energy is not in it (the kinetic_energy column holds everything). center-of-mass: "
                     "the rod's centre of mass, sum m_i x_i / sum m_i over its nodes. constraint-torque: the torque "
                     "(N m) the constraint exerts on the rod about the mean position of its held nodes, world frame. "
                     "stretch: the element's axial strain |x_b - x_a| / rest length - 1 (component ignored). "
                     "internal-force: the force (N, world frame) the rod after the element exerts on the rod before it. "
                     "curvature (1/m) and internal-couple (N m): material components, x = d1, y = d2 (bending), "
                     "z = d3 (twist). contact-force: the sum of the contact forces (normal and friction, N, world "
                     "frame) on the node, from every contact model of the scene (each must report its contacts: every "
                     "contact model of rodsim does; alart-curnier gives its last impulses over dt). external-force: the sum of the scene's forces (gravity, loads, "
                     "damping, drag; N, world frame) on the node at the committed state and velocities, forces "
                     "constant within a step (rss) left out.")
      .choices({"x", "y", "z", "norm"});
  return s;
}

Schema obstacleSchema() {
  Schema s{"obstacle", "[[obstacle]]: fixed rigid geometry that rods can touch (used by contact models that support it)."};
  s.required<std::string>("name", "Obstacle name.");
  s.required<std::string>("shape", "Geometry.").choices({"plane", "sphere", "cylinder"});
  s.add<Vec3>("origin", Vec3::Zero(), "plane: a point on it; cylinder: a point on its axis.").unit("m");
  s.add<Vec3>("normal", Vec3::UnitZ(), "plane: normal pointing to the free side (normalized).");
  s.add<Vec3>("center", Vec3::Zero(), "sphere: center.").unit("m");
  s.add<Vec3>("axis", Vec3::UnitZ(), "cylinder: axis direction (normalized).");
  s.optional<double>("radius", "sphere, cylinder: radius.").unit("m").greater(0);
  s.add<double>("angular_velocity", 0.0, "cylinder: spin about its axis (right-handed).").unit("rad/s");
  return s;
}

std::string closestMatch(const std::string& word, const std::vector<std::string>& candidates) {
  auto distance = [](const std::string& a, const std::string& b) {
    std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
      cur[0] = i;
      for (std::size_t j = 1; j <= b.size(); ++j)
        cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      std::swap(prev, cur);
    }
    return prev[b.size()];
  };
  std::string best;
  std::size_t best_d = std::max<std::size_t>(3, word.size() / 2) + 1;
  for (const auto& c : candidates) {
    std::size_t d = distance(word, c);
    if (d < best_d) best_d = d, best = c;
  }
  return best;
}

namespace {

std::string choicesText(const std::string& word, std::vector<std::string> choices) {
  std::sort(choices.begin(), choices.end());
  std::string text = choices.empty() ? "none are available" : fmt::format("valid: {}", fmt::join(choices, ", "));
  std::string near = closestMatch(word, choices);
  if (!near.empty()) text += fmt::format("; did you mean '{}'?", near);
  return text;
}

std::string describeValue(const toml::node& n) {
  std::ostringstream os;
  if (n.is_string()) os << "string \"" << n.value<std::string>().value_or("") << "\"";
  else if (n.is_integer()) os << "integer " << n.value<long long>().value_or(0);
  else if (n.is_floating_point()) os << "number " << n.value<double>().value_or(0);
  else if (n.is_boolean()) os << "boolean " << (n.value<bool>().value_or(false) ? "true" : "false");
  else if (n.is_array()) os << "array of " << n.as_array()->size() << " element(s)";
  else if (n.is_table()) os << "table";
  else os << "a date/time";
  return os.str();
}

std::string formatNumber(double v) { return fmt::format("{:g}", v); }

// The parsed document plus where each value came from.
class Document {
 public:
  Document(toml::table root, std::string file) : root_(std::move(root)), file_(std::move(file)) {}
  // A scene given as text (SceneText): `file` is its origin, not a path.
  Document(toml::table root, const SceneText& source)
      : root_(std::move(root)), file_(source.origin), base_dir_(source.base_dir), default_name_(source.default_name) {}

  toml::table& root() { return root_; }
  const std::string& file() const { return file_; }
  // What relative paths resolve against: the scene file's folder, or a SceneText's base_dir.
  fs::path dir() const { return base_dir_ ? fs::absolute(*base_dir_) : fs::absolute(fs::path(file_)).parent_path(); }
  // The run name of a scene without [simulation] name: the file's stem, or a SceneText's default_name.
  std::string defaultName() const { return default_name_ ? *default_name_ : fs::path(file_).stem().string(); }

  Location where(const toml::node& n) const {
    auto it = overridden_.find(&n);
    if (it != overridden_.end()) return {fmt::format("<--set {}>", it->second)};
    const auto& src = n.source();
    if (src.begin.line == 0) return {file_};
    return {fmt::format("{}:{}:{}", file_, src.begin.line, src.begin.column)};
  }
  Location where(const toml::key& k) const {
    const auto& src = k.source();
    if (src.begin.line == 0) return {file_};
    return {fmt::format("{}:{}:{}", file_, src.begin.line, src.begin.column)};
  }
  void markOverride(const toml::node* n, const std::string& key) {
    overridden_[n] = key;
    if (const auto* t = n->as_table())
      for (auto&& [k, v] : *t) markOverride(&v, key);
    if (const auto* a = n->as_array())
      for (const auto& v : *a) markOverride(&v, key);
  }

  void applyOverride(const std::string& assignment);
  bool isOverride(const toml::node& n) const { return overridden_.count(&n) > 0; }
  // A string value of the file that a --set replaced by a different one.
  bool swappedByOverride(const toml::node& n) const { return swapped_.count(&n) > 0; }
  void note(std::string text) const { notes_.push_back(std::move(text)); }
  const std::vector<std::string>& notes() const { return notes_; }

  // Files the scene's path parameters name: a restart checks their content too. Collected while
  // the (otherwise read-only) validation resolves them.
  void noteReferencedFile(const std::string& path) const {
    if (std::find(referenced_.begin(), referenced_.end(), path) == referenced_.end()) referenced_.push_back(path);
  }
  const std::vector<std::string>& referencedFiles() const { return referenced_; }

 private:
  toml::table root_;
  std::string file_;
  std::optional<std::string> base_dir_, default_name_;
  mutable std::vector<std::string> referenced_;
  mutable std::vector<std::string> notes_;
  std::map<const toml::node*, std::string> overridden_;
  std::set<const toml::node*> swapped_;
};

[[noreturn]] void fail(const Location& at, const std::string& message) {
  throw InputError(fmt::format("{}: {}", at.text, message));
}

// Names become file names (the run's .pvd), CSV columns and rows, and --set key segments: no path
// separators, nothing that breaks a CSV cell, and no dots in names that --set addresses
// (rod.NAME.key); the run's name is only a file name and may have dots.
enum class NameUse { FileName, SetKey };
void checkName(const Location& at, const std::string& section, const std::string& name, NameUse use = NameUse::SetKey) {
  const bool is_run_name = use == NameUse::FileName;
  const bool control = std::any_of(name.begin(), name.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; });
  const char* forbidden = is_run_name ? "/\\,\"" : "/\\,\".";
  if (name.empty() || name == "." || name == ".." || control || name.find_first_of(forbidden) != std::string::npos)
    fail(at, fmt::format("{}: the name \"{}\" cannot be used: it must not be empty, \".\" or \"..\", or contain "
                         "'/', '\\', ',', '\"'{} or control characters (names become file names, CSV columns and "
                         "--set keys)",
                         section, name, is_run_name ? "" : ", '.'"));
}

toml::node_view<toml::node> parseValue(toml::table& holder, const std::string& text) {
  if (tomlNestingDepth("v = " + text).depth > kMaxTomlDepth)
    throw InputError(fmt::format("--set value '{:.40}...': nested more than {} levels deep", text, kMaxTomlDepth));
  try {
    holder = toml::parse(std::string_view("v = " + text), std::string_view("<--set>"));
  } catch (const toml::parse_error&) {
    holder = toml::table{};
    holder.insert("v", text);  // unquoted words are strings: --set contact.type=ipc
  }
  return holder["v"];
}

void Document::applyOverride(const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError(fmt::format("--set '{}': expected KEY=VALUE, e.g. --set rod.beam.youngs_modulus=2e6", assignment));
  const std::string key = assignment.substr(0, eq);
  std::vector<std::string> path;
  for (std::size_t pos = 0; pos <= key.size();) {
    std::size_t end = key.find('.', pos);
    if (end == std::string::npos) end = key.size();
    path.push_back(key.substr(pos, end - pos));
    pos = end + 1;
  }
  for (const auto& p : path)
    if (p.empty()) throw InputError(fmt::format("--set '{}': empty segment in the key", assignment));
  if (path.size() < 2) throw InputError(fmt::format("--set '{}': the key needs a section, e.g. simulation.dt", assignment));
  if (path.size() > kMaxTomlDepth)
    throw InputError(fmt::format("--set '{:.40}...': {} key segments; at most {} are accepted", assignment, path.size(), kMaxTomlDepth));

  static const std::vector<std::string> arrays{"rod", "force", "constraint", "obstacle", "contact", "probe"};
  static const std::vector<std::string> tables{"simulation", "plugins", "solver", "output"};
  toml::table* target = nullptr;
  std::size_t next = 1;
  const std::string& section = path[0];
  if (std::find(arrays.begin(), arrays.end(), section) != arrays.end()) {
    toml::array* arr = root_[section].as_array();
    if (!arr || arr->empty()) throw InputError(fmt::format("--set {}: the scene has no [[{}]] table", key, section));
    for (auto& el : *arr) {
      auto* t = el.as_table();
      if (t && path.size() > 2 && (*t)["name"].value<std::string>() == path[1]) {
        target = t;
        next = 2;
      }
    }
    if (!target) {
      // A single table is addressed directly (contact.friction), unless the second segment reads
      // as a name: rod.bean.radius must not create a key 'bean' in the only rod.
      toml::table* only = arr->size() == 1 ? arr->front().as_table() : nullptr;
      if (only && (path.size() == 2 || (*only)[path[1]].is_table())) {
        target = only;
      } else {
        std::vector<std::string> names;
        for (auto& el : *arr)
          if (auto* t = el.as_table()) names.push_back((*t)["name"].value<std::string>().value_or("?"));
        throw InputError(fmt::format("--set {}: no [[{}]] named '{}' ({})", key, section, path[1], choicesText(path[1], names)));
      }
    }
  } else if (std::find(tables.begin(), tables.end(), section) != tables.end()) {
    if (!root_.contains(section)) root_.insert(section, toml::table{});
    target = root_[section].as_table();
    if (!target) throw InputError(fmt::format("--set {}: '{}' is not a table in the scene", key, section));
  } else {
    std::vector<std::string> all = arrays;
    all.insert(all.end(), tables.begin(), tables.end());
    throw InputError(fmt::format("--set {}: unknown section '{}' ({})", key, section, choicesText(section, all)));
  }
  for (; next + 1 < path.size(); ++next) {
    if (!target->contains(path[next])) target->insert(path[next], toml::table{});
    target = (*target)[path[next]].as_table();
    if (!target) throw InputError(fmt::format("--set {}: '{}' is not a table", key, path[next]));
  }
  toml::table holder;
  auto value = parseValue(holder, assignment.substr(eq + 1));
  // A string of the file replaced by another (a component's type or model swapped by --set).
  const toml::node* before = target->get(path.back());
  const bool swapped = before && before->is_string() && value.node()->is_string() &&
                       before->value<std::string>() != value.node()->value<std::string>();
  target->insert_or_assign(path.back(), *value.node());
  markOverride(target->get(path.back()), key);
  if (swapped) swapped_.insert(target->get(path.back()));
}

// Converts one TOML value to the type the schema declares; throws InputError on mismatch.
Value convert(const Document& doc, const toml::node& n, const ParamSpec& spec, const std::string& what) {
  auto mismatch = [&]() -> InputError {
    return InputError(fmt::format("{}: {}: '{}' expects {}, found {}", doc.where(n).text, what, spec.name,
                                  typeName(spec.type), describeValue(n)));
  };
  auto number = [&](const toml::node& x) -> double {
    if (x.is_integer()) return static_cast<double>(x.value<long long>().value());
    if (x.is_floating_point()) return x.value<double>().value();
    throw mismatch();
  };
  auto integer = [&](const toml::node& x) -> std::int64_t {
    if (x.is_integer()) return x.value<long long>().value();
    throw mismatch();
  };
  auto string = [&](const toml::node& x) -> std::string {
    if (x.is_string()) return x.value<std::string>().value();
    throw mismatch();
  };
  auto list = [&]() -> const toml::array& {
    if (!n.is_array()) throw mismatch();
    return *n.as_array();
  };
  switch (spec.type) {
    case ParamType::Bool:
      if (!n.is_boolean()) throw mismatch();
      return n.value<bool>().value();
    case ParamType::Int: return integer(n);
    case ParamType::Real: return number(n);
    case ParamType::String: return string(n);
    case ParamType::Vec3: {
      const auto& a = list();
      if (a.size() != 3) throw mismatch();
      std::vector<double> v;
      for (const auto& x : a) v.push_back(number(x));
      return v;
    }
    case ParamType::RealList: {
      std::vector<double> v;
      for (const auto& x : list()) v.push_back(number(x));
      return v;
    }
    case ParamType::IntList: {
      std::vector<std::int64_t> v;
      for (const auto& x : list()) v.push_back(integer(x));
      return v;
    }
    case ParamType::StringList: {
      std::vector<std::string> v;
      for (const auto& x : list()) v.push_back(string(x));
      return v;
    }
    case ParamType::PointList: {
      std::vector<std::vector<double>> v;
      for (const auto& p : list()) {
        if (!p.is_array() || p.as_array()->size() != 3) throw mismatch();
        std::vector<double> xyz;
        for (const auto& x : *p.as_array()) xyz.push_back(number(x));
        v.push_back(xyz);
      }
      return v;
    }
  }
  throw mismatch();
}

std::string rangeText(const ParamSpec& s) {
  std::string lo = s.min ? fmt::format("{} {}", s.min_exclusive ? ">" : ">=", formatNumber(*s.min)) : "";
  std::string hi = s.max ? fmt::format("{} {}", s.max_exclusive ? "<" : "<=", formatNumber(*s.max)) : "";
  if (!lo.empty() && !hi.empty()) return lo + " and " + hi;
  return lo + hi;
}

bool inRange(const ParamSpec& s, double v) {
  if (!std::isfinite(v)) return false;
  if (s.min && (s.min_exclusive ? !(v > *s.min) : !(v >= *s.min))) return false;
  if (s.max && (s.max_exclusive ? !(v < *s.max) : !(v <= *s.max))) return false;
  return true;
}

// Checks range and choices of a converted value.
void checkValue(const Document& doc, const toml::node& n, const ParamSpec& spec, const Value& v, const std::string& what) {
  auto unitDoc = [&] { return spec.unit.empty() ? spec.doc : fmt::format("{}, {}", spec.doc, spec.unit); };
  auto checkNumber = [&](double x) {
    if (!inRange(spec, x))
      fail(doc.where(n), fmt::format("{}: '{}' must be {}, found {} ({})", what, spec.name, rangeText(spec),
                                     formatNumber(x), unitDoc()));
  };
  // Integer parameters are declared as int: a value that does not fit would wrap when read.
  auto checkFitsInt = [&](std::int64_t x) {
    if (x < std::numeric_limits<int>::min() || x > std::numeric_limits<int>::max())
      fail(doc.where(n), fmt::format("{}: '{}' must be an integer between {} and {}, found {} ({})", what, spec.name,
                                     std::numeric_limits<int>::min(), std::numeric_limits<int>::max(), x, unitDoc()));
  };
  auto checkChoice = [&](const std::string& x) {
    if (!spec.choices.empty() && std::find(spec.choices.begin(), spec.choices.end(), x) == spec.choices.end())
      fail(doc.where(n), fmt::format("{}: '{}' cannot be \"{}\" ({})", what, spec.name, x, choicesText(x, spec.choices)));
  };
  if (const auto* d = std::get_if<double>(&v)) {
    checkNumber(*d);
  } else if (const auto* i = std::get_if<std::int64_t>(&v)) {
    if (spec.min || spec.max) checkNumber(static_cast<double>(*i));
    checkFitsInt(*i);
  } else if (const auto* l = std::get_if<std::vector<double>>(&v)) {
    for (double x : *l)
      if (!std::isfinite(x) || ((spec.min || spec.max) && !inRange(spec, x)))
        fail(doc.where(n), fmt::format("{}: every element of '{}' must be finite{}{}, found {}", what, spec.name,
                                       (spec.min || spec.max) ? " and " : "", rangeText(spec), formatNumber(x)));
  } else if (const auto* li = std::get_if<std::vector<std::int64_t>>(&v)) {
    for (auto x : *li) {
      if ((spec.min || spec.max) && !inRange(spec, static_cast<double>(x)))
        fail(doc.where(n), fmt::format("{}: every element of '{}' must be {}, found {}", what, spec.name, rangeText(spec), x));
      checkFitsInt(x);
    }
  } else if (const auto* s = std::get_if<std::string>(&v)) {
    checkChoice(*s);
  } else if (const auto* ls = std::get_if<std::vector<std::string>>(&v)) {
    for (const auto& x : *ls) checkChoice(x);
  }
}

// Flattens inline/sub-tables to dotted keys: geometry = { shape = ... } -> "geometry.shape".
void flatten(const toml::table& t, const std::string& prefix, std::vector<std::pair<std::string, const toml::node*>>& out,
             std::map<std::string, const toml::key*>& keys) {
  for (auto&& [k, v] : t) {
    std::string name = prefix + std::string(k.str());
    if (v.is_table()) {
      flatten(*v.as_table(), name + ".", out, keys);
    } else {
      out.emplace_back(name, &v);
      keys[name] = &k;
    }
  }
}

// Validates `table` against `schema` into params; `skip` lists kernel keys handled by the caller.
// `type_from_set`: a --set swapped the component's type (or model) for another, so a key of the file that the new type does
// not declare belonged to the old one: dropped with a note (as `rodsim compare` does for contacts),
// not an error. A key given by --set itself is still checked.
void validateTable(const Document& doc, const toml::table& table, const Schema& schema, const std::string& what,
                   const std::vector<std::string>& skip, Params& params, std::map<std::string, Location>& locations,
                   bool type_from_set = false) {
  std::vector<std::pair<std::string, const toml::node*>> entries;
  std::map<std::string, const toml::key*> keys;
  flatten(table, "", entries, keys);
  std::vector<std::string> valid = skip;
  for (const auto& p : schema.params()) valid.push_back(p.name);
  for (const auto& [name, node] : entries) {
    if (std::find(skip.begin(), skip.end(), name) != skip.end()) continue;
    const ParamSpec* spec = schema.find(name);
    if (!spec && type_from_set && !doc.isOverride(*node)) {
      doc.note(fmt::format("{}: key '{}' ({}) dropped: the type given by --set does not declare it", what, name,
                           doc.where(*keys[name]).text));
      continue;
    }
    if (!spec)
      fail(doc.where(*keys[name]), fmt::format("{}: unknown key '{}' ({})", what, name, choicesText(name, valid)));
    Value v = convert(doc, *node, *spec, what);
    checkValue(doc, *node, *spec, v, what);
    if (spec->is_path) {
      fs::path p(std::get<std::string>(v));
      if (p.is_relative()) p = doc.dir() / p;
      v = p.lexically_normal().string();
      doc.noteReferencedFile(std::get<std::string>(v));
    }
    params.set(name, std::move(v));
    locations[name] = doc.where(*node);
  }
  for (const auto& spec : schema.params()) {
    if (params.has(spec.name)) continue;
    if (spec.required)
      fail(doc.where(table), fmt::format("{}: missing required key '{}' ({} {}{})", what, spec.name, typeName(spec.type),
                                         spec.doc, spec.unit.empty() ? "" : ", " + spec.unit));
    if (spec.fallback) params.set(spec.name, *spec.fallback);
  }
}

const toml::table& requireTable(const Document& doc, const toml::node& n, const std::string& what) {
  if (!n.is_table()) fail(doc.where(n), fmt::format("'{}' must be a table, found {}", what, describeValue(n)));
  return *n.as_table();
}

ComponentSpec validateComponent(const Document& doc, const toml::table& t, const std::string& section, ComponentKind kind,
                                const char* type_key, bool name_required, const TypeRegistry& registry) {
  ComponentSpec spec;
  spec.section = section;
  spec.where = doc.where(t);
  const auto* type_node = t.get(type_key);
  if (!type_node)
    fail(spec.where, fmt::format("[[{}]]: missing required key '{}' ({})", section, type_key,
                                 choicesText("", registry.typeNames(kind))));
  if (!type_node->is_string())
    fail(doc.where(*type_node), fmt::format("{}: '{}' expects string, found {}", section, type_key, describeValue(*type_node)));
  spec.type = type_node->value<std::string>().value();
  spec.keys[type_key] = doc.where(*type_node);
  const ComponentType* ct = registry.find(kind, spec.type);
  if (!ct)
    fail(doc.where(*type_node),
         fmt::format("unknown {} {} \"{}\" ({}; `rodsim plugins` lists what is loaded; a plugin of your own is found "
                     "through the scene's [plugins] paths = [\"path/to/rodsim-x.so or its folder\"] or the "
                     "RODSIM_PLUGIN_PATH environment variable)",
                     section, type_key, spec.type, choicesText(spec.type, registry.typeNames(kind))));
  if (const auto* name_node = t.get("name")) {
    if (!name_node->is_string())
      fail(doc.where(*name_node), fmt::format("{}: 'name' expects string, found {}", section, describeValue(*name_node)));
    spec.name = name_node->value<std::string>().value();
    spec.keys["name"] = doc.where(*name_node);
  } else if (name_required) {
    fail(spec.where, fmt::format("[[{}]] ({}): missing required key 'name'", section, spec.type));
  } else {
    spec.name = spec.type;
  }
  spec.params = Params(spec.name);
  const std::string what = fmt::format("{} '{}' ({})", section, spec.name, spec.type);
  validateTable(doc, t, ct->schema, what, {type_key, "name"}, spec.params, spec.keys, doc.swappedByOverride(*type_node));
  return spec;
}

std::vector<const toml::table*> tablesOf(const Document& doc, toml::table& root, const std::string& section) {
  std::vector<const toml::table*> out;
  const toml::node* n = root.get(section);
  if (!n) return out;
  if (!n->is_array_of_tables())
    fail(doc.where(*n), fmt::format("'{}' must be an array of tables ([[{}]]), found {}", section, section, describeValue(*n)));
  for (const auto& el : *n->as_array()) out.push_back(el.as_table());
  return out;
}

Scene validate(Document& doc, const TypeRegistry& registry) {
  toml::table& root = doc.root();
  static const std::vector<std::string> sections{"simulation", "plugins", "solver",  "rod",    "force",
                                                 "constraint", "obstacle", "contact", "output", "probe"};
  for (auto&& [k, v] : root)
    if (std::find(sections.begin(), sections.end(), std::string(k.str())) == sections.end())
      fail(doc.where(k), fmt::format("unknown section '{}' ({})", k.str(), choicesText(std::string(k.str()), sections)));

  Scene scene;
  scene.file = doc.file();

  // [simulation]
  {
    const toml::node* n = root.get("simulation");
    if (!n) fail({doc.file()}, "missing required section [simulation] (duration and dt)");
    Params p("simulation");
    std::map<std::string, Location> locs;
    validateTable(doc, requireTable(doc, *n, "simulation"), simulationSchema(), "[simulation]", {}, p, locs);
    scene.name = p.has("name") ? p.string("name") : doc.defaultName();
    checkName(locs.count("name") ? locs["name"] : Location{doc.file()}, "simulation", scene.name, NameUse::FileName);
    scene.duration = p.real("duration");
    scene.dt = p.real("dt");
    scene.seed = p.integer("seed");
    scene.substep_on_failure = p.string("on_failure") == "substep";
    scene.max_step_cuts = static_cast<int>(p.integer("max_step_cuts"));
    scene.threads = static_cast<int>(p.integer("threads"));
    // Absurd sizes are refused before anything is allocated.
    if (scene.duration / scene.dt > 1e9)
      fail(locs["dt"], fmt::format("[simulation]: duration / dt = {:.3g} steps; at most 1e9 are allowed", scene.duration / scene.dt));
    if (scene.dt > scene.duration)
      fail(locs["dt"], fmt::format("[simulation]: 'dt' ({}) must not exceed 'duration' ({})", formatNumber(scene.dt),
                                   formatNumber(scene.duration)));
  }
  // [plugins] (already loaded by the caller; validated here for unknown keys)
  if (const toml::node* n = root.get("plugins")) {
    Schema s{"plugins", "[plugins]: extra plugin libraries."};
    s.add<std::vector<std::string>>("paths", std::vector<std::string>{}, "Plugin files or directories, relative to the scene file.");
    Params p("plugins");
    std::map<std::string, Location> locs;
    validateTable(doc, requireTable(doc, *n, "plugins"), s, "[plugins]", {}, p, locs);
    for (const auto& path : p.strings("paths")) scene.plugin_paths.push_back((doc.dir() / path).lexically_normal().string());
  }
  // [solver]
  {
    const toml::node* n = root.get("solver");
    if (!n) fail({doc.file()}, fmt::format("missing required section [solver] (type = {})",
                                           fmt::join(registry.typeNames(ComponentKind::Solver), " | ")));
    scene.solver = validateComponent(doc, requireTable(doc, *n, "solver"), "solver", ComponentKind::Solver, "type", false, registry);
  }
  for (const auto* t : tablesOf(doc, root, "rod"))
    scene.rods.push_back(validateComponent(doc, *t, "rod", ComponentKind::Rod, "model", true, registry));
  if (scene.rods.empty()) fail({doc.file()}, "the scene has no [[rod]]");
  for (const auto* t : tablesOf(doc, root, "force"))
    scene.forces.push_back(validateComponent(doc, *t, "force", ComponentKind::Force, "type", false, registry));
  for (const auto* t : tablesOf(doc, root, "constraint"))
    scene.constraints.push_back(validateComponent(doc, *t, "constraint", ComponentKind::Constraint, "type", false, registry));
  for (const auto* t : tablesOf(doc, root, "contact"))
    scene.contacts.push_back(validateComponent(doc, *t, "contact", ComponentKind::Contact, "type", false, registry));
  for (const auto* t : tablesOf(doc, root, "obstacle")) {
    ObstacleSpec o;
    Params p;
    std::map<std::string, Location> locs;
    o.where = doc.where(*t);
    validateTable(doc, *t, obstacleSchema(), "[[obstacle]]", {}, p, locs);
    Obstacle& ob = o.obstacle;
    ob.name = p.string("name");
    const std::string shape = p.string("shape");
    ob.shape = shape == "plane" ? Obstacle::Shape::Plane : shape == "sphere" ? Obstacle::Shape::Sphere : Obstacle::Shape::Cylinder;
    ob.origin = p.vec3("origin");
    ob.center = p.vec3("center");
    ob.angular_velocity = p.real("angular_velocity");
    for (const char* key : {"normal", "axis"}) {
      const Vec3 v = p.vec3(key);
      if (!(v.norm() > 0)) fail(locs.count(key) ? locs[key] : o.where, fmt::format("obstacle '{}': '{}' must be a nonzero vector", ob.name, key));
      (std::string(key) == "normal" ? ob.normal : ob.axis) = v.normalized();
    }
    if (ob.shape != Obstacle::Shape::Plane) {
      if (!p.has("radius")) fail(o.where, fmt::format("obstacle '{}' ({}): missing required key 'radius' (m)", ob.name, shape));
      ob.radius = p.real("radius");
    }
    scene.obstacles.push_back(std::move(o));
  }

  // Names must be unique within a section: they address --set overrides and probes.
  auto checkUnique = [&](const std::vector<ComponentSpec>& list) {
    for (std::size_t i = 0; i < list.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (list[i].name == list[j].name)
          fail(list[i].at("name"), fmt::format("{} name '{}' is used twice (first at {}); give each a distinct name",
                                               list[i].section, list[i].name, list[j].where.text));
  };
  for (const auto* list : {&scene.rods, &scene.forces, &scene.constraints, &scene.contacts})
    for (const auto& c : *list) checkName(c.at("name"), c.section, c.name);
  for (const auto& o : scene.obstacles) checkName(o.where, "obstacle", o.obstacle.name);
  checkUnique(scene.rods);
  checkUnique(scene.forces);
  checkUnique(scene.constraints);
  checkUnique(scene.contacts);

  // [output]
  {
    Params p("output");
    std::map<std::string, Location> locs;
    toml::table empty;
    const toml::node* n = root.get("output");
    validateTable(doc, n ? requireTable(doc, *n, "output") : empty, outputSchema(), "[output]", {}, p, locs);
    scene.output.dir = p.has("dir") ? p.string("dir") : "out/" + scene.name;
    // The default interval follows a longer time step: a default must never make a valid scene invalid.
    scene.output.every = locs.count("every") ? p.real("every") : std::max(p.real("every"), scene.dt);
    scene.output.checkpoint_every = p.real("checkpoint_every");
    scene.output.checkpoint_wall = p.real("checkpoint_wall");
    scene.output.checkpoint_keep = static_cast<int>(p.integer("checkpoint_keep"));
    if (p.has("timeseries_every")) scene.output.timeseries_every = p.real("timeseries_every");
    // A period shorter than the step would mean a write every step at best (or a loop that never
    // catches up with the clock): refused.
    // Where an [output] value came from: its key, else the table, else the file (never empty).
    const Location table_at = n ? doc.where(*n) : Location{doc.file()};
    auto at = [&](const char* key) { return locs.count(key) ? locs[key] : table_at; };
    const double periods[] = {scene.output.every, scene.output.checkpoint_every,
                              p.has("timeseries_every") ? p.real("timeseries_every") : 0.0};
    const char* period_keys[] = {"every", "checkpoint_every", "timeseries_every"};
    for (int i = 0; i < 3; ++i) {
      const char* key = period_keys[i];
      const double period = periods[i];
      if (period > 0 && period < scene.dt)
        fail(at(key), fmt::format("[output]: '{}' must be 0 (off) or at least the time step dt = {}, found {}", key,
                                    formatNumber(scene.dt), formatNumber(period)));
    }
    if (scene.output.every > 0 && scene.duration / scene.output.every > 1e6)
      fail(at("every"),
           fmt::format("[output]: duration / every = {:.3g} frames; at most 1e6 are allowed", scene.duration / scene.output.every));
    const auto& formats = p.strings("formats");
    scene.output.vtk = std::find(formats.begin(), formats.end(), "vtk") != formats.end();
    scene.output.csv = std::find(formats.begin(), formats.end(), "csv") != formats.end();
    scene.output.vtk_binary = p.string("vtk_format") == "binary";
  }
  // [[probe]]
  std::vector<std::string> rod_names, constraint_names;
  for (const auto& r : scene.rods) rod_names.push_back(r.name);
  for (const auto& c : scene.constraints) constraint_names.push_back(c.name);
  for (const auto* t : tablesOf(doc, root, "probe")) {
    ProbeSpec probe;
    Params p;
    probe.where = doc.where(*t);
    validateTable(doc, *t, probeSchema(), "[[probe]]", {}, p, probe.keys);
    probe.name = p.string("name");
    checkName(probe.keys["name"], "probe", probe.name);
    probe.type = p.string("type");
    probe.node = p.integer("node");
    probe.component = p.string("component");
    const std::string what = fmt::format("probe '{}' ({})", probe.name, probe.type);
    if (probe.type == "constraint-force" || probe.type == "constraint-torque") {
      if (!p.has("constraint")) fail(probe.where, what + ": missing required key 'constraint'");
      probe.constraint = p.string("constraint");
      if (std::find(constraint_names.begin(), constraint_names.end(), probe.constraint) == constraint_names.end())
        fail(probe.keys["constraint"], fmt::format("{}: unknown constraint \"{}\" ({})", what, probe.constraint,
                                                   choicesText(probe.constraint, constraint_names)));
    } else {
      if (!p.has("rod")) fail(probe.where, what + ": missing required key 'rod'");
      probe.rod = p.string("rod");
      if (std::find(rod_names.begin(), rod_names.end(), probe.rod) == rod_names.end())
        fail(probe.keys["rod"], fmt::format("{}: unknown rod \"{}\" ({})", what, probe.rod, choicesText(probe.rod, rod_names)));
    }
    scene.probes.push_back(std::move(probe));
  }
  scene.referenced_files = doc.referencedFiles();
  scene.notes = doc.notes();
  return scene;
}

toml::table parseText(std::string_view text, const std::string& file) {
  checkTomlDepth(text, file);
  try {
    return toml::parse(text, std::string_view(file));
  } catch (const toml::parse_error& e) {
    throw InputError(fmt::format("{}:{}:{}: TOML syntax error: {}", file, e.source().begin.line, e.source().begin.column,
                                 e.description()));
  }
}

std::string readFileText(const std::string& file) { return readUserFile(file, kMaxSceneBytes, "scene file"); }

}  // namespace

void checkTomlDepth(std::string_view text, const std::string& file) {
  const TomlDepth nesting = tomlNestingDepth(text);
  if (nesting.depth > kMaxTomlDepth)
    throw InputError(fmt::format("{}:{}:{}: tables and arrays nested {} levels deep; at most {} are accepted",
                                 file, nesting.line, nesting.column, nesting.depth, kMaxTomlDepth));
}

std::string readUserFile(const std::string& file, std::uintmax_t max_bytes, const std::string& what) {
  try {
    return user_files::readBoundedFile(file, max_bytes, what);
  } catch (const user_files::BoundedReadError& e) {
    throw InputError(e.what());
  }
}

std::string readSceneText(const std::string& file) { return readFileText(file); }

long long OutputSpec::rowStride(long long total_steps, double dt) const {
  if (timeseries_every == 0) return 1;
  if (timeseries_every > 0) return std::max<long long>(1, std::llround(timeseries_every / dt));
  if (total_steps <= kAutoRows) return 1;
  // At least 10 steps apart: a row (energies, probes) costs up to about a small explicit step.
  return std::max<long long>(10, (total_steps + kAutoRows - 1) / kAutoRows);
}

namespace {

std::vector<std::string> pluginPathsOf(Document& doc, const std::vector<std::string>& overrides) {
  for (const auto& o : overrides) doc.applyOverride(o);  // --set plugins.paths=[...] is honoured
  std::vector<std::string> out;
  if (auto* arr = doc.root()["plugins"]["paths"].as_array())
    for (const auto& el : *arr)
      if (auto s = el.value<std::string>()) out.push_back((doc.dir() / *s).lexically_normal().string());
  return out;
}

}  // namespace

std::vector<std::string> readPluginPaths(const std::string& file, const std::vector<std::string>& overrides) {
  Document doc(parseText(readFileText(file), file), file);
  return pluginPathsOf(doc, overrides);
}

std::vector<std::string> readPluginPaths(const SceneText& source, const std::vector<std::string>& overrides) {
  Document doc(parseText(source.text, source.origin), source);
  return pluginPathsOf(doc, overrides);
}

Scene parseScene(std::string_view text, const std::string& file, const std::vector<std::string>& overrides,
                 const TypeRegistry& registry) {
  Document doc(parseText(text, file), file);
  for (const auto& o : overrides) doc.applyOverride(o);
  return validate(doc, registry);
}

Scene parseScene(const SceneText& source, const std::vector<std::string>& overrides, const TypeRegistry& registry) {
  if (source.text.size() > kMaxSceneBytes)  // the bound a scene file has
    throw InputError(fmt::format("{}: the scene text holds {} bytes; at most {} are accepted", source.origin,
                                 source.text.size(), kMaxSceneBytes));
  Document doc(parseText(source.text, source.origin), source);
  for (const auto& o : overrides) doc.applyOverride(o);
  return validate(doc, registry);
}

Scene loadScene(const std::string& file, const std::vector<std::string>& overrides, const TypeRegistry& registry) {
  return parseScene(readFileText(file), file, overrides, registry);
}

}  // namespace rodsim::kernel
