// Checkpoint files: a text header (format, identity, scene, overrides) then raw doubles.
#include "checkpoint.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace fs = std::filesystem;

namespace rodsim::kernel {

namespace {

constexpr const char* kMagic = "rodsim-checkpoint 1";

std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
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
    return out;
  }

 private:
  std::string text_;
  std::vector<double> data_;
};

class Reader {
 public:
  Reader(std::string bytes, std::string file) : bytes_(std::move(bytes)), file_(std::move(file)) {}
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
  std::vector<double> vector() {
    const double n = number();
    if (!(n >= 0) || n > double(bytes_.size())) bad("corrupt vector length");
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
                               const std::vector<std::string>& overrides) {
  std::string id = fmt::format("sdk: {}\n", RODSIM_SDK_SIGNATURE);
  for (const auto& [type, library] : world.pluginsInUse())
    for (const auto& p : registry.plugins())
      if (p.library == library) id += fmt::format("type {}: plugin {} {}\n", type, p.name, p.version);
  std::string scene = scene_text;
  for (const auto& o : overrides) scene += "\n--set " + o;
  id += fmt::format("scene: {:016x}\n", fnv1a(scene));
  return id;
}

void writeCheckpoint(const std::string& output_dir, const Checkpoint& c, int keep) {
  const fs::path dir = fs::path(output_dir) / "checkpoints";
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw OutputError(fmt::format("cannot create {}: {}", dir.string(), ec.message()));
  Writer w;
  w.line(kMagic);
  w.line(fmt::format("scene_file {}", c.scene_file));
  for (const auto& o : c.overrides) w.line("set " + o);
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
  w.number(double(s.steps_cut_for_crossing));  // appended last (a checkpoint without it reads 0)
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
  std::FILE* f = std::fopen(file.c_str(), "rb");
  if (!f) throw InputError(fmt::format("{}: cannot open the checkpoint", file));
  std::string bytes;
  char buf[1 << 16];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) bytes.append(buf, n);
  std::fclose(f);

  Reader r(std::move(bytes), file);
  Checkpoint c;
  if (r.line() != kMagic) r.bad("wrong format line");
  for (std::string l = r.line(); l != "---"; l = r.line()) {
    if (l.rfind("scene_file ", 0) == 0) c.scene_file = l.substr(11);
    else if (l.rfind("set ", 0) == 0) c.overrides.push_back(l.substr(4));
    else if (l.rfind("identity ", 0) == 0) c.identity += l.substr(9) + "\n";
    else r.bad("unknown header line '" + l + "'");
  }
  c.step = static_cast<long long>(r.number());
  c.t = r.number();
  c.next_frame = r.number();
  c.last_frame_time = r.number();
  RunSummary& s = c.summary;
  s.steps = static_cast<long long>(r.number());
  s.sim_time = r.number();
  s.wall_time_s = r.number();
  s.newton_iterations = static_cast<long long>(r.number());
  s.step_cuts = static_cast<long long>(r.number());
  s.steps_with_contact = static_cast<long long>(r.number());
  s.contact_iterations = static_cast<long long>(r.number());
  s.contact_wall_ms = r.number();
  s.min_gap = r.number();
  c.frame_times = r.vector();
  s.report_sums = r.vector();
  c.q = r.eigen();
  c.v = r.eigen();
  c.residual = r.eigen();
  const double count = r.number();
  if (!(count >= 0 && count < 1e6)) r.bad("corrupt component count");
  for (int i = 0; i < int(count); ++i) c.states.push_back(r.vector());
  if (!r.atEnd()) s.steps_cut_for_crossing = static_cast<long long>(r.number());
  return c;
}

}  // namespace rodsim::kernel
