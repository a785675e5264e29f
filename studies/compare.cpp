// rodsim compare: the same scene once per contact model, as child processes `rodsim run`, then a
// table in the format of Tong et al. (2023), Table 1, the normalized difference e(t) of its Eq. 22
// between every pair of runs, and plots (scripts/plot_compare.py).
//
// Each run gets a copy of the scene, DIR/<model>/<stem>.toml, edited in place so that every line
// keeps its number: the [[contact]] tables' type becomes the model, keys the model does not
// declare are commented out, and relative paths are made absolute.
#include "compare.h"

#include "child_runs.h"

#include <rodsim/kernel/scene.h>
#include <rodsim/kernel/installation.h>
#include <rodsim/kernel/output.h>
#include <rodsim/kernel/world.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <rodsim/vtp/collection.h>
#include <rodsim/vtp/polydata.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

namespace fs = std::filesystem;

namespace rodsim::studies {

using namespace rodsim::kernel;  // the studies layer drives the kernel: scenes, registry, output

namespace {

// ---------------------------------------------------------------- the per-model scene copies

struct ModelScene {
  std::string model;
  std::string text;                   // the edited scene
  std::vector<std::string> dropped;   // "delta (scene.toml:63:1)"
  std::vector<std::string> overrides; // --set values of this run
  Scene scene;                        // validated
};

ModelScene sceneFor(const std::string& model, const std::string& file, const std::string& text, const toml::table& root,
                    const TypeRegistry& registry) {
  ModelScene out;
  out.model = model;
  TextEditor edit(text);
  const fs::path dir = fs::absolute(fs::path(file)).parent_path();
  const ComponentType* target = registry.find(ComponentKind::Contact, model);

  struct Section {
    const char* name;
    ComponentKind kind;
    const char* type_key;
  };
  for (const Section& s : {Section{"rod", ComponentKind::Rod, "model"}, Section{"force", ComponentKind::Force, "type"},
                           Section{"constraint", ComponentKind::Constraint, "type"},
                           Section{"contact", ComponentKind::Contact, "type"}, Section{"solver", ComponentKind::Solver, "type"}}) {
    std::vector<const toml::table*> tables;
    if (const toml::node* n = root.get(s.name)) {
      if (const auto* t = n->as_table()) tables.push_back(t);
      if (const auto* a = n->as_array())
        for (const auto& el : *a)
          if (const auto* t = el.as_table()) tables.push_back(t);
    }
    for (const toml::table* t : tables) {
      const toml::node* type = t->get(s.type_key);
      if (std::string(s.name) != "contact") {
        if (!type || !type->is_string()) continue;  // validation reports it
        if (const ComponentType* ct = registry.find(s.kind, type->value<std::string>().value()))
          absolutizePaths(edit, *t, ct->schema, dir);
        continue;
      }
      // [[contact]]: switch the type, drop what the model does not declare.
      if (t->is_inline())
        throw InputError(fmt::format("{}: rodsim compare needs [[contact]] tables, not inline tables", sourceAt(file, t->source())));
      if (!type || !type->is_string() || type->source().begin.line != type->source().end.line)
        throw InputError(fmt::format("{}: [[contact]]: missing required key 'type' (a string)", sourceAt(file, t->source())));
      edit.replace(type->source().begin.line, type->source().begin.column, type->source().end.column, tomlString(model));
      for (auto&& [k, v] : *t) {
        const std::string key(k.str());
        if (key == "type" || key == "name") continue;
        bool declared = false;
        for (const ParamSpec& p : target->schema.params())
          declared = declared || p.name == key || p.name.rfind(key + ".", 0) == 0;
        if (declared) continue;
        if (v.is_table() && !v.as_table()->is_inline())
          throw InputError(fmt::format("{}: [[contact]] key '{}' is not declared by '{}' and is a sub-table rodsim compare "
                                       "cannot drop; write it inline (key = {{ ... }})", sourceAt(file, k.source()), key, model));
        edit.comment(k.source().begin.line, v.source().end.line, fmt::format("dropped by rodsim compare: not a key of '{}'", model));
        out.dropped.push_back(fmt::format("{} ({})", key, sourceAt(file, k.source())));
      }
      absolutizePaths(edit, *t, target->schema, dir);
    }
  }
  absolutizePluginPaths(edit, root, dir);  // [plugins] paths are relative to the scene file too
  out.text = edit.text();
  out.text += fmt::format("\n# Written by rodsim compare from {}: [[contact]] type = \"{}\"{}; relative paths made absolute.\n"
                          "# Line numbers are those of the original.\n",
                          fs::absolute(file).lexically_normal().string(), model,
                          out.dropped.empty() ? "" : ", keys it does not declare commented out");
  return out;
}

// ---------------------------------------------------------------- reading the runs' output

// The frames of a run, none when its .pvd is missing or cut short (a failed run).
std::vector<vtp::CollectionEntry> readPvd(const fs::path& pvd) {
  try {
    return vtp::readCollectionFile(pvd);
  } catch (const vtp::FormatError&) {
    return {};
  }
}

// Node positions and radii of a frame written by OutputWriter::writeFrame (either encoding).
bool readVtp(const fs::path& file, std::vector<double>& xyz, std::vector<double>& radius) {
  try {
    vtp::PolyLines frame = vtp::readPolyLinesFile(file);
    const vtp::PointArray* r = frame.find("radius");
    if (!r) return false;
    xyz = std::move(frame.points);
    radius = r->values;
    return xyz.size() == 3 * radius.size();
  } catch (const vtp::FormatError&) {
    return false;  // a frame still being written by a failed run: the cell stays empty
  }
}

struct ModelRun {
  std::string model, status = "not run", reason;
  int exit_code = -1;
  double wall_time_s = 0, min_gap = std::numeric_limits<double>::quiet_NaN();
  long long steps = 0, contact_steps = 0, iterations = 0, contact_iterations = 0;
  double contact_wall_ms = 0;
};

ModelRun summarize(const std::string& model, const fs::path& dir, int exit_code) {
  ModelRun r;
  r.model = model;
  r.exit_code = exit_code;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  r.wall_time_s = nan;
  std::optional<run_record::JsonValue> summary;
  try {
    summary = readJsonRecord(dir / "summary.json");  // bounded (16 MiB, a regular file)
  } catch (const InputError& e) {
    r.status = "unreadable output";
    r.reason = e.what();
    return r;
  }
  if (!summary) {
    r.status = "no output";
    return r;
  }
  r.status = summary->text("status");
  r.reason = summary->text("reason");
  r.wall_time_s = summary->numberOr("wall_time_s", nan);
  r.min_gap = summary->numberOr("min_gap", nan);
  // The step counts and sums of summary.json cover every step; timeseries.csv may hold a row only
  // every few steps ([output] timeseries_every).
  auto count = [&](const char* key) {
    const double v = summary->numberOr(key, nan);
    return std::isfinite(v) ? static_cast<long long>(v) : 0LL;
  };
  r.steps = count("steps");
  r.iterations = count("newton_iterations");
  r.contact_steps = count("steps_with_contact");
  r.contact_iterations = count("contact_iterations");
  const double contact_wall_s = summary->numberOr("contact_wall_s", nan);
  r.contact_wall_ms = std::isfinite(contact_wall_s) ? 1000.0 * contact_wall_s : 0.0;
  return r;
}

std::string fmtNumber(double v, const char* spec = "{:.4g}") {
  return std::isfinite(v) ? fmt::format(fmt::runtime(spec), v) : "";
}

void writeTables(const fs::path& dir, const std::vector<ModelRun>& runs, std::size_t rods) {
  const double first_time = runs.front().wall_time_s;
  const double first_contact = runs.front().contact_wall_ms;
  std::string csv =
      "model,M,status,steps,contact_steps,aipts,atpts_ms,total_iterations,run_time_s,run_time_ratio,"
      "contact_time_s,contact_time_ratio,aipts_all,total_iterations_all,min_gap\n";
  std::string md = fmt::format(
      "| model | M | AIPTS | ATPTS [ms] | total iters | run time [s] | run time ratio | contact steps | min gap [m] | status |\n"
      "|---|---|---|---|---|---|---|---|---|---|\n");
  for (const ModelRun& r : runs) {
    const double cs = static_cast<double>(std::max<long long>(r.contact_steps, 1));
    const double aipts = r.contact_steps ? r.contact_iterations / cs : std::numeric_limits<double>::quiet_NaN();
    const double atpts = r.contact_steps ? r.contact_wall_ms / cs : std::numeric_limits<double>::quiet_NaN();
    const double ratio = first_time > 0 ? r.wall_time_s / first_time : std::numeric_limits<double>::quiet_NaN();
    const double cratio = first_contact > 0 ? r.contact_wall_ms / first_contact : std::numeric_limits<double>::quiet_NaN();
    const double aipts_all = r.steps ? double(r.iterations) / double(r.steps) : std::numeric_limits<double>::quiet_NaN();
    csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", r.model, rods, r.status, r.steps, r.contact_steps,
                       fmtNumber(aipts), fmtNumber(atpts), r.contact_iterations, fmtNumber(r.wall_time_s),
                       fmtNumber(ratio), fmtNumber(r.contact_wall_ms / 1000.0), fmtNumber(cratio), fmtNumber(aipts_all),
                       r.iterations, fmtNumber(r.min_gap));
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} / {} | {} | {} |\n", r.model, rods,
                      r.contact_steps ? fmt::format("{:.2f}", aipts) : "-", r.contact_steps ? fmt::format("{:.2f}", atpts) : "-",
                      r.contact_iterations, fmt::format("{:.2f}", r.wall_time_s), fmtNumber(ratio, "{:.2f}"),
                      r.contact_steps, r.steps, fmtNumber(r.min_gap, "{:.3g}"),
                      r.status == "ok" ? "ok" : r.status + (r.reason.empty() ? "" : ": " + r.reason));
  }
  md += "\nAIPTS, ATPTS and total iterations over the steps with at least one active contact (as in Table 1 of Tong "
        "et al. (2023)); iterations are linear solves (the IMC authors' counter adds one per step). Run time: the "
        "whole run's wall time; ratio: relative to the first model.\n";
  writeFileAtomic((dir / "table.csv").string(), csv);
  writeFileAtomic((dir / "table.md").string(), md);
}

