// rodsim sweep (docs/sweeps.md). A sweep file names a base scene and axes over its keys in --set
// syntax; the axes span an ordered table of rows (a grid, or zipped lists); each row is one child
// `rodsim run` writing DIR/<row>/. A row is finished when DIR/<row>/sweep_row.json exists: the
// driver writes it when the child ends (not when the sweep was interrupted), so running the sweep
// again runs only the rows without it. Every engine (local cores, mpirun ranks, Slurm array tasks)
// runs rows the same way; runs.csv is merged from the row folders afterwards.
#include "sweep.h"

#include "child_runs.h"
#include "study_ranks.h"

#include <rodsim/kernel/checkpoint.h>
#include <rodsim/kernel/output.h>
#include <rodsim/kernel/scene.h>
#include <rodsim/kernel/simulation.h>

#include <rodsim/process/spawn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace rodsim::studies {

using namespace rodsim::kernel;

namespace {

constexpr const char* kUsage =
    "usage: rodsim sweep SWEEP.toml [--output DIR] [--jobs N] [--quiet]   run every row not finished yet, then runs.csv\n"
    "       rodsim sweep SWEEP.toml --list                 print the table of rows (index and axis values)\n"
    "       rodsim sweep SWEEP.toml --index K [--output DIR]   run row K only (a Slurm array task)\n"
    "       rodsim sweep SWEEP.toml --merge [--output DIR]     write runs.csv from the rows finished so far\n";

// Columns of runs.csv copied from each run's summary.json, in this order.
const std::vector<std::string> kSummaryColumns{
    "steps",          "sim_time",      "wall_time_s", "newton_iterations", "aipts",    "step_cuts",
    "steps_with_contact", "aipts_contact", "atpts_ms",    "atpts_contact_ms",  "min_gap"};

// ---------------------------------------------------------------- reading the sweep file

// Validates a scene as `rodsim check` does (components built and bound, probes resolved).
void checkRun(const Sweep& s, const std::vector<std::string>& overrides, const TypeRegistry& registry) {
  checkSceneWith(s.scene_text, s.scene, overrides, registry);
}

// Expands the groups into rows: the first group varies slowest, the last fastest (nested loops
// over the axes in file order); a zip group advances all its axes together.
std::vector<SweepRow> expand(const std::vector<Axis>& axes, const std::vector<std::vector<std::size_t>>& groups) {
  std::size_t total = 1;
  for (const auto& g : groups) total *= axes[g.front()].values.size();
  std::vector<SweepRow> rows(total);
  for (std::size_t r = 0; r < total; ++r) {
    rows[r].index = r;
    rows[r].pick.assign(axes.size(), 0);
    std::size_t rest = r;
    for (std::size_t gi = groups.size(); gi-- > 0;) {
      const std::size_t n = axes[groups[gi].front()].values.size();
      for (std::size_t a : groups[gi]) rows[r].pick[a] = rest % n;
      rest /= n;
    }
  }
  return rows;
}

}  // namespace

std::vector<std::string> Sweep::overrides(const SweepRow& row) const {
  std::vector<std::string> out = fixed;
  for (std::size_t a = 0; a < axes.size(); ++a) out.push_back(axes[a].key + "=" + axes[a].values[row.pick[a]].toml);
  return out;
}

