// What rodsim.Rod reads beyond node positions, velocities, masses, radii and frames.
#include "simulation.h"

namespace rodsim::python {

void bindRodState(py::class_<RodView>& /*rod*/) {}

}  // namespace rodsim::python
