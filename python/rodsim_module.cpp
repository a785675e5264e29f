// The `rodsim._rodsim` extension: the kernel's Session (the CLI's own time loop) driven from Python,
// with NumPy views of the state, steering between steps and forces written in Python. The pure-Python
// parts (read_output, the scene --set values as TOML text) are in rodsim/__init__.py.
//
// The GIL: steps run without it, so that a Python force called from a solver's worker thread can take
// it; the run loop takes it back between chunks of steps for the callbacks and for Ctrl-C
// (PyErr_CheckSignals), so the interpreter's own SIGINT handling stays in charge: Ctrl-C raises
// KeyboardInterrupt between steps and the simulation can go on afterwards.
//
// Threads: every call on a Simulation (and on its rods) holds the Simulation's own mutex, so two
// Python threads stepping or reading one Simulation take turns instead of running the solver on one
// state at once (that corrupted the heap). The mutex is recursive (a callback, run with it held, may
// read and steer its Simulation) and is waited for without the GIL (its holder steps without the
// GIL and takes the GIL back between chunks).
#include <rodsim/kernel/describe.h>
#include <rodsim/kernel/output.h>
#include <rodsim/kernel/registry.h>
#include <rodsim/kernel/scene.h>
#include <rodsim/kernel/simulation.h>
#include <rodsim/kernel/world.h>

#include <rodsim/capabilities.h>
#include <rodsim/force.h>
#include <rodsim/rod.h>
#include <rodsim/version.h>

#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <dlfcn.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace py = pybind11;
namespace fs = std::filesystem;
using namespace rodsim;
using namespace rodsim::kernel;

namespace {

// A step failed (status "failed"): rodsim.SimulationError, with summary.json's reason.
class SimulationFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The plugins installed beside this module (RODSIM_PYTHON_PLUGIN_RELDIR, set by CMake for the install
// tree) play the part of the CLI's <prefix>/lib/rodsim/plugins: the kernel's one search order, with
// the build tree when they are absent.
void useModulePluginDirectory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&useModulePluginDirectory), &info) == 0 || !info.dli_fname) return;
  setInstalledPluginDirectory(
      (fs::path(info.dli_fname).parent_path() / RODSIM_PYTHON_PLUGIN_RELDIR).lexically_normal().string());
}

// ------------------------------------------------------------------------------ Python forces

// > 0 while this thread runs a PythonForce function (see Guard).
thread_local int t_in_python_force = 0;

// What rodsim.PythonForce hands over: fn(t, x, v) -> (n, 3) forces (N) on the nodes of one rod.
struct PyForceSpec {
  std::string name, rod;
  py::function fn;
  bool every_evaluation = true;
};

// The specs of the Simulation whose world is being built: the registry's factory is a plain
// function pointer, so it finds its callable here by the component's name (the GIL is held).
const std::map<std::string, PyForceSpec>* g_building = nullptr;

// A new C-contiguous float64 array, straight from NumPy's C API (as pybind11 calls it): reading
// `positions` should cost what a NumPy copy costs, and py::array_t's general constructor (shape and
// stride vectors, checks) costs more than the copy of a rod's nodes.
py::array newArray(py::ssize_t rows, py::ssize_t cols = -1) {
  auto& api = py::detail::npy_api::get();
  Py_intptr_t dims[2] = {rows, cols};
  PyObject* descr = api.PyArray_DescrFromType_(py::detail::npy_api::NPY_DOUBLE_);
  PyObject* a = api.PyArray_NewFromDescr_(api.PyArray_Type_, descr, cols < 0 ? 1 : 2, dims, nullptr, nullptr, 0, nullptr);
  if (!a) throw py::error_already_set();
  return py::reinterpret_steal<py::array>(a);
}

