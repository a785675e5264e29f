// A rod model: its generalized coordinates, mass, elastic energy and its derivatives.
#pragma once

#include <rodsim/component.h>

#include <optional>
#include <string>
#include <vector>

namespace rodsim {

// A rod owns a contiguous slice [dofOffset(), dofOffset() + numDofs()) of the global DOF vector.
// Local indexes below are into that slice. Node positions are three consecutive DOFs (x, y, z).
//
// The core below is what every solver needs (explicit solvers need nothing more). Optional
// capabilities, declared by deriving from them and listing them in RODSIM_INTERFACES:
//   RodStiffness        the Hessian of the elastic energy (implicit and static solvers require it);
//   RodVelocityForces   velocity-dependent forces of the model itself (Cosserat gyroscopic terms);
//   RodRotationVectors  DOFs that are rotation vectors relative to committed frames (Cosserat):
//                       rebased after every commit, composed on SO(3) by explicit drifts;
//   RodClosedCenterline a centre line closed into a ring (SDK 1.4): one element more than numEdges();
//   RodStrainReport     strains, curvatures, internal forces and couples for output (SDK 1.7).
class Rod : public Component {
 public:
  using Component::Component;

  // --- layout
  virtual int numNodes() const = 0;
  int numEdges() const { return numNodes() - 1; }
  virtual int numDofs() const = 0;
  // Local index of the x coordinate of `node` (y, z follow).
  virtual int positionDof(int node) const = 0;
  // Local index of the DOF that turns the material frame of `edge` about its tangent (rad): DER's
  // twist angle, a Cosserat element's third rotation-vector component; -1 for a model without one.
  virtual int twistDof(int /*edge*/) const { return -1; }
  // Local indexes of the DOFs that orient the material frame of `edge` beyond the positions of its
  // two nodes: a DER rod's twist angle of the edge; a Cosserat element's three rotation-vector DOFs.
  // A constraint that holds an edge's frame (clamp) prescribes exactly these, so that `clamp` means
  // the same on every rod model. Default: twistDof(edge) if the model has one, else none.
  virtual std::vector<int> frameDofs(int edge) const {
    const int t = twistDof(edge);
    return t < 0 ? std::vector<int>{} : std::vector<int>{t};
  }

  // --- initial state and inertia
  virtual void initialDofs(VecRef q) const = 0;      // local slice, size numDofs()
  virtual void initialVelocity(VecRef v) const = 0;  // m/s, rad/s
  virtual void lumpedMass(VecRef m) const = 0;       // kg (positions), kg m^2 (twist)

  // --- geometry used by forces, contacts and output
  virtual double radius(int edge) const = 0;          // m
  virtual double nodeRadius(int node) const = 0;      // m, for output
  virtual double restVoronoiLength(int node) const = 0;  // m: half the rest lengths of the adjacent edges

  // --- configuration-dependent quantities
  // Recompute derived quantities (tangents, reference frames, reference twist, curvatures) for
  // the local DOFs q. Every query below refers to the last configuration set.
  virtual void setConfiguration(ConstVecRef q) = 0;
  // The current configuration becomes the start of the next step (DER: reference frames are
  // parallel-transported in time from here).
  virtual void commitConfiguration() = 0;
  virtual double elasticEnergy() const = 0;                // J
  virtual void addElasticForce(VecRef f_local) const = 0;  // f -= dE/dq (N, N m)

  // Material frame (t, m1, m2) of `edge` in the current configuration (unit vectors).
  virtual void materialFrame(int edge, Vec3& t, Vec3& m1, Vec3& m2) const = 0;
  // Twist DOF value that makes the material director m1 of `edge` point along the projection of
  // `m1` on the plane normal to the current tangent. Used by constraints that hold or spin frames.
  virtual double twistForDirector(int edge, const Vec3& m1) const = 0;
  // Generalized forces (local slice) equivalent to a torque (N m) applied at `node`.
  virtual void addNodeTorque(int node, const Vec3& torque, VecRef f_local) const = 0;
  // The same for the torques of nodes 0 .. numEdges()-1 at once: torques[3 k + c] is component c
  // (N m) of the torque at node k, i.e. addNodeTorque(k, torque_k, f_local) for every k in order
  // (a zero torque may be added as such). Forces that apply a couple to every element (ground
  // friction, muscles) call this once instead of one virtual call per element; the default loops
  // over addNodeTorque, a model overrides it with one pass over its elements.
  virtual void addNodeTorques(const double* torques, VecRef f_local) const {
    const int n = numEdges();
    for (int k = 0; k < n; ++k) addNodeTorque(k, Vec3(torques[3 * k], torques[3 * k + 1], torques[3 * k + 2]), f_local);
  }

  int dofOffset() const { return dof_offset_; }
  void setDofOffset(int offset) { dof_offset_ = offset; }
  // Global index of the x coordinate of `node`.
  int globalPositionDof(int node) const { return dof_offset_ + positionDof(node); }
  // Node index with Python-style negative indexes (-1 is the last node); -1 when out of range.
  int resolveNode(long long node) const {
    long long n = numNodes();
    long long i = node < 0 ? n + node : node;
    return (i < 0 || i >= n) ? -1 : static_cast<int>(i);
  }

 private:
  int dof_offset_ = 0;
};

// The world's rod names, quoted and comma-separated, for error messages.
inline std::string rodNames(World& world) {
  std::string names;
  for (int i = 0; i < world.numRods(); ++i) names += (i ? ", '" : "'") + world.rod(i).name() + "'";
  return names.empty() ? std::string("(none: the scene has no rod)") : names;
}

// Name resolution for components that act on rods, with the error every scene check gives: the rod
// named `name`, or ParamError(key, ...) listing the valid names.
inline Rod& resolveRod(World& world, const std::string& name, const std::string& key) {
  if (Rod* rod = world.findRod(name)) return *rod;
  throw ParamError(key, "no rod named '" + name + "'; valid rods: " + rodNames(world));
}

// The rods named by an optional list parameter (`key`); every rod when it is absent or empty (the
// contract's `rods = []`). A rod listed twice is an error: it would take part twice.
inline std::vector<Rod*> resolveRods(World& world, const std::optional<std::vector<std::string>>& names,
                                     const std::string& key) {
  std::vector<Rod*> rods;
  if (!names || names->empty()) {
    for (int i = 0; i < world.numRods(); ++i) rods.push_back(&world.rod(i));
    return rods;
  }
  for (const auto& n : *names) {
    Rod* rod = &resolveRod(world, n, key);
    for (const Rod* r : rods)
      if (r == rod) throw ParamError(key, "rod '" + n + "' is listed twice");
    rods.push_back(rod);
  }
  return rods;
}

// Rest arc length (m) at every node, 0 at node 0: the rest edge lengths follow from the rest Voronoi
// lengths, l_0 = 2 V_0 and l_e = 2 V_e - l_{e-1}.
inline std::vector<double> restArcLengths(const Rod& rod) {
  const int n = rod.numNodes();
  std::vector<double> arc(n, 0.0);
  double l_prev = 0;
  for (int e = 0; e + 1 < n; ++e) {
    const double l = e == 0 ? 2 * rod.restVoronoiLength(0) : 2 * rod.restVoronoiLength(e) - l_prev;
    arc[e + 1] = arc[e] + l;
    l_prev = l;
  }
  return arc;
}

}  // namespace rodsim