Sweep loadSweep(const std::string& file, const TypeRegistry& registry, std::optional<std::size_t> only_row) {
  Sweep s;
  s.file = file;
  const std::string text = readSceneText(file);  // InputError "file: cannot open"
  const std::vector<std::string> lines = splitLines(text);
  toml::table root;
  checkTomlDepth(text, file);  // TOML++ recurses: a deep nesting is refused before it is parsed
  try {
    root = toml::parse(std::string_view(text), std::string_view(file));
  } catch (const toml::parse_error& e) {
    throw InputError(fmt::format("{}:{}:{}: TOML syntax error: {}", file, e.source().begin.line, e.source().begin.column,
                                 e.description()));
  }
  auto at = [&](const toml::source_region& src) { return src.begin.line ? sourceAt(file, src) : file + ":1:1"; };
  auto fail = [&](const toml::source_region& src, const std::string& message) -> InputError {
    return InputError(fmt::format("{}: {}", at(src), message));
  };

  static const std::vector<std::string> known{"scene", "axes", "zip", "set"};
  for (auto&& [k, v] : root) {
    const std::string key(k.str());
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    const std::string near = closestMatch(key, known);
    throw fail(k.source(), fmt::format("unknown key '{}' in a sweep file (valid: {}{})", key, fmt::join(known, ", "),
                                       near.empty() ? "" : "; did you mean '" + near + "'?"));
  }

  // scene: the base scene, relative to the sweep file.
  const toml::node* scene = root.get("scene");
  if (!scene) throw InputError(fmt::format("{}:1:1: missing required key 'scene' (the base scene, a path relative to this file)", file));
  if (!scene->is_string())
    throw fail(scene->source(), fmt::format("'scene' expects a string (a path relative to the sweep file), found {}",
                                            describeNode(*scene)));
  s.scene_where = at(scene->source());
  s.scene = (fs::path(file).parent_path() / scene->value<std::string>().value()).lexically_normal().string();
  try {
    s.scene_text = readSceneText(s.scene);
  } catch (const InputError&) {
    throw fail(scene->source(), fmt::format("scene '{}': cannot open {}", scene->value<std::string>().value(), s.scene));
  }

  // [set]: the same value for every run.
  std::map<std::string, toml::source_region> key_source;
  if (const toml::node* set = root.get("set")) {
    if (!set->is_table()) throw fail(set->source(), fmt::format("'set' expects a table of KEY = VALUE, found {}", describeNode(*set)));
    std::vector<std::pair<std::string, const toml::node*>> leaves;
    flatten(*set->as_table(), "", leaves, key_source);
    sortBySource(leaves);
    for (const auto& [key, node] : leaves) {
      s.fixed.push_back(key + "=" + valueText(*node, lines));
      s.fixed_where.push_back(at(node->source()));
    }
  }

  // [axes]: KEY = [values...]
  const toml::node* axes = root.get("axes");
  if (!axes) throw InputError(fmt::format("{}:1:1: missing required table [axes] (KEY = [value, ...] per axis)", file));
  if (!axes->is_table()) throw fail(axes->source(), fmt::format("'axes' expects a table of KEY = [values], found {}", describeNode(*axes)));
  std::vector<std::pair<std::string, const toml::node*>> leaves;
  flatten(*axes->as_table(), "", leaves, key_source);
  sortBySource(leaves);
  if (leaves.empty()) throw fail(axes->source(), "[axes] is empty: give at least one KEY = [value, ...]");
  for (const auto& [key, node] : leaves) {
    const auto* values = node->as_array();
    if (!values) throw fail(node->source(), fmt::format("axis '{}' expects an array of values, found {}", key, describeNode(*node)));
    if (values->empty()) throw fail(node->source(), fmt::format("axis '{}' has no values", key));
    if (key.find('.') == std::string::npos)
      throw fail(key_source[key], fmt::format("axis '{}': a key needs a section, as for --set (e.g. contact.friction)", key));
    Axis axis{key, at(key_source[key]), {}};
    for (const auto& v : *values) {
      AxisValue value{valueText(v, lines), "", at(v.source())};
      value.shown = v.is_string() ? v.value<std::string>().value() : value.toml;
      axis.values.push_back(std::move(value));
    }
    s.axes.push_back(std::move(axis));
  }
  auto axisIndex = [&](const std::string& key) {
    for (std::size_t a = 0; a < s.axes.size(); ++a)
      if (s.axes[a].key == key) return static_cast<long>(a);
    return -1L;
  };

  // zip = true (all axes in step) or zip = [["a", "b"], ...] (groups in step, a grid between them).
  std::vector<long> group_of(s.axes.size(), -1);
  std::vector<toml::source_region> group_where;
  if (const toml::node* zip = root.get("zip")) {
    if (zip->is_boolean()) {
      if (zip->value<bool>().value()) {
        s.groups.emplace_back();
        for (std::size_t a = 0; a < s.axes.size(); ++a) s.groups.back().push_back(a), group_of[a] = 0;
        group_where.push_back(zip->source());
      }
    } else if (const auto* groups = zip->as_array()) {
      for (const auto& g : *groups) {
        const auto* names = g.as_array();
        if (!names || names->empty())
          throw fail(g.source(), fmt::format("zip expects lists of axis keys, e.g. zip = [[\"a.x\", \"b.y\"]]; found {}", describeNode(g)));
        s.groups.emplace_back();
        group_where.push_back(g.source());
        for (const auto& n : *names) {
          if (!n.is_string()) throw fail(n.source(), fmt::format("zip: expected an axis key (a string), found {}", describeNode(n)));
          const std::string key = n.value<std::string>().value();
          const long a = axisIndex(key);
          if (a < 0) {
            std::vector<std::string> keys;
            for (const auto& ax : s.axes) keys.push_back(ax.key);
            const std::string near = closestMatch(key, keys);
            throw fail(n.source(), fmt::format("zip: '{}' is not an axis (axes: {}{})", key, fmt::join(keys, ", "),
                                               near.empty() ? "" : "; did you mean '" + near + "'?"));
          }
          if (group_of[a] >= 0) throw fail(n.source(), fmt::format("zip: axis '{}' is already in a zip group", key));
          group_of[a] = static_cast<long>(s.groups.size() - 1);
          s.groups.back().push_back(static_cast<std::size_t>(a));
        }
      }
    } else {
      throw fail(zip->source(), fmt::format("'zip' expects true or lists of axis keys (zip = [[\"a.x\", \"b.y\"]]), found {}",
                                            describeNode(*zip)));
    }
  }
  for (std::size_t gi = 0; gi < s.groups.size(); ++gi) {
    const auto& g = s.groups[gi];
    for (std::size_t a : g)
      if (s.axes[a].values.size() != s.axes[g.front()].values.size()) {
        std::vector<std::string> lengths;
        for (std::size_t b : g) lengths.push_back(fmt::format("'{}' has {} ({})", s.axes[b].key, s.axes[b].values.size(), s.axes[b].where));
        throw fail(group_where[gi], fmt::format("zip: the zipped axes need lists of equal length: {}", fmt::join(lengths, ", ")));
      }
  }
  // Axes outside every zip group are groups of one; groups are ordered by their first axis.
  for (std::size_t a = 0; a < s.axes.size(); ++a)
    if (group_of[a] < 0) s.groups.push_back({a});
  for (auto& g : s.groups) std::sort(g.begin(), g.end());
  std::sort(s.groups.begin(), s.groups.end());
  std::size_t total = 1;
  for (const auto& g : s.groups) {
    total *= s.axes[g.front()].values.size();
    if (total > 1000000) throw fail(axes->source(), "the axes span more than a million runs");
  }
  s.rows = expand(s.axes, s.groups);
  if (only_row && *only_row >= s.rows.size())
    throw InputError(fmt::format("--index {}: the sweep {} has rows 0 to {}", *only_row, file, s.rows.size() - 1));

  // --- validation: the base scene, each [set] and axis value alone, then every row, so that an
  // error points at the value that causes it.
  const std::string in_sweep = fmt::format("(the base scene of the sweep, {})", s.scene_where);
  try {
    checkRun(s, {}, registry);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}\n{}", e.what(), in_sweep));
  }
  for (std::size_t i = 0; i < s.fixed.size(); ++i) try {
      checkRun(s, {s.fixed[i]}, registry);
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: [set] {}: {}", s.fixed_where[i], s.fixed[i], e.what()));
    }
  for (const Axis& axis : s.axes)
    for (const AxisValue& v : axis.values) {
      std::vector<std::string> o = s.fixed;
      o.push_back(axis.key + "=" + v.toml);
      try {
        checkRun(s, o, registry);
      } catch (const InputError& e) {
        throw InputError(fmt::format("{}: axis '{}' = {}: {}", v.where, axis.key, v.toml, e.what()));
      }
    }
  for (const SweepRow& row : s.rows) {
    if (only_row && row.index != *only_row) continue;
    if (s.axes.size() < 2 && !only_row) break;  // every row was one axis value: checked above
    try {
      checkRun(s, s.overrides(row), registry);
    } catch (const InputError& e) {
      std::vector<std::string> values;
      for (std::size_t a = 0; a < s.axes.size(); ++a) values.push_back(s.axes[a].key + " = " + s.axes[a].values[row.pick[a]].toml);
      throw InputError(fmt::format("{}: row {} ({}): {}", at(axes->source()), row.index, fmt::join(values, ", "), e.what()));
    }
  }
  for (const ProbeSpec& p : parseScene(s.scene_text, s.scene, s.fixed, registry).probes) s.probes.push_back(p.name);
  return s;
}

