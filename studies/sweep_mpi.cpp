// The studies' MPI calls (see sweep_mpi.h): a sweep's ranks share one table of runs that they split
// among themselves and only meet to start together and to let rank 0 merge when all are done; the
// ranks of a fit or an optimization meet around each batch of runs (inverse.h, RunCache).
#include "sweep_mpi.h"

#include <mpi.h>

namespace {

int init(int* rank, int* size) {
  if (const int err = MPI_Init(nullptr, nullptr); err != MPI_SUCCESS) return err;
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  return 0;
}

void barrier() { MPI_Barrier(MPI_COMM_WORLD); }

int maxOverRanks(int value) {
  int result = value;
  MPI_Allreduce(&value, &result, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return result;
}

void finalize() { MPI_Finalize(); }

const RodsimSweepMpi kTable{init, barrier, maxOverRanks, finalize};

}  // namespace

extern "C" __attribute__((visibility("default"))) const RodsimSweepMpi* rodsim_sweep_mpi_v1() { return &kTable; }
