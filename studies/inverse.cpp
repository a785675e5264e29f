// Parameters, scene validation and the run cache shared by rodsim fit and rodsim optimize.
#include "inverse.h"

#include <rodsim/kernel/output.h>
#include <rodsim/kernel/run_directory.h>
#include <rodsim/kernel/scene.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <map>
#include <set>

namespace fs = std::filesystem;

namespace rodsim::studies {

using namespace rodsim::kernel;

std::string InverseParameter::name() const { return index ? fmt::format("{}[{}]", key, *index) : key; }

std::string InverseFile::at(const toml::source_region& src) const {
  return src.begin.line ? sourceAt(file, src) : file + ":1:1";
}

std::string tomlNumber(double v) {
  std::string s = fmt::format("{:.17g}", v);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::vector<std::string> InverseFile::overrides(const std::vector<double>& values) const {
  std::vector<std::string> out = fixed;
  std::map<std::string, std::vector<double>> arrays;  // key -> elements with the chosen ones set
  std::vector<std::string> order;                      // keys in the order of the file
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    const InverseParameter& p = parameters[i];
    if (!p.index) {
      out.push_back(p.key + "=" + tomlNumber(values[i]));
      continue;
    }
    if (!arrays.count(p.key)) {
      arrays[p.key] = scene_arrays[i];
      order.push_back(p.key);
    }
    arrays[p.key][*p.index] = values[i];
  }
  for (const auto& key : order) {
    std::vector<std::string> cells;
    for (double v : arrays[key]) cells.push_back(tomlNumber(v));
    out.push_back(fmt::format("{}=[{}]", key, fmt::join(cells, ", ")));
  }
  return out;
}

void loadPluginsFor(const std::string& file, TypeRegistry& registry) {
  std::string scene;
  try {
    const std::string text = readSceneText(file);
    checkTomlDepth(text, file);  // TOML++ recurses: a deep nesting is refused (loadInverseFile reports it)
    scene = toml::parse(std::string_view(text), std::string_view(file))["scene"].value<std::string>().value_or("");
  } catch (const std::exception&) {
  }  // loadInverseFile reports it
  const std::string scene_path = (fs::path(file).parent_path() / scene).string();
  loadPlugins(registry, !scene.empty() && fs::is_regular_file(scene_path) ? readPluginPaths(scene_path) : std::vector<std::string>{});
}

double requireNumber(const InverseFile& f, const toml::node& n, const std::string& what) {
  if (!n.is_number()) throw InputError(fmt::format("{}: '{}' expects a number, found {}", f.at(n.source()), what, describeNode(n)));
  const double v = n.value<double>().value();
  if (!std::isfinite(v)) throw InputError(fmt::format("{}: '{}' must be finite", f.at(n.source()), what));
  return v;
}

InverseFile loadInverseFile(const std::string& file, const TypeRegistry& registry, const std::vector<std::string>& own,
                            const std::string& verb) {
  InverseFile f;
  f.file = file;
  std::string text;
  try {
    text = readSceneText(file);
  } catch (const InputError&) {
    throw InputError(fmt::format("{}: cannot open the {} file", file, verb));
  }
  f.lines = splitLines(text);
  checkTomlDepth(text, file);  // TOML++ recurses: a deep nesting is refused before it is parsed
  try {
    f.root = toml::parse(std::string_view(text), std::string_view(file));
  } catch (const toml::parse_error& e) {
    throw InputError(fmt::format("{}:{}:{}: TOML syntax error: {}", file, e.source().begin.line, e.source().begin.column,
                                 e.description()));
  }
  auto fail = [&](const toml::source_region& src, const std::string& message) {
    return InputError(fmt::format("{}: {}", f.at(src), message));
  };
  std::vector<std::string> known{"scene", "set", "parameter"};
  known.insert(known.end(), own.begin(), own.end());
  for (auto&& [k, v] : f.root) {
    const std::string key(k.str());
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    const std::string near = closestMatch(key, known);
    throw fail(k.source(), fmt::format("unknown key '{}' in a {} file (valid: {}{})", key, verb, fmt::join(known, ", "),
                                       near.empty() ? "" : "; did you mean '" + near + "'?"));
  }

  const toml::node* scene = f.root.get("scene");
  if (!scene) throw InputError(fmt::format("{}:1:1: missing required key 'scene' (the scene, a path relative to this file)", file));
  if (!scene->is_string())
    throw fail(scene->source(), fmt::format("'scene' expects a string (a path relative to the {} file), found {}", verb, describeNode(*scene)));
  f.scene_where = f.at(scene->source());
  f.scene = (fs::path(file).parent_path() / scene->value<std::string>().value()).lexically_normal().string();
  try {
    f.scene_text = readSceneText(f.scene);
  } catch (const InputError&) {
    throw fail(scene->source(), fmt::format("scene '{}': cannot open {}", scene->value<std::string>().value(), f.scene));
  }

  // [set]: fixed values for every run (flat KEY = VALUE or dotted tables, as in a sweep file).
  std::vector<std::string> fixed_where;
  if (const toml::node* set = f.root.get("set")) {
    if (!set->is_table()) throw fail(set->source(), fmt::format("'set' expects a table of KEY = VALUE, found {}", describeNode(*set)));
    std::vector<std::pair<std::string, const toml::node*>> leaves;
    std::map<std::string, toml::source_region> key_source;
    flatten(*set->as_table(), "", leaves, key_source);  // as a sweep file's [set]
    sortBySource(leaves);
    for (const auto& leaf : leaves) {
      f.fixed.push_back(leaf.first + "=" + valueText(*leaf.second, f.lines));
      fixed_where.push_back(f.at(leaf.second->source()));
    }
  }
  const std::string in_file = fmt::format("(the scene of the {} file, {})", verb, f.scene_where);
  try {
    checkSceneWith(f.scene_text, f.scene, {}, registry);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}\n{}", e.what(), in_file));
  }
  for (std::size_t i = 0; i < f.fixed.size(); ++i) try {
      checkSceneWith(f.scene_text, f.scene, {f.fixed[i]}, registry);
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: [set] {}: {}", fixed_where[i], f.fixed[i], e.what()));
    }
  const toml::table scene_root = toml::parse(std::string_view(f.scene_text), std::string_view(f.scene));  // validated

