#include <rodsim/kernel/run_directory.h>

#include <rodsim/kernel/output.h>
#include <rodsim/run_record/json.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace rodsim::kernel {

namespace {

constexpr const char* kLockFile = ".rodsim.lock";
constexpr const char* kReserveFile = ".rodsim.reserve";

// What a run writes into its directory; a new run removes exactly these, never anything else.
const std::vector<std::string>& runFiles() {
  static const std::vector<std::string> files{"summary.json", "timeseries.csv", "final.csv", "vtk", "checkpoints",
                                              kReserveFile};
  return files;
}

// summary.json ("" when there is none), bounded: a summary is a few KiB, whatever the file holds.
std::string readSummary(const fs::path& file) {
  std::error_code ec;
  if (!fs::exists(file, ec)) return "";
  return readUserFile(file.string(), 1u << 20, "summary.json of the run");
}

// A link where a run writes could make it write outside the output directory (a planted
// OUT/.rodsim.lock -> ~/.bashrc would be truncated): rodsim never writes through one, and never
// removes or replaces one either (a planted link is not another run's file, so --force does not
// apply). Checked with lstat under the lock, before anything is written: every name a run writes,
// their temporary files, and what vtk/ and checkpoints/ hold. The opens use O_NOFOLLOW as well.
void refuseLinks(const fs::path& dir) {
  auto check = [](const fs::path& p) {
    std::error_code ec;
    if (fs::is_symlink(fs::symlink_status(p, ec)))
      throw InputError(fmt::format("{} is a symbolic link; rodsim never writes through links (it could write outside "
                                   "the output directory): remove it, or choose another --output",
                                   p.string()));
  };
  check(dir / kLockFile);
  for (const auto& name : runFiles()) {
    check(dir / name);
    check(dir / (name + ".tmp"));
  }
  for (const char* sub : {"vtk", "checkpoints"}) {
    std::error_code ec;
    if (!fs::is_directory(fs::symlink_status(dir / sub, ec))) continue;
    for (const auto& f : fs::directory_iterator(dir / sub, ec)) check(f.path());
  }
}

std::size_t countCheckpoints(const fs::path& dir) {
  std::error_code ec;
  std::size_t n = 0;
  for (const auto& f : fs::directory_iterator(dir / "checkpoints", ec))
    if (f.path().extension() == ".ckpt") ++n;
  return n;
}

}  // namespace

std::uint64_t fnv1a(std::string_view bytes, std::uint64_t h) {
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string newRunId() {
  std::random_device device;
  const auto now = std::chrono::system_clock::now().time_since_epoch().count();
  std::seed_seq seed{device(), device(), static_cast<unsigned>(now), static_cast<unsigned>(now >> 32),
                     static_cast<unsigned>(getpid())};
  std::mt19937_64 gen(seed);
  return fmt::format("{:016x}", gen());
}

PreviousRun readPreviousRun(const std::string& dir) {
  const std::string json = readSummary(fs::path(dir) / "summary.json");
  run_record::JsonValue summary;
  try {
    if (!json.empty()) summary = run_record::parseJson(json, (fs::path(dir) / "summary.json").string());
  } catch (const run_record::FormatError&) {
    // not a summary rodsim wrote: the fields stay empty, as for a directory without one
  }
  return {summary.text("run_id"), summary.text("identity"), summary.text("status"), summary.text("scene")};
}

RunDirectory::RunDirectory(std::string dir) : dir_(std::move(dir)) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) throw InputError(fmt::format("cannot create the output directory '{}': {}", dir_, ec.message()));
  const std::string lock = (fs::path(dir_) / kLockFile).string();
  // O_NOFOLLOW: a link planted at the lock's name is refused, never followed (the lock is truncated
  // and written below); a hard link (another name of some file) is refused too.
  lock_fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) {
    const int err = errno;
    if (err == ELOOP) refuseLinks(dir_);  // names the link
    throw InputError(fmt::format("cannot write into the output directory '{}': {}", dir_, std::strerror(err)));
  }
  struct stat st {};
  if (::fstat(lock_fd_, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
    ::close(lock_fd_);
    lock_fd_ = -1;
    throw InputError(fmt::format("{} is not a plain file of its own (a device, FIFO or hard link); rodsim writes "
                                 "its lock there: remove it, or choose another --output",
                                 lock));
  }
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    char buf[256];
    const ssize_t n = ::pread(lock_fd_, buf, sizeof buf, 0);
    const std::string holder(buf, n > 0 ? std::size_t(n) : 0);
    ::close(lock_fd_);
    lock_fd_ = -1;
    throw InputError(fmt::format("the output directory '{}' is in use by another run ({}); wait for it to end or "
                                 "choose another --output",
                                 dir_, holder.empty() ? "a process that holds " + lock : holder));
  }
  try {
    refuseLinks(dir_);
  } catch (const InputError&) {
    ::close(lock_fd_);
    lock_fd_ = -1;
    throw;
  }
  const std::string holder = fmt::format("rodsim process {}", getpid());
  if (::ftruncate(lock_fd_, 0) != 0 || ::pwrite(lock_fd_, holder.data(), holder.size(), 0) != ssize_t(holder.size()))
    throw InputError(fmt::format("cannot write into the output directory '{}': {}", dir_, std::strerror(errno)));
}

