#include <rodsim/kernel/output.h>

#include <fmt/format.h>
#include <rodsim/run_record/csv.h>
#include <rodsim/run_record/summary.h>
#include <rodsim/vtp/collection.h>
#include <rodsim/vtp/polydata.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace rodsim::kernel {

void writeFileAtomic(const std::string& path, const std::string& text) {
  // A full disk or a vanished directory stops the run cleanly (OutputError) and leaves the
  // previous version of the file intact.
  // The temporary is a fresh file (O_EXCL, O_NOFOLLOW): whatever sits at its name, a link
  // included, is removed (unlink removes a link, not its target), never written through. The
  // rename then replaces `path` itself, also when `path` is a link.
  const std::string tmp = path + ".tmp";
  ::unlink(tmp.c_str());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  std::FILE* f = fd < 0 ? nullptr : ::fdopen(fd, "wb");
  if (!f) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    throw OutputError(fmt::format("cannot write {}: {}", tmp, std::strerror(err)));
  }
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0;
  const int err = errno;
  if (std::fclose(f) != 0 || !ok) {
    std::remove(tmp.c_str());
    throw OutputError(fmt::format("cannot write {}: {}", path, std::strerror(ok ? errno : err)));
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) throw OutputError(fmt::format("cannot write {}: {}", path, ec.message()));
}

namespace {

constexpr std::size_t kRowBufferBytes = 64 * 1024;
constexpr auto kRowFlushInterval = std::chrono::seconds(1);  // rows reach the file at least this often

}  // namespace

void OutputWriter::openTimeseries(bool truncate) {
  const std::string path = (fs::path(dir_) / "timeseries.csv").string();
  // O_NOFOLLOW: a link at this name (RunDirectory refuses one before the run) is never written through.
  timeseries_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (truncate ? O_TRUNC : 0), 0644);
  if (timeseries_ < 0) throw InputError(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  const off_t end = ::lseek(timeseries_, 0, SEEK_END);
  timeseries_size_ = end > 0 ? static_cast<std::uintmax_t>(end) : 0;
  last_flush_ = std::chrono::steady_clock::now();
}

void OutputWriter::flushRows() {
  if (timeseries_ < 0 || rows_.empty()) return;
  std::size_t written = 0;
  while (written < rows_.size()) {
    const ssize_t n = ::write(timeseries_, rows_.data() + written, rows_.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : ENOSPC;
      // Keep the whole rows that made it; cut a partial one off, so every row in the file is whole.
      const auto last_newline = rows_.rfind('\n', written == 0 ? std::string::npos : written - 1);
      const std::uintmax_t whole = written == 0 || last_newline == std::string::npos ? 0 : last_newline + 1;
      timeseries_size_ += whole;
      if (::ftruncate(timeseries_, static_cast<off_t>(timeseries_size_)) == 0)
        ::lseek(timeseries_, static_cast<off_t>(timeseries_size_), SEEK_SET);
      rows_.clear();  // the run stops here; what the disk still holds is kept for summary.json and final.csv
      throw OutputError(fmt::format("cannot write {}/timeseries.csv: {}", dir_, std::strerror(err)));
    }
    written += static_cast<std::size_t>(n);
  }
  timeseries_size_ += rows_.size();
  rows_.clear();
  last_flush_ = std::chrono::steady_clock::now();
}

OutputWriter::OutputWriter(const Scene& scene, std::string dir, std::vector<std::string> probe_names)
    : scene_(scene), dir_(std::move(dir)) {
  std::error_code ec;
  if (scene_.output.vtk) fs::create_directories(fs::path(dir_) / "vtk", ec);
  if (ec) throw InputError(fmt::format("cannot create {}/vtk: {}", dir_, ec.message()));
  if (scene_.output.vtk) writeObstacles();
  if (scene_.output.csv) {
    openTimeseries(true);
    rows_ = run_record::timeseriesHeader(probe_names);
    flushRows();
  }
}

