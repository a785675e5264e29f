// rodsim.Rod: a rod of a Simulation; each property is a new NumPy array with the state now.
#include "simulation.h"

namespace rodsim::python {

void bindRod(py::module_& m) {
  py::class_<RodView>(m, "Rod", "A rod of a Simulation: every property is a new array with the state now.")
      .def_property_readonly("name", [](const RodView& r) { Guard g(r.sim->mutex()); return r.rod().name(); })
      .def_property_readonly("model", [](const RodView& r) { Guard g(r.sim->mutex()); return r.sim->scene().rods[r.index].type; })
      .def_property_readonly("num_nodes", [](const RodView& r) { Guard g(r.sim->mutex()); return r.rod().numNodes(); })
      .def_property_readonly("positions", [](const RodView& r) { Guard g(r.sim->mutex()); return nodeArray(r.sim->session().world().q(), *r.layout); },
                             "(n, 3) node positions, m")
      .def_property_readonly("velocities", [](const RodView& r) { Guard g(r.sim->mutex()); return nodeArray(r.sim->session().world().v(), *r.layout); },
                             "(n, 3) node velocities, m/s")
      .def_property_readonly("mass", [](const RodView& r) {
            Guard g(r.sim->mutex());
            const Vec& m = r.sim->session().world().mass();
            py::array a = newArray(py::ssize_t(r.layout->dofs.size()));
            double* out = arrayData(a);
            for (std::size_t i = 0; i < r.layout->dofs.size(); ++i) out[i] = m[r.layout->dofs[i]];
            return a;
          }, "(n,) lumped node masses, kg")
      .def_property_readonly("radius", [](const RodView& r) {
            Guard g(r.sim->mutex());
            const Rod& rod = r.rod();
            py::array a = newArray(rod.numNodes());
            double* out = arrayData(a);
            for (int i = 0; i < rod.numNodes(); ++i) out[i] = rod.nodeRadius(i);
            return a;
          }, "(n,) node radii, m")
      .def_property_readonly("directors", [](const RodView& r) {
            // Rows d1, d2, d3 of each edge's material frame (m1, m2, tangent) in the last configuration the
            // rod was set to: the committed one after a step.
            Guard g(r.sim->mutex());
            const Rod& rod = r.rod();
            const int e = rod.numEdges();
            py::array_t<double> a({e, 3, 3});
            double* out = a.mutable_data();
            for (int k = 0; k < e; ++k) {
              Vec3 t, m1, m2;
              rod.materialFrame(k, t, m1, m2);
              for (int c = 0; c < 3; ++c) {
                out[9 * k + c] = m1[c];
                out[9 * k + 3 + c] = m2[c];
                out[9 * k + 6 + c] = t[c];
              }
            }
            return a;
          }, "(n-1, 3, 3) material frames of the edges: rows d1, d2, d3 (d3 the tangent)");
}

}  // namespace rodsim::python
