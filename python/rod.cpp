// rodsim.Rod: a rod of a Simulation; each property is a new NumPy array with the state now, and the
// state setters (positions, velocities, directors, angular_velocities) between steps.
#include "simulation.h"

#include <Eigen/Geometry>

#include <cstdio>

namespace rodsim::python {

namespace {

// ----------------------------------------------------------------------------------- setters
//
// Setting state between steps writes the committed state the way a solver's step ends: new q and v
// into the World and KernelWorld::commitStep at the current time, which sets every rod's
// configuration, commits it (DER: the reference frames follow the new tangents by parallel
// transport, so a translation leaves them as they were) and rebases rotation vectors (Cosserat: the
// element frames become the committed ones, their rotation DOFs zero). A checkpoint's restore writes
// the same state through KernelWorld::restore; the solvers and contacts read the state from the
// World at the start of every step (q_n, v_n, the swept check's kept start), so the next step starts
// from what was set. Prescribed DOFs (clamps, rotations) are set again by their constraints at the
// next step.

// The value as a C-contiguous float64 array of `shape`: a TypeError for what is not numbers (a
// complex array would lose its imaginary part), a ValueError for another shape or a value that is
// not finite, naming the rod, the quantity and the first bad index.
py::array_t<double> stateArray(py::handle value, const std::vector<py::ssize_t>& shape, const Rod& rod,
                               const char* what) {
  const std::string who = "rod '" + rod.name() + "': " + what;
  py::array given = py::array::ensure(value);
  if (!given) throw py::type_error(who + ": expected a NumPy array or nested sequences of numbers");
  const char kind = given.dtype().kind();
  if (kind != 'f' && kind != 'i' && kind != 'u' && kind != 'b')
    throw py::type_error(who + ": expected real numbers, found dtype " + std::string(py::str(given.dtype())));
  auto a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(given);
  if (!a) throw py::type_error(who + ": cannot convert to float64");
  auto shapeText = [](const py::ssize_t* dims, py::ssize_t nd) {
    std::string t = "(";
    for (py::ssize_t i = 0; i < nd; ++i) t += (i ? ", " : "") + std::to_string(dims[i]);
    return t + (nd == 1 ? ",)" : ")");
  };
  bool same = a.ndim() == py::ssize_t(shape.size());
  for (std::size_t i = 0; same && i < shape.size(); ++i) same = a.shape(py::ssize_t(i)) == shape[i];
  if (!same)
    throw py::value_error(who + " must have shape " + shapeText(shape.data(), py::ssize_t(shape.size())) + ", found " +
                          shapeText(a.shape(), a.ndim()));
  const double* d = a.data();
  for (py::ssize_t k = 0; k < a.size(); ++k) {
    if (std::isfinite(d[k])) continue;
    std::string index;
    py::ssize_t rest = k;
    std::vector<py::ssize_t> idx(shape.size());
    for (std::size_t i = shape.size(); i-- > 0;) {
      idx[i] = rest % shape[i];
      rest /= shape[i];
    }
    for (std::size_t i = 0; i < idx.size(); ++i) index += (i ? ", " : "") + std::to_string(idx[i]);
    throw py::value_error(who + "[" + index + "] is " + (std::isnan(d[k]) ? "NaN" : "infinite") + "; the state must be finite");
  }
  return a;
}

// Commits q and v (copies of the World's, changed) as the state at the current time.
void commitState(RodView& r, const Vec& q, const Vec& v) {
  r.sim->requireOpen();
  KernelWorld& w = r.sim->session().world();
  w.commitStep(w.time(), q, v, w.residual());
}

// New positions `q` (global) must leave every edge a length, and a rod whose frames follow their edges
// by parallel transport (DER: no rotation-vector frames) no edge reversed: the transport from a
// tangent to its opposite is undefined (the frame would come out NaN), and near it round-off grows
// as 1 / (1 + t_old . t_new).
void checkEdges(const RodView& r, const Vec& q) {
  const Rod& rod = r.rod();
  const bool transported = rod.as<RodRotationVectors>() == nullptr;
  for (int e = 0; e < rod.numEdges(); ++e) {
    const Vec3 edge = q.segment<3>(rod.globalPositionDof(e + 1)) - q.segment<3>(rod.globalPositionDof(e));
    const double length = edge.norm();
    if (!(length > 0))
      throw py::value_error("rod '" + rod.name() + "': positions: nodes " + std::to_string(e) + " and " +
                            std::to_string(e + 1) + " coincide (edge " + std::to_string(e) + " has no length)");
    if (!transported) continue;
    Vec3 t, m1, m2;
    rod.materialFrame(e, t, m1, m2);
    if (1.0 + t.dot(edge / length) < 1e-6)
      throw py::value_error("rod '" + rod.name() + "': positions: edge " + std::to_string(e) +
                            " is reversed (its tangent turns by 180 degrees), and its frame follows the tangent by "
                            "parallel transport, which is undefined for a reversal: set the positions in two turns "
                            "of less than 180 degrees each");
  }
}

void setNodeArray(RodView& r, py::handle value, bool velocities) {
  Guard g(r.sim->mutex());
  r.sim->requireOpen();
  const Rod& rod = r.rod();
  auto a = stateArray(value, {py::ssize_t(rod.numNodes()), 3}, rod, velocities ? "velocities" : "positions");
  KernelWorld& w = r.sim->session().world();
  Vec q = w.q(), v = w.v();
  Vec& target = velocities ? v : q;
  const double* d = a.data();
  for (std::size_t i = 0; i < r.layout->dofs.size(); ++i)
    for (int c = 0; c < 3; ++c) target[r.layout->dofs[i] + c] = d[3 * i + c];
  if (!velocities) checkEdges(r, q);
  commitState(r, q, v);
}

// Largest |R R^T - I| entry: how far rows d1, d2, d3 are from an orthonormal frame.
double orthonormalityError(const Mat3& R) { return (R * R.transpose() - Mat3::Identity()).cwiseAbs().maxCoeff(); }

constexpr double kFrameTolerance = 1e-10;    // directors: orthonormal and right-handed to this
constexpr double kTangentTolerance = 1e-8;  // DER: d3 along the edge (positions set to the same doubles)

void setDirectors(RodView& r, py::handle value) {
  Guard g(r.sim->mutex());
  r.sim->requireOpen();
  Rod& rod = r.rod();
  const int ne = rod.numEdges();
  auto a = stateArray(value, {py::ssize_t(ne), 3, 3}, rod, "directors");
  const std::string who = "rod '" + rod.name() + "': directors";
  std::vector<Mat3> R(static_cast<std::size_t>(ne));
  for (int e = 0; e < ne; ++e) {
    for (int i = 0; i < 3; ++i)
      for (int c = 0; c < 3; ++c) R[e](i, c) = a.at(e, i, c);  // rows d1, d2, d3
    const double err = orthonormalityError(R[e]);
    char buf[160];
    if (err > kFrameTolerance) {
      std::snprintf(buf, sizeof buf, "[%d] is not orthonormal: |R R^T - I| = %.3g > %.0e (rows d1, d2, d3)", e, err,
                    kFrameTolerance);
      throw py::value_error(who + buf);
    }
    if (R[e].determinant() < 0) throw py::value_error(who + "[" + std::to_string(e) + "] is left-handed: d3 must be d1 x d2");
  }
  KernelWorld& w = r.sim->session().world();
  Vec q = w.q(), v = w.v();
  const int off = rod.dofOffset();
  if (rod.as<RodRotationVectors>()) {
    // Element frames Q = exp(-[phi]) Qc (rows d1, d2, d3) from rotation vectors phi relative to the
    // committed frames Qc (plugins/rod_cosserat/README.md): the phi that gives R from the current
    // frame Q0 = exp(-[phi0]) Qc is exp(-[phi]) = R Q0^T exp(-[phi0]). The commit then makes R the
    // committed frames and phi zero, as after a step.
    for (int e = 0; e < ne; ++e) {
      const std::vector<int> f = rod.frameDofs(e);
      if (f.size() != 3) throw py::value_error(who + ": the model's frame DOFs are not rotation vectors");
      const Vec3 phi0(q[off + f[0]], q[off + f[1]], q[off + f[2]]);
      Vec3 t, m1, m2;
      rod.materialFrame(e, t, m1, m2);
      Mat3 Q0;
      Q0.row(0) = m1.transpose();
      Q0.row(1) = m2.transpose();
      Q0.row(2) = t.transpose();
      const Mat3 expMinusPhi0 =
          phi0.norm() > 0 ? Eigen::AngleAxisd(-phi0.norm(), phi0.normalized()).toRotationMatrix() : Mat3::Identity();
      const Eigen::AngleAxisd turn(Mat3(R[e] * Q0.transpose() * expMinusPhi0));
      const Vec3 phi = -turn.angle() * turn.axis();
      for (int c = 0; c < 3; ++c) q[off + f[c]] = phi[c];
    }
  } else {
    // DER-like: the tangent is the edge's direction and the frame turns about it by the twist angle;
    // d3 has no freedom of its own and must be the edge tangent of the positions now (set positions
    // first), d1 gives the twist angle (Rod::twistForDirector, from the current reference frame).
    for (int e = 0; e < ne; ++e) {
      if (rod.twistDof(e) < 0 || rod.frameDofs(e).size() != 1)
        throw py::value_error("rod '" + rod.name() + "' (model " + r.sim->scene().rods[r.index].type +
                              "): its frames cannot be set (no twist angle or rotation vectors)");
      const Vec3 edge = q.segment<3>(rod.globalPositionDof(e + 1)) - q.segment<3>(rod.globalPositionDof(e));
      const Vec3 tangent = edge.normalized();
      const double off_tangent = (R[e].row(2).transpose() - tangent).cwiseAbs().maxCoeff();
      if (!(off_tangent <= kTangentTolerance)) {
        char buf[200];
        std::snprintf(buf, sizeof buf,
                      "[%d]: d3 differs from the edge tangent (x[%d] - x[%d]) / |...| by %.3g > %.0e; a DER frame's d3 "
                      "is the tangent of its edge (set the positions first)",
                      e, e + 1, e, off_tangent, kTangentTolerance);
        throw py::value_error(who + buf);
      }
      q[off + rod.twistDof(e)] = rod.twistForDirector(e, R[e].row(0).transpose());
    }
  }
  commitState(r, q, v);
  // The frames read back are what was asked for (a model whose rotation DOFs follow another
  // convention would fail here, not silently).
  for (int e = 0; e < ne; ++e) {
    Vec3 t, m1, m2;
    rod.materialFrame(e, t, m1, m2);
    const double err = std::max({(m1 - R[e].row(0).transpose()).cwiseAbs().maxCoeff(),
                                 (m2 - R[e].row(1).transpose()).cwiseAbs().maxCoeff(),
                                 (t - R[e].row(2).transpose()).cwiseAbs().maxCoeff()});
    if (err > 1e-8)
      throw std::runtime_error(who + "[" + std::to_string(e) + "]: the rod's frame after setting differs by " +
                               std::to_string(err) + " (the model's frame DOFs are not what rodsim.Rod expects)");
  }
}

void setAngularVelocities(RodView& r, py::handle value) {
  Guard g(r.sim->mutex());
  r.sim->requireOpen();
  Rod& rod = r.rod();
  if (!rod.as<RodRotationVectors>())
    throw py::value_error("rod '" + rod.name() + "' (model " + r.sim->scene().rods[r.index].type +
                          "): angular velocities can be set on a model with rotation-vector frames (cosserat); a DER "
                          "frame turns with its edge (set velocities) and its twist angle");
  const int ne = rod.numEdges();
  auto a = stateArray(value, {py::ssize_t(ne), 3}, rod, "angular_velocities");
  KernelWorld& w = r.sim->session().world();
  Vec q = w.q(), v = w.v();
  const int off = rod.dofOffset();
  for (int e = 0; e < ne; ++e) {
    const std::vector<int> f = rod.frameDofs(e);
    for (int c = 0; c < 3; ++c) v[off + f[std::size_t(c)]] = a.at(e, c);  // the material-frame rate (d1, d2, d3)
  }
  commitState(r, q, v);
}

// Gives the property `name` of `cls` the setter `set`, keeping its getter and docstring (the getters
// are bound in rod.cpp and state.cpp).
void addSetter(py::object cls, const char* name, py::cpp_function set, const std::string& doc) {
  py::object property = py::module_::import("builtins").attr("property");
  py::dict members(cls.attr("__dict__"));
  if (!members.contains(name)) {  // no getter (yet): settable only
    py::setattr(cls, name, property(py::none(), set, py::none(), "settable between steps: " + doc));
    return;
  }
  py::object prop = members[name];
  const std::string full = py::str(prop.attr("__doc__")).cast<std::string>() + "; settable between steps: " + doc;
  py::setattr(cls, name, property(prop.attr("fget"), set, py::none(), full));
}

}  // namespace

void bindRodSetters(py::module_& m) {
  py::object cls = m.attr("Rod");
  addSetter(cls, "positions", py::cpp_function([](RodView& r, py::object v) { setNodeArray(r, v, false); }, py::is_method(cls)),
            "an (n, 3) array (a DER rod's frames follow its new tangents)");
  addSetter(cls, "velocities", py::cpp_function([](RodView& r, py::object v) { setNodeArray(r, v, true); }, py::is_method(cls)),
            "an (n, 3) array");
  addSetter(cls, "directors", py::cpp_function([](RodView& r, py::object v) { setDirectors(r, v); }, py::is_method(cls)),
            "an (n-1, 3, 3) array of orthonormal right-handed frames (to 1e-10); DER: d3 the edge tangent");
  addSetter(cls, "angular_velocities",
            py::cpp_function([](RodView& r, py::object v) { setAngularVelocities(r, v); }, py::is_method(cls)),
            "an (n-1, 3) array, cosserat only");
}

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
