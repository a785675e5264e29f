// rodsim.PythonForce: a Force whose value (node forces, edge couples) and Jacobian a Python function
// computes (the protocol: rodsim/forces.py and docs/python.md).
#include "python_force.h"

#include "arrays.h"

#include <rodsim/force.h>
#include <rodsim/rod.h>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace rodsim::python {

thread_local int t_in_python_force = 0;
const std::map<std::string, PyForceSpec>* g_building = nullptr;

namespace {

using DoubleArray = py::array_t<double, py::array::c_style | py::array::forcecast>;

std::string shapeText(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t d = 0; d < a.ndim(); ++d) s += (d ? ", " : "") + std::to_string(a.shape(d));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

// A float64 array of the given shape (-1: any length), else an error naming `what` and the shape
// expected() describes (built only then: this runs at every solver evaluation, and the names of the
// valid calls fit std::string's short buffer, so a valid result allocates nothing here).
template <class Expected>
DoubleArray doubles(const py::handle& obj, const std::string& what, std::initializer_list<py::ssize_t> shape,
                    Expected expected) {
  DoubleArray a = DoubleArray::ensure(obj);
  if (!a) {
    PyErr_Clear();
    throw std::runtime_error(what + " must be a float array of shape " + expected() + ", not " +
                             std::string(py::str(py::type::of(obj).attr("__name__"))));
  }
  bool ok = a.ndim() == py::ssize_t(shape.size());
  int d = 0;
  for (py::ssize_t s : shape) ok = ok && (s < 0 || a.shape(d++) == s);
  if (!ok) throw std::runtime_error(what + " must have shape " + expected() + ", not " + shapeText(a));
  const double* p = a.data();
  for (py::ssize_t i = 0; i < a.size(); ++i)
    if (!std::isfinite(p[i])) throw std::runtime_error(what + " has a non-finite value (entry " + std::to_string(i) + ")");
  return a;
}

// Row or column indexes of a sparse Jacobian: a 1-D integer array of `length` entries in [0, size).
py::array_t<long long> indexes(const py::handle& obj, const std::string& what, py::ssize_t length, long long size) {
  py::array a = py::array::ensure(obj);
  if (!a) {
    PyErr_Clear();
    throw std::runtime_error(what + " must be an integer array");
  }
  const char kind = a.dtype().kind();
  if (kind != 'i' && kind != 'u') throw std::runtime_error(what + " must be an integer array, not dtype " +
                                                           std::string(py::str(a.dtype())));
  auto ia = py::array_t<long long, py::array::c_style | py::array::forcecast>::ensure(a);
  if (ia.ndim() != 1 || ia.shape(0) != length)
    throw std::runtime_error(what + " must be 1-D with " + std::to_string(length) + " entries (one per value), not " +
                             shapeText(ia));
  for (py::ssize_t i = 0; i < length; ++i)
    if (ia.data()[i] < 0 || ia.data()[i] >= size)
      throw std::runtime_error(what + " entry " + std::to_string(i) + " = " + std::to_string(ia.data()[i]) +
                               " is outside [0, " + std::to_string(size) + ")");
  return ia;
}

// A force computed by a Python function, with optional edge couples and Jacobians.
//
// Stiffness: the function's dF/dx (and dF/dv, with the step's velocity, times dv/dx = 1/dt) enters
// K = -dF/dq (force.h) on the rod's position DOFs, so Newton keeps its quadratic convergence on a
// stiff force; without them the force is treated explicitly inside each Newton solve (its Jacobian
// ignored, as for a plugin force without addStiffness) and converges linearly. Couples have no
// Jacobian here: the map of a couple to a DER rod's DOFs depends on the edge (the perpendicular part
// is a force pair C x t / |e|), and that geometric stiffness is left out as every couple-applying
// plugin force leaves it out (point-load's torque, muscle-torque).
//
// every_evaluation = false evaluates it once per step at the step's start state (constantInStep:
// one call per step, no Jacobian).
class PythonForce final : public Force {
 public:
  static Schema schema() {
    Schema s{"python-force", "A force computed by a Python function (rodsim.PythonForce); added from Python only."};
    s.required<std::string>("rod", "Rod it acts on.");
    s.add<bool>("every_evaluation", true, "Call the function at every evaluation (else once per step).");
    return s;
  }
  explicit PythonForce(const Params& p) : Force(p), spec_(g_building->at(p.componentName())) {}
  void bind(World& world) override {
    world_ = &world;
    rod_ = &resolveRod(world, spec_.rod, "rod");
    layout_ = std::make_unique<NodeLayout>(*rod_);
    const int n = rod_->numNodes();
    force_.setZero(3 * n);
    couples_.assign(3 * std::size_t(rod_->numEdges()), 0.0);
    scaled_couples_.assign(couples_.size(), 0.0);
  }
  bool constantInStep() const override { return !spec_.every_evaluation; }
  bool velocityDependent() const override { return spec_.step_velocity; }
  void beginStep(const EvalContext& ctx) override {
    if (!spec_.every_evaluation) compute(world_->time(), *ctx.q_start, ctx.v_start, nullptr);
  }
  void addForce(const EvalContext& ctx, Vec& f) override {
    if (spec_.every_evaluation)
      compute(ctx.t, *ctx.q, &world_->v(), spec_.step_velocity ? &ctx : nullptr);
    const int n = rod_->numNodes();
    for (int i = 0; i < n; ++i) f.segment<3>(layout_->dofs[i]) += ctx.load_scale * force_.segment<3>(3 * i);
    if (!has_couples_) return;
    const double* c = couples_.data();
    if (ctx.load_scale != 1.0) {
      for (std::size_t k = 0; k < couples_.size(); ++k) scaled_couples_[k] = ctx.load_scale * couples_[k];
      c = scaled_couples_.data();
    }
    rod_->addNodeTorques(c, f.segment(rod_->dofOffset(), rod_->numDofs()));
  }
  void addStiffness(const EvalContext& ctx, StiffnessSink& K) override {
    // K = -dF/dq; the entries of the last addForce (the same ctx: World::evaluate calls them in pairs).
    for (std::size_t k = 0; k < jac_vals_.size(); ++k)
      K.add(jac_rows_[k], jac_cols_[k], -ctx.load_scale * jac_vals_[k]);
  }

