// What every study needs (rodsim compare, rodsim sweep): a copy of the scene that a child run can
// use from any directory, child `rodsim run` processes spread over the cores, and reading what the
// runs wrote. A crashing run takes down its own process only, never the study driving it.
#pragma once

#include <rodsim/kernel/registry.h>
#include <rodsim/kernel/scene.h>  // kMaxSceneBytes

#include <rodsim/run_record/csv.h>
#include <rodsim/run_record/json.h>

#include <toml++/toml.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace rodsim::studies {

// ---------------------------------------------------------------- scene copies

// Line-preserving edits of a scene's text. toml++ columns count code points; end is exclusive.
class TextEditor {
 public:
  explicit TextEditor(const std::string& text);
  // Replaces columns [begin, end) of a line (1-based) with `text`.
  void replace(std::size_t line, std::size_t begin, std::size_t end, std::string text);
  // Comments out lines first..last and appends `note` to the first.
  void comment(std::size_t first, std::size_t last, const std::string& note);
  std::string text();

 private:
  struct Span {
    std::size_t line, begin, end;
    std::string text;
  };
  std::vector<std::string> lines_;
  std::vector<Span> spans_;
  std::map<std::size_t, std::string> commented_;
};

// "a\"b" as a TOML basic string.
std::string tomlString(const std::string& s);

// "file:line:column" of a TOML source region.
std::string sourceAt(const std::string& file, const toml::source_region& src);

// A value by dotted key inside a table (inline sub-tables: geometry.file), or nullptr.
const toml::node* lookupDotted(const toml::table& table, const std::string& dotted);

// Relative path values of one component (the parameters its schema declares as paths) -> absolute
// paths against `dir`, edited in place.
void absolutizePaths(TextEditor& edit, const toml::table& component, const Schema& schema, const std::filesystem::path& dir);

// [plugins] paths -> absolute paths against `dir`, edited in place.
void absolutizePluginPaths(TextEditor& edit, const toml::table& root, const std::filesystem::path& dir);

// ---------------------------------------------------------------- study files (sweep, fit, optimize)

// "string \"x\"", "number 3", "table": what a TOML value is, for messages.
std::string describeNode(const toml::node& n);
// The text of a value as written in the file (single-line values), else as toml++ prints it.
std::string valueText(const toml::node& n, const std::vector<std::string>& lines);
// Lines without their line ends.
std::vector<std::string> splitLines(const std::string& text);
// A CSV cell, quoted when needed.
std::string csvCell(const std::string& s);
// The JSON of the studies' records and results (sweep_row.json, inverse_run.json, fit.json,
// optimize.json) is written with the run's own writer (libs/run_record): the inside of a JSON
// string, and a number with 10 significant digits (null when not finite).
using run_record::jsonEscape;
using run_record::jsonNumber;
// What identifies one child run of a study: its scene (absolute) and every --set, escaped as the
// run's record stores it. A study reuses a finished run whose record holds the same identity.
std::string runIdentity(const std::filesystem::path& scene, const std::vector<std::string>& overrides);
// The content key of one child run (a hex hash): what its results depend on besides the values in
// runIdentity, so that a study reuses a run only while none of it changed: rodsim's version and
// SDK signature, every loaded plugin's name and version, the scene's text, every --set, the
// content of every file the scene references with these --set values (path parameters such as
// geometry.file), and `extra` (the part of the study file the cached result depends on, e.g. an
// optimization's objective).
std::string contentKey(const std::string& scene_file, const std::string& scene_text, const std::vector<std::string>& overrides,
                       const kernel::TypeRegistry& registry, const std::string& extra = "");
// Hashes of the result files a study reads back from a run directory (summary.json,
// timeseries.csv, final.csv, objective.txt), "name=hash;" for each that exists. A cache entry
// stores it when the run ends; a different value later means an output was edited or removed
// since, and the entry is not reused.
std::string outputsHash(const std::filesystem::path& dir);
// The value at `key` of a scene's TOML document, addressed as --set addresses it (array tables by
// name, or directly when there is only one), or nullptr.
const toml::node* findSetTarget(const toml::table& root, const std::string& key);
// Leaves of a table whose keys may be dotted or quoted: [axes] contact.friction = [...] and
// "contact.friction" = [...] both give "contact.friction". Inline tables are values.
void flatten(const toml::table& t, const std::string& prefix, std::vector<std::pair<std::string, const toml::node*>>& out,
             std::map<std::string, toml::source_region>& key_source);
