#pragma once

#include <rodsim/kernel/registry.h>

#include <string>

namespace rodsim::kernel {

// `rodsim describe TYPE`: every parameter with type, unit, default, allowed range, doc.
std::string describeText(const Schema& schema, const std::string& heading);
// `rodsim describe TYPE` (and rodsim.describe in Python): the kernel section or the component types
// named `type`; InputError with the closest name for an unknown one.
std::string describeType(const TypeRegistry& registry, const std::string& type);
// docs/reference/parameters.md: every kernel section and every loaded component type.
std::string referenceMarkdown(const TypeRegistry& registry);
// docs/reference/compatibility.md: every rod model x solver x contact model, works or why not,
// from what the types declare (Schema::require and the capability interfaces they implement).
std::string compatibilityMarkdown(const TypeRegistry& registry);
// Why component `needer` cannot work with `other` (kind `other_kind`), or "" when it can.
std::string incompatibility(const Schema& needer, const Schema& other, ComponentKind other_kind);

}  // namespace rodsim::kernel