 private:
  // The (n, 3) node velocities EvalContext::velocity gives: (q - q_start) / dt under Newton, the
  // current velocity in explicit solvers (they set q_start so), 0 in quasi-static solves.
  py::array stepVelocity(const EvalContext& ctx) const {
    const auto n = static_cast<py::ssize_t>(layout_->dofs.size());
    py::array a = newArray(n, 3);
    double* out = arrayData(a);
    for (py::ssize_t i = 0; i < n; ++i)
      for (int c = 0; c < 3; ++c) out[3 * i + c] = ctx.velocity(layout_->dofs[std::size_t(i)] + c);
    return a;
  }

  // fn(t, x, v) with the GIL (the solver may call from a worker thread); a Python exception or a bad
  // return value becomes a C++ error whose message names the force, so the step fails with it.
  // v: the step's velocity of `step` (velocity="step"), else the node velocities in `v_global`.
  void compute(double t, const Vec& q, const Vec* v_global, const EvalContext* step) {
    py::gil_scoped_acquire gil;
    ++t_in_python_force;
    struct Leave {
      ~Leave() { --t_in_python_force; }
    } leave;
    // d v / d q of the velocity handed over, for "dfdv" (only the step's velocity depends on q)
    const double dvdq = step ? step->velocityDerivative() : 0.0;
    try {
      py::object r = spec_.fn(t, nodeArray(q, *layout_), step ? stepVelocity(*step) : nodeArray(*v_global, *layout_));
      force_.setZero();
      has_couples_ = false;
      jac_rows_.clear();
      jac_cols_.clear();
      jac_vals_.clear();
      if (r.is_none()) return;
      if (!py::isinstance<py::dict>(r)) {
        readForces(r);
        return;
      }
      for (auto item : py::reinterpret_borrow<py::dict>(r)) {
        const std::string key = py::str(item.first);
        if (key != "forces" && key != "couples" && key != "dfdx" && key != "dfdv")
          throw std::runtime_error("unknown key '" + key + "' in the returned dict (valid: forces, couples, dfdx, dfdv)");
        if (item.second.is_none()) continue;
        if (key == "forces") readForces(item.second);
        else if (key == "couples") readCouples(item.second);
        else if (!spec_.every_evaluation)
          throw std::runtime_error("'" + key + "': a force called once per step (every_evaluation=False) is held through "
                                   "the step and has no Jacobian");
        else if (key == "dfdx") readJacobian(item.second, key, 1.0);
        else if (!spec_.step_velocity)
          throw std::runtime_error("'dfdv' needs velocity=\"step\" (the start-of-step velocity does not change with "
                                   "the configuration Newton solves for)");
        else readJacobian(item.second, key, dvdq);
      }
    } catch (py::error_already_set& e) {
      throw std::runtime_error("Python force '" + name() + "': " + std::string(e.what()));
    } catch (const std::runtime_error& e) {
      throw std::runtime_error("Python force '" + name() + "': " + e.what());
    }
  }

  void readForces(const py::handle& obj) {
    const int n = rod_->numNodes();
    DoubleArray a = doubles(obj, "the forces", {n, 3}, [n] { return "(" + std::to_string(n) + ", 3) (N per node)"; });
    std::copy(a.data(), a.data() + 3 * n, force_.data());
  }

  void readCouples(const py::handle& obj) {
    const int e = rod_->numEdges();
    DoubleArray a = doubles(obj, "'couples'", {e, 3},
                            [e] { return "(" + std::to_string(e) + ", 3) (N m per edge, world frame)"; });
    std::copy(a.data(), a.data() + 3 * e, couples_.data());
    has_couples_ = true;
  }

