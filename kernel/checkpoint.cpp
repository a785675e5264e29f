// Checkpoint files: a text header (format, identity, scene, overrides) then raw doubles.
#include <rodsim/kernel/checkpoint.h>

#include <rodsim/kernel/run_directory.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace rodsim::kernel {

namespace {

// Format 2: a run id, escaped header values and a checksum line at the end. Files of format 1 (no
// checksum) are refused: their content cannot be trusted to continue a run.
constexpr const char* kMagic = "rodsim-checkpoint 2";
constexpr std::string_view kChecksumTag = "\nchecksum ";

// Header values may hold any byte (a --set value with a newline, a file name with one): one line each.
std::string escapeLine(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else out += c;
  }
  return out;
}

std::string unescapeLine(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      const char c = s[++i];
      out += c == 'n' ? '\n' : c == 'r' ? '\r' : c;
    } else {
      out += s[i];
    }
  }
  return out;
}

class Writer {
 public:
  void line(const std::string& s) { text_ += s + "\n"; }
  void number(double x) { data_.push_back(x); }
  void vector(const std::vector<double>& v) {
    number(static_cast<double>(v.size()));
    data_.insert(data_.end(), v.begin(), v.end());
  }
  void vector(const Vec& v) { vector(std::vector<double>(v.data(), v.data() + v.size())); }
  std::string bytes() const {
    std::string out = text_ + "---\n";
    out.append(reinterpret_cast<const char*>(data_.data()), data_.size() * sizeof(double));
    out += fmt::format("{}{:016x}\n", kChecksumTag, fnv1a(out));
    return out;
  }

 private:
  std::string text_;
  std::vector<double> data_;
};

class Reader {
 public:
  // Checks the checksum line that ends the file, then reads what precedes it.
  Reader(std::string bytes, std::string file) : bytes_(std::move(bytes)), file_(std::move(file)) {
    const std::size_t line = kChecksumTag.size() + 16 + 1;  // "\nchecksum <16 hex>\n"
    if (bytes_.size() < line || std::string_view(bytes_).substr(bytes_.size() - line, kChecksumTag.size()) != kChecksumTag)
      bad("no checksum: truncated, or written by an older rodsim");
    const std::string stored = bytes_.substr(bytes_.size() - 17, 16);
    bytes_.resize(bytes_.size() - line);
    if (stored != fmt::format("{:016x}", fnv1a(bytes_)))
      bad("checksum mismatch: the file was changed or damaged after it was written");
  }
  std::string line() {
    const auto end = bytes_.find('\n', pos_);
    if (end == std::string::npos) bad("truncated header");
    std::string s = bytes_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return s;
  }
  bool atEnd() const { return pos_ >= bytes_.size(); }
  double number() {
    if (pos_ + sizeof(double) > bytes_.size()) bad("truncated data");
    double x;
    std::memcpy(&x, bytes_.data() + pos_, sizeof(double));
    pos_ += sizeof(double);
    return x;
  }
  // A count or step: a whole number in [0, max] (a damaged file must not reach a cast).
  long long count(const char* what, double max) {
    const double x = number();
    if (!(x >= 0 && x <= max && x == std::floor(x))) bad(fmt::format("{} = {} is out of range", what, x));
    return static_cast<long long>(x);
  }
  std::vector<double> vector() {
    const double n = number();
    // At most the doubles left in the file: what it allocates is bounded by the file's size.
    if (!(n >= 0) || n > double((bytes_.size() - pos_) / sizeof(double))) bad("corrupt vector length");
    std::vector<double> v(static_cast<std::size_t>(n));
    for (double& x : v) x = number();
    return v;
  }
  Vec eigen() {
    const auto v = vector();
    return Eigen::Map<const Vec>(v.data(), static_cast<Eigen::Index>(v.size()));
  }
  [[noreturn]] void bad(const std::string& what) const {
    throw InputError(fmt::format("{}: not a readable rodsim checkpoint ({})", file_, what));
  }