double* arrayData(py::array& a) { return static_cast<double*>(a.mutable_data()); }

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
py::array nodeArray(const Vec& global, const NodeLayout& layout) {
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

Component* makePythonForce(const Params& p) { return new PythonForce(p); }

// ------------------------------------------------------------------------------- Simulation

using Clock = std::chrono::steady_clock;

// Holds a Simulation's mutex for one call from Python (see the top of the file). Called with the GIL.
// A PythonForce function that a solver's worker thread runs must not wait for it: the thread that
// holds it is waiting for that very force. It gets an error instead of a hang.
class Guard {
 public:
  explicit Guard(std::recursive_mutex& m) : lock_(m, std::try_to_lock) {
    if (!lock_.owns_lock()) {
      if (t_in_python_force > 0)
        throw std::runtime_error("a PythonForce function cannot use a Simulation that another thread is stepping "
                                 "(it gets t, x, v: use those)");
      py::gil_scoped_release nogil;  // the holder may be waiting for the GIL
      lock_.lock();
    }
  }

 private:
  std::unique_lock<std::recursive_mutex> lock_;
};

struct Callback {
  py::function fn;
  long long every;
};

class Simulation {
 public:
  Simulation(const std::string& scene_file, const std::vector<std::string>& sets, const std::string& output,
             bool replace, bool quiet, bool progress, const std::vector<PyForceSpec>& forces) {
    // The sets apply to [plugins] paths too, as `rodsim run --set plugins.paths=[...]` (issue 43).
    loadPlugins(registry_, readPluginPaths(scene_file, sets));
    if (!forces.empty()) {
      registry_.beginPlugin("python", "<rodsim Python module>", nullptr);
      registry_.add(ComponentKind::Force, PythonForce::schema(), &makePythonForce);
      registry_.endPlugin(RODSIM_SDK_VERSION);
    }
    scene_ = loadScene(scene_file, sets, registry_);
    for (const auto& f : forces) {
      for (const auto& s : scene_.forces)
        if (s.name == f.name) throw InputError("rodsim.PythonForce '" + f.name + "': the scene has a force of that name");
      if (py_forces_.count(f.name)) throw InputError("rodsim.PythonForce '" + f.name + "' is given twice");
      py_forces_[f.name] = f;
      ComponentSpec spec;
      spec.section = "force";
      spec.type = "python-force";
      spec.name = f.name;
      spec.params = Params(f.name);
      spec.params.set("rod", f.rod);
      spec.params.set("every_evaluation", f.every_evaluation);
      spec.where.text = "<rodsim.PythonForce '" + f.name + "'>";
      scene_.forces.push_back(spec);
    }
    RunOptions options;
    options.output_dir = output;
    options.quiet = quiet;
    options.progress = progress;
    options.scene_text = readSceneText(scene_file);
    options.overrides = sets;
    options.replace_output = replace;
    g_building = &py_forces_;
    try {
      session_ = std::make_unique<Session>(scene_, registry_, options);
    } catch (...) {
      g_building = nullptr;
      throw;
    }
    g_building = nullptr;
  }

  // Advances up to `max_steps` steps and not past `until` (s); runs the callbacks after their steps
  // and lets Ctrl-C through. Finishes the run at its end; a failed step finishes it and raises.
  void advance(long long max_steps, double until) {
    long long done = 0;
    while (done < max_steps && !session_->finished()) {
      const long long total = session_->totalSteps();
      long long n = session_->stepsDone();
      if (n >= total) break;
      // Steps whose end time is at most `until` (the last one ends at the scene's duration).
      const double dt = scene_.dt;
      auto endOf = [&](long long k) { return std::min(scene_.duration, double(k) * dt); };
      if (endOf(n + 1) > until + 1e-9 * dt) break;
      // A chunk without the GIL: up to the next callback, and at most ~0.1 s of wall time.
      long long chunk = max_steps - done;
      for (const auto& c : callbacks_) chunk = std::min(chunk, c.every - n % c.every);
      bool more = true;
      long long stepped = 0;
      {
        py::gil_scoped_release nogil;
        const auto t0 = Clock::now();
        while (stepped < chunk && more && endOf(session_->stepsDone() + 1) <= until + 1e-9 * dt) {
          more = session_->step();
          ++stepped;
          if (Clock::now() - t0 > std::chrono::milliseconds(100)) break;
        }
      }
      done += stepped;
      n = session_->stepsDone();
      if (session_->summary().status == "failed") {
        session_->finish();
        throw SimulationFailure(session_->summary().reason);
      }
      for (const auto& c : callbacks_)
        if (n % c.every == 0 && stepped > 0) c.fn(py::cast(this, py::return_value_policy::reference));
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();  // KeyboardInterrupt: the run can go on
      if (!more || n >= total) {
        finish();
        break;
      }
    }
  }

  void step(long long n) {
    requireOpen();
    advance(n, std::numeric_limits<double>::infinity());
  }
  void run(std::optional<double> until) {
    // NaN compares false with every step's end time: no step would run and none would end the loop.
    if (until && std::isnan(*until)) throw py::value_error("run(until=nan): 'until' must be a time in seconds, not NaN");
    requireOpen();
    advance(std::numeric_limits<long long>::max(), until ? *until : std::numeric_limits<double>::infinity());
  }
  std::string finish() {
    session_->finish();
    return session_->summary().status;
  }
  void requireOpen() const {
    if (session_->finished())
      throw SimulationFailure("the run has finished (status " + session_->summary().status + "): open a new Simulation");
  }

  void addCallback(py::function fn, long long every) {
    if (every < 1) throw py::value_error("every must be >= 1");
    callbacks_.push_back({std::move(fn), every});
  }

  // "name.key" (a component's scene name, its parameter): the component offering AdjustableParameters.
  std::pair<AdjustableParameters*, std::string> adjustable(const std::string& path) {
    const auto dot = path.rfind('.');
    if (dot == std::string::npos || dot == 0)
      throw py::value_error("'" + path + "': expected COMPONENT.KEY, e.g. 'motor.angular_velocity'");
    const std::string name = path.substr(0, dot), key = path.substr(dot + 1);
    std::vector<std::string> names;
    for (const auto& [spec, component] : session_->world().components()) {
      if (spec->name != name) {
        names.push_back(spec->name);
        continue;
      }
      if (auto* a = component->as<AdjustableParameters>()) return {a, key};
      throw py::value_error(spec->section + " '" + name + "' (" + spec->type +
                            ") has no parameters that can change during a run");
    }
    const std::string near = closestMatch(name, names);
    throw py::value_error("no component named '" + name + "'" + (near.empty() ? "" : "; did you mean '" + near + "'?"));
  }
  py::object parameter(const std::string& path) {
    auto [a, key] = adjustable(path);
    std::vector<double> v;
    try {
      v = a->parameter(key);
    } catch (const ParamError& e) {
      throw py::value_error(path + ": " + e.what());
    }
    if (v.size() == 1) return py::float_(v[0]);
    return py::array_t<double>(static_cast<py::ssize_t>(v.size()), v.data());
  }
  void setParameter(const std::string& path, py::object value) {
    requireOpen();
    auto [a, key] = adjustable(path);
    auto arr = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(value);
    if (!arr) throw py::value_error(path + ": expected a number or a sequence of numbers");
    std::vector<double> v(arr.data(), arr.data() + arr.size());
    try {
      a->setParameter(key, v, session_->world().time());
    } catch (const ParamError& e) {
      throw py::value_error(path + ": " + e.what());
    }
  }
  py::dict adjustableParameters() {
    py::dict d;
    for (const auto& [spec, component] : session_->world().components())
      if (auto* a = component->as<AdjustableParameters>()) d[py::str(spec->name)] = a->adjustableParameters();
    return d;
  }

  int rodIndex(const std::string& name) {
    KernelWorld& w = session_->world();
    std::vector<std::string> names;
    for (int i = 0; i < w.numRods(); ++i) {
      if (w.rod(i).name() == name) return i;
      names.push_back(w.rod(i).name());
    }
    const std::string near = closestMatch(name, names);
    throw py::key_error("no rod named '" + name + "'" + (near.empty() ? "" : "; did you mean '" + near + "'?"));
  }

  Session& session() { return *session_; }
  const Scene& scene() const { return scene_; }
  std::recursive_mutex& mutex() { return mutex_; }

 private:
  std::recursive_mutex mutex_;
  TypeRegistry registry_;
  Scene scene_;
  std::map<std::string, PyForceSpec> py_forces_;
  std::unique_ptr<Session> session_;  // last: destroyed first, while the scene and registry live
  std::vector<Callback> callbacks_;
};

// A rod of a Simulation; each property is a fresh NumPy array (a copy of the state now).
struct RodView {
  py::object owner;  // keeps the Simulation alive
  Simulation* sim;
  int index;
  std::shared_ptr<const NodeLayout> layout;
  Rod& rod() const { return sim->session().world().rod(index); }
};

py::list pluginList() {
  TypeRegistry registry;
  loadPlugins(registry, {});
  py::list out;
  for (const auto& p : registry.plugins()) {
    py::dict d;
    d["name"] = p.name;
    d["version"] = p.version;
    d["library"] = p.library;
    d["types"] = p.types;
    out.append(d);
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(_rodsim, m) {
  m.doc() = "rodsim: build, run, steer and read rod simulations (the kernel's own time loop).";
  m.attr("sdk_version") = RODSIM_SDK_VERSION;
  useModulePluginDirectory();
  py::register_exception<InputError>(m, "InputError", PyExc_ValueError);
  py::register_exception<SimulationFailure>(m, "SimulationError", PyExc_RuntimeError);

  py::class_<PyForceSpec>(m, "_PythonForceSpec")
      .def(py::init([](std::string name, std::string rod, py::function fn, bool every_evaluation) {
             return PyForceSpec{std::move(name), std::move(rod), std::move(fn), every_evaluation};
           }),
           py::arg("name"), py::arg("rod"), py::arg("fn"), py::arg("every_evaluation"));

  py::class_<Simulation>(m, "_Simulation")
      .def(py::init<const std::string&, const std::vector<std::string>&, const std::string&, bool, bool, bool,
                    const std::vector<PyForceSpec>&>(),
           py::arg("scene"), py::arg("sets"), py::arg("output"), py::arg("force"), py::arg("quiet"),
           py::arg("progress"), py::arg("forces"))
      .def("step", [](Simulation& s, long long n) { Guard g(s.mutex()); s.step(n); }, py::arg("n") = 1)
      .def("run", [](Simulation& s, std::optional<double> until) { Guard g(s.mutex()); s.run(until); },
           py::arg("until") = py::none())
      .def("close", [](Simulation& s) { Guard g(s.mutex()); return s.finish(); })
      .def("add_callback", [](Simulation& s, py::function fn, long long every) { Guard g(s.mutex()); s.addCallback(std::move(fn), every); },
           py::arg("fn"), py::arg("every") = 1)
      .def("parameter", [](Simulation& s, const std::string& path) { Guard g(s.mutex()); return s.parameter(path); })
      .def("set_parameter", [](Simulation& s, const std::string& path, py::object v) { Guard g(s.mutex()); s.setParameter(path, std::move(v)); })
      .def("adjustable_parameters", [](Simulation& s) { Guard g(s.mutex()); return s.adjustableParameters(); })
      .def("summary_json", [](Simulation& s) { Guard g(s.mutex()); return s.session().summaryJson(); })
      .def_property_readonly("time", [](Simulation& s) { Guard g(s.mutex()); return s.session().world().time(); })
      .def_property_readonly("step_count", [](Simulation& s) { Guard g(s.mutex()); return s.session().stepsDone(); })
      .def_property_readonly("total_steps", [](Simulation& s) { Guard g(s.mutex()); return s.session().totalSteps(); })
      .def_property_readonly("dt", [](Simulation& s) { Guard g(s.mutex()); return s.scene().dt; })
      .def_property_readonly("duration", [](Simulation& s) { Guard g(s.mutex()); return s.scene().duration; })
      .def_property_readonly("finished", [](Simulation& s) { Guard g(s.mutex()); return s.session().finished(); })
      .def_property_readonly("status", [](Simulation& s) { Guard g(s.mutex()); return s.session().summary().status; })
      .def_property_readonly("reason", [](Simulation& s) { Guard g(s.mutex()); return s.session().summary().reason; })
      .def_property_readonly("output_dir", [](Simulation& s) { Guard g(s.mutex()); return s.session().outputDir(); })
      .def_property_readonly("rod_names",
                             [](Simulation& s) {
                               Guard g(s.mutex());
                               std::vector<std::string> names;
                               for (const auto& r : s.session().world().rods()) names.push_back(r.object->name());
                               return names;
                             })
      .def("rod", [](py::object self, const std::string& name) {
        auto& s = self.cast<Simulation&>();
        Guard g(s.mutex());
        const int i = s.rodIndex(name);
        return RodView{self, &s, i, std::make_shared<const NodeLayout>(s.session().world().rod(i))};
      });

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

  m.def("plugins", &pluginList, "The plugin libraries found and the types each provides (`rodsim plugins`).");
  m.def("plugin_search_path", []() { return pluginSearchDirectories({}); },
        "The directories searched for plugins, in order.");
  m.def("describe", [](const std::string& type) {
        TypeRegistry registry;
        loadPlugins(registry, {});
        return describeType(registry, type);
      }, py::arg("type"), "Every parameter of a component type or kernel section (`rodsim describe TYPE`).");
}
