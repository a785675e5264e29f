// NumPy arrays of a rod's node data (module-internal).
#pragma once

#include <rodsim/rod.h>
#include <rodsim/linalg.h>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstring>
#include <vector>

namespace rodsim::python {

namespace py = pybind11;

// A new C-contiguous float64 array, straight from NumPy's C API (as pybind11 calls it): reading
// `positions` should cost what a NumPy copy costs, and py::array_t's general constructor (shape and
// stride vectors, checks) costs more than the copy of a rod's nodes.
inline py::array newArray(py::ssize_t rows, py::ssize_t cols = -1) {
  auto& api = py::detail::npy_api::get();
  Py_intptr_t dims[2] = {rows, cols};
  PyObject* descr = api.PyArray_DescrFromType_(py::detail::npy_api::NPY_DOUBLE_);
  PyObject* a = api.PyArray_NewFromDescr_(api.PyArray_Type_, descr, cols < 0 ? 1 : 2, dims, nullptr, nullptr, 0, nullptr);
  if (!a) throw py::error_already_set();
  return py::reinterpret_steal<py::array>(a);
}

inline double* arrayData(py::array& a) { return static_cast<double*>(a.mutable_data()); }

// Where a rod's node positions are in the global DOF vector, found once (the layout is fixed for the
// run): reading an array is then a copy without a virtual call per node, one memcpy when the
// positions are contiguous (cosserat).
struct NodeLayout {
  std::vector<int> dofs;  // global x DOF of each node
  bool contiguous = false;
  explicit NodeLayout(const Rod& rod) {
    for (int i = 0; i < rod.numNodes(); ++i) dofs.push_back(rod.globalPositionDof(i));
    contiguous = true;
    for (std::size_t i = 1; i < dofs.size(); ++i) contiguous = contiguous && dofs[i] == dofs[0] + 3 * int(i);
  }
};

// The (n, 3) array of a rod's nodes in a global vector (q or v).
inline py::array nodeArray(const Vec& global, const NodeLayout& layout) {
  const auto n = static_cast<py::ssize_t>(layout.dofs.size());
  py::array a = newArray(n, 3);
  double* out = arrayData(a);
  const double* in = global.data();
  if (layout.contiguous && n > 0) {
    std::memcpy(out, in + layout.dofs[0], sizeof(double) * 3 * std::size_t(n));
    return a;
  }
  for (py::ssize_t i = 0; i < n; ++i) {
    const int d = layout.dofs[std::size_t(i)];
    out[3 * i] = in[d];
    out[3 * i + 1] = in[d + 1];
    out[3 * i + 2] = in[d + 2];
  }
  return a;
}

}  // namespace rodsim::python
