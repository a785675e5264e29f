// Forces written in Python (rodsim.PythonForce), registered by a Simulation that has any (module-internal).
#pragma once

#include <rodsim/component.h>

#include <pybind11/functional.h>
#include <pybind11/pybind11.h>

#include <map>
#include <string>

namespace rodsim::python {

namespace py = pybind11;

// > 0 while this thread runs a PythonForce function (see Guard).
extern thread_local int t_in_python_force;

// What rodsim.PythonForce hands over: fn(t, x, v) -> None, (n, 3) node forces (N) or a dict with
// "forces", "couples" and the Jacobians "dfdx", "dfdv" (rodsim/forces.py documents the protocol).
struct PyForceSpec {
  std::string name, rod;
  py::function fn;
  bool every_evaluation = true;
  // v is the step's velocity (EvalContext::velocity: implicit in Newton, the current one in explicit
  // solvers) rather than the velocity at the start of the step; required for a "dfdv".
  bool step_velocity = false;
};

// The specs of the Simulation whose world is being built: the registry's factory is a plain
// function pointer, so it finds its callable here by the component's name (the GIL is held).
extern const std::map<std::string, PyForceSpec>* g_building;

// The "python-force" type: its schema and factory, for the Simulation's registry.
Schema pythonForceSchema();
Component* makePythonForce(const Params& p);

// rodsim._PythonForceSpec: what rodsim.PythonForce (rodsim/forces.py) hands to a Simulation.
void bindPythonForceSpec(py::module_& m);

}  // namespace rodsim::python