  // [[parameter]]
  const toml::node* params = f.root.get("parameter");
  if (!params) throw InputError(fmt::format("{}:1:1: missing [[parameter]] tables (key, initial, lower, upper)", file));
  const auto* arr = params->as_array();
  if (!arr || !arr->is_array_of_tables())
    throw fail(params->source(), fmt::format("'parameter' expects [[parameter]] tables, found {}", describeNode(*params)));
  std::vector<const toml::table*> tables;
  for (const auto& el : *arr) tables.push_back(el.as_table());
  std::set<std::string> names;
  for (const toml::table* t : tables) {
    InverseParameter p;
    p.where = f.at(t->source());
    static const std::vector<std::string> keys{"key", "initial", "lower", "upper", "log", "index"};
    for (auto&& [k, v] : *t) {
      const std::string key(k.str());
      if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
      const std::string near = closestMatch(key, keys);
      throw fail(k.source(), fmt::format("unknown key '{}' in [[parameter]] (valid: {}{})", key, fmt::join(keys, ", "),
                                         near.empty() ? "" : "; did you mean '" + near + "'?"));
    }
    auto need = [&](const char* key) -> const toml::node& {
      const toml::node* n = t->get(key);
      if (!n) throw fail(t->source(), fmt::format("[[parameter]]: missing required key '{}'", key));
      return *n;
    };
    const toml::node& key = need("key");
    if (!key.is_string()) throw fail(key.source(), fmt::format("'key' expects a string (a --set key), found {}", describeNode(key)));
    p.key = key.value<std::string>().value();
    if (p.key.find('.') == std::string::npos)
      throw fail(key.source(), fmt::format("parameter '{}': a key needs a section, as for --set (e.g. rod.beam.youngs_modulus)", p.key));
    p.key_where = f.at(key.source());
    p.initial_where = f.at(need("initial").source());
    p.lower_where = f.at(need("lower").source());
    p.upper_where = f.at(need("upper").source());
    p.initial = requireNumber(f, need("initial"), "initial");
    p.lower = requireNumber(f, need("lower"), "lower");
    p.upper = requireNumber(f, need("upper"), "upper");
    if (const toml::node* log = t->get("log")) {
      if (!log->is_boolean()) throw fail(log->source(), fmt::format("'log' expects true or false, found {}", describeNode(*log)));
      p.log = log->value<bool>().value();
    }
    if (const toml::node* index = t->get("index")) {
      if (!index->is_integer() || index->value<long long>().value() < 0)
        throw fail(index->source(), fmt::format("'index' expects a whole number >= 0 (an element of an array key), found {}",
                                                describeNode(*index)));
      p.index = static_cast<std::size_t>(index->value<long long>().value());
    }
    if (!(p.lower < p.upper))
      throw fail(need("lower").source(), fmt::format("parameter '{}': lower ({}) must be below upper ({})", p.key, p.lower, p.upper));
    if (p.initial < p.lower || p.initial > p.upper)
      throw fail(need("initial").source(),
                 fmt::format("parameter '{}': initial ({}) is outside [lower, upper] = [{}, {}]", p.key, p.initial, p.lower, p.upper));
    if (p.log && p.lower <= 0)
      throw fail(need("lower").source(), fmt::format("parameter '{}': log = true needs lower > 0 (found {})", p.key, p.lower));
    if (!names.insert(p.name()).second) throw fail(key.source(), fmt::format("parameter '{}' is given twice", p.name()));
    if (std::find_if(f.fixed.begin(), f.fixed.end(), [&](const std::string& s) { return s.substr(0, s.find('=')) == p.key; }) !=
        f.fixed.end())
      throw fail(key.source(), fmt::format("parameter '{}' is also in [set]", p.key));
    std::vector<double> array;
    if (p.index) {
      // The other elements stay as the scene writes them: the scene must write the array.
      const toml::node* target = findSetTarget(scene_root, p.key);
      const toml::array* a = target ? target->as_array() : nullptr;
      if (!a)
        throw fail(key.source(), fmt::format("parameter '{}' has an index but the scene {} does not write '{}' as an array "
                                             "(write it there, all elements)", p.key, f.scene, p.key));
      for (const auto& el : *a) {
        if (!el.is_number())
          throw fail(key.source(), fmt::format("parameter '{}': the scene's array holds {} (numbers only)", p.key, describeNode(el)));
        array.push_back(el.value<double>().value());
      }
      if (*p.index >= array.size())
        throw fail(t->get("index")->source(), fmt::format("parameter '{}': index {} is out of range (the scene's array has {} element(s))",
                                                          p.key, *p.index, array.size()));
    }
    f.parameters.push_back(p);
    f.scene_arrays.push_back(array);
  }
  if (f.parameters.empty()) throw fail(params->source(), "no [[parameter]] tables");
  // Each parameter at its initial value and at both bounds, the others at their initial values:
  // an error names the parameter and the value that causes it.
  std::vector<double> initial;
  for (const auto& p : f.parameters) initial.push_back(p.initial);
  for (std::size_t i = 0; i < f.parameters.size(); ++i) {
    const InverseParameter& p = f.parameters[i];
    // An unknown or unreachable key fails at the initial value: the message points at the key.
    for (const auto& [v, where] : {std::pair{p.initial, p.key_where}, std::pair{p.lower, p.lower_where}, std::pair{p.upper, p.upper_where}}) {
      std::vector<double> x = initial;
      x[i] = v;
      try {
        checkSceneWith(f.scene_text, f.scene, f.overrides(x), registry);
      } catch (const InputError& e) {
        throw InputError(fmt::format("{}: parameter '{}' = {}: {}", where, p.name(), tomlNumber(v), e.what()));
      }
    }
  }
  const Scene s = parseScene(f.scene_text, f.scene, f.overrides(initial), registry);
  for (const ProbeSpec& p : s.probes) f.probes.push_back(p.name);
  for (const ComponentSpec& r : s.rods) f.rods.push_back(r.name);
  f.duration = s.duration;
  return f;
}