namespace {

// ---------------------------------------------------------------- rows on disk


// What identifies a row's run: its base scene (absolute) and every --set (sweep_row.json's "scene"
// and "set").
std::string absoluteScene(const Sweep& s) { return fs::absolute(s.scene).lexically_normal().string(); }

fs::path rowDir(const fs::path& dir, const SweepRow& row) { return dir / std::to_string(row.index); }

// The content key of a row's run (contentKey): the base scene's text and the files it references,
// the row's --set values, rodsim's and the plugins' versions.
std::string rowContent(const Sweep& s, const SweepRow& row, const TypeRegistry& registry) {
  return contentKey(s.scene, s.scene_text, s.overrides(row), registry);
}

// What DIR/<k>/sweep_row.json says about row k.
struct RowState {
  bool finished = false;  // recorded, and still this row's result
  std::string stale;      // recorded, but its inputs or outputs changed since: why (the row runs again)
};

// A finished row has DIR/<k>/sweep_row.json, written when its run ended, with the content key of
// its inputs and the hashes of its outputs. A record of a different run (the sweep file changed
// since) is bad input: rows of two tables must not be merged into one runs.csv. A record whose
// scene, referenced files or rodsim changed since, or whose outputs were edited, is stale: the row
// runs again. A record that is not one (garbage, another row's) is refused, naming the file.
RowState rowState(const Sweep& s, const fs::path& dir, const SweepRow& row, const TypeRegistry& registry) {
  const fs::path record = rowDir(dir, row) / "sweep_row.json";
  std::optional<run_record::JsonValue> json;
  std::string why;
  try {
    json = readJsonRecord(record);
  } catch (const InputError& e) {
    why = e.what();
  }
  if (!json && why.empty()) return {};
  auto whole = [](const run_record::JsonValue* v) {
    return v && v->isNumber() && v->numberText().find_first_not_of("-0123456789") == std::string::npos && v->numberText().size() < 12;
  };
  auto text = [](const run_record::JsonValue* v) { return v && v->isString() ? v->asString() : std::string(); };
  const run_record::JsonValue* index = json ? json->find("index") : nullptr;
  if (!json || !whole(index) || index->numberText() != std::to_string(row.index) || text(json->find("scene")).empty() ||
      !json->find("set") || !json->find("set")->isString() || !whole(json->find("exit_status")) || !whole(json->find("signal")))
    throw InputError(fmt::format("{}: corrupt row record: not the sweep_row.json that rodsim sweep writes for row {}{}; "
                                 "delete {} to run the row again",
                                 record.string(), row.index,
                                 whole(index) && index->numberText() != std::to_string(row.index)
                                     ? fmt::format(" (it names row {})", index->numberText())
                                     : "",
                                 rowDir(dir, row).string()));
  const std::string set = text(json->find("set")), now = fmt::format("{}", fmt::join(s.overrides(row), "\n"));
  if (text(json->find("scene")) != absoluteScene(s) || set != now)
    throw InputError(fmt::format(
        "{}: row {} was run with other values (set: {}; now: {}): the sweep file changed since; "
        "write to another --output DIR, or delete {} to run it again",
        record.string(), row.index, jsonEscape(set), jsonEscape(now), rowDir(dir, row).string()));
  if (text(json->find("content")) != rowContent(s, row, registry))
    return {false, "its scene, a file the scene references, or rodsim changed since it ran"};
  if (text(json->find("outputs")) != outputsHash(rowDir(dir, row)))
    return {false, "its output files were changed since it ran"};
  return {true, ""};
}

void writeRowRecord(const Sweep& s, const fs::path& dir, const SweepRow& row, const ChildRun& run, const std::string& content) {
  writeFileAtomic((rowDir(dir, row) / "sweep_row.json").string(),
                  fmt::format("{{\n  \"index\": {},\n  \"scene\": \"{}\",\n  \"set\": \"{}\",\n  \"exit_status\": {},\n"
                              "  \"signal\": {},\n  \"seconds\": {:.6g},\n  \"content\": \"{}\",\n  \"outputs\": \"{}\"\n}}\n",
                              row.index, jsonEscape(absoluteScene(s)), jsonEscape(fmt::format("{}", fmt::join(s.overrides(row), "\n"))),
                              run.exit_code, run.signal, run.seconds, content, jsonEscape(outputsHash(rowDir(dir, row)))));
}


// The row's scene file: the base scene with relative paths made absolute and, where the scene
// writes a value the row sets on one line, that value replaced in place (every line keeps its
// number). The run gets every value as --set as well, so keys the scene leaves at their default
// are set too; the trailer lists them.
std::string rowSceneText(const Sweep& s, const SweepRow& row, const TypeRegistry& registry) {
  const toml::table root = toml::parse(std::string_view(s.scene_text), std::string_view(s.scene));  // validated
  TextEditor edit(s.scene_text);
  const fs::path dir = fs::absolute(fs::path(s.scene)).parent_path();
  struct Section {
    const char* name;
    ComponentKind kind;
    const char* type_key;
  };
  for (const Section& sec : {Section{"rod", ComponentKind::Rod, "model"}, Section{"force", ComponentKind::Force, "type"},
                             Section{"constraint", ComponentKind::Constraint, "type"},
                             Section{"contact", ComponentKind::Contact, "type"}, Section{"solver", ComponentKind::Solver, "type"}}) {
    std::vector<const toml::table*> tables;
    if (const auto* t = root[sec.name].as_table()) tables.push_back(t);
    if (const auto* a = root[sec.name].as_array())
      for (const auto& el : *a)
        if (const auto* t = el.as_table()) tables.push_back(t);
    for (const toml::table* t : tables)
      if (const auto type = (*t)[sec.type_key].value<std::string>())
        if (const ComponentType* ct = registry.find(sec.kind, *type)) absolutizePaths(edit, *t, ct->schema, dir);
  }
  absolutizePluginPaths(edit, root, dir);
  std::string trailer;
  for (const std::string& o : s.overrides(row)) {
    const auto eq = o.find('=');
    const std::string key = o.substr(0, eq), value = o.substr(eq + 1);
    const toml::node* n = findSetTarget(root, key);
    const bool in_place = n && n->source().begin.line == n->source().end.line && !n->is_table();
    if (in_place) edit.replace(n->source().begin.line, n->source().begin.column, n->source().end.column, value);
    trailer += fmt::format("#   {} = {}{}\n", key, value, in_place ? "" : "   (not written in the scene: given by --set)");
  }
  return edit.text() + fmt::format("\n# Written by rodsim sweep from {} (row {}) and {}: relative paths made absolute,\n"
                                   "# the row's values (also given to `rodsim run` as --set, commands.txt):\n{}",
                                   fs::absolute(s.file).lexically_normal().string(), row.index,
                                   fs::absolute(s.scene).lexically_normal().string(), trailer);
}

fs::path rowSceneFile(const Sweep& s, const fs::path& dir, const SweepRow& row) {
  return rowDir(dir, row) / fs::path(s.scene).filename();  // keeps the run's default name
}

// A row stopped before it ended (SIGINT, SIGTERM: a Slurm time limit, scancel) left a checkpoint.
// When it is this row's run (same scene copy and text, same --set values), the row continues from it.
bool hasOwnCheckpoint(const Sweep& s, const fs::path& dir, const SweepRow& row, const TypeRegistry& registry) {
  std::error_code ec;
  if (!fs::is_directory(rowDir(dir, row) / "checkpoints", ec)) return false;
  // The scene copy the checkpoint's run used must be the one this sweep would write now: an edited
  // base scene starts the row over instead of continuing the old scene's run.
  if (readFile(rowSceneFile(s, dir, row)) != rowSceneText(s, row, registry)) return false;
  try {
    const Checkpoint c = readLatestCheckpoint(rowDir(dir, row).string());
    return fs::absolute(c.scene_file).lexically_normal() == fs::absolute(rowSceneFile(s, dir, row)).lexically_normal() &&
           c.overrides == s.overrides(row);
  } catch (const InputError&) {  // damaged, or another run's
    return false;
  }
}

// The child of a row: `rodsim run --restart DIR/<k>` when `restart`, else a fresh run that
// replaces whatever an unfinished earlier attempt left in DIR/<k> (--force: the sweep owns it).
ChildRun prepareRow(const Sweep& s, const SweepRow& row, const fs::path& dir, const TypeRegistry& registry,
                    const std::string& executable, bool restart) {
  ChildRun c;
  c.id = row.index;
  c.dir = rowDir(dir, row);
  std::vector<std::string> values;
  for (std::size_t a = 0; a < s.axes.size(); ++a) values.push_back(s.axes[a].key + "=" + s.axes[a].values[row.pick[a]].shown);
  c.label = fmt::format("row {} ({})", row.index, fmt::join(values, ", "));
  std::error_code ec;
  fs::create_directories(c.dir, ec);
  if (ec) throw std::runtime_error(fmt::format("cannot create '{}': {}", c.dir.string(), ec.message()));
  fs::remove(c.dir / "sweep_row.json", ec);  // a stale record: the row is not finished until this run ends
  if (restart) {
    c.label += " continued from its checkpoint";
    c.argv = {executable, "run", "--restart", c.dir.string()};
    return c;
  }
  const fs::path scene_file = rowSceneFile(s, dir, row);
  writeFileAtomic(scene_file.string(), rowSceneText(s, row, registry));
  c.argv = {executable, "run", scene_file.string()};
  for (const auto& o : s.overrides(row)) c.argv.insert(c.argv.end(), {"--set", o});
  c.argv.insert(c.argv.end(), {"--output", c.dir.string(), "--force"});
  return c;
}

// The table of rows as CSV: index, then one column per axis.
std::string tableCsv(const Sweep& s) {
  std::string csv = "index";
  for (const Axis& a : s.axes) csv += fmt::format(",{}", csvCell(a.key));
  csv += "\n";
  for (const SweepRow& row : s.rows) {
    csv += std::to_string(row.index);
    for (std::size_t a = 0; a < s.axes.size(); ++a) csv += fmt::format(",{}", csvCell(s.axes[a].values[row.pick[a]].shown));
    csv += "\n";
  }
  return csv;
}

std::string commandsText(const Sweep& s, const fs::path& dir, const std::string& executable) {
  std::string text;
  for (const SweepRow& row : s.rows) {
    std::vector<std::string> argv{executable, "run", (rowDir(dir, row) / fs::path(s.scene).filename()).string()};
    for (const auto& o : s.overrides(row)) argv.insert(argv.end(), {"--set", o});
    argv.insert(argv.end(), {"--output", rowDir(dir, row).string(), "--force"});
    text += shellCommand(argv) + "\n";
  }
  return text;
}

// ---------------------------------------------------------------- merging: runs.csv

struct RowOutcome {
  std::string status;  // ok | failed | missing
  std::string reason;
};

const char* signalName(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGKILL: return "SIGKILL";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    default: return "a signal";
  }
}

