// Component types provided by loaded plugins, and the libraries that keep them alive.
#pragma once

#include <rodsim/plugin.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace rodsim::kernel {

// A loaded plugin library. Opaque here so that no Boost type leaks beyond plugin_loader.cpp.
struct LoadedLibrary;

struct ComponentType {
  ComponentKind kind;
  Schema schema;
  Registry::Factory factory;
  std::string plugin;   // plugin name from its PluginInfo
  std::string library;  // file it was loaded from
  std::shared_ptr<LoadedLibrary> handle;
};

struct PluginRecord {
  std::string name, version, library;
  std::vector<std::string> types;
};

class TypeRegistry : public Registry {
 public:
  void add(ComponentKind kind, Schema schema, Factory factory) override;

  // Set by the loader while a plugin's register_components runs.
  void beginPlugin(std::string name, std::string library, std::shared_ptr<LoadedLibrary> handle);
  void endPlugin(std::string version);

  const ComponentType* find(ComponentKind kind, const std::string& type) const;
  std::vector<std::string> typeNames(ComponentKind kind) const;
  const std::vector<PluginRecord>& plugins() const { return plugins_; }
  const std::map<std::string, ComponentType>& types() const { return types_; }
  // Duplicate registrations that were ignored (an earlier directory in the search order won).
  const std::vector<std::string>& shadowed() const { return shadowed_; }

  // Creates a component; the returned object keeps its library loaded. Exceptions from the
  // plugin propagate (callers add the component's location).
  template <class T> std::shared_ptr<T> create(const ComponentType& type, const Params& p) const {
    Component* raw = type.factory(p);
    auto* typed = dynamic_cast<T*>(raw);
    if (!typed) {
      delete raw;
      throw std::runtime_error("plugin '" + type.plugin + "' made a component of the wrong kind for type '" +
                               type.schema.type() + "'");
    }
    auto lib = type.handle;
    return std::shared_ptr<T>(typed, [lib](T* obj) { delete obj; });
  }

 private:
  static std::string key(ComponentKind kind, const std::string& type);
  std::map<std::string, ComponentType> types_;
  std::vector<PluginRecord> plugins_;
  std::vector<std::string> shadowed_;
  PluginRecord current_;
  std::shared_ptr<LoadedLibrary> current_handle_;
};

// Loads every plugin found in the search order: `scene_paths` (files or directories), the
// directories in RODSIM_PLUGIN_PATH, then the installed plugins if they exist, else the build tree
// (one order for the CLI and Python; docs/writing-a-plugin.md, section 8). Directories contribute
// their `rodsim-*.so` files; explicit files are loaded whatever their name. A library that cannot
// be loaded (missing, no entry point, ABI or SDK mismatch, registration failure) is an InputError
// naming the file and the fix.
void loadPlugins(TypeRegistry& registry, const std::vector<std::string>& scene_paths);

// The directories searched, in order, for messages and `rodsim plugins`.
std::vector<std::string> pluginSearchDirectories(const std::vector<std::string>& scene_paths);

// Where this installation keeps its plugins. Default: <prefix>/lib/rodsim/plugins beside the running
// executable (<prefix>/bin/rodsim). A host that is not the rodsim executable (the Python module,
// whose executable is the interpreter) names the directory installed beside itself.
void setInstalledPluginDirectory(std::string dir);

}  // namespace rodsim::kernel
