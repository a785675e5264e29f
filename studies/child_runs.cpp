// Scene copies, child `rodsim run` processes and reading their output, shared by the studies.
#include "child_runs.h"

#include <rodsim/kernel/run_directory.h>
#include <rodsim/kernel/scene.h>
#include <rodsim/kernel/simulation.h>

#include <rodsim/version.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <rodsim/process/pool.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace rodsim::studies {

using namespace rodsim::kernel;

// ---------------------------------------------------------------- scene copies

TextEditor::TextEditor(const std::string& text) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    end = end == std::string::npos ? text.size() : end + 1;
    lines_.push_back(text.substr(pos, end - pos));
    pos = end;
  }
}

void TextEditor::replace(std::size_t line, std::size_t begin, std::size_t end, std::string text) {
  spans_.push_back({line, begin, end, std::move(text)});
}

void TextEditor::comment(std::size_t first, std::size_t last, const std::string& note) {
  for (std::size_t l = first; l <= last; ++l) commented_[l] = l == first ? note : "";
}

namespace {

// FNV-1a of a file's bytes, read in blocks (memory bounded by the block); nullopt unless it is a
// regular file that could be read to its end (/dev/zero would never end).
std::optional<std::uint64_t> hashFile(const fs::path& file) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return std::nullopt;
  std::ifstream in(file, std::ios::binary);
  std::uint64_t h = fnv1a({});
  char block[64 * 1024];
  while (in && in.read(block, sizeof block).gcount() > 0) h = fnv1a(std::string_view(block, std::size_t(in.gcount())), h);
  if (!in.eof()) return std::nullopt;
  return h;
}

std::size_t byteOffset(const std::string& line, std::size_t column) {
  std::size_t cp = 0;
  for (std::size_t i = 0; i < line.size(); ++i)
    if ((static_cast<unsigned char>(line[i]) & 0xC0) != 0x80 && ++cp == column) return i;
  return line.size();
}

}  // namespace

std::string TextEditor::text() {
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
  spans_.clear();
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
  commented_.clear();
  std::string out;
  for (const auto& l : lines_) out += l;
  return out;
}

std::string tomlString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string sourceAt(const std::string& file, const toml::source_region& src) {
  return fmt::format("{}:{}:{}", file, src.begin.line, src.begin.column);
}

const toml::node* lookupDotted(const toml::table& table, const std::string& dotted) {
  const toml::table* cur = &table;
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

void absolutizePaths(TextEditor& edit, const toml::table& component, const Schema& schema, const fs::path& dir) {
  for (const ParamSpec& p : schema.params()) {
    if (!p.is_path) continue;
    const toml::node* n = lookupDotted(component, p.name);
    if (!n || !n->is_string()) continue;
    const fs::path value(n->value<std::string>().value());
    const auto& src = n->source();
    if (value.is_relative() && src.begin.line == src.end.line)
      edit.replace(src.begin.line, src.begin.column, src.end.column, tomlString((dir / value).lexically_normal().string()));
  }
}

void absolutizePluginPaths(TextEditor& edit, const toml::table& root, const fs::path& dir) {
  if (const auto* paths = root["plugins"]["paths"].as_array())
    for (const auto& el : *paths)
      if (el.is_string() && fs::path(el.value<std::string>().value()).is_relative() &&
          el.source().begin.line == el.source().end.line)
        edit.replace(el.source().begin.line, el.source().begin.column, el.source().end.column,
                     tomlString((dir / el.value<std::string>().value()).lexically_normal().string()));
}

// ---------------------------------------------------------------- study files

std::string describeNode(const toml::node& n) {
  if (n.is_string()) return fmt::format("string \"{}\"", n.value<std::string>().value_or(""));
  if (n.is_integer()) return fmt::format("integer {}", n.value<long long>().value_or(0));
  if (n.is_floating_point()) return fmt::format("number {}", n.value<double>().value_or(0));
  if (n.is_boolean()) return n.value<bool>().value_or(false) ? "boolean true" : "boolean false";
  if (n.is_array()) return fmt::format("array of {} element(s)", n.as_array()->size());
  if (n.is_table()) return "table";
  return "a date/time";
}

// The text of a value as written in the file (single-line values), else as toml++ prints it.
std::string valueText(const toml::node& n, const std::vector<std::string>& lines) {
  const auto& src = n.source();
  if (src.begin.line == src.end.line && src.begin.line >= 1 && src.begin.line <= lines.size()) {
    const std::string& line = lines[src.begin.line - 1];
    auto byte = [&](std::size_t column) {  // toml++ columns count code points
      std::size_t cp = 0;
      for (std::size_t i = 0; i < line.size(); ++i)
        if ((static_cast<unsigned char>(line[i]) & 0xC0) != 0x80 && ++cp == column) return i;
      return line.size();
    };
    const std::size_t b = byte(src.begin.column), e = byte(src.end.column);
    if (b < e) return line.substr(b, e - b);
  }
  std::ostringstream os;
  n.visit([&](const auto& v) { os << v; });
  return os.str();
}

std::vector<std::string> splitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (!l.empty() && l.back() == '\r') l.pop_back();
    lines.push_back(l);
  }
  return lines;
}

