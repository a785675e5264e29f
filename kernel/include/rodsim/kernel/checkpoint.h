// Checkpoints: everything a run needs to continue bit for bit (`rodsim run --restart DIR`).
#pragma once

#include <rodsim/kernel/output.h>

#include <cstdint>
#include <string>
#include <vector>

namespace rodsim::kernel {

struct Checkpoint {
  // What must match on restart: plugin names, versions and SDK signature of every component
  // type in use, a hash of the scene text with its --set overrides, and one of each file the
  // scene references.
  std::string identity;
  std::string run_id;                    // the run that wrote it (summary.json run_id)
  std::string scene_file;                // absolute
  std::vector<std::string> overrides;    // --set values of the original run
  long long step = 0;
  double t = 0, next_frame = 0, last_frame_time = 0;
  std::vector<double> frame_times;
  RunSummary summary;
  Vec q, v, residual;
  std::vector<std::vector<double>> states;  // per component, in KernelWorld order
};

// Writes DIR/checkpoints/step_<k>.ckpt atomically and keeps the newest `keep`.
void writeCheckpoint(const std::string& output_dir, const Checkpoint& c, int keep);
// The newest checkpoint in DIR/checkpoints. InputError if there is none, if it is not a regular
// file of at most kMaxCheckpointBytes, if it is damaged (checksum, counters out of range, a NaN or
// an infinity in the state) or if it belongs to another run than the directory's summary.json.
Checkpoint readLatestCheckpoint(const std::string& output_dir);
inline constexpr std::uintmax_t kMaxCheckpointBytes = std::uintmax_t(1) << 30;  // about 40 million degrees of freedom
// Identity string of a world built from a scene (see Checkpoint::identity): also the content of
// every file the scene references.
std::string checkpointIdentity(const KernelWorld& world, const TypeRegistry& registry, const std::string& scene_text,
                               const std::vector<std::string>& overrides,
                               const std::vector<std::string>& referenced_files);

}  // namespace rodsim::kernel
