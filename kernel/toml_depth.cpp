#include "toml_depth.h"

#include <vector>

namespace rodsim::kernel {

namespace {

// The index just past the string that starts at s[i] (a ' or "), multi-line forms included. An
// unterminated single-line string ends at its line's end (the parser reports it).
std::size_t skipString(std::string_view s, std::size_t i) {
  const char quote = s[i];
  const bool escapes = quote == '"';  // basic strings escape with \, literal strings do not
  const std::string_view triple = escapes ? std::string_view("\"\"\"") : std::string_view("'''");
  if (s.substr(i, 3) == triple) {
    for (std::size_t j = i + 3; j < s.size(); ++j) {
      if (escapes && s[j] == '\\') {
        ++j;
        continue;
      }
      if (s.substr(j, 3) == triple) {
        j += 3;
        for (int extra = 0; extra < 2 && j < s.size() && s[j] == quote; ++extra) ++j;  // """a"""" ends with a quote
        return j;
      }
    }
    return s.size();
  }
  std::size_t j = i + 1;
  for (; j < s.size() && s[j] != '\n'; ++j) {
    if (escapes && s[j] == '\\') {
      ++j;
      continue;
    }
    if (s[j] == quote) return j + 1;
  }
  return j;
}

}  // namespace

TomlDepth tomlNestingDepth(std::string_view s) {
  enum class Mode { LineStart, Header, Key, Value };
  struct Open {
    char kind;                 // '[' or '{'
    std::size_t base, value;   // what `base` and `value` were outside it
  };
  Mode mode = Mode::LineStart;
  std::size_t header = 0;  // segments of the current [table] header: the depth of the keys below it
  std::size_t base = 0;    // depth of the table whose key is being read
  std::size_t key = 0;     // segments of that key so far
  std::size_t value = 0;   // depth of the value being read
  std::vector<Open> open;  // arrays and inline tables around the current position (heap, not stack)
  std::size_t deepest = 0, deepest_at = 0;
  auto note = [&](std::size_t depth, std::size_t at) {
    if (depth > deepest) {
      deepest = depth;
      deepest_at = at;
    }
  };

  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '"' || c == '\'') {
      i = skipString(s, i);
      continue;
    }
    if (c == '#') {
      while (i < s.size() && s[i] != '\n') ++i;
      continue;
    }
    if (c == '\n') {
      if (open.empty()) mode = Mode::LineStart;  // multi-line arrays go on
      ++i;
      continue;
    }
    switch (mode) {
      case Mode::LineStart:
        if (c == '[') {
          mode = Mode::Header;
          header = 1;
          note(header, i);
          if (i + 1 < s.size() && s[i + 1] == '[') ++i;  // [[array of tables]]
        } else if (c != ' ' && c != '\t' && c != '\r') {
          mode = Mode::Key;
          base = header;
          key = 1;
          note(base + key, i);
        }
        break;
      case Mode::Header:
        if (c == '.') note(++header, i);
        else if (c == ']') mode = Mode::Value;  // the rest of the line: a comment at most
        break;
      case Mode::Key:
        if (c == '.') {
          note(base + ++key, i);
        } else if (c == '=') {
          mode = Mode::Value;
          value = base + key;
        } else if (c == '}' && !open.empty()) {  // {} or a trailing comma
          base = open.back().base;
          value = open.back().value;
          open.pop_back();
          mode = Mode::Value;
        }
        break;
      case Mode::Value:
        if (c == '[') {
          open.push_back({c, base, value});
          note(++value, i);
        } else if (c == '{') {
          open.push_back({c, base, value});
          base = value;
          key = 1;
          note(base + key, i);
          mode = Mode::Key;
        } else if ((c == ']' || c == '}') && !open.empty()) {
          base = open.back().base;
          value = open.back().value;
          open.pop_back();
        } else if (c == ',' && !open.empty()) {
          if (open.back().kind == '{') {
            mode = Mode::Key;
            key = 1;
          } else {
            value = open.back().value + 1;  // the next element of the array
          }
        }
        break;
    }
    ++i;
  }

  TomlDepth out;
  out.depth = deepest;
  out.line = 1;
  std::size_t line_start = 0;
  for (std::size_t k = 0; k < deepest_at && k < s.size(); ++k)
    if (s[k] == '\n') {
      ++out.line;
      line_start = k + 1;
    }
  out.column = deepest_at - line_start + 1;
  return out;
}

}  // namespace rodsim::kernel
