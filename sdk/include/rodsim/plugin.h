// The plugin boundary: one exported C entry point per shared library.
//
//   RODSIM_PLUGIN("my-forces", "1.0.0", registry) {
//     registry.addForce<MyForce>();   // MyForce has `static Schema schema();` and MyForce(const Params&)
//   }
//
// The kernel reads the PluginInfo, checks abi_version, struct_size and sdk_signature, and only
// then calls register_components. Components must have a static `schema()` whose type() is the
// name used in scenes, and a constructor taking `const Params&`.
#pragma once

#include <rodsim/capabilities.h>
#include <rodsim/constraint.h>
#include <rodsim/contact.h>
#include <rodsim/force.h>
#include <rodsim/rod.h>
#include <rodsim/solver.h>
#include <rodsim/version.h>

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace rodsim {

// Implemented by the kernel. Factories are plain function pointers (no std::function or
// type_info crosses the boundary); the library stays loaded while any object it made lives.
class Registry {
 public:
  using Factory = Component* (*)(const Params&);
  virtual ~Registry() = default;
  virtual void add(ComponentKind kind, Schema schema, Factory factory) = 0;

  template <class T> void addRod() { addType<T>(ComponentKind::Rod); }
  template <class T> void addForce() { addType<T>(ComponentKind::Force); }
  template <class T> void addConstraint() { addType<T>(ComponentKind::Constraint); }
  template <class T> void addContact() { addType<T>(ComponentKind::Contact); }
  template <class T> void addSolver() { addType<T>(ComponentKind::Solver); }

 private:
  template <class T> void addType(ComponentKind kind) {
    Schema s = T::schema();
    s.setProvides(providedInterfaces<T>());
    add(kind, std::move(s), &make<T>);
  }
  template <class T> static Component* make(const Params& p) { return new T(p); }
};

struct PluginInfo {
  std::uint32_t abi_version;   // RODSIM_ABI_VERSION (the SDK's major version) the plugin was built with; always first
  std::uint32_t struct_size;   // sizeof(PluginInfo)
  const char* sdk_signature;   // RODSIM_SDK_SIGNATURE: must equal the kernel's
  std::uint32_t sdk_minor;     // RODSIM_SDK_MINOR: must not exceed the kernel's (capabilities it knows)
  const char* name;            // plugin name
  const char* version;         // plugin version
  void (*register_components)(Registry&);
};

}  // namespace rodsim

#define RODSIM_ENTRY_POINT rodsim_plugin_info_v1
#define RODSIM_ENTRY_POINT_NAME "rodsim_plugin_info_v1"

// Defines the plugin's one exported entry point and the body of its registration function.
#define RODSIM_PLUGIN(plugin_name, plugin_version, registry)                                     \
  static void rodsim_register_components(::rodsim::Registry& registry);                          \
  extern "C" __attribute__((visibility("default"))) const ::rodsim::PluginInfo*                  \
  RODSIM_ENTRY_POINT() {                                                                         \
    static const ::rodsim::PluginInfo info{RODSIM_ABI_VERSION, sizeof(::rodsim::PluginInfo),     \
                                           RODSIM_SDK_SIGNATURE, RODSIM_SDK_MINOR,                \
                                           plugin_name, plugin_version,                          \
                                           &rodsim_register_components};                         \
    return &info;                                                                                \
  }                                                                                              \
  static void rodsim_register_components(::rodsim::Registry& registry)