// One line of runs.csv; `outcome` says whether the row counts as ok.
std::string mergeRow(const Sweep& s, const SweepRow& row, const fs::path& dir, RowOutcome& outcome, const TypeRegistry& registry) {
  const fs::path rd = rowDir(dir, row);
  std::string line = std::to_string(row.index);
  for (std::size_t a = 0; a < s.axes.size(); ++a) line += fmt::format(",{}", csvCell(s.axes[a].values[row.pick[a]].shown));
  const RowState state = rowState(s, dir, row, registry);  // a stale row's files are not its result
  const auto record = state.finished ? readJsonRecord(rd / "sweep_row.json") : std::nullopt;
  std::optional<run_record::JsonValue> summary;
  std::string unreadable;  // a summary.json that is not JSON: the row failed
  try {
    if (record) summary = readJsonRecord(rd / "summary.json");
  } catch (const InputError& e) {
    unreadable = e.what();
  }
  if (!state.stale.empty()) {
    outcome = {"missing", state.stale + ": run the sweep again"};
  } else if (!record) {
    outcome = {"missing", "not run yet (or interrupted): run the sweep again"};
  } else if (const int sig = static_cast<int>(record->numberOr("signal", 0)); sig != 0) {
    outcome = {"failed", fmt::format("killed by signal {} ({}); see {}", sig, signalName(sig), (rd / "run.log").string())};
  } else if (!unreadable.empty()) {
    outcome = {"failed", unreadable};
  } else if (!summary) {
    outcome = {"failed", fmt::format("exit status {} without summary.json; see {}", record->text("exit_status"),
                                     (rd / "run.log").string())};
  } else {
    outcome = {summary->text("status"), summary->text("reason")};
    if (outcome.status == "running") outcome = {"failed", "the run ended without finishing summary.json"};
  }
  line += fmt::format(",{}", outcome.status);
  for (const auto& key : kSummaryColumns) line += fmt::format(",{}", summary ? summary->text(key) : std::string());  // null: empty
  // Probes: the final value and the mean over the steps (timeseries.csv rows after the initial one).
  std::vector<std::string> finals(s.probes.size()), means(s.probes.size());
  std::error_code ec;
  if (record && fs::exists(rd / "timeseries.csv", ec)) {
    const run_record::CsvTable t = readCsv(rd / "timeseries.csv", run_record::kMaxRunCsvBytes, "run's timeseries.csv", false);
    std::vector<long> col(s.probes.size(), -1);
    for (std::size_t p = 0; p < s.probes.size(); ++p) col[p] = t.column(s.probes[p]);
    std::vector<double> sum(s.probes.size(), 0);
    std::vector<long> count(s.probes.size(), 0);
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
      const auto& cells = t.rows[r];
      for (std::size_t p = 0; p < s.probes.size(); ++p) {
        if (col[p] < 0 || static_cast<std::size_t>(col[p]) >= cells.size()) continue;
        finals[p] = cells[static_cast<std::size_t>(col[p])];
        double v = 0;
        if (r > 0 && run_record::parseCell(finals[p], v) && std::isfinite(v)) sum[p] += v, ++count[p];
      }
    }
    for (std::size_t p = 0; p < s.probes.size(); ++p)
      if (count[p] > 0) means[p] = fmt::format("{:.10g}", sum[p] / static_cast<double>(count[p]));
  }
  for (std::size_t p = 0; p < s.probes.size(); ++p) line += fmt::format(",{},{}", finals[p], means[p]);
  line += fmt::format(",{}\n", csvCell(outcome.reason));
  return line;
}