std::string csvCell(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string runIdentity(const std::filesystem::path& scene, const std::vector<std::string>& overrides) {
  return jsonEscape(std::filesystem::absolute(scene).lexically_normal().string()) + "|" +
         jsonEscape(fmt::format("{}", fmt::join(overrides, "\n")));
}

std::string contentKey(const std::string& scene_file, const std::string& scene_text, const std::vector<std::string>& overrides,
                       const TypeRegistry& registry, const std::string& extra) {
  std::string key = fmt::format("rodsim {}\nsdk: {}\n", RODSIM_SDK_VERSION, RODSIM_SDK_SIGNATURE);
  for (const auto& p : registry.plugins()) key += fmt::format("plugin {} {}\n", p.name, p.version);
  key += fmt::format("scene: {:016x}\n", fnv1a(scene_text));
  for (const auto& o : overrides) key += "set " + jsonEscape(o) + "\n";
  std::vector<std::string> referenced;
  try {
    referenced = parseScene(scene_text, scene_file, overrides, registry).referenced_files;
  } catch (const InputError&) {  // validated before any run starts; the child reports it otherwise
  }
  for (const auto& file : referenced) {  // in blocks, regular files only (as the restart identity)
    const auto h = hashFile(file);
    key += fmt::format("file {}: {}\n", jsonEscape(file), h ? fmt::format("{:016x}", *h) : "unreadable");
  }
  key += "study: " + jsonEscape(extra) + "\n";
  return fmt::format("{:016x}", fnv1a(key));
}

std::string outputsHash(const std::filesystem::path& dir) {
  std::string out;
  for (const char* name : {"summary.json", "timeseries.csv", "final.csv", "objective.txt"}) {
    std::error_code ec;
    if (!std::filesystem::exists(dir / name, ec)) continue;
    const auto h = hashFile(dir / name);  // in blocks: a long timeseries.csv is not held in memory
    out += h ? fmt::format("{}={:016x};", name, *h) : fmt::format("{}=unreadable;", name);
  }
  return out;
}

// The value at `key` of the scene's TOML document, addressed as --set addresses it (array tables
// by name, or directly when there is only one), or nullptr.
const toml::node* findSetTarget(const toml::table& root, const std::string& key) {
  const auto dot = key.find('.');
  if (dot == std::string::npos) return nullptr;
  const std::string section = key.substr(0, dot), rest = key.substr(dot + 1);
  if (const auto* arr = root[section].as_array()) {
    const auto dot2 = rest.find('.');
    if (dot2 != std::string::npos)
      for (const auto& el : *arr)
        if (const auto* t = el.as_table(); t && (*t)["name"].value<std::string>() == rest.substr(0, dot2))
          return lookupDotted(*t, rest.substr(dot2 + 1));
    if (arr->size() == 1 && arr->front().is_table()) return lookupDotted(*arr->front().as_table(), rest);
    return nullptr;
  }
  if (const auto* t = root[section].as_table()) return lookupDotted(*t, rest);
  return nullptr;
}

// Leaves of a table whose keys may be dotted or quoted: [axes] contact.friction = [...] and
// "contact.friction" = [...] both give "contact.friction". Inline tables are values.
void flatten(const toml::table& t, const std::string& prefix, std::vector<std::pair<std::string, const toml::node*>>& out,
             std::map<std::string, toml::source_region>& key_source) {
  for (auto&& [k, v] : t) {
    const std::string key = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
    key_source[key] = k.source();
    if (const auto* sub = v.as_table(); sub && !sub->is_inline()) flatten(*sub, key, out, key_source);
    else out.emplace_back(key, &v);
  }
}

// In file order (toml++ tables iterate by key).
void sortBySource(std::vector<std::pair<std::string, const toml::node*>>& leaves) {
  std::stable_sort(leaves.begin(), leaves.end(), [](const auto& a, const auto& b) {
    const auto &sa = a.second->source().begin, &sb = b.second->source().begin;
    return sa.line != sb.line ? sa.line < sb.line : sa.column < sb.column;
  });
}

void checkSceneWith(const std::string& scene_text, const std::string& scene_file, const std::vector<std::string>& overrides,
                    const TypeRegistry& registry) {
  const Scene scene = parseScene(scene_text, scene_file, overrides, registry);
  checkScene(scene, registry);
}

// ---------------------------------------------------------------- reading a run's output

std::string readFile(const fs::path& file) {
  std::error_code ec;
  if (!fs::exists(file, ec)) return "";  // (a dangling link too)
  return readUserFile(file.string(), kMaxStudyFileBytes, "file");
}

std::optional<run_record::JsonValue> readJsonRecord(const fs::path& file) {
  const std::string text = readFile(file);
  if (text.empty()) return std::nullopt;
  try {
    run_record::JsonValue v = run_record::parseJson(text, file.string());
    if (!v.isObject()) throw run_record::FormatError(fmt::format("{}: not a JSON object", file.string()));
    return v;
  } catch (const run_record::FormatError& e) {
    throw InputError(e.what());
  }
}

run_record::CsvTable readCsv(const fs::path& file, std::uintmax_t max_bytes, const std::string& what, bool same_width) {
  const std::string text = readUserFile(file.string(), max_bytes, what);
  try {
    return run_record::parseCsv(text, file.string(), same_width);
  } catch (const run_record::FormatError& e) {
    throw InputError(fmt::format("{}; the {} cannot be read", e.what(), what));
  }
}

// ---------------------------------------------------------------- child processes

std::filesystem::path defaultStudyDir(const std::string& file) {
  std::string stem = std::filesystem::path(file).stem().string();  // "a.sweep" of "a.sweep.toml"
  for (const std::string kind : {".sweep", ".fit", ".optimize"})
    if (stem.size() > kind.size() && stem.compare(stem.size() - kind.size(), kind.size(), kind) == 0) {
      stem.resize(stem.size() - kind.size());
      break;
    }
  return std::filesystem::path("out") / stem;
}

std::string shellQuote(const std::string& s) {
  if (!s.empty() &&
      s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+") == std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string shellCommand(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& a : argv) {
    if (!line.empty()) line += ' ';
    line += shellQuote(a);
  }
  return line;
}

// The pool itself is rodsim::process::runPool; here is what a study prints about its children.
bool runChildren(const ChildPool& pool, const std::function<std::optional<ChildRun>()>& next,
                 const std::function<void(const ChildRun&)>& finished) {
  const bool tty = !pool.quiet && pool.live && isatty(STDOUT_FILENO);
  const char* clear = tty ? "\r\033[K" : "";
  std::vector<ChildRun> runs;  // by the engine's id
  process::PoolEvents events;
  events.started = [&](const process::Child& c) {
    runs[c.id].pid = c.pid;
    if (!pool.quiet)
      std::printf("%s%s: %s started (log: %s)\n", clear, pool.name.c_str(), runs[c.id].label.c_str(), c.log.c_str());
    std::fflush(stdout);
  };
  events.stopping = [&](int sig, std::size_t running) {
    if (!pool.quiet)
      std::printf("%s%s: interrupted by %s: stopping the %zu running run(s)\n", clear, pool.name.c_str(),
                  sig == SIGINT ? "SIGINT" : "SIGTERM", running);
  };
  if (tty) {
    events.tick_seconds = 0.5;
    events.tick = [&](const std::vector<const process::Child*>& running) {
      std::string line;
      for (const process::Child* c : running) {
        const ChildRun& r = runs[c->id];
        line += pool.duration > 0 ? fmt::format("  {} {:3.0f}%", r.label, 100.0 * run_record::lastTime(r.dir / "timeseries.csv") / pool.duration)
                                  : fmt::format("  {} running", r.label);
      }
      std::printf("\r\033[K%s", line.c_str());
      std::fflush(stdout);
    };
  }
  const bool completed = process::runPool(
      pool.jobs,
      [&]() -> std::optional<process::Child> {
        std::optional<ChildRun> c = next();
        if (!c) return std::nullopt;
        process::Child child;
        child.id = runs.size();
        child.argv = c->argv;
        child.log = c->dir / "run.log";  // output and errors in the run directory
        runs.push_back(std::move(*c));
        return child;
      },
      [&](const process::Child& child) {
        ChildRun& c = runs[child.id];
        if (child.start_error != 0)
          throw std::runtime_error(fmt::format("cannot start {}: {}", c.argv.empty() ? "" : c.argv[0], std::strerror(child.start_error)));
        c.pid = child.pid;
        c.exit_code = child.exit_code;
        c.signal = child.signal;
        c.interrupted = child.interrupted;
        c.seconds = child.seconds;
        if (!pool.quiet && !c.interrupted)
          std::printf("%s%s: %s %s after %.1f s\n", clear, pool.name.c_str(), c.label.c_str(),
                      c.exit_code == 0 ? "done"
                                       : fmt::format("FAILED (exit {}; see {})", c.exit_code, (c.dir / "run.log").string()).c_str(),
                      c.seconds);
        std::fflush(stdout);
        finished(c);
      },
      events);
  if (tty) std::printf("\r\033[K");
  std::fflush(stdout);
  return completed;
}

}  // namespace rodsim::studies