// ---------------------------------------------------------------- timeseries

const std::vector<double>* Series::column(const std::string& name) const {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return &columns[i];
  return nullptr;
}

Series readTimeseries(const fs::path& file) {
  Series s;
  std::error_code ec;
  if (!fs::exists(file, ec)) return s;
  const run_record::CsvTable t = readCsv(file, run_record::kMaxRunCsvBytes, "run's timeseries.csv", false);
  s.names = t.header;
  s.columns.resize(s.names.size());
  for (std::size_t r = 0; r < t.rows.size(); ++r)
    for (std::size_t c = 0; c < s.names.size(); ++c) {
      double v = std::numeric_limits<double>::quiet_NaN();
      if (c < t.rows[r].size() && !run_record::parseCell(t.rows[r][c], v)) v = std::numeric_limits<double>::quiet_NaN();
      s.columns[c].push_back(v);
    }
  return s;
}

double interpolate(const std::vector<double>& t, const std::vector<double>& y, double at) {
  if (t.empty()) return std::numeric_limits<double>::quiet_NaN();
  if (at <= t.front()) return y.front();
  if (at >= t.back()) return y.back();
  const auto it = std::upper_bound(t.begin(), t.end(), at);
  const std::size_t k = static_cast<std::size_t>(it - t.begin());
  const double t0 = t[k - 1], t1 = t[k];
  const double w = t1 > t0 ? (at - t0) / (t1 - t0) : 1.0;
  return (1 - w) * y[k - 1] + w * y[k];
}