struct MergeCounts {
  std::size_t ok = 0, failed = 0, missing = 0;
  std::vector<std::string> failures;  // "row 3: reason"
};

MergeCounts writeRunsCsv(const Sweep& s, const fs::path& dir, const TypeRegistry& registry) {
  std::string csv = "index";
  for (const Axis& a : s.axes) csv += fmt::format(",{}", csvCell(a.key));
  csv += ",status";
  for (const auto& key : kSummaryColumns) csv += fmt::format(",{}", key);
  for (const auto& p : s.probes) csv += fmt::format(",{},{}", csvCell(p + "_final"), csvCell(p + "_mean"));
  csv += ",reason\n";
  MergeCounts counts;
  for (const SweepRow& row : s.rows) {
    RowOutcome outcome;
    csv += mergeRow(s, row, dir, outcome, registry);
    if (outcome.status == "ok") ++counts.ok;
    else if (outcome.status == "missing") ++counts.missing;
    else {
      ++counts.failed;
      counts.failures.push_back(fmt::format("row {}: {}", row.index, outcome.reason));
    }
  }
  writeFileAtomic((dir / "runs.csv").string(), csv);
  return counts;
}

int reportMerge(const Sweep& s, const fs::path& dir, bool quiet, const TypeRegistry& registry) {
  const MergeCounts c = writeRunsCsv(s, dir, registry);
  if (!quiet) {
    std::printf("rodsim sweep: %zu row(s): %zu ok, %zu failed, %zu not run -> %s\n", s.rows.size(), c.ok, c.failed,
                c.missing, (dir / "runs.csv").c_str());
    for (std::size_t i = 0; i < c.failures.size() && i < 10; ++i) std::printf("  %s\n", c.failures[i].c_str());
    if (c.failures.size() > 10) std::printf("  ... and %zu more (runs.csv, column reason)\n", c.failures.size() - 10);
  }
  return c.failed + c.missing == 0 ? 0 : 3;
}

