#include "explicit_solvers.h"

#include <rodsim/plugin.h>

RODSIM_PLUGIN("solver_explicit", "0.1.0", registry) {
  registry.addSolver<rodsim::explicit_solver::PositionVerlet>();
  registry.addSolver<rodsim::explicit_solver::Pefrl>();
}
