// Parameter declaration, declared once beside each component (the MOOSE validParams() pattern).
//
// A component's static `schema()` lists every parameter: name, type, unit, default, range or
// choices, and a one-line doc. The kernel uses that one declaration to validate scenes (with
// file:line:column in every error), to print `rodsim describe TYPE`, and to generate
// docs/reference/parameters.md. A plugin receives the validated values as `Params`.
//
// Nested TOML inline tables are flattened with dots: `geometry = { shape = "helix" }` arrives as
// the parameter "geometry.shape".
#pragma once

#include <Eigen/Core>

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace rodsim {

using Vec3 = Eigen::Vector3d;

// The five kinds of component a scene wires together.
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

// What a component needs from every component of another kind in the same scene: each of them must
// provide one of the capabilities in `any_of` (capability interface ids, see capability.h). The
// kernel refuses a scene that breaks a requirement before anything runs (exit 2), naming both
// components, what is missing and `why` (which says what to use instead).
struct Requirement {
  ComponentKind from = ComponentKind::Rod;
  std::vector<std::string> any_of;
  std::string why;
};

enum class ParamType { Bool, Int, Real, String, Vec3, RealList, IntList, StringList, PointList };

inline const char* typeName(ParamType t) {
  switch (t) {
    case ParamType::Bool: return "boolean";
    case ParamType::Int: return "integer";
    case ParamType::Real: return "number";
    case ParamType::String: return "string";
    case ParamType::Vec3: return "3-vector [x, y, z]";
    case ParamType::RealList: return "list of numbers";
    case ParamType::IntList: return "list of integers";
    case ParamType::StringList: return "list of strings";
    case ParamType::PointList: return "list of points [[x, y, z], ...]";
  }
  return "?";
}

// One parameter value. Vec3 is stored as a 3-element RealList.
using Value = std::variant<bool, std::int64_t, double, std::string, std::vector<double>,
                           std::vector<std::int64_t>, std::vector<std::string>,
                           std::vector<std::vector<double>>>;

// Thrown by a component for a parameter whose value is wrong in a way the schema cannot say
// (depends on another parameter, on a rod, ...). The kernel adds the scene location of `key`.
class ParamError : public std::runtime_error {
 public:
  ParamError(std::string key, const std::string& message)
      : std::runtime_error(message), key_(std::move(key)) {}
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

struct ParamSpec {
  std::string name;
  ParamType type = ParamType::Real;
  std::string doc;
  std::string unit;               // SI unit, "" for dimensionless
  std::optional<Value> fallback;  // default value; none and !required: the key may be absent
  bool required = false;
  std::optional<double> min, max;  // inclusive unless *_exclusive; for lists: every element
  bool min_exclusive = false, max_exclusive = false;
  std::vector<std::string> choices;  // allowed strings (String, StringList)
  bool is_path = false;  // String: a file path, resolved by the kernel relative to the scene file
};

template <class T> struct ParamTypeOf;
template <> struct ParamTypeOf<bool> { static constexpr ParamType value = ParamType::Bool; };
template <> struct ParamTypeOf<int> { static constexpr ParamType value = ParamType::Int; };
template <> struct ParamTypeOf<double> { static constexpr ParamType value = ParamType::Real; };
template <> struct ParamTypeOf<std::string> { static constexpr ParamType value = ParamType::String; };
template <> struct ParamTypeOf<Vec3> { static constexpr ParamType value = ParamType::Vec3; };
template <> struct ParamTypeOf<std::vector<double>> { static constexpr ParamType value = ParamType::RealList; };
template <> struct ParamTypeOf<std::vector<int>> { static constexpr ParamType value = ParamType::IntList; };
template <> struct ParamTypeOf<std::vector<std::string>> { static constexpr ParamType value = ParamType::StringList; };
template <> struct ParamTypeOf<std::vector<Vec3>> { static constexpr ParamType value = ParamType::PointList; };

inline Value toValue(bool v) { return v; }
inline Value toValue(int v) { return static_cast<std::int64_t>(v); }
inline Value toValue(double v) { return v; }
inline Value toValue(const char* v) { return std::string(v); }
inline Value toValue(const std::string& v) { return v; }
inline Value toValue(const Vec3& v) { return std::vector<double>{v.x(), v.y(), v.z()}; }
inline Value toValue(const std::vector<double>& v) { return v; }
inline Value toValue(const std::vector<int>& v) { return std::vector<std::int64_t>(v.begin(), v.end()); }
inline Value toValue(const std::vector<std::string>& v) { return v; }
inline Value toValue(const std::vector<Vec3>& v) {
  std::vector<std::vector<double>> out;
  for (const auto& p : v) out.push_back({p.x(), p.y(), p.z()});
  return out;
}

// The parameter list of one component type.
class Schema {
 public:
  // Fluent refinement of the parameter just added.
  class Builder {
   public:
    explicit Builder(ParamSpec& spec) : spec_(spec) {}
    Builder& unit(std::string u) { spec_.unit = std::move(u); return *this; }
    Builder& range(double lo, double hi) { spec_.min = lo; spec_.max = hi; return *this; }
    Builder& atLeast(double lo) { spec_.min = lo; spec_.min_exclusive = false; return *this; }
    Builder& greater(double lo) { spec_.min = lo; spec_.min_exclusive = true; return *this; }
    Builder& atMost(double hi) { spec_.max = hi; spec_.max_exclusive = false; return *this; }
    Builder& less(double hi) { spec_.max = hi; spec_.max_exclusive = true; return *this; }
    Builder& choices(std::vector<std::string> c) { spec_.choices = std::move(c); return *this; }
    Builder& path() { spec_.is_path = true; return *this; }

   private:
    ParamSpec& spec_;
  };

  Schema() = default;
  Schema(std::string type, std::string doc) : type_(std::move(type)), doc_(std::move(doc)) {}

  // A parameter with a default value.
  template <class T, class D>
  Builder add(const std::string& name, const D& fallback, std::string doc) {
    ParamSpec& s = push(name, ParamTypeOf<T>::value, std::move(doc));
    s.fallback = toValue(static_cast<T>(fallback));
    return Builder(s);
  }
  // A parameter the scene must give.
  template <class T> Builder required(const std::string& name, std::string doc) {
    ParamSpec& s = push(name, ParamTypeOf<T>::value, std::move(doc));
    s.required = true;
    return Builder(s);
  }
  // A parameter that may be absent (check with Params::has).
  template <class T> Builder optional(const std::string& name, std::string doc) {
    return Builder(push(name, ParamTypeOf<T>::value, std::move(doc)));
  }

  // Compatibility (checked by the kernel before a run, printed by `rodsim describe`): every component
  // of kind `from` must provide one of `any_of`. What a component provides is not declared here: the
  // registry derives it from the capability interfaces the class implements (plugin.h).
  Schema& require(ComponentKind from, std::vector<std::string> any_of, std::string why) {
    requirements_.push_back({from, std::move(any_of), std::move(why)});
    return *this;
  }
  const std::vector<Requirement>& requirements() const { return requirements_; }
  const std::vector<std::string>& provides() const { return provides_; }
  void setProvides(std::vector<std::string> ids) { provides_ = std::move(ids); }

  const std::string& type() const { return type_; }
  const std::string& doc() const { return doc_; }
  const std::vector<ParamSpec>& params() const { return params_; }
  const ParamSpec* find(const std::string& name) const {
    for (const auto& p : params_)
      if (p.name == name) return &p;
    return nullptr;
  }

 private:
  ParamSpec& push(const std::string& name, ParamType t, std::string doc) {
    ParamSpec s;
    s.name = name;
    s.type = t;
    s.doc = std::move(doc);
    params_.push_back(std::move(s));
    return params_.back();
  }

  std::string type_, doc_;
  std::vector<ParamSpec> params_;
  std::vector<Requirement> requirements_;
  std::vector<std::string> provides_;
};

// Validated parameter values of one component: every declared parameter with a default is
// present; optional ones only when the scene gave them. Accessors throw ParamError when a key
// is absent or of another type (a programming error in the component).
class Params {
 public:
  Params() = default;
  explicit Params(std::string component_name) : component_(std::move(component_name)) {}

  void set(const std::string& key, Value v) { values_[key] = std::move(v); }
  bool has(const std::string& key) const { return values_.count(key) != 0; }
  const std::map<std::string, Value>& values() const { return values_; }
  // The scene name of the component ("beam", "root"), or its type when unnamed.
  const std::string& componentName() const { return component_; }

  bool boolean(const std::string& key) const { return get<bool>(key); }
  long long integer(const std::string& key) const { return get<std::int64_t>(key); }
  double real(const std::string& key) const {
    const Value& v = at(key);
    if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
    return get<double>(key);
  }
  const std::string& string(const std::string& key) const { return get<std::string>(key); }
  Vec3 vec3(const std::string& key) const {
    const auto& l = get<std::vector<double>>(key);
    if (l.size() != 3) throw ParamError(key, "expected a 3-vector");
    return {l[0], l[1], l[2]};
  }
  const std::vector<double>& reals(const std::string& key) const { return get<std::vector<double>>(key); }
  std::vector<long long> integers(const std::string& key) const {
    const auto& l = get<std::vector<std::int64_t>>(key);
    return {l.begin(), l.end()};
  }
  const std::vector<std::string>& strings(const std::string& key) const {
    return get<std::vector<std::string>>(key);
  }
  // An optional list of names (no default): the list, or nullopt when the scene left it out.
  std::optional<std::vector<std::string>> optionalStrings(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    return strings(key);
  }
  std::vector<Vec3> points(const std::string& key) const {
    std::vector<Vec3> out;
    for (const auto& p : get<std::vector<std::vector<double>>>(key)) {
      if (p.size() != 3) throw ParamError(key, "every point needs 3 coordinates");
      out.emplace_back(p[0], p[1], p[2]);
    }
    return out;
  }

 private:
  const Value& at(const std::string& key) const {
    auto it = values_.find(key);
    if (it == values_.end()) throw ParamError(key, "parameter '" + key + "' is not set");
    return it->second;
  }
  template <class T> const T& get(const std::string& key) const {
    const Value& v = at(key);
    if (const auto* p = std::get_if<T>(&v)) return *p;
    throw ParamError(key, "parameter '" + key + "' has another type");
  }

  std::string component_;
  std::map<std::string, Value> values_;
};

}  // namespace rodsim
