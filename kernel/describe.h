#pragma once

#include "registry.h"

#include <string>

namespace rodsim::kernel {

// `rodsim describe TYPE`: every parameter with type, unit, default, allowed range, doc.
std::string describeText(const Schema& schema, const std::string& heading);
// docs/reference/parameters.md: every kernel section and every loaded component type.
std::string referenceMarkdown(const TypeRegistry& registry);

}  // namespace rodsim::kernel
