#include <rodsim/run_record/json.h>

#include <rodsim/user_files/bounded_read.h>

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <limits>

namespace rodsim::run_record {

JsonValue JsonValue::boolean(bool b) {
  JsonValue v;
  v.type_ = Type::Bool;
  v.bool_ = b;
  return v;
}

JsonValue JsonValue::number(double x, std::string text) {
  JsonValue v;
  v.type_ = Type::Number;
  v.number_ = x;
  v.string_ = std::move(text);
  return v;
}

JsonValue JsonValue::string(std::string s) {
  JsonValue v;
  v.type_ = Type::String;
  v.string_ = std::move(s);
  return v;
}

JsonValue JsonValue::array(std::vector<JsonValue> items) {
  JsonValue v;
  v.type_ = Type::Array;
  v.array_ = std::move(items);
  return v;
}

JsonValue JsonValue::object(std::vector<Member> members) {
  JsonValue v;
  v.type_ = Type::Object;
  v.object_ = std::move(members);
  return v;
}

namespace {

const char* typeName(JsonValue::Type t) {
  switch (t) {
    case JsonValue::Type::Null: return "null";
    case JsonValue::Type::Bool: return "a boolean";
    case JsonValue::Type::Number: return "a number";
    case JsonValue::Type::String: return "a string";
    case JsonValue::Type::Array: return "an array";
    case JsonValue::Type::Object: return "an object";
  }
  return "?";
}

[[noreturn]] void wrongType(JsonValue::Type is, const char* wanted) {
  throw FormatError(fmt::format("JSON value is {}, not {}", typeName(is), wanted));
}

}  // namespace

bool JsonValue::asBool() const {
  if (type_ != Type::Bool) wrongType(type_, "a boolean");
  return bool_;
}
double JsonValue::asNumber() const {
  if (type_ != Type::Number) wrongType(type_, "a number");
  return number_;
}
const std::string& JsonValue::asString() const {
  if (type_ != Type::String) wrongType(type_, "a string");
  return string_;
}
const std::string& JsonValue::numberText() const {
  if (type_ != Type::Number) wrongType(type_, "a number");
  return string_;
}
const std::vector<JsonValue>& JsonValue::asArray() const {
  if (type_ != Type::Array) wrongType(type_, "an array");
  return array_;
}
const std::vector<JsonValue::Member>& JsonValue::asObject() const {
  if (type_ != Type::Object) wrongType(type_, "an object");
  return object_;
}

const JsonValue* JsonValue::find(std::string_view key) const {
  if (type_ != Type::Object) return nullptr;
  for (const auto& [k, v] : object_)
    if (k == key) return &v;
  return nullptr;
}

std::string JsonValue::text(std::string_view key) const {
  const JsonValue* v = find(key);
  if (!v) return "";
  if (v->isString() || v->isNumber()) return v->string_;
  if (v->isBool()) return v->bool_ ? "true" : "false";
  return "";
}

double JsonValue::numberOr(std::string_view key, double fallback) const {
  const JsonValue* v = find(key);
  if (v && v->isNumber()) return v->number_;
  if (v && v->isNull()) return std::numeric_limits<double>::quiet_NaN();
  return fallback;
}

namespace {

class Parser {
 public:
  Parser(std::string_view text, const std::string& what) : s_(text), what_(what) {}

