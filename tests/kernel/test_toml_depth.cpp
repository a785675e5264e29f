// The nesting bound the scene loader checks before TOML++ recurses (kernel/toml_depth.h).
#include "toml_depth.h"

#include <doctest/doctest.h>

#include <string>

using rodsim::kernel::tomlNestingDepth;

TEST_CASE("TOML nesting depth: headers, dotted keys, arrays and inline tables count; strings and numbers do not") {
  CHECK(tomlNestingDepth("a = 1\n").depth == 1);
  CHECK(tomlNestingDepth("[rod]\nname = \"a.b.c.d\"\n").depth == 2);  // dots in a string
  CHECK(tomlNestingDepth("[a.b.c]\nd.e = 1\n").depth == 5);
  CHECK(tomlNestingDepth("[[rod]]\ngeometry = { shape = \"x\", end = [0.5, 1.5e-3, 2.25] }\n").depth == 4);
  CHECK(tomlNestingDepth("p = [[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]\n").depth == 3);
  CHECK(tomlNestingDepth("s = '''[[[[\n{{{{'''\nt = \"\"\"a.b\\\"\"\" \"\"\"\n").depth == 1);
  CHECK(tomlNestingDepth("# [[[[[[ a.b.c.d.e\nx = 1 # {{{{{{\n").depth == 1);
  CHECK(tomlNestingDepth("x = { a = { b = { c = 1 } } }\n").depth == 4);
  const auto deep = tomlNestingDepth("x = 1\ny = " + std::string(1000, '[') + "\n");
  CHECK(deep.depth == 1001);
  CHECK(deep.line == 2);
  CHECK(deep.column == 1004);
}