 private:
  std::string bytes_, file_;
  std::size_t pos_ = 0;
};

}  // namespace

std::string checkpointIdentity(const KernelWorld& world, const TypeRegistry& registry, const std::string& scene_text,
                               const std::vector<std::string>& overrides,
                               const std::vector<std::string>& referenced_files) {
  std::string id = fmt::format("sdk: {}\n", RODSIM_SDK_SIGNATURE);
  for (const auto& [type, library] : world.pluginsInUse())
    for (const auto& p : registry.plugins())
      if (p.library == library) id += fmt::format("type {}: plugin {} {}\n", type, p.name, p.version);
  std::string scene = scene_text;
  for (const auto& o : overrides) scene += "\n--set " + o;
  id += fmt::format("scene: {:016x}\n", fnv1a(scene));
  for (const auto& file : referenced_files) {
    // Hashed in blocks (memory bounded by the block, whatever the file's size); only a regular file
    // is read (a device such as /dev/zero would never end).
    std::error_code ec;
    std::ifstream in;
    if (fs::is_regular_file(file, ec)) in.open(file, std::ios::binary);
    std::uint64_t h = fnv1a({});
    char block[64 * 1024];
    while (in && in.read(block, sizeof block).gcount() > 0) h = fnv1a(std::string_view(block, std::size_t(in.gcount())), h);
    id += fmt::format("file {}: {}\n", escapeLine(file), in.eof() ? fmt::format("{:016x}", h) : "unreadable");
  }
  return id;
}

void writeCheckpoint(const std::string& output_dir, const Checkpoint& c, int keep) {
  const fs::path dir = fs::path(output_dir) / "checkpoints";
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw OutputError(fmt::format("cannot create {}: {}", dir.string(), ec.message()));
  Writer w;
  w.line(kMagic);
  w.line("run " + c.run_id);
  w.line("scene_file " + escapeLine(c.scene_file));
  for (const auto& o : c.overrides) w.line("set " + escapeLine(o));
  std::string id = c.identity;
  while (!id.empty()) {
    const auto end = id.find('\n');
    w.line("identity " + id.substr(0, end));
    id = end == std::string::npos ? "" : id.substr(end + 1);
  }
  const RunSummary& s = c.summary;
  for (double x : {double(c.step), c.t, c.next_frame, c.last_frame_time, double(s.steps), s.sim_time, s.wall_time_s,
                   double(s.newton_iterations), double(s.step_cuts), double(s.steps_with_contact),
                   double(s.contact_iterations), s.contact_wall_ms, s.min_gap})
    w.number(x);
  w.vector(c.frame_times);
  w.vector(s.report_sums);
  w.vector(c.q);
  w.vector(c.v);
  w.vector(c.residual);
  w.number(static_cast<double>(c.states.size()));
  for (const auto& st : c.states) w.vector(st);
  w.number(double(s.steps_cut_for_crossing));
  writeFileAtomic((dir / fmt::format("step_{:012d}.ckpt", c.step)).string(), w.bytes());

  // Keep the newest `keep` (names sort by step).
  std::vector<fs::path> files;
  for (const auto& f : fs::directory_iterator(dir, ec))
    if (f.path().extension() == ".ckpt") files.push_back(f.path());
  std::sort(files.begin(), files.end());
  for (std::size_t i = 0; i + keep < files.size(); ++i) fs::remove(files[i], ec);
}