// In file order (toml++ tables iterate by key).
void sortBySource(std::vector<std::pair<std::string, const toml::node*>>& leaves);
// Validates a scene with overrides as `rodsim check` does (components built and bound, probes
// resolved). Throws InputError.
void checkSceneWith(const std::string& scene_text, const std::string& scene_file, const std::vector<std::string>& overrides,
                    const kernel::TypeRegistry& registry);

// ---------------------------------------------------------------- reading a run's output

// Read with libs/run_record (a JSON value, a CSV table); its FormatError becomes InputError here.
// A JSON record or summary.json, bounded (kMaxStudyFileBytes); nullopt when the file does not
// exist; InputError naming the file when it is not a JSON object.
std::optional<run_record::JsonValue> readJsonRecord(const std::filesystem::path& file);
// The whole file, "" when it does not exist. Bounded before it is read (issue 43): InputError
// naming it unless it is a regular file of at most kMaxStudyFileBytes (records, summaries, a row's
// copy of its scene: none is larger than a scene).
std::string readFile(const std::filesystem::path& file);
inline constexpr std::uintmax_t kMaxStudyFileBytes = kernel::kMaxSceneBytes;
// A CSV a run wrote (timeseries.csv, final.csv: at most run_record::kMaxRunCsvBytes) or a user gave
// (fit data: kMaxDataBytes), bounded before it is read: InputError ("FILE: ..." naming `what`)
// unless it is a regular file of at most `max_bytes`, "FILE:LINE: ..." for a line longer than
// run_record::kMaxCsvLine bytes or (same_width) a row of another width than the header.
run_record::CsvTable readCsv(const std::filesystem::path& file, std::uintmax_t max_bytes, const std::string& what,
                             bool same_width = true);
inline constexpr std::uintmax_t kMaxDataBytes = std::uintmax_t(64) << 20;

// ---------------------------------------------------------------- child processes

// A study's children on rodsim's child-process engine (rodsim::process::runPool, libs/process),
// with the study's progress lines. One child process: `argv[0]` (the rodsim executable) with its
// arguments; standard output and error go to dir/run.log.
struct ChildRun {
  std::size_t id = 0;             // the caller's index
  std::string label;              // in progress lines: "imc", "row 3"
  std::filesystem::path dir;      // exists before the child starts
  std::vector<std::string> argv;
  // Set by runChildren:
  pid_t pid = -1;
  int exit_code = -1;             // exit status, or 128 + the signal that ended it
  int signal = 0;                 // that signal, 0 when the child exited
  bool interrupted = false;       // still running when this process got SIGINT or SIGTERM
  double seconds = 0;             // wall time
};

struct ChildPool {
  std::string name = "rodsim";    // prefix of the progress lines: "rodsim compare"
  int jobs = 1;                   // children at once
  bool quiet = false;
  double duration = 0;            // simulated seconds of each run: live percentages on a terminal
  bool live = true;               // the live line on a terminal (not under mpirun: ranks share one)
};

// Starts the children `next` hands out (nullopt: no more), at most pool.jobs at once, and calls
// `finished` for each as it ends, in the order they end (process::runPool: SIGINT or SIGTERM stops
// the pool, the running children get SIGINT and `finished` sees them with `interrupted` set).
// Prints "started", "done"/"FAILED" and the live line. Returns false when interrupted. A child
// that cannot be started throws std::runtime_error (the machine, not the input).
bool runChildren(const ChildPool& pool, const std::function<std::optional<ChildRun>()>& next,
                 const std::function<void(const ChildRun&)>& finished);

// out/<the study file's stem, a .sweep, .fit or .optimize suffix dropped>: the default output
// directory of `rodsim sweep a.sweep.toml` (out/a), `rodsim fit b.fit.toml` (out/b), `rodsim
// optimize c.toml` (out/c).
std::filesystem::path defaultStudyDir(const std::string& file);

// `argv` as one shell command line (commands.txt).
std::string shellCommand(const std::vector<std::string>& argv);
std::string shellQuote(const std::string& s);

}  // namespace rodsim::studies
