// The output directory of one run: who may write it, and whose files it holds.
//
// A run owns its directory while it writes: an exclusive lock (flock on DIR/.rodsim.lock, held
// until the process ends, also when it is killed) refuses a second run into the same directory,
// naming the process that holds it. Each run has a random id, written into summary.json and every
// checkpoint, so a restart continues only the run the directory belongs to. A new run into a
// directory that holds another run's files refuses unless told to replace them (--force); rerunning
// the same setup (same identity) replaces its own finished output. A small reserve file keeps room
// on the disk for summary.json and final.csv when the disk fills during the run.
#pragma once

#include <rodsim/kernel/scene.h>

#include <cstdint>
#include <string>

namespace rodsim::kernel {

// What summary.json says about the run that wrote a directory (empty strings: no summary.json).
struct PreviousRun {
  std::string run_id, identity, status, scene;
};
PreviousRun readPreviousRun(const std::string& dir);

class RunDirectory {
 public:
  // Creates the directory if needed and takes its lock. InputError (exit 2, before anything is
  // written) when it cannot be created or written, or another process holds it.
  explicit RunDirectory(std::string dir);
  ~RunDirectory();
  RunDirectory(const RunDirectory&) = delete;
  RunDirectory& operator=(const RunDirectory&) = delete;

  // For a new run with this identity hash: refuses (InputError) if the directory holds the files of
  // another run (another identity, or an unfinished run with checkpoints) unless `replace`; removes
  // the previous run's files otherwise. Returns the new run's id.
  std::string startNewRun(const std::string& identity_hash, bool replace);

  // Keeps `bytes` of disk space for the files a run writes when it ends; InputError if the disk
  // does not have them now.
  void reserveSpace(std::uintmax_t bytes);
  // Gives the reserved space back (before the last files are written; idempotent).
  void releaseSpace();

  const std::string& path() const { return dir_; }

 private:
  std::string dir_;
  int lock_fd_ = -1;
  bool reserved_ = false;
};

// A fresh random run id: 16 hex digits.
std::string newRunId();

// FNV-1a, 64 bit: identities and checkpoint checksums (detects any change of one byte; not a
// defence against deliberate tampering).
std::uint64_t fnv1a(std::string_view bytes, std::uint64_t h = 1469598103934665603ull);

}  // namespace rodsim::kernel
