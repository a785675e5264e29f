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

#include <rodsim/constraint.h>
#include <rodsim/contact.h>
#include <rodsim/force.h>
#include <rodsim/rod.h>
#include <rodsim/solver.h>
#include <rodsim/version.h>

#include <cstdint>
#include <memory>

namespace rodsim {

enum class ComponentKind { Rod, Force, Constraint, Contact, Solver };

inline const char* kindName(ComponentKind k) {
  switch (k) {
    case ComponentKind::Rod: return "rod";
    case ComponentKind::Force: return "force";
    case ComponentKind::Constraint: return "constraint";
    case ComponentKind::Contact: return "contact";
    case ComponentKind::Solver: return "solver";
  }
  return "?";
}

// Implemented by the kernel. Factories are plain function pointers (no std::function or
// type_info crosses the boundary); the library stays loaded while any object it made lives.
class Registry {
 public:
  using Factory = Component* (*)(const Params&);
  virtual ~Registry() = default;
  virtual void add(ComponentKind kind, Schema schema, Factory factory) = 0;

  template <class T> void addRod() { add(ComponentKind::Rod, T::schema(), &make<T>); }
  template <class T> void addForce() { add(ComponentKind::Force, T::schema(), &make<T>); }
  template <class T> void addConstraint() { add(ComponentKind::Constraint, T::schema(), &make<T>); }
  template <class T> void addContact() { add(ComponentKind::Contact, T::schema(), &make<T>); }
  template <class T> void addSolver() { add(ComponentKind::Solver, T::schema(), &make<T>); }

 private:
  template <class T> static Component* make(const Params& p) { return new T(p); }
};

struct PluginInfo {
  std::uint32_t abi_version;   // RODSIM_ABI_VERSION the plugin was built with; always first
  std::uint32_t struct_size;   // sizeof(PluginInfo)
  const char* sdk_signature;   // RODSIM_SDK_SIGNATURE
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
                                           RODSIM_SDK_SIGNATURE, plugin_name, plugin_version,    \
                                           &rodsim_register_components};                         \
    return &info;                                                                                \
  }                                                                                              \
  static void rodsim_register_components(::rodsim::Registry& registry)
