// rodsim command line: run | check | compare | sweep | fit | optimize | plugins | describe | render | plot.
// Exit status: 0 ok, 2 bad input, 3 the simulation failed (docs/scene-format.md).
// The CLI sits above every layer: the kernel (run, check, plugins, describe), the studies
// (compare, sweep, fit, optimize) and the pictures (render, plot).
#include <rodsim/kernel/checkpoint.h>
#include <rodsim/kernel/describe.h>
#include <rodsim/kernel/process_memory.h>
#include <rodsim/kernel/scene.h>
#include <rodsim/kernel/simulation.h>

#include "compare.h"
#include "fit.h"
#include "optimize.h"
#include "sweep.h"
#include "viz.h"

#include <rodsim/version.h>

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <cstring>
#include <string>
#include <vector>

using namespace rodsim;
using namespace rodsim::kernel;

namespace {

constexpr const char* kUsage =
    "usage:\n"
    "  rodsim --version                               the rodsim and plugin SDK versions (also -V)\n"
    "  rodsim run SCENE.toml [--set KEY=VALUE]... [--output DIR] [--force] [--threads N] [--quiet]\n"
    "                                                 --force: replace another run's files in DIR; --threads N:\n"
    "                                                 the run's threads (simulation.threads; 0: all cores; results\n"
    "                                                 bit for bit those of 1, the default)\n"
    "  rodsim run --restart DIR [--quiet]             continue an interrupted run from its last checkpoint\n"
    "  rodsim check SCENE.toml [--set KEY=VALUE]...   validate only (every component built and bound, the first step\n"
    "                                                 taken), write nothing\n"
    "  rodsim compare SCENE.toml --contact MODEL,MODEL... [--set KEY=VALUE]... [--contact-set MODEL:KEY=VALUE]...\n"
    "                 [--set-for MODEL:KEY=VALUE]... [--output DIR] [--jobs N] [--quiet]\n"
    "                                                 the scene once per contact model, side by side; --contact-set\n"
    "                                                 sets a [[contact]] key, --set-for any key (e.g. simulation.dt) of one model's run\n"
    "  rodsim sweep SWEEP.toml [--output DIR] [--jobs N] [--list | --index K | --merge] [--quiet]\n"
    "                                                 one run per row of a table of scene values (docs/sweeps.md)\n"
    "  rodsim fit FIT.toml [--output DIR] [--jobs N] [--quiet]\n"
    "                                                 estimate scene keys from measured probes (Ceres; docs/inverse.md)\n"
    "  rodsim optimize OPT.toml [--output DIR] [--jobs N] [--quiet]\n"
    "                                                 minimize/maximize a probe statistic with CMA-ES (docs/inverse.md)\n"
    "  rodsim plugins                                 plugin libraries found and the types each provides\n"
    "  rodsim describe TYPE                           every parameter of a component type\n"
    "  rodsim describe --all [--markdown]             every type (the docs reference)\n"
    "  rodsim describe --compatibility                which rod, solver and contact types work together\n";

std::string usage() { return std::string(kUsage) + viz::kUsage; }

struct Args {
  std::string verb, scene, output, type, restart;
  std::vector<std::string> sets, contact_sets, sets_for, models;
  int jobs = 2;
  bool quiet = false, all = false, markdown = false, compatibility = false, force = false;
};

Args parseArgs(int argc, char** argv) {
  if (argc < 2) throw InputError(std::string("missing command\n") + usage());
  Args a;
  a.verb = argv[1];
  const std::vector<std::string> verbs{"run", "check", "compare", "sweep", "fit", "optimize", "plugins", "describe", "render", "plot"};
  if (a.verb == "--help" || a.verb == "-h" || a.verb == "help") {
    std::printf("%s", usage().c_str());
    std::exit(0);
  }
  if (std::find(verbs.begin(), verbs.end(), a.verb) == verbs.end()) {
    std::string near = closestMatch(a.verb, verbs);
    throw InputError(fmt::format("unknown command '{}'{}\n{}", a.verb, near.empty() ? "" : "; did you mean '" + near + "'?", usage()));
  }
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char* opt) -> std::string {
      if (i + 1 >= argc) throw InputError(fmt::format("option {} needs a value\n{}", opt, usage()));
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {  // `rodsim VERB --help` as well as `rodsim --help`
      std::printf("%s", usage().c_str());
      std::exit(0);
    }
    if (arg == "--set") a.sets.push_back(value("--set"));
    else if (arg.rfind("--set=", 0) == 0) a.sets.push_back(arg.substr(6));
    else if (arg == "--output") a.output = value("--output");
    else if (arg == "--restart" && a.verb == "run") a.restart = value("--restart");
    else if (arg == "--contact" && a.verb == "compare") {
      const auto list = studies::splitModelList(value("--contact"));
      a.models.insert(a.models.end(), list.begin(), list.end());
    } else if (arg == "--contact-set" && a.verb == "compare") a.contact_sets.push_back(value("--contact-set"));
    else if (arg == "--set-for" && a.verb == "compare") a.sets_for.push_back(value("--set-for"));
    else if (arg == "--jobs" && a.verb == "compare") {
      const std::string n = value("--jobs");
      try {
        std::size_t used = 0;
        a.jobs = std::stoi(n, &used);
        if (used != n.size() || a.jobs < 1) throw std::invalid_argument(n);
      } catch (const std::exception&) {
        throw InputError(fmt::format("--jobs '{}': expected a whole number >= 1", n));
      }
    } else if (arg == "--quiet") a.quiet = true;
    else if (arg == "--force" && a.verb == "run") a.force = true;
    else if (arg == "--threads" && a.verb == "run") {
      // the scene key simulation.threads, given as a --set (a restart keeps the checkpoint's)
      const std::string n = value("--threads");
      std::size_t used = 0;
      int threads = -1;
      try {
        threads = std::stoi(n, &used);
      } catch (const std::exception&) {
      }
      if (used != n.size() || threads < 0)
        throw InputError(fmt::format("--threads '{}': expected a whole number >= 0 (0: every hardware thread)", n));
      a.sets.push_back(fmt::format("simulation.threads={}", threads));
    }
    else if (arg == "--all") a.all = true;
    else if (arg == "--compatibility") a.compatibility = true;
    else if (arg == "--markdown") a.markdown = true;
    else if (!arg.empty() && arg[0] == '-') throw InputError(fmt::format("unknown option '{}'\n{}", arg, usage()));
    else if (a.verb == "describe" && a.type.empty()) a.type = arg;
    else if ((a.verb == "run" || a.verb == "check" || a.verb == "compare") && a.scene.empty()) a.scene = arg;
    else throw InputError(fmt::format("unexpected argument '{}'\n{}", arg, usage()));
  }
  if (!a.restart.empty() && (!a.scene.empty() || !a.sets.empty() || !a.output.empty() || a.force))
    throw InputError("--restart DIR takes the scene, its --set values and the output directory from the checkpoint; "
                     "give nothing else");
  if ((a.verb == "run" || a.verb == "check" || a.verb == "compare") && a.scene.empty() && a.restart.empty())
    throw InputError(fmt::format("'{}' needs a scene file\n{}", a.verb, usage()));
  if (a.verb == "compare" && a.models.empty())
    throw InputError(fmt::format("'compare' needs --contact MODEL,MODEL... (e.g. --contact imc,ipc)\n{}", usage()));
  if (a.verb == "describe" && a.type.empty() && !a.all && !a.compatibility)
    throw InputError(fmt::format("'describe' needs a component type (or --all, --compatibility)\n{}", usage()));
  return a;
}