// ---------------------------------------------------------------- one sweep per output directory

// A flock on DIR/.rodsim-sweep.lock for the sweep's lifetime (released when the process ends, also
// when it is killed). A sweep over all rows holds it exclusively; Slurm array tasks (--index) and
// --merge share it, so that many tasks run rows of one DIR at once but never beside a whole sweep.
// Two sweeps writing one DIR would race on its rows and runs.csv. (The kernel's run-directory
// lock, kernel/run_directory.cpp, guards one run's directory the same way.)
class SweepLock {
 public:
  SweepLock(const fs::path& dir, bool exclusive) {
    const fs::path file = dir / ".rodsim-sweep.lock";
    // O_NOFOLLOW: a link planted there must not make us truncate its target. O_CLOEXEC: the rows'
    // children must not inherit (and keep) the lock.
    fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd_ < 0)
      throw InputError(fmt::format("cannot use the sweep's lock {}: {}", file.string(),
                                   errno == ELOOP ? "it is a symbolic link (not followed)" : std::strerror(errno)));
    if (::flock(fd_, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0) {
      const std::string holder = readFile(file);
      ::close(fd_);
      throw InputError(fmt::format("the output directory '{}' is in use by another rodsim sweep ({}); wait for it to end or "
                                   "choose another --output",
                                   dir.string(), holder.empty() ? "a process that holds " + file.string() : holder));
    }
    // Names the holder in a refused sweep's message (best effort: the lock is what counts).
    const std::string holder = fmt::format("rodsim sweep process {}", getpid());
    if (::ftruncate(fd_, 0) == 0) {
      [[maybe_unused]] const ssize_t written = ::pwrite(fd_, holder.data(), holder.size(), 0);
    }
  }
  ~SweepLock() { ::close(fd_); }
  SweepLock(const SweepLock&) = delete;
  SweepLock& operator=(const SweepLock&) = delete;