  JsonValue document() {
    JsonValue v = value(0);
    space();
    if (p_ != s_.size()) fail("text after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const { throw FormatError(fmt::format("{}: byte {}: {}", what_, p_, why)); }

  void space() {
    while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\t' || s_[p_] == '\n' || s_[p_] == '\r')) ++p_;
  }

  bool literal(std::string_view word) {
    if (s_.substr(p_, word.size()) != word) return false;
    p_ += word.size();
    return true;
  }

  JsonValue value(int depth) {
    if (depth > kMaxJsonDepth) fail(fmt::format("nested deeper than {} levels", kMaxJsonDepth));
    space();
    if (p_ >= s_.size()) fail("the text ends where a value was expected");
    const char c = s_[p_];
    if (c == '{') return object(depth);
    if (c == '[') return array(depth);
    if (c == '"') return JsonValue::string(string());
    if (c == '-' || (c >= '0' && c <= '9')) return number();
    if (literal("true")) return JsonValue::boolean(true);
    if (literal("false")) return JsonValue::boolean(false);
    if (literal("null")) return JsonValue::null();
    fail(fmt::format("unexpected '{}' where a value was expected", c));
  }

  JsonValue object(int depth) {
    ++p_;  // {
    std::vector<JsonValue::Member> members;
    space();
    if (p_ < s_.size() && s_[p_] == '}') {
      ++p_;
      return JsonValue::object(std::move(members));
    }
    for (;;) {
      space();
      if (p_ >= s_.size() || s_[p_] != '"') fail("expected a key (a string) in the object");
      std::string key = string();
      space();
      if (p_ >= s_.size() || s_[p_] != ':') fail("expected ':' after the key");
      ++p_;
      JsonValue v = value(depth + 1);
      members.emplace_back(std::move(key), std::move(v));
      space();
      if (p_ < s_.size() && s_[p_] == ',') {
        ++p_;
        continue;
      }
      if (p_ < s_.size() && s_[p_] == '}') {
        ++p_;
        return JsonValue::object(std::move(members));
      }
      fail("expected ',' or '}' in the object");
    }
  }

  JsonValue array(int depth) {
    ++p_;  // [
    std::vector<JsonValue> items;
    space();
    if (p_ < s_.size() && s_[p_] == ']') {
      ++p_;
      return JsonValue::array(std::move(items));
    }
    for (;;) {
      items.push_back(value(depth + 1));
      space();
      if (p_ < s_.size() && s_[p_] == ',') {
        ++p_;
        continue;
      }
      if (p_ < s_.size() && s_[p_] == ']') {
        ++p_;
        return JsonValue::array(std::move(items));
      }
      fail("expected ',' or ']' in the array");
    }
  }

  unsigned hex4() {
    if (p_ + 4 > s_.size()) fail("\\u needs four hex digits");
    unsigned code = 0;
    const auto [end, ec] = std::from_chars(s_.data() + p_, s_.data() + p_ + 4, code, 16);
    if (ec != std::errc() || end != s_.data() + p_ + 4) fail("\\u needs four hex digits");
    p_ += 4;
    return code;
  }

  static void utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  std::string string() {
    const std::size_t start = p_;
    ++p_;  // "
    std::string out;
    for (;;) {
      if (p_ >= s_.size()) {
        p_ = start;
        fail("a string that does not end");
      }
      const char c = s_[p_];
      if (c == '"') {
        ++p_;
        return out;
      }
      if (static_cast<unsigned char>(c) < 0x20) fail("a control character in a string (it must be escaped)");
      if (c != '\\') {
        out += c;
        ++p_;
        continue;
      }
      if (++p_ >= s_.size()) fail("an escape at the end of the text");
      const char e = s_[p_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00) {  // a surrogate pair
            if (!literal("\\u")) fail("a high surrogate without its low one");
            const unsigned low = hex4();
            if (low < 0xDC00 || low >= 0xE000) fail("a high surrogate without its low one");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else if (cp >= 0xDC00 && cp < 0xE000) {
            fail("a low surrogate without its high one");
          }
          utf8(out, cp);
          break;
        }
        default:
          p_ -= 2;  // at the backslash
          fail(fmt::format("unknown escape '\\{}'", e));
      }
    }
  }

  JsonValue number() {
    const std::size_t start = p_;
    auto digits = [&] {
      const std::size_t b = p_;
      while (p_ < s_.size() && s_[p_] >= '0' && s_[p_] <= '9') ++p_;
      return p_ > b;
    };
    if (s_[p_] == '-') ++p_;
    if (p_ < s_.size() && s_[p_] == '0') ++p_;
    else if (!digits()) fail("a number without digits");
    if (p_ < s_.size() && s_[p_] == '.') {
      ++p_;
      if (!digits()) fail("a number without digits after '.'");
    }
    if (p_ < s_.size() && (s_[p_] == 'e' || s_[p_] == 'E')) {
      ++p_;
      if (p_ < s_.size() && (s_[p_] == '+' || s_[p_] == '-')) ++p_;
      if (!digits()) fail("a number without digits in its exponent");
    }
    double v = 0;
    const auto [end, ec] = std::from_chars(s_.data() + start, s_.data() + p_, v);
    if (end != s_.data() + p_) {
      p_ = start;
      fail("not a number");
    }
    if (ec == std::errc::result_out_of_range) {  // beyond a double: inf, or 0 for underflow
      const std::string t(s_.substr(start, p_ - start));
      v = std::strtod(t.c_str(), nullptr);
    }
    return JsonValue::number(v, std::string(s_.substr(start, p_ - start)));
  }

  std::string_view s_;
  const std::string& what_;
  std::size_t p_ = 0;
};

}  // namespace

JsonValue parseJson(std::string_view text, const std::string& what) { return Parser(text, what).document(); }

JsonValue readJsonFile(const std::string& file, std::uint64_t max_bytes, const std::string& what) {
  std::string text;
  try {
    text = user_files::readBoundedFile(file, max_bytes, what);
  } catch (const user_files::BoundedReadError& e) {
    throw FormatError(e.what());
  }
  return parseJson(text, file);
}

std::string jsonEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        else out += c;
    }
  }
  return out;
}

std::string jsonString(std::string_view s) {
  std::string out = jsonEscape(s);
  out.insert(out.begin(), '"');
  out += '"';
  return out;
}

std::string jsonNumber(double v) { return std::isfinite(v) ? fmt::format("{:.10g}", v) : "null"; }

}  // namespace rodsim::run_record