int describe(const Args& a, const TypeRegistry& registry) {
  if (a.all) {
    std::printf("%s", referenceMarkdown(registry).c_str());
    return 0;
  }
  if (a.compatibility) {
    std::printf("%s", compatibilityMarkdown(registry).c_str());
    return 0;
  }
  std::printf("%s", describeType(registry, a.type).c_str());
  return 0;
}

int listPlugins(const TypeRegistry& registry) {
  std::printf("plugin search order:\n");
  for (const auto& d : pluginSearchDirectories({})) std::printf("  %s\n", d.c_str());
  std::printf("\nplugins:\n");
  for (const auto& p : registry.plugins()) {
    std::printf("  %s %s  (%s)\n", p.name.c_str(), p.version.c_str(), p.library.c_str());
    for (const auto& t : p.types) std::printf("      %s\n", t.c_str());
  }
  for (const auto& s : registry.shadowed()) std::printf("  ignored: %s\n", s.c_str());
  return 0;
}

// This executable, so that studies run their children with the same build.
std::string selfExecutable(const char* argv0) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(argv0) : self.string();
}

}  // namespace

int main(int argc, char** argv) {
  keepFreedMemoryInProcess();
  if (argc == 2 && (std::strcmp(argv[1], "--version") == 0 || std::strcmp(argv[1], "-V") == 0)) {
    std::printf("rodsim %s (SDK %s)\n", RODSIM_PROJECT_VERSION, RODSIM_SDK_VERSION);  // CMakeLists.txt, version.h
    return 0;
  }
  try {
    const std::string executable = selfExecutable(argv[0]);
    if (argc >= 2 && std::strcmp(argv[1], "sweep") == 0)  // parses its own options
      return studies::sweepCommand(std::vector<std::string>(argv + 2, argv + argc), executable);
    if (argc >= 2 && std::strcmp(argv[1], "fit") == 0)  // parse their own options
      return studies::fitCommand(std::vector<std::string>(argv + 2, argv + argc), executable);
    if (argc >= 2 && std::strcmp(argv[1], "optimize") == 0)
      return studies::optimizeCommand(std::vector<std::string>(argv + 2, argv + argc), executable);
    if (argc >= 2 && (std::strcmp(argv[1], "render") == 0 || std::strcmp(argv[1], "plot") == 0))  // no plugins needed
      return viz::runVerb(argv[1], std::vector<std::string>(argv + 2, argv + argc), executable);
    Args args = parseArgs(argc, argv);
    std::optional<Checkpoint> checkpoint;
    if (!args.restart.empty()) {
      checkpoint = readLatestCheckpoint(args.restart);
      args.scene = checkpoint->scene_file;
      args.sets = checkpoint->overrides;
      args.output = args.restart;
    }
    TypeRegistry registry;
    std::vector<std::string> scene_plugin_paths;
    if (!args.scene.empty()) scene_plugin_paths = readPluginPaths(args.scene, args.sets);
    try {
      loadPlugins(registry, scene_plugin_paths);
    } catch (const InputError& e) {
      if (args.verb == "plugins" || args.verb == "describe" || !args.scene.empty()) throw;
    }
    if (args.verb == "plugins") return listPlugins(registry);
    if (args.verb == "describe") return describe(args, registry);
    if (args.verb == "compare") {
      studies::CompareOptions c{args.scene, args.models, args.sets, args.contact_sets, args.sets_for, args.output, args.jobs, args.quiet};
      return studies::runCompare(c, registry, executable);
    }
    Scene scene = loadScene(args.scene, args.sets, registry);
    if (!args.quiet)
      for (const auto& note : scene.notes) std::fprintf(stderr, "rodsim: note: %s\n", note.c_str());
    if (args.verb == "check") {
      checkSceneAndFirstStep(scene, registry);  // binds every component and takes the first step, writing nothing
      std::printf("%s: ok (%zu rod(s), %zu force(s), %zu constraint(s), %zu contact model(s), solver %s)\n",
                  args.scene.c_str(), scene.rods.size(), scene.forces.size(), scene.constraints.size(),
                  scene.contacts.size(), scene.solver.type.c_str());
      return 0;
    }
    RunOptions options;
    options.output_dir = args.output;
    options.scene_text = readSceneText(args.scene);
    options.overrides = args.sets;
    options.restart = checkpoint ? &*checkpoint : nullptr;
    options.quiet = args.quiet;
    options.replace_output = args.force;
    options.progress = !args.quiet;
    return runSimulation(scene, registry, options);
  } catch (const InputError& e) {
    std::fprintf(stderr, "rodsim: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rodsim: internal error: %s\n", e.what());
    return 3;
  }
}
