// Registration of the solver_newton plugin: implicit-euler, implicit-midpoint and static.
#include "implicit_midpoint.h"
#include "newton_solvers.h"

#include <rodsim/plugin.h>

RODSIM_PLUGIN("solver_newton", "0.1.0", registry) {
  registry.addSolver<rodsim::newton::ImplicitEulerSolver>();
  registry.addSolver<rodsim::newton::ImplicitMidpointSolver>();
  registry.addSolver<rodsim::newton::StaticSolver>();
}