// ---------------------------------------------------------------- the run cache

RunCache::RunCache(const InverseFile& f, fs::path dir, std::string executable, int jobs, bool quiet, std::string name,
                   const TypeRegistry& registry, std::string extra)
    : f_(f), dir_(std::move(dir)), executable_(std::move(executable)), name_(std::move(name)), jobs_(jobs), quiet_(quiet),
      registry_(registry), extra_(std::move(extra)) {}

// The scene's path and --set values, then the content key (the scene text and the files it
// references, rodsim's and the plugins' versions, the study's own part): a run is found again only
// while all of it is unchanged; an edited scene gets other run directories.
std::string RunCache::identity(const std::vector<double>& point) const {
  const std::vector<std::string> overrides = f_.overrides(point);
  return runIdentity(f_.scene, overrides) + "|" + contentKey(f_.scene, f_.scene_text, overrides, registry_, extra_);
}

fs::path RunCache::runDir(const std::vector<double>& point) const {
  return dir_ / "runs" / fmt::format("{:016x}", fnv1a(identity(point)));
}

void RunCache::record(const fs::path& dir, const std::string& identity, const std::string& command, int exit_status,
                      double seconds) const {
  writeFileAtomic((dir / "inverse_run.json").string(),
                  fmt::format("{{\n  \"identity\": \"{}\",\n  \"command\": \"{}\",\n  \"exit_status\": {},\n  \"seconds\": {:.6g},\n"
                              "  \"outputs\": \"{}\"\n}}\n",
                              jsonEscape(identity), jsonEscape(command), exit_status, seconds, jsonEscape(outputsHash(dir))));
}

