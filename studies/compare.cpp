// rodsim compare: the same scene once per contact model, as child processes `rodsim run`, then a
// table in the format of Table 1 of the IMC seed, the normalized difference e(t) of its Eq. 22
// between every pair of runs, and plots (scripts/plot_compare.py).
//
// Each run gets a copy of the scene, DIR/<model>/<stem>.toml, edited in place so that every line
// keeps its number: the [[contact]] tables' type becomes the model, keys the model does not
// declare are commented out, and relative paths are made absolute.
#include "compare.h"

#include "scene.h"
#include "output.h"
#include "world.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <rodsim/vtp/polydata.h>
#include <toml++/toml.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace fs = std::filesystem;

namespace rodsim::studies {

using namespace rodsim::kernel;  // the studies layer drives the kernel: scenes, registry, output

namespace {

// ---------------------------------------------------------------- the per-model scene copies

// Line-preserving edits of the scene text. toml++ columns count code points; end is exclusive.
class TextEditor {
 public:
  explicit TextEditor(const std::string& text) {
    std::size_t pos = 0;
    while (pos < text.size()) {
      std::size_t end = text.find('\n', pos);
      end = end == std::string::npos ? text.size() : end + 1;
      lines_.push_back(text.substr(pos, end - pos));
      pos = end;
    }
  }
  // Replaces columns [begin, end) of a line (1-based) with `text`.
  void replace(std::size_t line, std::size_t begin, std::size_t end, std::string text) {
    spans_.push_back({line, begin, end, std::move(text)});
  }
  // Comments out lines first..last and appends `note` to the first.
  void comment(std::size_t first, std::size_t last, const std::string& note) {
    for (std::size_t l = first; l <= last; ++l) commented_[l] = l == first ? note : "";
  }
  std::string text() {
    // Right to left within a line, so earlier columns stay valid.
    std::sort(spans_.begin(), spans_.end(), [](const Span& a, const Span& b) {
      return a.line != b.line ? a.line < b.line : a.begin > b.begin;
    });
    for (const Span& s : spans_) {
      if (s.line == 0 || s.line > lines_.size()) continue;
      std::string& l = lines_[s.line - 1];
      const std::size_t b = byteOffset(l, s.begin), e = byteOffset(l, s.end);
      l = l.substr(0, b) + s.text + l.substr(e);
    }
    for (const auto& [line, note] : commented_) {
      if (line == 0 || line > lines_.size()) continue;
      std::string& l = lines_[line - 1];
      std::string end;  // "\n" or "\r\n"
      while (!l.empty() && (l.back() == '\n' || l.back() == '\r')) {
        end.insert(end.begin(), l.back());
        l.pop_back();
      }
      l = "# " + l + (note.empty() ? "" : "  # " + note) + end;
    }
    std::string out;
    for (const auto& l : lines_) out += l;
    return out;
  }

 private:
  struct Span {
    std::size_t line, begin, end;
    std::string text;
  };
  static std::size_t byteOffset(const std::string& line, std::size_t column) {
    std::size_t cp = 0;
    for (std::size_t i = 0; i < line.size(); ++i)
      if ((static_cast<unsigned char>(line[i]) & 0xC0) != 0x80 && ++cp == column) return i;
    return line.size();
  }
  std::vector<std::string> lines_;
  std::vector<Span> spans_;
  std::map<std::size_t, std::string> commented_;
};

std::string tomlString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string at(const std::string& file, const toml::source_region& src) {
  return fmt::format("{}:{}:{}", file, src.begin.line, src.begin.column);
}

// A value by dotted key inside a table (inline sub-tables: geometry.file).
const toml::node* lookup(const toml::table& t, const std::string& dotted) {
  const toml::table* cur = &t;
  std::size_t pos = 0;
  while (true) {
    const std::size_t dot = dotted.find('.', pos);
    const toml::node* n = cur->get(dotted.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos));
    if (!n || dot == std::string::npos) return n;
    cur = n->as_table();
    if (!cur) return nullptr;
    pos = dot + 1;
  }
}

// Relative path values of a component (schema params declared as paths) -> absolute.
void absolutizePaths(TextEditor& edit, const toml::table& t, const Schema& schema, const fs::path& dir) {
  for (const ParamSpec& p : schema.params()) {
    if (!p.is_path) continue;
    const toml::node* n = lookup(t, p.name);
    if (!n || !n->is_string()) continue;
    const fs::path value(n->value<std::string>().value());
    const auto& src = n->source();
    if (value.is_relative() && src.begin.line == src.end.line)
      edit.replace(src.begin.line, src.begin.column, src.end.column, tomlString((dir / value).lexically_normal().string()));
  }
}

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
        throw InputError(fmt::format("{}: rodsim compare needs [[contact]] tables, not inline tables", at(file, t->source())));
      if (!type || !type->is_string() || type->source().begin.line != type->source().end.line)
        throw InputError(fmt::format("{}: [[contact]]: missing required key 'type' (a string)", at(file, t->source())));
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
                                       "cannot drop; write it inline (key = {{ ... }})", at(file, k.source()), key, model));
        edit.comment(k.source().begin.line, v.source().end.line, fmt::format("dropped by rodsim compare: not a key of '{}'", model));
        out.dropped.push_back(fmt::format("{} ({})", key, at(file, k.source())));
      }
      absolutizePaths(edit, *t, target->schema, dir);
    }
  }
  // [plugins] paths are relative to the scene file too.
  if (const auto* paths = root["plugins"]["paths"].as_array())
    for (const auto& el : *paths)
      if (el.is_string() && fs::path(el.value<std::string>().value()).is_relative() &&
          el.source().begin.line == el.source().end.line)
        edit.replace(el.source().begin.line, el.source().begin.column, el.source().end.column,
                     tomlString((dir / el.value<std::string>().value()).lexically_normal().string()));
  out.text = edit.text();
  out.text += fmt::format("\n# Written by rodsim compare from {}: [[contact]] type = \"{}\"{}; relative paths made absolute.\n"
                          "# Line numbers are those of the original.\n",
                          fs::absolute(file).lexically_normal().string(), model,
                          out.dropped.empty() ? "" : ", keys it does not declare commented out");
  return out;
}