OutputWriter::OutputWriter(const Scene& scene, std::string dir, long long rows_kept, long long last_row_step,
                           std::vector<double> frame_times)
    : scene_(scene), dir_(std::move(dir)), frame_times_(std::move(frame_times)) {
  std::error_code ec;
  if (scene_.output.vtk) {
    for (std::size_t k = 0; k < frame_times_.size(); ++k)
      if (!fs::exists(fs::path(dir_) / "vtk" / fmt::format("frame_{}.vtp", k), ec))
        throw InputError(fmt::format("--restart {}: vtk/frame_{}.vtp, written before the checkpoint, is missing", dir_, k));
    for (std::size_t k = frame_times_.size();; ++k) {
      const fs::path f = fs::path(dir_) / "vtk" / fmt::format("frame_{}.vtp", k);
      if (!fs::exists(f, ec)) break;
      fs::remove(f, ec);
    }
    writePvd();
  }
  if (scene_.output.csv) {
    // Keep the header and the rows up to the checkpoint (it flushed them), drop what came after.
    const fs::path path = fs::path(dir_) / "timeseries.csv";
    const auto text = run_record::timeseriesRowsUpTo(path, rows_kept, last_row_step);
    if (!text)
      throw InputError(fmt::format("--restart {}: timeseries.csv does not hold the rows up to step {} that the "
                                   "checkpoint was written after",
                                   dir_, last_row_step));
    writeFileAtomic(path.string(), *text);
    openTimeseries(false);
  }
}

OutputWriter::~OutputWriter() {
  if (timeseries_ < 0) return;
  try {
    flushRows();
  } catch (const OutputError&) {
    // finish() flushed and reported already; this is the unwinding path of an earlier error
  }
  ::close(timeseries_);
}

void OutputWriter::writeRow(long long step, double t, int iterations, double wall_ms, const ContactStats& contacts,
                            double kinetic, double elastic, const std::vector<double>& probes,
                            std::chrono::steady_clock::time_point now) {
  if (timeseries_ < 0) return;
  run_record::appendTimeseriesRow(rows_, step, t, iterations, wall_ms, contacts.active, contacts.min_gap, kinetic, elastic, probes);
  if (rows_.size() >= kRowBufferBytes || now - last_flush_ >= kRowFlushInterval)
    flushRows();
}

void OutputWriter::writeFrame(KernelWorld& world) {
  if (!scene_.output.vtk) return;
  const std::size_t k = frame_times_.size();
  const Vec& q = world.q();
  const Vec& v = world.v();
  vtp::PolyLines frame;
  frame.scalars = "radius";
  frame.vectors = "velocity";
  frame.point_data = {{"radius", 1, {}, 9}, {"velocity", 3, {}, 9}, {"director_m1", 3, {}, 6}, {"twist_angle", 1, {}, 9}};
  vtp::PointArray& radius = frame.point_data[0];
  vtp::PointArray& velocity = frame.point_data[1];
  vtp::PointArray& director = frame.point_data[2];
  vtp::PointArray& twist = frame.point_data[3];
  std::int64_t total = 0;
  for (int r = 0; r < world.numRods(); ++r) {
    Rod& rod = world.rod(r);
    rod.setConfiguration(q.segment(rod.dofOffset(), rod.numDofs()));
    const int n = rod.numNodes();
    for (int i = 0; i < n; ++i) {
      const int d = rod.globalPositionDof(i);
      frame.points.insert(frame.points.end(), {q[d], q[d + 1], q[d + 2]});
      velocity.values.insert(velocity.values.end(), {v[d], v[d + 1], v[d + 2]});
      radius.values.push_back(rod.nodeRadius(i));
      // Per-node material director m1: that of the edge starting here (the last node repeats).
      Vec3 t, m1, m2;
      rod.materialFrame(std::min(i, n - 2), t, m1, m2);
      director.values.insert(director.values.end(), {m1.x(), m1.y(), m1.z()});
      const int td = rod.twistDof(std::min(i, n - 2));
      twist.values.push_back(td >= 0 ? q[rod.dofOffset() + td] : 0.0);
      frame.connectivity.push_back(total + i);
    }
    total += n;
    frame.offsets.push_back(total);
  }
  const auto encoding = scene_.output.vtk_binary ? vtp::Encoding::AppendedZlib : vtp::Encoding::Ascii;
  writeFileAtomic((fs::path(dir_) / "vtk" / fmt::format("frame_{}.vtp", k)).string(), vtp::writePolyLines(frame, encoding));
  frame_times_.push_back(world.time());
  writePvd();
}