 private:
  int fd_ = -1;
};

// ---------------------------------------------------------------- the command

struct SweepOptions {
  std::string file, output;
  int jobs = 0;  // 0: one per core, one per rank under mpirun
  bool quiet = false, list = false, merge = false;
  std::optional<std::size_t> index;
};

SweepOptions parseSweepArgs(const std::vector<std::string>& args) {
  SweepOptions o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw InputError(fmt::format("option {} needs a value\n{}", arg, kUsage));
      return args[++i];
    };
    auto whole = [&](const std::string& v, long min, long max) {
      try {
        std::size_t used = 0;
        const long n = std::stol(v, &used);
        if (used == v.size() && n >= min && n <= max) return n;
      } catch (const std::exception&) {
      }
      throw InputError(fmt::format("{} '{}': expected a whole number from {} to {}", arg, v, min, max));
    };
    if (arg == "--help" || arg == "-h") {
      std::printf("%s", kUsage);
      std::exit(0);
    }
    if (arg == "--output") o.output = value();
    else if (arg == "--jobs") o.jobs = static_cast<int>(whole(value(), 1, 4096));
    else if (arg == "--index") o.index = static_cast<std::size_t>(whole(value(), 0, 1000000));  // the row cap
    else if (arg == "--list") o.list = true;
    else if (arg == "--merge") o.merge = true;
    else if (arg == "--quiet") o.quiet = true;
    else if (!arg.empty() && arg[0] == '-') throw InputError(fmt::format("unknown option '{}'\n{}", arg, kUsage));
    else if (o.file.empty()) o.file = arg;
    else throw InputError(fmt::format("unexpected argument '{}'\n{}", arg, kUsage));
  }
  if (o.file.empty()) throw InputError(fmt::format("'sweep' needs a sweep file\n{}", kUsage));
  if (int(o.list) + int(o.merge) + int(o.index.has_value()) > 1)
    throw InputError(fmt::format("--list, --index and --merge exclude each other\n{}", kUsage));
  return o;
}

// Runs `todo` (rows not finished) as children, `jobs` at once; writes each row's record as it
// ends. A row with its own checkpoint continues from it; if the restart is refused (exit 2: the
// checkpoint does not match the files any more), the row runs again from the start. Returns false
// when interrupted.
bool runRows(const Sweep& s, const std::vector<const SweepRow*>& todo, const fs::path& dir, int jobs, bool quiet,
             bool live, const TypeRegistry& registry, const std::string& executable) {
  std::size_t next = 0;
  std::vector<const SweepRow*> from_start;  // restarts that were refused
  std::set<std::size_t> restarted;
  std::map<std::size_t, std::string> content;  // each row's content key, taken as it starts
  return runChildren(
      ChildPool{"rodsim sweep", jobs, quiet, 0.0, live},
      [&]() -> std::optional<ChildRun> {
        if (!from_start.empty()) {
          const SweepRow* row = from_start.back();
          from_start.pop_back();
          content[row->index] = rowContent(s, *row, registry);
          return prepareRow(s, *row, dir, registry, executable, false);
        }
        if (next == todo.size()) return std::nullopt;
        const SweepRow& row = *todo[next++];
        const bool restart = hasOwnCheckpoint(s, dir, row, registry);
        if (restart) restarted.insert(row.index);
        content[row.index] = rowContent(s, row, registry);
        return prepareRow(s, row, dir, registry, executable, restart);
      },
      [&](const ChildRun& run) {
        if (run.interrupted) return;  // not finished: the next sweep runs it again
        if (restarted.erase(run.id) && run.exit_code == 2) {
          from_start.push_back(&s.rows[run.id]);
          return;
        }
        writeRowRecord(s, dir, s.rows[run.id], run, content[run.id]);
      });
}

}  // namespace