// ---------------------------------------------------------------- reading the runs' output

struct Series {
  std::vector<double> t, iterations, wall_ms, contacts, min_gap;
};

std::vector<std::string> splitCsv(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, ',')) cells.push_back(cell);
  if (!line.empty() && line.back() == ',') cells.emplace_back();
  return cells;
}

double number(const std::string& s) {
  if (s.empty()) return std::numeric_limits<double>::quiet_NaN();
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  return end == s.c_str() ? std::numeric_limits<double>::quiet_NaN() : v;
}

Series readTimeseries(const fs::path& file) {
  Series s;
  std::ifstream in(file);
  std::string line;
  if (!std::getline(in, line)) return s;
  const auto header = splitCsv(line);
  auto col = [&](const char* name) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  const std::size_t ct = col("t"), ci = col("iterations"), cw = col("wall_ms"), cc = col("contacts"), cg = col("min_gap");
  while (std::getline(in, line)) {
    const auto cells = splitCsv(line);
    auto get = [&](std::size_t c) { return c < cells.size() ? number(cells[c]) : std::numeric_limits<double>::quiet_NaN(); };
    s.t.push_back(get(ct));
    s.iterations.push_back(get(ci));
    s.wall_ms.push_back(get(cw));
    s.contacts.push_back(get(cc));
    s.min_gap.push_back(get(cg));
  }
  return s;
}

// The simulated time reached, from the last line of timeseries.csv (progress display).
double lastTime(const fs::path& file) {
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in) return 0;
  const std::streamoff size = in.tellg();
  const std::streamoff start = std::max<std::streamoff>(0, size - 512);
  in.seekg(start);
  std::string tail(static_cast<std::size_t>(size - start), '\0');
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  std::size_t end = tail.find_last_not_of('\n');
  if (end == std::string::npos) return 0;
  std::size_t begin = tail.rfind('\n', end);
  const auto cells = splitCsv(tail.substr(begin == std::string::npos ? 0 : begin + 1, end + 1 - (begin == std::string::npos ? 0 : begin + 1)));
  const double t = cells.size() > 1 ? number(cells[1]) : 0;
  return std::isfinite(t) ? t : 0;
}

// A field of summary.json (flat, one key per line as the kernel writes it).
struct Frame {
  double t;
  fs::path file;
};