void RunCache::rerecord(const fs::path& dir) const {
  const auto json = readJsonRecord(dir / "inverse_run.json");
  if (!json) return;
  record(dir, json->text("identity"), json->text("command"), static_cast<int>(json->numberOr("exit_status", -1)),
         json->numberOr("seconds", std::numeric_limits<double>::quiet_NaN()));
}

bool RunCache::run(const std::vector<std::vector<double>>& points, std::vector<RunResult>& results,
                   const std::function<void(RunResult&)>& finish) {
  results.assign(points.size(), RunResult{});
  std::vector<std::size_t> todo;
  std::vector<std::string> identities(points.size());
  std::map<fs::path, std::size_t> first;  // a point twice in one batch runs once
  std::vector<std::pair<std::size_t, std::size_t>> same;
  for (std::size_t i = 0; i < points.size(); ++i) {
    identities[i] = identity(points[i]);
    results[i].dir = dir_ / "runs" / fmt::format("{:016x}", fnv1a(identities[i]));
    const auto record = readJsonRecord(results[i].dir / "inverse_run.json");
    if (record && record->text("identity") == identities[i]) {
      // The outputs this study reads back must be those the run wrote: an edited timeseries.csv or
      // objective.txt is not a result (the run is made again).
      if (record->text("outputs") == outputsHash(results[i].dir)) {
        results[i].ok = record->text("exit_status") == "0";
        results[i].reason = results[i].ok ? "" : fmt::format("exit status {}; see {}", record->text("exit_status"),
                                                              (results[i].dir / "run.log").string());
        results[i].cached = true;
        if (used_.insert(results[i].dir).second) ++reused_;
        continue;
      }
      if (!ranks_ || ranks_->root())
        std::fprintf(stderr, "%s: %s: the outputs of this cached run changed since it was recorded: running it again\n",
                     name_.c_str(), results[i].dir.c_str());
    }
    if (auto it = first.find(results[i].dir); it != first.end()) {
      same.emplace_back(i, it->second);
      continue;
    }
    first[results[i].dir] = i;
    todo.push_back(i);
  }
  // Under mpirun every rank found the same points to run (nothing is written while the ranks look:
  // they meet first); rank r runs every size-th of them, as a sweep splits its rows.
  const int rank = ranks_ ? ranks_->rank() : 0, size = ranks_ ? ranks_->size() : 1;
  if (ranks_) ranks_->barrier();
  std::vector<std::size_t> mine;
  for (std::size_t k = 0; k < todo.size(); ++k)
    if (static_cast<int>(k % static_cast<std::size_t>(size)) == rank) mine.push_back(todo[k]);
  std::size_t next = 0;
  bool completed = runChildren(
      ChildPool{name_, jobs_, quiet_, f_.duration, true},
      [&]() -> std::optional<ChildRun> {
        if (next == mine.size()) return std::nullopt;
        const std::size_t i = mine[next++];
        ChildRun c;
        c.id = i;
        c.dir = results[i].dir;
        std::vector<std::string> shown;
        for (std::size_t k = 0; k < f_.parameters.size(); ++k)
          shown.push_back(fmt::format("{}={:.6g}", f_.parameters[k].name(), points[i][k]));
        c.label = fmt::format("{}", fmt::join(shown, " "));
        std::error_code ec;
        fs::create_directories(c.dir, ec);
        if (ec) throw std::runtime_error(fmt::format("cannot create '{}': {}", c.dir.string(), ec.message()));
        // What an earlier attempt recorded is not this run's: an interrupted rerun must not leave it.
        fs::remove(c.dir / "inverse_run.json", ec);
        fs::remove(c.dir / "objective.txt", ec);
        c.argv = {executable_, "run", f_.scene};
        for (const auto& o : f_.overrides(points[i])) c.argv.insert(c.argv.end(), {"--set", o});
        c.argv.insert(c.argv.end(), {"--output", c.dir.string(), "--force", "--quiet"});
        ++simulations_;
        used_.insert(c.dir);
        return c;
      },
      [&](const ChildRun& c) {
        if (c.interrupted) return;  // not finished: the next invocation runs it again
        RunResult& r = results[c.id];
        r.ok = c.exit_code == 0;
        r.reason = r.ok ? "" : fmt::format("exit status {}; see {}", c.exit_code, (c.dir / "run.log").string());
        // Exit 3 (the run failed) is a result too: the same values fail again. Signals are not recorded.
        if (c.signal == 0) record(c.dir, identities[c.id], shellCommand(c.argv), c.exit_code, c.seconds);
      });
  // What the study writes beside a finished run: once per run directory, by one rank (the one that
  // ran it; the reused runs' directories are dealt out in turn), before the ranks meet again.
  if (finish && completed) {
    for (std::size_t i : mine)
      if (results[i].ok) finish(results[i]);
    std::set<fs::path> reused;
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (!results[i].cached || !reused.insert(results[i].dir).second) continue;
      if (results[i].ok && static_cast<int>((reused.size() - 1) % static_cast<std::size_t>(size)) == rank) finish(results[i]);
    }
  }
  if (size > 1) {
    // Every rank waits for the others' runs and reads their results from their records.
    completed = ranks_->maxOverRanks(completed ? 0 : 1) == 0;
    for (std::size_t k = 0; k < todo.size(); ++k) {
      if (static_cast<int>(k % static_cast<std::size_t>(size)) == rank) continue;
      RunResult& r = results[todo[k]];
      const auto record = readJsonRecord(r.dir / "inverse_run.json");
      const std::string status = record && record->text("identity") == identities[todo[k]] ? record->text("exit_status") : "";
      r.ok = status == "0";
      r.reason = r.ok ? "" : fmt::format("{}; see {}", status.empty() ? "not finished" : "exit status " + status, (r.dir / "run.log").string());
      if (completed) {
        ++simulations_;
        used_.insert(r.dir);
      }
    }
  }
  for (const auto& [i, j] : same) results[i] = results[j];
  return completed;
}