int sweepCommand(const std::vector<std::string>& args, const std::string& executable) {
  const SweepOptions o = parseSweepArgs(args);
  // Under mpirun (not for --list, --merge, --index): the launcher's rank and size, before MPI_Init.
  const auto launcher = o.list || o.merge || o.index ? std::nullopt : launcherRank();
  const int launcher_rank = launcher ? launcher->first : 0, launcher_size = launcher ? launcher->second : 1;
  const bool mpi = launcher_size > 1;
  const bool speaks = launcher_rank == 0;  // under mpirun rank 0 reports, the others stay quiet
  try {
    // Plugins first: the base scene's [plugins] paths, relative to the scene.
    TypeRegistry registry;
    {
      const std::string text = readSceneText(o.file);
      std::string scene;
      checkTomlDepth(text, o.file);  // TOML++ recurses: a deep nesting is refused before it is parsed
      try {
        scene = toml::parse(std::string_view(text), std::string_view(o.file))["scene"].value<std::string>().value_or("");
      } catch (const toml::parse_error&) {
      }  // loadSweep reports it
      const std::string scene_path = (fs::path(o.file).parent_path() / scene).string();
      loadPlugins(registry, !scene.empty() && fs::exists(scene_path) ? readPluginPaths(scene_path) : std::vector<std::string>{});
    }
    // Every engine validates the whole table before running anything (one row for --index).
    const Sweep s = loadSweep(o.file, registry, o.index);
    if (o.list) {
      std::printf("%s", tableCsv(s).c_str());
      return 0;
    }
    const fs::path dir = o.output.empty() ? defaultStudyDir(o.file) : fs::path(o.output);
    if (o.merge) {
      if (!fs::is_directory(dir))
        throw InputError(fmt::format("--merge: nothing to merge: {} does not exist (run the rows first)", dir.string()));
      const SweepLock lock(dir, false);
      return reportMerge(s, dir, o.quiet, registry);
    }
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw InputError(fmt::format("cannot create the output directory '{}': {}", dir.string(), ec.message()));
    // The lock before the rows are listed: what another sweep is writing is not read. Under mpirun
    // rank 0 holds it for all ranks, and they learn whether it got it after MPI_Init.
    std::optional<SweepLock> lock;
    std::string lock_error;
    if (!mpi) lock.emplace(dir, !o.index);
    else if (launcher_rank == 0) try {
        lock.emplace(dir, true);
      } catch (const InputError& e) {
        lock_error = e.what();
      }

    std::vector<const SweepRow*> todo;
    std::size_t done = 0;
    for (const SweepRow& row : s.rows) {
      if (o.index && row.index != *o.index) continue;
      const RowState state = rowState(s, dir, row, registry);
      if (state.finished) ++done;
      else todo.push_back(&row);
      if (!state.stale.empty() && !o.quiet && speaks)
        std::printf("rodsim sweep: row %zu runs again: %s\n", row.index, state.stale.c_str());
    }

    if (o.index) {  // one Slurm array task: this row only, no merge
      if (todo.empty()) {
        if (!o.quiet) std::printf("rodsim sweep: row %zu is already finished (%s)\n", *o.index, rowDir(dir, s.rows[*o.index]).c_str());
        return 0;
      }
      if (!runRows(s, todo, dir, 1, o.quiet, true, registry, executable)) return 3;
      const auto record = readJsonRecord(rowDir(dir, s.rows[*o.index]) / "sweep_row.json");
      return record && record->text("exit_status") == "0" ? 0 : 3;
    }

    const RodsimSweepMpi* comm = nullptr;
    int rank = 0, size = 1;
    if (mpi) {
      comm = openMpi(executable, launcher_size, "sweep");
      // Block the signals runChildren waits for before MPI starts its threads, which inherit the
      // mask: a SIGCHLD or SIGINT delivered to one of them would be lost or kill the process.
      blockEngineSignals();
      if (comm->init(&rank, &size) != 0) throw std::runtime_error("rodsim sweep: MPI_Init failed");  // the machine, not the input: exit 3
      comm->barrier();  // every rank has listed the unfinished rows before any rank finishes one
      if (comm->max_over_ranks(lock_error.empty() ? 0 : 2) != 0) {  // another sweep holds DIR
        comm->finalize();
        if (rank == 0) throw InputError(lock_error);
        return 2;
      }
    }
    if (rank == 0) {
      writeFileAtomic((dir / "table.csv").string(), tableCsv(s));
      writeFileAtomic((dir / "commands.txt").string(), commandsText(s, dir, executable));
    }
    const int jobs = mpi && o.jobs <= 0 ? 1 : process::jobsOrCores(o.jobs);
    if (!o.quiet && rank == 0)
      std::printf("rodsim sweep: %zu row(s), %zu finished before, %zu to run on %s -> %s\n", s.rows.size(), done,
                  todo.size(), mpi ? fmt::format("{} MPI ranks x {} job(s)", size, jobs).c_str() : fmt::format("{} job(s)", jobs).c_str(),
                  dir.c_str());
    // Under MPI every rank found the same unfinished rows; rank r takes every size-th of them.
    std::vector<const SweepRow*> mine;
    for (std::size_t i = 0; i < todo.size(); ++i)
      if (static_cast<int>(i % static_cast<std::size_t>(size)) == rank) mine.push_back(todo[i]);
    const bool completed = runRows(s, mine, dir, jobs, o.quiet, !mpi, registry, executable);
    int status = completed ? 0 : 3;
    if (comm) {
      status = comm->max_over_ranks(status);  // also waits for every rank's rows
      if (rank != 0) {
        comm->finalize();
        return status;
      }
    }
    const int merged = reportMerge(s, dir, o.quiet, registry);
    if (status != 0 && !o.quiet)
      std::printf("rodsim sweep: interrupted; run the same command again to run the rows not finished\n");
    if (comm) comm->finalize();
    return std::max(status, merged);
  } catch (const InputError&) {
    if (!speaks) return 2;  // rank 0 prints the error
    throw;
  }
}

}  // namespace rodsim::studies