Checkpoint readLatestCheckpoint(const std::string& output_dir) {
  const fs::path dir = fs::path(output_dir) / "checkpoints";
  std::error_code ec;
  std::vector<fs::path> files;
  for (const auto& f : fs::directory_iterator(dir, ec))
    if (f.path().extension() == ".ckpt") files.push_back(f.path());
  if (files.empty())
    throw InputError(fmt::format("--restart {}: no checkpoint in {} (a run writes them with [output] checkpoint_every, "
                                 "or when interrupted with SIGINT, SIGTERM or SIGUSR1)",
                                 output_dir, dir.string()));
  std::sort(files.begin(), files.end());
  const std::string file = files.back().string();
  Reader r(readUserFile(file, kMaxCheckpointBytes, "checkpoint"), file);
  Checkpoint c;
  if (r.line() != kMagic) r.bad("wrong format line (written by another version of rodsim?)");
  for (std::string l = r.line(); l != "---"; l = r.line()) {
    if (l.rfind("run ", 0) == 0) c.run_id = l.substr(4);
    else if (l.rfind("scene_file ", 0) == 0) c.scene_file = unescapeLine(l.substr(11));
    else if (l.rfind("set ", 0) == 0) c.overrides.push_back(unescapeLine(l.substr(4)));
    else if (l.rfind("identity ", 0) == 0) c.identity += l.substr(9) + "\n";
    else r.bad("unknown header line '" + l + "'");
  }
  // The checkpoint must belong to the run this directory holds: one copied in from another run's
  // directory would continue that run here and mix the two runs' output.
  const PreviousRun owner = readPreviousRun(output_dir);
  if (c.run_id.empty() || c.run_id != owner.run_id)
    throw InputError(fmt::format("--restart {}: {} belongs to run {}, but the directory holds run {} "
                                 "(summary.json); a checkpoint continues only the run that wrote it, in its own "
                                 "output directory",
                                 output_dir, file, c.run_id.empty() ? "?" : c.run_id,
                                 owner.run_id.empty() ? "? (no summary.json)" : owner.run_id));
  // Counts are bounded by what a scene can ask for (1e9 steps, 1e6 frames) and checked against
  // the scene again when the run resumes; halvings of a step multiply its count by at most 2^30.
  constexpr double kMaxSteps = 1e9, kMaxCount = 1e18;
  RunSummary& s = c.summary;
  c.step = r.count("step", kMaxSteps);
  c.t = r.number();
  c.next_frame = r.number();
  c.last_frame_time = r.number();
  s.steps = r.count("steps", kMaxSteps);
  s.sim_time = r.number();
  s.wall_time_s = r.number();
  s.newton_iterations = r.count("newton_iterations", kMaxCount);
  s.step_cuts = r.count("step_cuts", kMaxCount);
  s.steps_with_contact = r.count("steps_with_contact", kMaxSteps);
  s.contact_iterations = r.count("contact_iterations", kMaxCount);
  s.contact_wall_ms = r.number();
  s.min_gap = r.number();
  c.frame_times = r.vector();
  s.report_sums = r.vector();
  c.q = r.eigen();
  c.v = r.eigen();
  c.residual = r.eigen();
  const long long components = r.count("component count", 1e6);
  for (long long i = 0; i < components; ++i) c.states.push_back(r.vector());
  s.steps_cut_for_crossing = r.count("steps_cut_for_crossing", kMaxCount);
  if (!r.atEnd()) r.bad("data after the last field");
  if (s.steps != c.step || !std::isfinite(c.t) || !std::isfinite(c.next_frame) || !std::isfinite(s.sim_time) ||
      !std::isfinite(s.wall_time_s) || c.frame_times.size() > 1000001)
    r.bad("inconsistent counters");
  // A run never writes a NaN or an infinity into its state (each step is checked), so one here was
  // put there: continuing would write it into final.csv. min_gap is +inf until a contact is seen.
  const auto finite = [](const auto& values) { return std::all_of(values.begin(), values.end(), [](double x) { return std::isfinite(x); }); };
  if (!c.q.allFinite() || !c.v.allFinite() || !c.residual.allFinite())
    r.bad("the state (positions, velocities or constraint reactions) holds a NaN or an infinity");
  if (!finite(c.frame_times) || !finite(s.report_sums) || !std::isfinite(c.last_frame_time) ||
      !std::isfinite(s.contact_wall_ms) || std::isnan(s.min_gap))
    r.bad("a time or a counter holds a NaN or an infinity");
  s.run_id = c.run_id;
  return c;
}

}  // namespace rodsim::kernel
