#include "study_ranks.h"

#include <rodsim/kernel/scene.h>  // InputError

#include <fmt/format.h>

#include <csignal>
#include <cstdlib>
#include <dlfcn.h>
#include <exception>
#include <filesystem>
#include <stdexcept>
#include <vector>

namespace fs = std::filesystem;

namespace rodsim::studies {

std::optional<std::pair<int, int>> launcherRank() {
  for (const auto& [rank, size] : {std::pair{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"}, std::pair{"PMI_RANK", "PMI_SIZE"}}) {
    const char* r = std::getenv(rank);
    const char* n = std::getenv(size);
    if (r && n) return std::pair{std::atoi(r), std::atoi(n)};
  }
  return std::nullopt;
}

const RodsimSweepMpi* openMpi(const std::string& executable, int size, const std::string& verb) {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("RODSIM_SWEEP_MPI_LIBRARY")) candidates.push_back(env);
  candidates.push_back((fs::path(executable).parent_path().parent_path() / "lib" / "rodsim" / "librodsim-sweep-mpi.so").string());
#ifdef RODSIM_SWEEP_MPI_LIBRARY
  candidates.push_back(RODSIM_SWEEP_MPI_LIBRARY);
#endif
  std::string errors;
  for (const auto& path : candidates) {
    if (!fs::exists(path)) continue;
    // RTLD_GLOBAL: Open MPI's own components, opened by libmpi, resolve their symbols against it.
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
      errors += fmt::format("; {}", dlerror());
      continue;
    }
    if (auto entry = reinterpret_cast<RodsimSweepMpiEntry>(dlsym(lib, RODSIM_SWEEP_MPI_ENTRY))) return entry();
    errors += fmt::format("; {}: no {}", path, RODSIM_SWEEP_MPI_ENTRY);
  }
  throw kernel::InputError(fmt::format("rodsim {} was launched by mpirun ({} ranks) but this rodsim has no MPI support "
                                       "(librodsim-sweep-mpi.so not found or not loadable{}); configure with MPI installed "
                                       "(Debian: openmpi-bin libopenmpi-dev), or run without mpirun (--jobs N)",
                                       verb, size, errors));
}

void blockEngineSignals() {
  sigset_t watched;
  sigemptyset(&watched);
  for (int sig : {SIGCHLD, SIGINT, SIGTERM}) sigaddset(&watched, sig);
  pthread_sigmask(SIG_BLOCK, &watched, nullptr);
}

StudyRanks::StudyRanks(const std::string& executable, const std::string& verb) {
  const auto launcher = launcherRank();
  if (!launcher || launcher->second <= 1) return;
  comm_ = openMpi(executable, launcher->second, verb);
  blockEngineSignals();
  if (comm_->init(&rank_, &size_) != 0)
    throw std::runtime_error(fmt::format("rodsim {}: MPI_Init failed", verb));  // the machine, not the input: exit 3
}

StudyRanks::~StudyRanks() {
  if (comm_ && std::uncaught_exceptions() == 0) comm_->finalize();
}

}  // namespace rodsim::studies
