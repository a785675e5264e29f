// rodsim.PythonForce: a Force whose value a Python function computes.
#include "python_force.h"

#include "arrays.h"

#include <rodsim/force.h>
#include <rodsim/rod.h>

#include <memory>
#include <stdexcept>
#include <string>

namespace rodsim::python {

thread_local int t_in_python_force = 0;
const std::map<std::string, PyForceSpec>* g_building = nullptr;

namespace {

// A force computed by a Python function. Without stiffness: explicit solvers take it as any force;
// implicit ones converge more slowly when it is stiff (docs/python.md). every_evaluation = false
// evaluates it once per step at the step's start state (constantInStep: one call per step).
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
  }
  bool constantInStep() const override { return !spec_.every_evaluation; }
  void beginStep(const EvalContext& ctx) override {
    if (!spec_.every_evaluation) compute(world_->time(), *ctx.q_start, *ctx.v_start);
  }
  void addForce(const EvalContext& ctx, Vec& f) override {
    if (spec_.every_evaluation) compute(ctx.t, *ctx.q, world_->v());
    const int n = rod_->numNodes();
    for (int i = 0; i < n; ++i) f.segment<3>(layout_->dofs[i]) += ctx.load_scale * force_.segment<3>(3 * i);
  }

 private:
  // fn(t, x, v) with the GIL (the solver may call from a worker thread); a Python exception becomes
  // a C++ one whose message names the force, so the step fails with it.
  void compute(double t, const Vec& q, const Vec& v) {
    py::gil_scoped_acquire gil;
    ++t_in_python_force;
    struct Leave {
      ~Leave() { --t_in_python_force; }
    } leave;
    try {
      py::object r = spec_.fn(t, nodeArray(q, *layout_), nodeArray(v, *layout_));
      const int n = rod_->numNodes();
      force_.setZero(3 * n);
      if (r.is_none()) return;
      auto a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(r);
      if (!a || a.ndim() != 2 || a.shape(0) != n || a.shape(1) != 3)
        throw std::runtime_error("the function must return an array of shape (" + std::to_string(n) +
                                 ", 3) (N per node) or None");
      std::copy(a.data(), a.data() + 3 * n, force_.data());
    } catch (py::error_already_set& e) {
      throw std::runtime_error("Python force '" + name() + "': " + std::string(e.what()));
    } catch (const std::runtime_error& e) {
      throw std::runtime_error("Python force '" + name() + "': " + e.what());
    }
  }

  const PyForceSpec& spec_;
  World* world_ = nullptr;
  Rod* rod_ = nullptr;
  std::unique_ptr<NodeLayout> layout_;
  Vec force_;
};


}  // namespace

Schema pythonForceSchema() { return PythonForce::schema(); }
Component* makePythonForce(const Params& p) { return new PythonForce(p); }

void bindPythonForceSpec(py::module_& m) {
  py::class_<PyForceSpec>(m, "_PythonForceSpec")
      .def(py::init([](std::string name, std::string rod, py::function fn, bool every_evaluation) {
             return PyForceSpec{std::move(name), std::move(rod), std::move(fn), every_evaluation};
           }),
           py::arg("name"), py::arg("rod"), py::arg("fn"), py::arg("every_evaluation"));
}

}  // namespace rodsim::python
