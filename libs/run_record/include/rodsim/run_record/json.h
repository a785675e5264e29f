// JSON as a run writes it (summary.json) and as the studies write their records: a small, strict
// reader (objects, arrays, strings with escapes, numbers, true/false/null) and the writer's pieces.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rodsim::run_record {

// A file of a run that is not what rodsim writes: "FILE: byte N: why" (JSON), "FILE:LINE: why"
// (CSV), or the bounded read's "FILE: ..." (not a regular file, too large).
class FormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class JsonValue {
 public:
  enum class Type { Null, Bool, Number, String, Array, Object };
  using Member = std::pair<std::string, JsonValue>;

  JsonValue() = default;
  static JsonValue null() { return {}; }
  static JsonValue boolean(bool b);
  static JsonValue number(double v, std::string text);
  static JsonValue string(std::string s);
  static JsonValue array(std::vector<JsonValue> items);
  static JsonValue object(std::vector<Member> members);

  Type type() const { return type_; }
  bool isNull() const { return type_ == Type::Null; }
  bool isBool() const { return type_ == Type::Bool; }
  bool isNumber() const { return type_ == Type::Number; }
  bool isString() const { return type_ == Type::String; }
  bool isArray() const { return type_ == Type::Array; }
  bool isObject() const { return type_ == Type::Object; }

  // The value; FormatError when it is of another type.
  bool asBool() const;
  double asNumber() const;
  const std::string& asString() const;              // decoded (escapes resolved, UTF-8)
  const std::vector<JsonValue>& asArray() const;
  const std::vector<Member>& asObject() const;      // in file order
  // A number as written in the file ("1e-05", "42"): copied as it is into tables (rodsim sweep).
  const std::string& numberText() const;

  // A member of an object, nullptr when absent or when this is no object.
  const JsonValue* find(std::string_view key) const;
  // Members of an object by key, with a fallback when absent or of another type: `text` gives a
  // string's value or a number as written, "" for null ("" when absent); `numberOr` gives NaN for
  // null (what the writer writes for a value that is not finite).
  std::string text(std::string_view key) const;
  double numberOr(std::string_view key, double fallback) const;

 private:
  Type type_ = Type::Null;
  bool bool_ = false;
  double number_ = 0;
  std::string string_;  // a string's value, or a number's text
  std::vector<JsonValue> array_;
  std::vector<Member> object_;
};

// Parses one JSON value (and nothing after it but white space). `what` names the text in errors:
// FormatError "WHAT: byte N: why" (N counts from 0). Nesting is limited to kMaxJsonDepth.
JsonValue parseJson(std::string_view text, const std::string& what);
inline constexpr int kMaxJsonDepth = 64;

// A JSON file of at most `max_bytes` (a regular file: not a FIFO, device or directory), parsed.
// FormatError naming the file.
JsonValue readJsonFile(const std::string& file, std::uint64_t max_bytes, const std::string& what);

// ---- writing

// The inside of a JSON string: \" \\ \n \t escaped, other control characters as \u00XX, every
// other byte as it is (UTF-8 passes through).
std::string jsonEscape(std::string_view s);
// jsonEscape in quotes.
std::string jsonString(std::string_view s);
// A number with 10 significant digits ("%.10g"); null when not finite (JSON has no Infinity/NaN).
std::string jsonNumber(double v);

}  // namespace rodsim::run_record