void OutputWriter::writeObstacles() {
  if (scene_.obstacles.empty()) return;
  std::string text(run_record::kObstaclesHeader);
  for (const ObstacleSpec& spec : scene_.obstacles) {
    const Obstacle& o = spec.obstacle;
    const char* shape = o.shape == Obstacle::Shape::Plane ? "plane" : o.shape == Obstacle::Shape::Sphere ? "sphere" : "cylinder";
    const Vec3 point = o.shape == Obstacle::Shape::Sphere ? o.center : o.origin;
    const Vec3 direction = o.shape == Obstacle::Shape::Plane ? o.normal : o.shape == Obstacle::Shape::Cylinder ? o.axis : Vec3::Zero();
    run_record::appendObstacleRow(text, o.name, shape, point.x(), point.y(), point.z(), direction.x(), direction.y(),
                                  direction.z(), o.radius);
  }
  writeFileAtomic((fs::path(dir_) / "vtk" / "obstacles.csv").string(), text);
}

void OutputWriter::writePvd() {
  std::vector<vtp::CollectionEntry> frames;
  frames.reserve(frame_times_.size());
  for (std::size_t k = 0; k < frame_times_.size(); ++k) frames.push_back({frame_times_[k], fmt::format("frame_{}.vtp", k)});
  writeFileAtomic((fs::path(dir_) / "vtk" / (scene_.name + ".pvd")).string(), vtp::writeCollection(frames));
}

void OutputWriter::writeFinal(KernelWorld& world) {
  if (!scene_.output.csv) return;
  std::string text(run_record::kFinalHeader);
  const Vec& q = world.q();
  for (int r = 0; r < world.numRods(); ++r) {
    Rod& rod = world.rod(r);
    for (int i = 0; i < rod.numNodes(); ++i) {
      const int d = rod.globalPositionDof(i);
      run_record::appendFinalRow(text, rod.name(), i, q[d], q[d + 1], q[d + 2]);
    }
  }
  writeFileAtomic((fs::path(dir_) / "final.csv").string(), text);
}

void OutputWriter::writeSummary(const RunSummary& s, const KernelWorld& world) {
  writeFileAtomic((fs::path(dir_) / "summary.json").string(), summaryText(s, world));
}

std::string OutputWriter::summaryText(const RunSummary& s, const KernelWorld& world) const {
  const double steps = static_cast<double>(std::max<long long>(s.steps, 1));
  const double csteps = static_cast<double>(std::max<long long>(s.steps_with_contact, 1));
  run_record::Summary out;
  out.name = scene_.name;
  out.scene = scene_.file;
  out.status = s.status;
  out.reason = s.reason;
  out.run_id = s.run_id;
  out.identity = s.identity;
  out.steps = s.steps;
  out.sim_time = s.sim_time;
  out.wall_time_s = s.wall_time_s;
  out.newton_iterations = s.newton_iterations;
  out.aipts = s.steps ? s.newton_iterations / steps : 0.0;
  out.step_cuts = s.step_cuts;
  out.steps_cut_for_crossing = s.steps_cut_for_crossing;
  out.steps_with_contact = s.steps_with_contact;
  out.contact_iterations = s.contact_iterations;
  out.aipts_contact = s.steps_with_contact ? s.contact_iterations / csteps : 0.0;
  out.atpts_ms = s.steps ? 1000.0 * s.wall_time_s / steps : 0.0;
  out.contact_wall_s = s.contact_wall_ms / 1000.0;
  out.atpts_contact_ms = s.steps_with_contact ? s.contact_wall_ms / csteps : 0.0;
  out.min_gap = s.min_gap;
  for (const auto& [type, lib] : world.pluginsInUse()) out.plugins.emplace_back(type, lib);
  // Mean of each report column over the steps: the contacts' first, then the forces'.
  const auto columns = world.reportColumns();
  const std::size_t n_contact = static_cast<std::size_t>(world.numContactReportColumns());
  for (std::size_t i = 0; i < columns.size() && i < s.report_sums.size(); ++i)
    (i < n_contact ? out.contact_report : out.force_report)
        .emplace_back(columns[i], s.report_sums[i] / double(std::max<long long>(1, s.report_rows)));
  out.version = RODSIM_SDK_VERSION;
  return run_record::summaryText(out);
}

}  // namespace rodsim::kernel
