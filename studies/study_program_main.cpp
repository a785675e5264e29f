// main() of rodsim-fit and rodsim-optimize (study_program.h): `rodsim fit ARGS...` becomes
// `rodsim-fit --rodsim RODSIM ARGS...`, RODSIM being the rodsim that its child runs use.
// RODSIM_STUDY_COMMAND (a compile definition) names the command: fitCommand or optimizeCommand.
#include "fit.h"
#include "optimize.h"
#include "study_ranks.h"
#include <rodsim/kernel/scene.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 3 || std::strcmp(argv[1], "--rodsim") != 0) {
    std::fprintf(stderr, "%s: started by rodsim (`rodsim fit`, `rodsim optimize`), not directly\n", argv[0]);
    return 2;
  }
  try {
    return rodsim::studies::RODSIM_STUDY_COMMAND(std::vector<std::string>(argv + 3, argv + argc), argv[2]);
  } catch (const rodsim::kernel::InputError& e) {
    // Under mpirun every rank finds the same error in the same files: rank 0 reports it.
    if (const auto launcher = rodsim::studies::launcherRank(); !launcher || launcher->first == 0)
      std::fprintf(stderr, "rodsim: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rodsim: internal error: %s\n", e.what());
    return 3;
  }
}
