// Registration of the solver_newton plugin: implicit-euler, implicit-midpoint, implicit-bdf2 and static.
#include "implicit_bdf2.h"
#include "implicit_midpoint.h"
#include "newton_solvers.h"

#include <rodsim/plugin.h>

RODSIM_PLUGIN("solver_newton", "0.1.0", registry) {
  registry.addSolver<rodsim::newton::ImplicitEulerSolver>();
  registry.addSolver<rodsim::newton::ImplicitMidpointSolver>();
  registry.addSolver<rodsim::newton::ImplicitBdf2Solver>();
  registry.addSolver<rodsim::newton::StaticSolver>();
}
