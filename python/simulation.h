// The Simulation behind rodsim.Simulation, and the view of one of its rods (module-internal).
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
#pragma once

#include "arrays.h"
#include "python_force.h"

#include <rodsim/kernel/describe.h>
#include <rodsim/kernel/output.h>
#include <rodsim/kernel/registry.h>
#include <rodsim/kernel/scene.h>
#include <rodsim/kernel/simulation.h>
#include <rodsim/kernel/world.h>

#include <rodsim/capabilities.h>
#include <rodsim/version.h>

#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace rodsim::python {

namespace py = pybind11;
namespace fs = std::filesystem;
using namespace rodsim::kernel;

// A step failed (status "failed"): rodsim.SimulationError, with summary.json's reason.
class SimulationFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

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
  // `scene`: a scene file's path when `origin` is empty, else TOML text that `origin` ("<string>",
  // "<dict>") names in messages, its relative paths resolved against `base_dir` (kernel SceneText).
  // `restart`: a run directory to continue from its latest checkpoint (`rodsim run --restart DIR`):
  // the scene, the --set values and the output directory are the checkpoint's, as for the CLI.
  Simulation(const std::string& scene, const std::string& origin, const std::string& base_dir,
             const std::vector<std::string>& sets_given, const std::string& output_given, bool replace, bool quiet,
             bool progress, const std::vector<PyForceSpec>& forces, const std::string& restart) {
    std::string scene_file = origin.empty() ? scene : "";
    std::vector<std::string> sets = sets_given;
    std::string output = output_given;
    std::optional<SceneText> text;
    if (!origin.empty()) text = SceneText{scene, origin, base_dir, kTextSceneName};
    if (!restart.empty()) {
      checkpoint_ = std::make_unique<Checkpoint>(readLatestCheckpoint(restart));
      sets = checkpoint_->overrides;
      output = restart;
      scene_file = checkpoint_->scene_file;
      text.reset();
      // A scene that was given as text has its text in the run directory (below): read as the text
      // again, its relative paths resolve against `base_dir` as they did (the current directory).
      std::error_code ec;
      const fs::path f(scene_file);
      if (f.filename() == kTextSceneFile && fs::equivalent(f.parent_path(), restart, ec))
        text = SceneText{readSceneText(scene_file), scene_file, base_dir, kTextSceneName};
    }
    // The sets apply to [plugins] paths too, as `rodsim run --set plugins.paths=[...]` (issue 43).
    loadPlugins(registry_, text ? readPluginPaths(*text, sets) : readPluginPaths(scene_file, sets));
    if (!forces.empty()) {
      registry_.beginPlugin("python", "<rodsim Python module>", nullptr);
      registry_.add(ComponentKind::Force, pythonForceSchema(), &makePythonForce);
      registry_.endPlugin(RODSIM_SDK_VERSION);
    }
    scene_ = text ? parseScene(*text, sets, registry_) : loadScene(scene_file, sets, registry_);
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
    // The checkpoint's identity hashes this text: a dict's is the TOML that rodsim.scene.dumps wrote,
    // so a run of that text as a file has the same identity (and writes the same files).
    options.scene_text = text ? text->text : readSceneText(scene_file);
    options.overrides = sets;
    options.replace_output = replace;
    options.restart = checkpoint_.get();
    // A scene given as text is kept in the run directory, and summary.json and the checkpoints name
    // that file as the scene: the directory tells what ran, and a restart finds the text there.
    fs::path text_copy;
    if (text) {
      text_copy = fs::absolute(fs::path(output.empty() ? scene_.output.dir : output)) / kTextSceneFile;
      scene_.file = text_copy.string();
    }
    g_building = &py_forces_;
    try {
      session_ = std::make_unique<Session>(scene_, registry_, options);
    } catch (...) {
      g_building = nullptr;
      throw;
    }
    g_building = nullptr;
    // Written once the Session holds the directory (it refuses another run's before anything is
    // written); through a temporary file and a rename, so a reader never sees half of it.
    if (text && restart.empty()) {
      const fs::path tmp = text_copy.string() + ".tmp";
      {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << text->text;
        if (!out.flush()) throw std::runtime_error("cannot write " + tmp.string());
      }
      std::error_code ec;
      fs::rename(tmp, text_copy, ec);
      if (ec) throw std::runtime_error("cannot write " + text_copy.string() + ": " + ec.message());
    }
  }

  // The file in the run directory that holds a scene given as text, and the run name of such a scene
  // without [simulation] name (a file's is its stem): out/scene by default.
  static constexpr const char* kTextSceneFile = "python-scene.toml";
  static constexpr const char* kTextSceneName = "scene";

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
    if (n < 0) throw py::value_error("step(n=" + std::to_string(n) + "): n must be >= 0");
    requireOpen();
    advance(n, std::numeric_limits<double>::infinity());
  }
  void run(std::optional<double> until) {
    // NaN compares false with every step's end time: no step would run and none would end the loop.
    if (until && !std::isfinite(*until))
      throw py::value_error(std::string("run(until=") + (std::isnan(*until) ? "nan" : *until > 0 ? "inf" : "-inf") +
                            "): 'until' must be a finite time in seconds, not " +
                            (std::isnan(*until) ? "NaN" : "infinite") + " (None: to the scene's end)");
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
  // A parameter that is not adjustable is fixed when the world is built: the error says which keys
  // can change during a run and that the others are given before it (set= of rodsim.Simulation,
  // the CLI's --set).
  std::pair<AdjustableParameters*, std::string> adjustable(const std::string& path) {
    const auto dot = path.rfind('.');
    if (dot == std::string::npos || dot == 0)
      throw py::value_error("'" + path + "': expected COMPONENT.KEY, e.g. 'motor.angular_velocity'" + adjustableKeysText());
    const std::string name = path.substr(0, dot), key = path.substr(dot + 1);
    std::vector<std::string> names;
    for (const auto& [spec, component] : session_->world().components()) {
      if (spec->name != name) {
        names.push_back(spec->name);
        continue;
      }
      if (auto* a = component->as<AdjustableParameters>()) return {a, key};
      throw py::value_error("'" + path + "': " + spec->section + " '" + name + "' (" + spec->type +
                            ") has no parameters that can change during a run" + adjustableKeysText());
    }
    const std::string near = closestMatch(name, names);
    throw py::value_error("'" + path + "': no component named '" + name + "'" +
                          (near.empty() ? "" : "; did you mean '" + near + "'?") + adjustableKeysText());
  }
  std::string adjustableKeysText() {
    std::string keys;
    for (const auto& [spec, component] : session_->world().components())
      if (auto* a = component->as<AdjustableParameters>())
        for (const auto& k : a->adjustableParameters()) keys += (keys.empty() ? "" : ", ") + spec->name + "." + k;
    return std::string(". ") + (keys.empty() ? "No parameter of this scene can change during a run"
                                             : "Parameters that can change during a run: " + keys) +
           "; every other one is given before the run (rodsim.Simulation(scene, set={...}), as --set)";
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
    // A component's own checks are ranges, which NaN passes (every comparison with it is false).
    for (std::size_t i = 0; i < v.size(); ++i)
      if (!std::isfinite(v[i]))
        throw py::value_error(path + ": " + (v.size() == 1 ? std::string("the value") : "element " + std::to_string(i)) +
                              " is " + (std::isnan(v[i]) ? "NaN" : "infinite") + "; parameters must be finite");
    try {
      a->setParameter(key, v, session_->world().time());
    } catch (const ParamError& e) {
      const auto keys = a->adjustableParameters();
      const bool known = std::find(keys.begin(), keys.end(), key) != keys.end();
      throw py::value_error(path + ": " + e.what() + (known ? std::string() : adjustableKeysText()));
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
  std::unique_ptr<Checkpoint> checkpoint_;  // a restart's (RunOptions::restart points to it)
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

// The Python classes, each bound in its own file: rodsim.Rod (rod.cpp); what a Simulation and its rods
// read beyond the node arrays (state.cpp: adds to rodsim.Rod and rodsim._Simulation, bound before it).
void bindRod(py::module_& m);
void bindState(py::module_& m);
// The state setters of rodsim.Rod (rod.cpp), added to the properties bindRod and bindState define.
void bindRodSetters(py::module_& m);

}  // namespace rodsim::python
