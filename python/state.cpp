// What a Simulation and its rods read beyond node positions, velocities, masses, radii and frames:
// angular velocities, strains, curvatures, internal and external loads (rodsim.Rod), and the
// constraints' reactions with their torques (rodsim._Simulation). Strains and internal loads come from
// the rod's RodStrainReport (SDK 1.7), reactions from the kernel's readout (the probes' own code), so
// that a callback and a `rodsim run` probe read the same numbers.
#include "simulation.h"

#include <rodsim/kernel/readout.h>

#include <rodsim/force.h>

namespace rodsim::python {

namespace {

// (rows, 3) array from 3 numbers per row.
py::array rowsOf3(const std::vector<double>& v) {
  const auto rows = static_cast<py::ssize_t>(v.size() / 3);
  py::array a = newArray(rows, 3);
  if (rows > 0) std::memcpy(arrayData(a), v.data(), sizeof(double) * v.size());
  return a;
}

py::array vectorOf(const std::vector<double>& v) {
  py::array a = newArray(static_cast<py::ssize_t>(v.size()));
  if (!v.empty()) std::memcpy(arrayData(a), v.data(), sizeof(double) * v.size());
  return a;
}

py::array vec3(const Vec3& v) {
  py::array a = newArray(3);
  double* out = arrayData(a);
  for (int c = 0; c < 3; ++c) out[c] = v[c];
  return a;
}

// The rod's strains and internal loads now; ValueError for a model without RodStrainReport.
kernel::RodStrains strainsOf(const RodView& r) {
  const Rod& rod = r.rod();
  const RodStrainReport* report = rod.as<RodStrainReport>();
  if (!report)
    throw py::value_error("rod '" + rod.name() + "' (model " + r.sim->scene().rods[r.index].type +
                          ") does not report strains and internal loads (capability rod-strain-report, SDK 1.7)");
  kernel::RodStrains s;
  kernel::readRodStrains(*report, s);
  return s;
}

// Angular velocity of every element's material frame, in that frame (d1, d2, d3 components), rad/s.
// A model whose frame DOFs are rotation vectors (RodRotationVectors: cosserat) has the material-frame
// angular velocity as their velocity (plugins/rod_cosserat/README.md, "Degrees of freedom"), as
// PyElastica's omega_collection. A DER edge's reference frame is transported parallel in time, so it
// turns at t x dt/dt and never about t; the material frame adds the rate of the twist angle about t:
// omega = t x dt/dt + (dtheta/dt) t, dt/dt = (I - t t^T)(v_b - v_a) / |e|.
py::array angularVelocities(const RodView& r) {
  KernelWorld& w = r.sim->session().world();
  const Rod& rod = r.rod();
  const int off = rod.dofOffset(), ne = rod.numEdges();
  const Vec& v = w.v();
  const Vec& q = w.q();
  py::array a = newArray(ne, 3);
  double* out = arrayData(a);
  const bool rotation_vectors = rod.as<RodRotationVectors>() != nullptr;
  for (int e = 0; e < ne; ++e) {
    Vec3 t, m1, m2;
    rod.materialFrame(e, t, m1, m2);
    Vec3 omega_local;
    if (rotation_vectors) {
      const std::vector<int> f = rod.frameDofs(e);
      if (f.size() != 3) throw py::value_error("rod '" + rod.name() + "': its frame DOFs are not rotation vectors");
      omega_local = Vec3(v[off + f[0]], v[off + f[1]], v[off + f[2]]);
    } else if (rod.twistDof(e) >= 0) {
      const int a0 = rod.globalPositionDof(e), b0 = rod.globalPositionDof(e + 1);
      const Vec3 edge = q.segment<3>(b0) - q.segment<3>(a0);
      const Vec3 tt = edge.normalized();
      const Vec3 dv = v.segment<3>(b0) - v.segment<3>(a0);
      const Vec3 tdot = (dv - tt.dot(dv) * tt) / edge.norm();
      const Vec3 omega = tt.cross(tdot) + v[off + rod.twistDof(e)] * tt;
      omega_local = Vec3(omega.dot(m1), omega.dot(m2), omega.dot(t));
    } else {
      throw py::value_error("rod '" + rod.name() + "': its model has no frame rotation to give an angular velocity");
    }
    for (int c = 0; c < 3; ++c) out[3 * e + c] = omega_local[c];
  }
  return a;
}

// The (n, 3) node entries of a global force vector for one rod.
py::array nodeRows(const Vec& f, const RodView& r) { return nodeArray(f, *r.layout); }

// Every contact model's active contacts at the committed state (ContactPairReport, SDK 1.8); a
// ValueError names a model of the scene that does not report them.
std::vector<ContactRecord> contactRecords(Simulation& sim) {
  CommittedState committed;
  const EvalContext& ctx = committed.at(sim.session().world(), sim.scene().dt);
  std::vector<ContactRecord> out;
  for (const auto& [spec, component] : sim.session().world().components()) {
    if (spec->section != "contact") continue;
    const auto* report = component->as<ContactPairReport>();
    if (!report)
      throw py::value_error("contact '" + spec->name + "' (" + spec->type +
                            ") does not report its contacts and their forces (capability contact-pair-report, SDK 1.8)");
    report->contactPairs(ctx, out);
  }
  return out;
}

// The contacts as a NumPy structured array, one row per contact.
py::object contactArray(const std::vector<ContactRecord>& records) {
  py::module_ np = py::module_::import("numpy");
  py::list fields;
  fields.append(py::make_tuple("rod_a", "U64"));
  fields.append(py::make_tuple("edge_a", "i8"));
  fields.append(py::make_tuple("rod_b", "U64"));
  fields.append(py::make_tuple("edge_b", "i8"));
  fields.append(py::make_tuple("obstacle", "?"));
  fields.append(py::make_tuple("gap", "f8"));
  fields.append(py::make_tuple("normal", "f8", 3));
  fields.append(py::make_tuple("normal_force", "f8", 3));
  fields.append(py::make_tuple("friction_force", "f8", 3));
  py::list rows;
  auto v3 = [](const Vec3& v) { return py::make_tuple(v[0], v[1], v[2]); };
  for (const ContactRecord& r : records)
    rows.append(py::make_tuple(r.rod_a, r.edge_a, r.rod_b, r.edge_b, r.obstacle, r.gap, v3(r.normal), v3(r.normal_force),
                               v3(r.friction_force)));
  return np.attr("array")(rows, py::arg("dtype") = np.attr("dtype")(fields));
}

// The forces of the scene's Force components (gravity, loads, damping, drag, Python forces) at the
// committed state: every force's addForce at q with the velocity v, for velocity-dependent forces.
// Forces that are constant during a step (constantInStep: the rss fluid, computed from the step's
// start state on its own schedule) are not re-evaluated outside a step and are left out.
Vec externalForces(Simulation& sim) {
  KernelWorld& w = sim.session().world();
  CommittedState committed;
  const EvalContext& ctx = committed.at(w, sim.scene().dt);
  Vec f = Vec::Zero(w.numDofs());
  for (const auto& [spec, component] : w.components()) {
    if (spec->section != "force") continue;
    auto* force = dynamic_cast<Force*>(component);
    if (!force || force->constantInStep()) continue;
    force->addForce(ctx, f);
  }
  return f;
}

py::dict reactionDict(const kernel::Reaction& r) {
  py::dict d;
  d["force"] = vec3(r.force);
  d["torque"] = vec3(r.torque);
  d["point"] = vec3(r.point);
  return d;
}

const Constraint& findConstraint(Simulation& sim, const std::string& name) {
  std::vector<std::string> names;
  for (const auto& c : sim.session().world().constraints()) {
    if (c.spec->name == name) return *c.object;
    names.push_back(c.spec->name);
  }
  const std::string near = closestMatch(name, names);
  throw py::key_error("no constraint named '" + name + "'" + (near.empty() ? "" : "; did you mean '" + near + "'?"));
}

}  // namespace

void bindState(py::module_& m) {
  // rodsim.Rod and rodsim._Simulation are bound before (module.cpp): borrowing their type objects adds
  // properties to the same classes.
  auto rod = py::reinterpret_borrow<py::class_<RodView>>(m.attr("Rod"));
  auto sim = py::reinterpret_borrow<py::class_<Simulation>>(m.attr("_Simulation"));

  rod.def_property_readonly("angular_velocities", [](const RodView& r) { Guard g(r.sim->mutex()); return angularVelocities(r); },
                            "(n-1, 3) angular velocity of each element's material frame in that frame (d1, d2, d3 "
                            "components), rad/s");
  rod.def_property_readonly("shearable", [](const RodView& r) { Guard g(r.sim->mutex()); return strainsOf(r).shearable; },
                            "True when the model has shear strains (cosserat), False for a Kirchhoff rod (der)");
  rod.def_property_readonly("stretch", [](const RodView& r) { Guard g(r.sim->mutex()); return vectorOf(strainsOf(r).stretch); },
                            "(n-1,) axial strain of each element, |x_{e+1} - x_e| / rest length - 1");
  rod.def_property_readonly("shear", [](const RodView& r) { Guard g(r.sim->mutex()); return rowsOf3(strainsOf(r).shear); },
                            "(n-1, 3) shear/stretch strain sigma = Q(e t) - d3 of each element in its material frame; "
                            "(0, 0, stretch) on a der rod");
  rod.def_property_readonly("curvature_nodes", [](const RodView& r) {
        Guard g(r.sim->mutex());
        const auto nodes = strainsOf(r).junction_nodes;
        py::array_t<long long> a(static_cast<py::ssize_t>(nodes.size()));
        for (std::size_t k = 0; k < nodes.size(); ++k) a.mutable_data()[k] = nodes[k];
        return a;
      }, "node index of each row of curvatures and internal_couples (the nodes between two elements)");
  rod.def_property_readonly("curvatures", [](const RodView& r) { Guard g(r.sim->mutex()); return rowsOf3(strainsOf(r).curvature); },
                            "(k, 3) curvature vector at each curvature node in material components (bending about d1, "
                            "about d2, twist about d3), per rest Voronoi length, 1/m");
  rod.def_property_readonly("internal_forces", [](const RodView& r) { Guard g(r.sim->mutex()); return rowsOf3(strainsOf(r).force); },
                            "(n-1, 3) force each element carries, world frame, N: what the rod after the element exerts "
                            "on the rod before it (tension positive along the tangent)");
  rod.def_property_readonly("internal_couples", [](const RodView& r) { Guard g(r.sim->mutex()); return rowsOf3(strainsOf(r).couple); },
                            "(k, 3) elastic couple at each curvature node in material components (as curvatures), N m: "
                            "what the rod after the node exerts on the rod before it");
  rod.def_property_readonly("contact_forces", [](const RodView& r) {
        Guard g(r.sim->mutex());
        const std::vector<ContactRecord> records = contactRecords(*r.sim);
        Vec f = Vec::Zero(r.sim->session().world().numDofs());
        for (const ContactRecord& c : records)
          for (int k = 0; k < 4; ++k)
            if (c.node_dofs[k] >= 0) f.segment<3>(c.node_dofs[k]) += c.node_forces[k];
        return nodeRows(f, r);
      }, "(n, 3) sum of the contact forces (normal and friction) on each node at the committed state, world "
         "frame, N (from every contact model's ContactPairReport; alart-curnier: its last impulses over dt)");
  rod.def_property_readonly("external_forces", [](const RodView& r) {
        Guard g(r.sim->mutex());
        return nodeRows(externalForces(*r.sim), r);
      }, "(n, 3) sum of the scene's forces (gravity, loads, damping, drag, Python forces) on each node at the "
         "current state, world frame, N; forces constant within a step (rss) are not included");

  sim.def("reaction", [](Simulation& s, const std::string& name) {
        Guard g(s.mutex());
        return reactionDict(kernel::constraintReaction(s.session().world(), findConstraint(s, name)));
      }, py::arg("constraint"),
      "What the named constraint exerts on the rod at the last committed step: {'force': (3,) N, 'torque': (3,) N m "
      "about 'point', 'point': (3,) m, the mean position of its held nodes}, world frame");
  sim.def_property_readonly("contacts", [](Simulation& s) {
        Guard g(s.mutex());
        return contactArray(contactRecords(s));
      }, "The active contacts at the committed state, a NumPy structured array: rod_a, edge_a, rod_b, edge_b "
         "(rod_b an obstacle's name when obstacle is True; edge_a is then a node, edge_b -1), gap (m, distance "
         "minus radii), normal (unit, from b to a), normal_force and friction_force (N, on rod_a; b takes the "
         "opposite), world frame");
  sim.def_property_readonly("reactions", [](Simulation& s) {
        Guard g(s.mutex());
        py::dict d;
        for (const auto& c : s.session().world().constraints())
          d[py::str(c.spec->name)] = reactionDict(kernel::constraintReaction(s.session().world(), *c.object));
        return d;
      }, "reaction(name) of every constraint, by name");
}

}  // namespace rodsim::python
