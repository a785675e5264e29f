// The only MPI the project uses: rodsim sweep, fit and optimize under mpirun. It lives in a library
// of its own (librodsim-sweep-mpi.so, built when configure finds MPI) that they open with dlopen
// (study_ranks.h) only when launched by mpirun, so the kernel, the plugins and every other command
// never load MPI (no start-up cost, no dependency) and rodsim builds without MPI.
#pragma once

extern "C" {

// Version 1 of the table of functions the library exports as rodsim_sweep_mpi_v1().
struct RodsimSweepMpi {
  // MPI_Init; this process's rank and the number of ranks. Returns 0, or an MPI error code.
  int (*init)(int* rank, int* size);
  void (*barrier)(void);
  // The largest `value` over all ranks (the sweep's exit status).
  int (*max_over_ranks)(int value);
  void (*finalize)(void);
};

typedef const struct RodsimSweepMpi* (*RodsimSweepMpiEntry)(void);
}

#define RODSIM_SWEEP_MPI_ENTRY "rodsim_sweep_mpi_v1"
