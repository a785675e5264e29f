// What a Simulation and its rods read beyond node positions, velocities, masses, radii and frames.
#include "simulation.h"

namespace rodsim::python {

void bindState(py::module_& /*m*/) {}

}  // namespace rodsim::python
