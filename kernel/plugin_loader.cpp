// Finding, checking and registering plugin libraries (Boost.DLL stays inside this file).
#include <rodsim/kernel/registry.h>
#include <rodsim/kernel/scene.h>

#include <boost/dll/shared_library.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

namespace fs = std::filesystem;

namespace rodsim::kernel {

struct LoadedLibrary {
  boost::dll::shared_library lib;
};

std::string TypeRegistry::key(ComponentKind kind, const std::string& type) {
  return std::string(kindName(kind)) + ":" + type;
}

void TypeRegistry::beginPlugin(std::string name, std::string library, std::shared_ptr<LoadedLibrary> handle) {
  current_ = PluginRecord{std::move(name), "", std::move(library), {}};
  current_handle_ = std::move(handle);
}

void TypeRegistry::endPlugin(std::string version) {
  current_.version = std::move(version);
  plugins_.push_back(current_);
  current_handle_.reset();
}

void TypeRegistry::add(ComponentKind kind, Schema schema, Factory factory) {
  const std::string k = key(kind, schema.type());
  if (types_.count(k)) {
    const auto& first = types_.at(k);
    shadowed_.push_back(fmt::format("{} '{}' from {} (already provided by {})", kindName(kind), schema.type(),
                                    current_.library, first.library));
    return;
  }
  current_.types.push_back(std::string(kindName(kind)) + " " + schema.type());
  types_.emplace(k, ComponentType{kind, std::move(schema), factory, current_.name, current_.library, current_handle_});
}

const ComponentType* TypeRegistry::find(ComponentKind kind, const std::string& type) const {
  auto it = types_.find(key(kind, type));
  return it == types_.end() ? nullptr : &it->second;
}

std::vector<std::string> TypeRegistry::typeNames(ComponentKind kind) const {
  std::vector<std::string> out;
  for (const auto& [k, t] : types_)
    if (t.kind == kind) out.push_back(t.schema.type());
  std::sort(out.begin(), out.end());
  return out;
}

namespace {
// Empty: <prefix>/lib/rodsim/plugins beside the running executable (<prefix>/bin/rodsim).
std::string& installedPluginDirectoryOverride() {
  static std::string dir;
  return dir;
}
}  // namespace

void setInstalledPluginDirectory(std::string dir) { installedPluginDirectoryOverride() = std::move(dir); }

std::vector<std::string> pluginSearchDirectories(const std::vector<std::string>& scene_paths) {
  std::vector<std::string> dirs(scene_paths.begin(), scene_paths.end());
  if (const char* env = std::getenv("RODSIM_PLUGIN_PATH")) {
    std::string s = env;
    for (std::size_t pos = 0; pos <= s.size();) {
      std::size_t end = s.find(':', pos);
      if (end == std::string::npos) end = s.size();
      if (end > pos) dirs.push_back(s.substr(pos, end - pos));
      pos = end + 1;
    }
  }
  // The install prefix is where this executable lives (<prefix>/bin/rodsim), so an installed tree
  // can be moved or installed with `cmake --install --prefix`. An installed rodsim uses the plugins
  // installed with it and never searches the tree it was built in (which would list every plugin a
  // second time as ignored); the build tree's own binary has no <build>/lib/rodsim/plugins and
  // searches the build tree.
  std::error_code ec;
  fs::path installed = installedPluginDirectoryOverride();
  if (installed.empty()) {
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) installed = (exe.parent_path().parent_path() / RODSIM_INSTALL_PLUGIN_RELDIR).lexically_normal();
  }
  if (!installed.empty() && fs::is_directory(installed, ec))
    dirs.push_back(installed.string());
  else
    dirs.push_back(RODSIM_BUILD_PLUGIN_DIR);
  return dirs;
}

