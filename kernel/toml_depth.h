// A bound on the nesting depth of a TOML text, found without building it.
//
// TOML++ builds and destroys nested tables and arrays recursively, so a header like [a.a.a...]
// 50,000 levels deep overflows the stack. The scene loader measures the depth first with this
// scanner, which recurses into nothing, and refuses deep inputs with their location.
#pragma once

#include <cstddef>
#include <string_view>

namespace rodsim::kernel {

struct TomlDepth {
  std::size_t depth = 0;           // deepest nesting seen: key segments plus open [ and {
  std::size_t line = 0, column = 0;  // where it was first reached (1-based)
};

// An upper bound on how deep the tables and arrays that `text` defines nest: the segments of the
// current table header, plus those of a dotted key, plus the arrays and inline tables open around
// it. Strings and comments are skipped; malformed text gets some bound (the parser then reports
// the syntax error). Linear in the text, constant stack.
TomlDepth tomlNestingDepth(std::string_view text);

// Scenes nest a few levels; anything near this limit is not a scene.
inline constexpr std::size_t kMaxTomlDepth = 64;

}  // namespace rodsim::kernel