// e(t) of Eq. 22 for every pair of runs, at the frames both wrote: the mean over all nodes of
// |x_A - x_B| / r (r the node's radius; 1/(M N h) sum |x_A - x_B| for M rods of N nodes and radius h).
// Returns notes about what could not be compared.
std::vector<std::string> writeDifference(const fs::path& dir, const std::vector<ModelRun>& runs, const std::string& name,
                                         double dt) {
  std::vector<std::string> notes;
  std::vector<std::vector<vtp::CollectionEntry>> frames;
  for (const ModelRun& r : runs) frames.push_back(readPvd(dir / r.model / "vtk" / (name + ".pvd")));
  std::string csv = "t";
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  for (std::size_t a = 0; a < runs.size(); ++a)
    for (std::size_t b = a + 1; b < runs.size(); ++b) {
      pairs.emplace_back(a, b);
      csv += fmt::format(",{}_vs_{}", runs[a].model, runs[b].model);
    }
  csv += "\n";
  // Rows: the first run's frame times; a cell is empty where the other run has no frame.
  const std::vector<vtp::CollectionEntry>& base = frames.front();
  std::map<std::pair<std::size_t, std::size_t>, std::pair<std::vector<double>, std::vector<double>>> cache;
  auto load = [&](std::size_t run, std::size_t k) -> const std::pair<std::vector<double>, std::vector<double>>& {
    auto key = std::make_pair(run, k);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
    auto& slot = cache[key];
    if (!readVtp(frames[run][k].file, slot.first, slot.second)) slot.first.clear();
    return slot;
  };
  auto findFrame = [&](std::size_t run, double t) -> long {
    for (std::size_t k = 0; k < frames[run].size(); ++k)
      if (std::abs(frames[run][k].time - t) <= 1e-6 * dt) return static_cast<long>(k);
    return -1;
  };
  bool mismatch = false;
  for (std::size_t k = 0; k < base.size(); ++k) {
    const double t = base[k].time;
    std::string row = fmt::format("{:.10g}", t);
    bool any = false;
    for (const auto& [a, b] : pairs) {
      const long ka = findFrame(a, t), kb = findFrame(b, t);
      std::string cell;
      if (ka >= 0 && kb >= 0) {
        cache.clear();  // at most four frames in memory
        const auto A = load(a, ka);
        const auto& B = load(b, kb);
        if (!A.first.empty() && A.first.size() == B.first.size()) {
          double sum = 0;
          const std::size_t n = A.second.size();
          for (std::size_t j = 0; j < n; ++j) {
            const double dx = A.first[3 * j] - B.first[3 * j], dy = A.first[3 * j + 1] - B.first[3 * j + 1],
                         dz = A.first[3 * j + 2] - B.first[3 * j + 2];
            sum += std::sqrt(dx * dx + dy * dy + dz * dz) / A.second[j];
          }
          cell = fmt::format("{:.6g}", sum / static_cast<double>(std::max<std::size_t>(n, 1)));
          any = true;
        } else {
          mismatch = true;
        }
      }
      row += "," + cell;
    }
    if (any || pairs.empty()) csv += row + "\n";
  }
  if (base.empty()) notes.push_back("no VTK frames (output.formats without \"vtk\"?): difference.csv has no rows");
  if (mismatch) notes.push_back("some frames could not be read or have different node counts: their cells are empty");
  writeFileAtomic((dir / "difference.csv").string(), csv);
  return notes;
}

}  // namespace