namespace {

void loadLibrary(TypeRegistry& registry, const fs::path& file) {
  auto handle = std::make_shared<LoadedLibrary>();
  try {
    handle->lib.load(file.string(), boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  } catch (const std::exception& e) {
    throw InputError(fmt::format("{}: cannot load plugin library: {}", file.string(), e.what()));
  }
  if (!handle->lib.has(RODSIM_ENTRY_POINT_NAME))
    throw InputError(fmt::format(
        "{}: not a rodsim plugin: it exports no '{}' entry point (build it with rodsim_add_plugin() "
        "and the RODSIM_PLUGIN macro from <rodsim/plugin.h>)",
        file.string(), RODSIM_ENTRY_POINT_NAME));
  auto entry = handle->lib.get<const PluginInfo*()>(RODSIM_ENTRY_POINT_NAME);
  const PluginInfo* info = entry();
  // Check the version fields before touching anything else in the struct.
  if (!info || info->abi_version != RODSIM_ABI_VERSION)
    throw InputError(fmt::format(
        "{}: plugin built for rodsim ABI version {}, this rodsim has ABI version {}; rebuild the plugin "
        "against this rodsim's SDK (find_package(rodsim) from its install prefix) or use the rodsim it was built for",
        file.string(), info ? info->abi_version : 0u, RODSIM_ABI_VERSION));
  if (info->struct_size != sizeof(PluginInfo))
    throw InputError(fmt::format("{}: plugin info has size {}, expected {}; rebuild the plugin against this SDK",
                                 file.string(), info->struct_size, sizeof(PluginInfo)));
  if (std::strcmp(info->sdk_signature, RODSIM_SDK_SIGNATURE) != 0) {
    // The alignment is the signature's last part (version.h): when only it differs, say which flag.
    const std::string theirs = info->sdk_signature, ours = RODSIM_SDK_SIGNATURE;
    auto withoutAlignment = [](const std::string& s) { return s.substr(0, s.find("; eigen-align")); };
    const bool alignment_only = withoutAlignment(theirs) == withoutAlignment(ours);
    throw InputError(fmt::format("{}: plugin built with SDK '{}', this rodsim expects '{}'; rebuild the plugin "
                                 "with the same compiler and SDK{}",
                                 file.string(), theirs, ours,
                                 alignment_only ? " and the same instruction-set flags: its Eigen types are aligned "
                                                  "for another -march (build both with or both without -march=native)"
                                                : ""));
  }
  if (info->sdk_minor > RODSIM_SDK_MINOR)
    throw InputError(fmt::format("{}: plugin built against SDK 1.{}, newer than this rodsim's SDK {}: it may rely on "
                                 "capabilities this rodsim does not know; update rodsim or rebuild the plugin against "
                                 "this SDK",
                                 file.string(), info->sdk_minor, RODSIM_SDK_VERSION));
  // Loaded libraries are never unloaded, not even at exit: objects, exceptions and static data from
  // a plugin may outlive the registry, and tools (LeakSanitizer, profilers) need the code mapped.
  static auto* forever = new std::vector<std::shared_ptr<LoadedLibrary>>();
  forever->push_back(handle);
  registry.beginPlugin(info->name, file.string(), handle);
  try {
    info->register_components(registry);
  } catch (const std::exception& e) {
    throw InputError(fmt::format("{}: plugin '{}' failed to register its components: {}", file.string(),
                                 info->name, e.what()));
  }
  registry.endPlugin(info->version);
}

}  // namespace

void loadPlugins(TypeRegistry& registry, const std::vector<std::string>& scene_paths) {
  for (const auto& entry : pluginSearchDirectories(scene_paths)) {
    fs::path p(entry);
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) {
      loadLibrary(registry, p);
      continue;
    }
    if (!fs::is_directory(p, ec)) {
      // Only paths the scene named explicitly must exist.
      if (std::find(scene_paths.begin(), scene_paths.end(), entry) != scene_paths.end())
        throw InputError(fmt::format("plugin path '{}' (from the scene's [plugins] paths) does not exist", entry));
      continue;
    }
    std::vector<fs::path> files;
    for (const auto& f : fs::directory_iterator(p, ec)) {
      const std::string name = f.path().filename().string();
      if (f.is_regular_file() && name.rfind("rodsim-", 0) == 0 && f.path().extension() == ".so")
        files.push_back(f.path());
    }
    std::sort(files.begin(), files.end());  // deterministic order
    for (const auto& f : files) loadLibrary(registry, f);
  }
}

}  // namespace rodsim::kernel