void holdStopSignals() {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
}

// ---------------------------------------------------------------- command line and plots

InverseOptions parseInverseArgs(const std::vector<std::string>& args, const char* usage, const std::string& verb) {
  InverseOptions o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw InputError(fmt::format("option {} needs a value\n{}", arg, usage));
      return args[++i];
    };
    if (arg == "--help" || arg == "-h") {
      std::printf("%s", usage);
      std::exit(0);
    }
    if (arg == "--output") o.output = value();
    else if (arg == "--jobs") {
      const std::string v = value();
      try {
        std::size_t used = 0;
        const long n = std::stol(v, &used);
        if (used != v.size() || n < 1 || n > 4096) throw std::out_of_range(v);
        o.jobs = static_cast<int>(n);
      } catch (const std::exception&) {
        throw InputError(fmt::format("--jobs '{}': expected a whole number from 1 to 4096", v));
      }
    } else if (arg == "--quiet") o.quiet = true;
    else if (!arg.empty() && arg[0] == '-') throw InputError(fmt::format("unknown option '{}'\n{}", arg, usage));
    else if (o.file.empty()) o.file = arg;
    else throw InputError(fmt::format("unexpected argument '{}'\n{}", arg, usage));
  }
  if (o.file.empty()) throw InputError(fmt::format("'{}' needs {} {} file\n{}", verb, verb == "optimize" ? "an" : "a", verb, usage));
  return o;
}

std::string runPlotScript(const std::string& script, const std::vector<std::string>& args) {
  std::vector<std::string> argv{"/usr/bin/python3", script};
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string command = shellCommand(argv);
  if (!fs::exists(script) || std::system("/usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1") != 0)
    return "not drawn (needs /usr/bin/python3 with matplotlib); run: " + command;
  if (std::system((command + " >/dev/null").c_str()) != 0) return "failed; run: " + command;
  return "";
}

}  // namespace rodsim::studies