  // Appends the entries of a Jacobian in the rod's (3n, 3n) node indexing (row 3 i + c: component c
  // of node i's force; column 3 j + d: coordinate d of node j) times `factor`, at global DOFs. Dense
  // matrices give their nonzero entries (the sparsity Newton's factorization keeps), blocks all nine
  // entries of each (a fixed pattern), sparse ones their stored entries (duplicates add up).
  void readJacobian(const py::handle& obj, const std::string& key, double factor) {
    const int n = rod_->numNodes();
    const long long size = 3LL * n;
    const std::string dense = "(" + std::to_string(size) + ", " + std::to_string(size) + ")";
    auto add = [&](long long r, long long c, double value) {
      jac_rows_.push_back(layout_->dofs[std::size_t(r / 3)] + int(r % 3));
      jac_cols_.push_back(layout_->dofs[std::size_t(c / 3)] + int(c % 3));
      jac_vals_.push_back(factor * value);
    };
    const std::string what = "'" + key + "'";
    py::object rows, cols, vals;
    if (py::isinstance<py::tuple>(obj) || py::isinstance<py::list>(obj)) {
      auto seq = py::reinterpret_borrow<py::sequence>(obj);
      if (py::len(seq) != 3)
        throw std::runtime_error(what + " as a sequence must be (rows, cols, values), not " + std::to_string(py::len(seq)) +
                                 " items");
      rows = seq[0], cols = seq[1], vals = seq[2];
    } else if (py::hasattr(obj, "tocoo")) {
      py::object coo = obj.attr("tocoo")();
      const auto shape = py::tuple(coo.attr("shape"));
      if (py::len(shape) != 2 || shape[0].cast<long long>() != size || shape[1].cast<long long>() != size)
        throw std::runtime_error(what + " must be " + dense + ", not a sparse matrix of shape " +
                                 py::repr(shape).cast<std::string>());
      rows = coo.attr("row"), cols = coo.attr("col"), vals = coo.attr("data");
    }
    if (vals) {
      DoubleArray v = doubles(vals, what + " values", {-1}, [] { return std::string("(k,)"); });
      const py::ssize_t k = v.shape(0);
      auto r = indexes(rows, what + " rows", k, size);
      auto c = indexes(cols, what + " cols", k, size);
      for (py::ssize_t i = 0; i < k; ++i) add(r.data()[i], c.data()[i], v.data()[i]);
      return;
    }
    py::array probe = py::array::ensure(obj);
    if (!probe) PyErr_Clear();
    if (probe && probe.ndim() == 3) {
      DoubleArray b = doubles(obj, what, {n, 3, 3},
                              [n] { return "(" + std::to_string(n) + ", 3, 3) (node blocks dF_i/dx_i)"; });
      for (long long i = 0; i < n; ++i)
        for (int r = 0; r < 3; ++r)
          for (int c = 0; c < 3; ++c) add(3 * i + r, 3 * i + c, b.data()[9 * i + 3 * r + c]);
      return;
    }
    DoubleArray a = doubles(obj, what, {size, size}, [&] {
      return dense + ", (" + std::to_string(n) + ", 3, 3) node blocks, a scipy.sparse matrix or (rows, cols, values)";
    });
    const double* p = a.data();
    for (long long r = 0; r < size; ++r)
      for (long long c = 0; c < size; ++c)
        if (p[r * size + c] != 0.0) add(r, c, p[r * size + c]);
  }

  const PyForceSpec& spec_;
  World* world_ = nullptr;
  Rod* rod_ = nullptr;
  std::unique_ptr<NodeLayout> layout_;
  Vec force_;                                  // N, (3n): node i at 3 i
  std::vector<double> couples_;                // N m, (3 (n-1)): edge k at 3 k, world frame
  std::vector<double> scaled_couples_;         // couples_ times the static solver's load scale
  bool has_couples_ = false;
  std::vector<int> jac_rows_, jac_cols_;       // global DOFs of dF/dq's entries (dF/dv folded in by dv/dq)
  std::vector<double> jac_vals_;
};

}  // namespace

Schema pythonForceSchema() { return PythonForce::schema(); }
Component* makePythonForce(const Params& p) { return new PythonForce(p); }

void bindPythonForceSpec(py::module_& m) {
  py::class_<PyForceSpec>(m, "_PythonForceSpec")
      .def(py::init([](std::string name, std::string rod, py::function fn, bool every_evaluation, bool step_velocity) {
             return PyForceSpec{std::move(name), std::move(rod), std::move(fn), every_evaluation, step_velocity};
           }),
           py::arg("name"), py::arg("rod"), py::arg("fn"), py::arg("every_evaluation"), py::arg("step_velocity") = false);
}

}  // namespace rodsim::python