std::vector<Frame> readPvd(const fs::path& pvd) {
  std::vector<Frame> frames;
  std::ifstream in(pvd);
  std::string line;
  auto attr = [](const std::string& l, const std::string& name) {
    const auto p = l.find(name + "=\"");
    if (p == std::string::npos) return std::string();
    const auto b = p + name.size() + 2;
    return l.substr(b, l.find('"', b) - b);
  };
  while (std::getline(in, line))
    if (line.find("<DataSet") != std::string::npos)
      frames.push_back({number(attr(line, "timestep")), pvd.parent_path() / attr(line, "file")});
  return frames;
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

struct RunResult {
  std::string model, status = "not run", reason;
  int exit_code = -1;
  double wall_time_s = 0, min_gap = std::numeric_limits<double>::quiet_NaN();
  long long steps = 0, contact_steps = 0, iterations = 0, contact_iterations = 0;
  double contact_wall_ms = 0;
};

RunResult summarize(const std::string& model, const fs::path& dir, int exit_code) {
  RunResult r;
  r.model = model;
  r.exit_code = exit_code;
  std::ifstream in(dir / "summary.json");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string json = ss.str();
  r.status = json.empty() ? "no output" : summaryField(json, "status");
  r.reason = summaryField(json, "reason");
  r.wall_time_s = number(summaryField(json, "wall_time_s"));
  r.min_gap = number(summaryField(json, "min_gap"));
  const Series s = readTimeseries(dir / "timeseries.csv");
  for (std::size_t i = 1; i < s.t.size(); ++i) {  // row 0: the initial state
    ++r.steps;
    r.iterations += static_cast<long long>(s.iterations[i]);
    if (s.contacts[i] > 0) {
      ++r.contact_steps;
      r.contact_iterations += static_cast<long long>(s.iterations[i]);
      r.contact_wall_ms += s.wall_ms[i];
    }
  }
  return r;
}

std::string fmtNumber(double v, const char* spec = "{:.4g}") {
  return std::isfinite(v) ? fmt::format(fmt::runtime(spec), v) : "";
}

void writeTables(const fs::path& dir, const std::vector<RunResult>& runs, std::size_t rods) {
  const double first_time = runs.front().wall_time_s;
  const double first_contact = runs.front().contact_wall_ms;
  std::string csv =
      "model,M,status,steps,contact_steps,aipts,atpts_ms,total_iterations,run_time_s,run_time_ratio,"
      "contact_time_s,contact_time_ratio,aipts_all,total_iterations_all,min_gap\n";
  std::string md = fmt::format(
      "| model | M | AIPTS | ATPTS [ms] | total iters | run time [s] | run time ratio | contact steps | min gap [m] | status |\n"
      "|---|---|---|---|---|---|---|---|---|---|\n");
  for (const RunResult& r : runs) {
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
  md += "\nAIPTS, ATPTS and total iterations over the steps with at least one active contact (as in Table 1 of the "
        "IMC seed); iterations are linear solves (the IMC authors' counter adds one per step). Run time: the whole "
        "run's wall time; ratio: relative to the first model.\n";
  writeFileAtomic((dir / "table.csv").string(), csv);
  writeFileAtomic((dir / "table.md").string(), md);
}

// e(t) of Eq. 22 for every pair of runs, at the frames both wrote: the mean over all nodes of
// |x_A - x_B| / r (r the node's radius; 1/(M N h) sum |x_A - x_B| for M rods of N nodes and radius h).
// Returns notes about what could not be compared.
std::vector<std::string> writeDifference(const fs::path& dir, const std::vector<RunResult>& runs, const std::string& name,
                                         double dt) {
  std::vector<std::string> notes;
  std::vector<std::vector<Frame>> frames;
  for (const RunResult& r : runs) frames.push_back(readPvd(dir / r.model / "vtk" / (name + ".pvd")));
  std::string csv = "t";
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  for (std::size_t a = 0; a < runs.size(); ++a)
    for (std::size_t b = a + 1; b < runs.size(); ++b) {
      pairs.emplace_back(a, b);
      csv += fmt::format(",{}_vs_{}", runs[a].model, runs[b].model);
    }
  csv += "\n";
  // Rows: the first run's frame times; a cell is empty where the other run has no frame.
  const std::vector<Frame>& base = frames.front();
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
      if (std::abs(frames[run][k].t - t) <= 1e-6 * dt) return static_cast<long>(k);
    return -1;
  };
  bool mismatch = false;
  for (std::size_t k = 0; k < base.size(); ++k) {
    const double t = base[k].t;
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

// ---------------------------------------------------------------- running the children

struct Child {
  std::string model;
  fs::path dir, scene_file;
  std::vector<std::string> argv;
  pid_t pid = -1;
  int exit_code = -1;
  bool done = false;
  std::chrono::steady_clock::time_point start;
  double seconds = 0;
};

pid_t spawn(const Child& c) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const std::string log = (c.dir / "run.log").string();
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, STDIN_FILENO);
  std::vector<char*> argv;
  for (const auto& a : c.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int err = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) throw std::runtime_error(fmt::format("cannot start {}: {}", argv[0], std::strerror(err)));
  return pid;
}

std::string shellQuote(const std::string& s) {
  if (s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+") == std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

void runChildren(std::vector<Child>& children, int jobs, double duration, bool quiet) {
  using Clock = std::chrono::steady_clock;
  const bool tty = !quiet && isatty(STDOUT_FILENO);
  std::size_t next = 0, running = 0, finished = 0;
  auto last_print = Clock::now();
  while (finished < children.size()) {
    while (running < static_cast<std::size_t>(jobs) && next < children.size()) {
      Child& c = children[next++];
      c.start = Clock::now();
      c.pid = spawn(c);
      ++running;
      if (!quiet) std::printf("%srodsim compare: %s started (log: %s)\n", tty ? "\r\033[K" : "", c.model.c_str(),
                              (c.dir / "run.log").c_str());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    for (Child& c : children) {
      if (c.pid <= 0 || c.done) continue;
      int status = 0;
      if (waitpid(c.pid, &status, WNOHANG) != c.pid) continue;
      c.done = true;
      c.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
      c.seconds = std::chrono::duration<double>(Clock::now() - c.start).count();
      --running;
      ++finished;
      if (!quiet)
        std::printf("%srodsim compare: %s %s after %.1f s\n", tty ? "\r\033[K" : "", c.model.c_str(),
                    c.exit_code == 0 ? "done" : fmt::format("FAILED (exit {}; see {})", c.exit_code, (c.dir / "run.log").string()).c_str(),
                    c.seconds);
    }
    if (tty && Clock::now() - last_print > std::chrono::milliseconds(500)) {
      last_print = Clock::now();
      std::string line;
      for (const Child& c : children) {
        const char* state = c.done ? "done" : c.pid > 0 ? nullptr : "waiting";
        line += state ? fmt::format("  {} {}", c.model, state)
                      : fmt::format("  {} {:3.0f}%", c.model, 100.0 * lastTime(c.dir / "timeseries.csv") / duration);
      }
      std::printf("\r\033[K%s", line.c_str());
      std::fflush(stdout);
    }
  }
  if (tty) std::printf("\r\033[K");
  std::fflush(stdout);
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
  std::map<std::string, std::vector<std::string>> per_model;
  for (const auto& cs : o.contact_sets) {
    const auto colon = cs.find(':'), eq = cs.find('=');
    if (colon == std::string::npos || colon == 0 || (eq != std::string::npos && eq < colon))
      throw InputError(fmt::format("compare: --contact-set '{}': expected MODEL:KEY=VALUE, e.g. --contact-set ipc:d_hat=1e-5", cs));
    const std::string model = cs.substr(0, colon), assignment = cs.substr(colon + 1);
    if (std::find(o.models.begin(), o.models.end(), model) == o.models.end())
      throw InputError(fmt::format("compare: --contact-set '{}': '{}' is not one of the compared models ({})", cs, model,
                                   fmt::join(o.models, ", ")));
    if (assignment.rfind("type=", 0) == 0 || assignment.find(".type=") != std::string::npos)
      throw InputError(fmt::format("compare: --contact-set '{}': the type is the model itself", cs));
    per_model[model].push_back("contact." + assignment);
  }
  const std::string text = readSceneText(o.scene);
  toml::table root;
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
  std::vector<Child> children;
  std::string commands;
  for (const ModelScene& ms : runs) {
    Child c;
    c.model = ms.model;
    c.dir = dir / ms.model;
    fs::create_directories(c.dir, ec);
    if (ec) throw InputError(fmt::format("cannot create '{}': {}", c.dir.string(), ec.message()));
    c.scene_file = c.dir / (stem + ".toml");
    writeFileAtomic(c.scene_file.string(), ms.text);
    c.argv = {executable, "run", c.scene_file.string()};
    for (const auto& s : ms.overrides) c.argv.insert(c.argv.end(), {"--set", s});
    c.argv.insert(c.argv.end(), {"--output", c.dir.string(), "--force"});  // compare owns DIR/MODEL: a rerun replaces it
    for (std::size_t i = 0; i < c.argv.size(); ++i) {
      if (i > 0) commands += ' ';
      commands += shellQuote(c.argv[i]);
    }
    commands += '\n';
    if (!o.quiet && !ms.dropped.empty())
      std::printf("rodsim compare: %s run: dropped [[contact]] key(s) %s does not declare: %s\n", ms.model.c_str(),
                  ms.model.c_str(), fmt::format("{}", fmt::join(ms.dropped, ", ")).c_str());
    children.push_back(std::move(c));
  }
  writeFileAtomic((dir / "commands.txt").string(), commands);
  runChildren(children, o.jobs, first.duration, o.quiet);

  // --- tables, differences, plots
  std::vector<RunResult> results;
  bool failed = false;
  for (const Child& c : children) {
    results.push_back(summarize(c.model, c.dir, c.exit_code));
    failed = failed || c.exit_code != 0;
  }
  writeTables(dir, results, first.rods.size());
  const auto notes = writeDifference(dir, results, first.name, first.dt);
  for (const auto& n : notes) std::fprintf(stderr, "rodsim compare: %s\n", n.c_str());

  const std::string script = RODSIM_PLOT_COMPARE_SCRIPT;
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