RunDirectory::~RunDirectory() {
  releaseSpace();
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the lock; the file stays (removing it would race)
}

std::string RunDirectory::startNewRun(const std::string& identity_hash, bool replace) {
  const fs::path dir(dir_);
  std::error_code ec;
  std::vector<std::string> present;
  for (const auto& name : runFiles())
    if (fs::exists(dir / name, ec)) present.push_back(name);
  if (!present.empty() && !replace) {
    const PreviousRun previous = readPreviousRun(dir_);
    const std::size_t checkpoints = countCheckpoints(dir);
    const bool same_setup = !previous.identity.empty() && previous.identity == identity_hash;
    const bool restartable = checkpoints > 0 && previous.status != "ok";
    if (!same_setup || restartable) {
      std::string what = previous.status.empty()
                             ? fmt::format("files of another run ({})", fmt::join(present, ", "))
                             : fmt::format("the output of {} run of {} (status {})",
                                           same_setup ? "an unfinished" : "another", previous.scene, previous.status);
      if (restartable)
        what += fmt::format(", with {} checkpoint(s) that `rodsim run --restart {}` continues", checkpoints, dir_);
      throw InputError(fmt::format("the output directory '{}' holds {}; give another --output, or --force to "
                                   "replace it",
                                   dir_, what));
    }
  }
  for (const auto& name : present) {
    fs::remove_all(dir / name, ec);
    if (ec) throw InputError(fmt::format("cannot remove {} of the previous run: {}", (dir / name).string(), ec.message()));
  }
  return newRunId();
}

void RunDirectory::reserveSpace(std::uintmax_t bytes) {
  const std::string file = (fs::path(dir_) / kReserveFile).string();
  // A fresh file (O_EXCL, O_NOFOLLOW): a link or another name of some file at this name is never
  // written through; the one a run left behind is removed first (unlink removes a link, not its target).
  ::unlink(file.c_str());
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  int err = fd < 0 ? errno : ::posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  if (err == EOPNOTSUPP || err == EINVAL) {  // no fallocate here: write the bytes
    const std::string zeros(64 * 1024, '\0');
    err = 0;
    for (std::uintmax_t done = 0; done < bytes && err == 0; done += zeros.size())
      if (::write(fd, zeros.data(), zeros.size()) != ssize_t(zeros.size())) err = errno;
  }
  if (fd >= 0) ::close(fd);
  if (err != 0) {
    ::unlink(file.c_str());
    throw InputError(fmt::format("the output directory '{}' has no room for the {} KiB a run keeps for its last "
                                 "files: {}",
                                 dir_, bytes / 1024, std::strerror(err)));
  }
  reserved_ = true;
}

void RunDirectory::releaseSpace() {
  if (!reserved_) return;
  ::unlink((fs::path(dir_) / kReserveFile).c_str());
  reserved_ = false;
}

}  // namespace rodsim::kernel