std::vector<std::string> splitModelList(const std::string& list) {
  std::vector<std::string> out;
  std::size_t b = 0;
  while (b <= list.size()) {
    std::size_t e = list.find(',', b);
    if (e == std::string::npos) e = list.size();
    std::string item = list.substr(b, e - b);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    out.push_back(item);
    b = e + 1;
  }
  return out;
}

int runCompare(const CompareOptions& o, const TypeRegistry& registry, const std::string& executable) {
  // --- everything that can reject the input, before anything is written
  const std::vector<std::string> known = registry.typeNames(ComponentKind::Contact);
  if (o.models.empty()) throw InputError(fmt::format("compare: --contact MODEL,MODEL... is required (valid: {})", fmt::join(known, ", ")));
  for (std::size_t i = 0; i < o.models.size(); ++i) {
    const std::string& m = o.models[i];
    if (m.empty()) throw InputError("compare: --contact: empty model name in the list (MODEL,MODEL,...)");
    if (std::find(known.begin(), known.end(), m) == known.end()) {
      const std::string near = closestMatch(m, known);
      throw InputError(fmt::format("compare: --contact: unknown contact model '{}' (valid: {}{})", m, fmt::join(known, ", "),
                                   near.empty() ? "" : "; did you mean '" + near + "'?"));
    }
    if (std::find(o.models.begin(), o.models.begin() + static_cast<long>(i), m) != o.models.begin() + static_cast<long>(i))
      throw InputError(fmt::format("compare: --contact: '{}' is listed twice", m));
  }
  if (o.jobs < 1) throw InputError("compare: --jobs must be at least 1");
  for (const auto& s : o.sets)
    if (s.rfind("contact.type=", 0) == 0 || (s.find(".type=") != std::string::npos && s.rfind("contact.", 0) == 0))
      throw InputError(fmt::format("compare: --set {}: compare sets the contact type of each run itself (--contact)", s));
  // Per-model values: --contact-set names a key of the [[contact]] table, --set-for any key of the
  // scene (e.g. simulation.dt, when one model needs a smaller step than another).
  std::map<std::string, std::vector<std::string>> per_model;
  auto perModel = [&](const std::string& option, const std::string& cs, const std::string& prefix, const char* example) {
    const auto colon = cs.find(':'), eq = cs.find('=');
    if (colon == std::string::npos || colon == 0 || eq == std::string::npos || eq < colon)
      throw InputError(fmt::format("compare: {} '{}': expected MODEL:KEY=VALUE, e.g. {} {}", option, cs, option, example));
    const std::string model = cs.substr(0, colon), assignment = cs.substr(colon + 1);
    if (std::find(o.models.begin(), o.models.end(), model) == o.models.end())
      throw InputError(fmt::format("compare: {} '{}': '{}' is not one of the compared models ({})", option, cs, model,
                                   fmt::join(o.models, ", ")));
    const std::string key = prefix + assignment;
    if (key.rfind("contact.type=", 0) == 0 || (key.rfind("contact.", 0) == 0 && key.find(".type=") != std::string::npos))
      throw InputError(fmt::format("compare: {} '{}': the contact type is the model itself", option, cs));
    per_model[model].push_back(key);
  };
  for (const auto& cs : o.contact_sets) perModel("--contact-set", cs, "contact.", "ipc:d_hat=1e-5");
  for (const auto& cs : o.sets_for) perModel("--set-for", cs, "", "ipc:simulation.dt=1e-4");
  const std::string text = readSceneText(o.scene);
  toml::table root;
  checkTomlDepth(text, o.scene);  // TOML++ recurses: a deep nesting is refused before it is parsed
  try {
    root = toml::parse(std::string_view(text), std::string_view(o.scene));
  } catch (const toml::parse_error& e) {
    throw InputError(fmt::format("{}:{}:{}: TOML syntax error: {}", o.scene, e.source().begin.line, e.source().begin.column,
                                 e.description()));
  }
  if (!root["contact"].is_array_of_tables() || root["contact"].as_array()->empty())
    throw InputError(fmt::format("{}: the scene has no [[contact]] table for rodsim compare to switch between models", o.scene));

  std::vector<ModelScene> runs;
  for (const auto& model : o.models) {
    ModelScene ms = sceneFor(model, o.scene, text, root, registry);
    ms.overrides = o.sets;
    for (const auto& s : per_model[model]) ms.overrides.push_back(s);
    try {
      ms.scene = parseScene(ms.text, o.scene, ms.overrides, registry);
      KernelWorld check(ms.scene, registry);  // plugins' own checks (ParamError) too
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}\n(in the '{}' run of rodsim compare; a key only one contact model knows goes in "
                                   "--contact-set MODEL:KEY=VALUE)", e.what(), model));
    }
    runs.push_back(std::move(ms));
  }
  const Scene& first = runs.front().scene;
  const fs::path dir = o.output.empty() ? fs::path("out") / (first.name + "-compare") : fs::path(o.output);

  // --- the runs
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError(fmt::format("cannot create the output directory '{}': {}", dir.string(), ec.message()));
  const std::string stem = fs::path(o.scene).stem().string();  // keeps the run's default name
  std::vector<ChildRun> children;
  std::string commands;
  for (const ModelScene& ms : runs) {
    ChildRun c;
    c.id = children.size();
    c.label = ms.model;
    c.dir = dir / ms.model;
    fs::create_directories(c.dir, ec);
    if (ec) throw InputError(fmt::format("cannot create '{}': {}", c.dir.string(), ec.message()));
    const fs::path scene_file = c.dir / (stem + ".toml");
    writeFileAtomic(scene_file.string(), ms.text);
    c.argv = {executable, "run", scene_file.string()};
    for (const auto& s : ms.overrides) c.argv.insert(c.argv.end(), {"--set", s});
    c.argv.insert(c.argv.end(), {"--output", c.dir.string(), "--force"});  // compare owns DIR/MODEL: a rerun replaces it
    commands += shellCommand(c.argv) + '\n';
    if (!o.quiet && !ms.dropped.empty())
      std::printf("rodsim compare: %s run: dropped [[contact]] key(s) %s does not declare: %s\n", ms.model.c_str(),
                  ms.model.c_str(), fmt::format("{}", fmt::join(ms.dropped, ", ")).c_str());
    children.push_back(std::move(c));
  }
  writeFileAtomic((dir / "commands.txt").string(), commands);
  std::size_t next = 0;
  runChildren(ChildPool{"rodsim compare", o.jobs, o.quiet, first.duration},
              [&]() -> std::optional<ChildRun> {
                if (next == children.size()) return std::nullopt;
                return children[next++];
              },
              [&](const ChildRun& done) { children[done.id].exit_code = done.exit_code; });

  // --- tables, differences, plots
  std::vector<ModelRun> results;
  bool failed = false;
  for (const ChildRun& c : children) {
    results.push_back(summarize(c.label, c.dir, c.exit_code));
    failed = failed || c.exit_code != 0;
  }
  writeTables(dir, results, first.rods.size());
  const auto notes = writeDifference(dir, results, first.name, first.dt);
  for (const auto& n : notes) std::fprintf(stderr, "rodsim compare: %s\n", n.c_str());

  const std::string script = kernel::sharedFile(executable, "plot_compare.py").string();
  const std::string plot = fmt::format("/usr/bin/python3 {} {}", shellQuote(script), shellQuote(dir.string()));
  const bool can_plot = fs::exists(script) && std::system("/usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1") == 0;
  bool plotted = false;
  if (can_plot) plotted = std::system((plot + " >/dev/null").c_str()) == 0;
  if (!o.quiet) {
    std::ifstream md(dir / "table.md");
    std::stringstream ss;
    ss << md.rdbuf();
    std::printf("\n%s\n", ss.str().c_str());
    std::printf("rodsim compare: %s -> %s (table.csv, table.md, difference.csv%s)\n", failed ? "a run failed" : "done",
                dir.c_str(), plotted ? ", difference.png, cumulative.png" : "");
  }
  if (!plotted) std::fprintf(stderr, "rodsim compare: plots not drawn (needs /usr/bin/python3 with matplotlib); run:\n  %s\n", plot.c_str());
  return failed ? 3 : 0;
}

}  // namespace rodsim::studies
