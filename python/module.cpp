// The `rodsim._rodsim` extension: the kernel's Session (the CLI's own time loop) driven from Python,
// with NumPy views of the state, steering between steps and forces written in Python. The pure-Python
// parts (read_output, the scene --set values as TOML text) are in rodsim/__init__.py.
// simulation.h: the Simulation and its threads; rod.cpp: rodsim.Rod; python_force.cpp: rodsim.PythonForce.
#include "simulation.h"

#include <dlfcn.h>

#include <filesystem>

namespace py = pybind11;
namespace fs = std::filesystem;
using namespace rodsim;
using namespace rodsim::kernel;
using namespace rodsim::python;

namespace {

// The plugins installed beside this module play the part of the CLI's <prefix>/lib/rodsim/plugins:
// the kernel's one search order, with the build tree when they are absent. A pip-installed package
// carries them in rodsim/_install/ (RODSIM_PYTHON_BUNDLED_PLUGIN_RELDIR, python/build_backend), a
// `cmake --install` puts them under the prefix (RODSIM_PYTHON_PLUGIN_RELDIR); both set by CMake.
void useModulePluginDirectory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&useModulePluginDirectory), &info) == 0 || !info.dli_fname) return;
  const fs::path here = fs::path(info.dli_fname).parent_path();
  std::error_code ec;
  const fs::path bundled = here / RODSIM_PYTHON_BUNDLED_PLUGIN_RELDIR;
  const fs::path dir = fs::is_directory(bundled, ec) ? bundled : here / RODSIM_PYTHON_PLUGIN_RELDIR;
  setInstalledPluginDirectory(dir.lexically_normal().string());
}

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

  bindPythonForceSpec(m);

  py::class_<Simulation>(m, "_Simulation")
      .def(py::init<const std::string&, const std::string&, const std::string&, const std::vector<std::string>&,
                    const std::string&, bool, bool, bool, const std::vector<PyForceSpec>&, const std::string&>(),
           py::arg("scene"), py::arg("origin"), py::arg("base_dir"), py::arg("sets"), py::arg("output"),
           py::arg("force"), py::arg("quiet"), py::arg("progress"), py::arg("forces"), py::arg("restart"))
      .def("step", [](Simulation& s, long long n) { Guard g(s.mutex()); s.step(n); }, py::arg("n") = 1)
      .def("run", [](Simulation& s, std::optional<double> until) { Guard g(s.mutex()); s.run(until); },
           py::arg("until") = py::none())
      .def("close", [](Simulation& s, bool checkpoint) {
             Guard g(s.mutex());
             // Before the end, as the CLI's Ctrl-C: a checkpoint of the last step first, so that
             // Simulation.restart(dir) continues the run.
             if (checkpoint && !s.session().finished()) s.session().interrupt("stopped by its caller");
             return s.finish();
           }, py::arg("checkpoint") = false)
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

  bindRod(m);
  bindState(m);
  bindRodSetters(m);  // after every getter

  m.def("plugins", &pluginList, "The plugin libraries found and the types each provides (`rodsim plugins`).");
  m.def("plugin_search_path", []() { return pluginSearchDirectories({}); },
        "The directories searched for plugins, in order.");
  m.def("describe", [](const std::string& type) {
        TypeRegistry registry;
        loadPlugins(registry, {});
        return describeType(registry, type);
      }, py::arg("type"), "Every parameter of a component type or kernel section (`rodsim describe TYPE`).");
}
