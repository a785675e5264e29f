// The MPI ranks of a study launched by mpirun: rodsim sweep shares its table of rows among them,
// rodsim fit and rodsim optimize share each batch of runs. The one MPI module (sweep_mpi.h,
// librodsim-sweep-mpi.so) is opened with dlopen only when mpirun launched the process, so nothing
// else links or loads MPI.
#pragma once

#include "sweep_mpi.h"

#include <optional>
#include <string>
#include <utility>

namespace rodsim::studies {

// Launched by mpirun (Open MPI) or another PMI launcher: the rank and size it says, else nullopt.
std::optional<std::pair<int, int>> launcherRank();

// The MPI module; InputError when this rodsim has none (`verb` names the command in the message).
const RodsimSweepMpi* openMpi(const std::string& executable, int size, const std::string& verb);

// Blocks SIGCHLD, SIGINT and SIGTERM in this thread (the child-process engine waits for them with
// sigtimedwait): before MPI_Init, so that the threads MPI starts inherit the mask and none of them
// takes a signal meant for the engine.
void blockEngineSignals();

// The ranks of rodsim fit or optimize: one, unless launched by mpirun with more (then MPI is
// initialized here, after blockEngineSignals). Every rank runs the same optimizer on the same
// results (the runs are deterministic and read back from the shared output directory), and the
// ranks split each batch's runs (RunCache); rank 0 writes the results and prints.
class StudyRanks {
 public:
  StudyRanks(const std::string& executable, const std::string& verb);
  // MPI_Finalize, unless an exception is leaving (the launcher then ends the other ranks).
  ~StudyRanks();
  StudyRanks(const StudyRanks&) = delete;
  StudyRanks& operator=(const StudyRanks&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }
  bool root() const { return rank_ == 0; }
  // The largest `value` over the ranks; returns when every rank called it.
  int maxOverRanks(int value) const { return comm_ ? comm_->max_over_ranks(value) : value; }
  void barrier() const {
    if (comm_) comm_->barrier();
  }

 private:
  const RodsimSweepMpi* comm_ = nullptr;
  int rank_ = 0, size_ = 1;
};

}  // namespace rodsim::studies
