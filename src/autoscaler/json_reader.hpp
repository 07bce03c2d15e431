#pragma once
// Internal to the autoscaler module: field-by-field reading of untrusted JSON
// (FederatedHPA specs, scenario files) with errors that name the field's path
// ("steps[2].pods[0].startTime: not a time").
//
// Decoders are deep and every field can fail, so inside a decoder a failure
// is thrown as DecodeFailure and turned back into an Expected at the public
// entry point (decode_guard). Nothing else in the module throws, and no
// exception leaves it.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <initializer_list>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/autoscaler/hpa_spec.hpp"
#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/k8s/label_selector.hpp"
#include "fedmetrics/k8s/quantity.hpp"
#include "fedmetrics/k8s/time.hpp"

namespace fedmetrics::autoscaler::detail {

struct DecodeFailure {
  k8s::Error error;
};

[[noreturn]] inline void fail(const std::string& path, const std::string& message) {
  throw DecodeFailure{k8s::Error{message}.at(path)};
}

inline std::string join(std::string_view base, std::string_view key) {
  if (base.empty()) return std::string(key);
  return std::string(base) + "." + std::string(key);
}

inline std::string index(std::string_view base, std::size_t i) {
  return std::string(base) + "[" + std::to_string(i) + "]";
}

// Runs a throwing decoder and returns its value or the failure as an Error.
template <class F>
auto decode_guard(F&& decode) -> k8s::Expected<decltype(decode())> {
  try {
    return decode();
  } catch (const DecodeFailure& failure) {
    return failure.error;
  }
}

// " (did you mean \"minReplicas\"?)" when `key` is one or two edits away from
// a field of `known` (a typo) or a shortening of it ("rebalanceWindow"),
// else empty.
inline std::string did_you_mean(std::string_view key, std::initializer_list<std::string_view> known) {
  std::string_view best;
  std::size_t best_distance = 3;
  for (std::string_view candidate : known) {
    // Levenshtein distance, one row at a time.
    std::vector<std::size_t> row(candidate.size() + 1);
    for (std::size_t j = 0; j < row.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= key.size(); ++i) {
      std::size_t diagonal = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= candidate.size(); ++j) {
        const std::size_t above = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (key[i - 1] == candidate[j - 1] ? 0 : 1)});
        diagonal = above;
      }
    }
    const bool shortened = key.size() >= 4 && candidate.substr(0, key.size()) == key;
    if (shortened) row.back() = std::min<std::size_t>(row.back(), 2);
    if (row.back() < best_distance) {
      best_distance = row.back();
      best = candidate;
    }
  }
  return best.empty() ? std::string() : " (did you mean \"" + std::string(best) + "\"?)";
}

// A JSON object being read at `path`. Absent and null fields read as absent,
// as Go's decoder leaves the zero value. Objects reached from it (object(),
// required_object(), child()) are read with the same UnknownFields rule,
// which allow() applies.
class Fields {
 public:
  Fields(const nlohmann::json& json, std::string path, UnknownFields unknown = UnknownFields::Ignore)
      : json_(&json), path_(std::move(path)), unknown_(unknown) {
    if (!json.is_object()) fail(path_, std::string("not an object (got ") + json.type_name() + ")");
  }

  // An object inside this one (an element of one of its arrays or maps), read by the same rule.
  [[nodiscard]] Fields child(const nlohmann::json& json, std::string path) const {
    return Fields(json, std::move(path), unknown_);
  }

  [[nodiscard]] bool refuses_unknown() const { return unknown_ == UnknownFields::Refuse; }

  // The object's fields: with UnknownFields::Refuse, the first key (in key
  // order) that is not among them fails as "<path>.<key>: unknown field".
  // Null values count: a misspelled key is wrong whatever it holds.
  void allow(std::initializer_list<std::string_view> known) const {
    if (!refuses_unknown()) return;
    for (const auto& [key, value] : json_->items()) {
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        fail(path_of(key), "unknown field" + did_you_mean(key, known));
      }
    }
  }

  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] std::string path_of(std::string_view key) const { return join(path_, key); }

  [[nodiscard]] const nlohmann::json& raw_object() const { return *json_; }

  [[nodiscard]] const nlohmann::json* raw(std::string_view key) const {
    auto it = json_->find(key);
    if (it == json_->end() || it->is_null()) return nullptr;
    return &*it;
  }
  [[nodiscard]] bool has(std::string_view key) const { return raw(key) != nullptr; }

  [[nodiscard]] const nlohmann::json& required(std::string_view key) const {
    const auto* v = raw(key);
    if (v == nullptr) fail(path_of(key), "is required");
    return *v;
  }

  // The object at `key`; fails when it is absent or not an object.
  [[nodiscard]] Fields required_object(std::string_view key) const { return child(required(key), path_of(key)); }

  [[nodiscard]] std::optional<std::string> string(std::string_view key) const {
    const auto* v = raw(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_string()) fail(path_of(key), "not a string");
    return v->get<std::string>();
  }

  [[nodiscard]] std::optional<std::int64_t> integer(std::string_view key) const {
    const auto* v = raw(key);
    if (v == nullptr) return std::nullopt;
    return as_integer(*v, path_of(key));
  }

  [[nodiscard]] std::optional<std::int32_t> int32(std::string_view key) const {
    auto v = integer(key);
    if (!v) return std::nullopt;
    if (*v < std::numeric_limits<std::int32_t>::min() || *v > std::numeric_limits<std::int32_t>::max()) {
      fail(path_of(key), "out of range for a 32-bit integer");
    }
    return static_cast<std::int32_t>(*v);
  }

  [[nodiscard]] std::optional<double> number(std::string_view key) const {
    const auto* v = raw(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_number()) fail(path_of(key), "not a number");
    return v->get<double>();
  }

  [[nodiscard]] std::optional<bool> boolean(std::string_view key) const {
    const auto* v = raw(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_boolean()) fail(path_of(key), "not a boolean");
    return v->get<bool>();
  }

  [[nodiscard]] std::optional<k8s::Quantity> quantity(std::string_view key) const {
    const auto* v = raw(key);
    if (v == nullptr) return std::nullopt;
    return as_quantity(*v, path_of(key));
  }

  [[nodiscard]] std::optional<Fields> object(std::string_view key) const {
    const auto* v = raw(key);
    if (v == nullptr) return std::nullopt;
    return child(*v, path_of(key));
  }

  // The array at `key` (empty when absent); fails when it is not an array.
  [[nodiscard]] const nlohmann::json& array(std::string_view key) const {
    static const nlohmann::json empty = nlohmann::json::array();
    const auto* v = raw(key);
    if (v == nullptr) return empty;
    if (!v->is_array()) fail(path_of(key), "not an array");
    return *v;
  }

  static std::int64_t as_integer(const nlohmann::json& v, const std::string& path) {
    if (v.is_number_integer()) return v.get<std::int64_t>();
    if (v.is_number_unsigned()) {
      auto u = v.get<std::uint64_t>();
      if (u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        return static_cast<std::int64_t>(u);
      }
      fail(path, "out of range for an integer");
    }
    if (v.is_number_float()) {
      double d = v.get<double>();
      if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) return static_cast<std::int64_t>(d);
    }
    fail(path, "not an integer");
  }

  static k8s::Quantity as_quantity(const nlohmann::json& v, const std::string& path) {
    if (!v.is_string() && !v.is_number()) fail(path, "not a quantity");
    auto q = k8s::quantity_from_json(v);
    if (!q) throw DecodeFailure{q.error().at(path)};
    return *q;
  }

 private:
  const nlohmann::json* json_;
  std::string path_;
  UnknownFields unknown_;
};

// The label selector at `key` of `f` (metav1.LabelSelector), or nullopt.
inline std::optional<k8s::LabelSelector> selector(const Fields& f, std::string_view key) {
  const auto* v = f.raw(key);
  if (v == nullptr) return std::nullopt;
  const std::string path = f.path_of(key);
  if (!v->is_object()) fail(path, "not an object");
  if (f.refuses_unknown()) {
    const Fields s = f.child(*v, path);
    s.allow({"matchLabels", "matchExpressions"});
    const auto& expressions = s.array("matchExpressions");
    for (std::size_t i = 0; i < expressions.size(); ++i) {
      s.child(expressions[i], index(s.path_of("matchExpressions"), i)).allow({"key", "operator", "values"});
    }
  }
  auto selector = k8s::LabelSelector::from_object(*v);
  if (!selector) throw DecodeFailure{selector.error().at(path)};
  return *selector;
}

// The fields of metav1.ObjectMeta, for the `metadata` of a whole object.
inline void allow_object_meta(const Fields& meta) {
  meta.allow({"name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
              "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations",
              "ownerReferences", "finalizers", "managedFields"});
}

// Scenario times (docs/simulate.md, "Scenario files"): a number of seconds, bounded to
// about 3000 years so that nanoseconds stay in range.
inline std::chrono::nanoseconds seconds_value(const nlohmann::json& v, const std::string& path) {
  constexpr double kMaxSeconds = 1.0e11;
  if (!v.is_number()) fail(path, "not a number of seconds");
  const double s = v.get<double>();
  if (!std::isfinite(s) || std::fabs(s) > kMaxSeconds) fail(path, "out of range");
  return std::chrono::nanoseconds(static_cast<std::int64_t>(std::llround(s * 1e9)));
}

// A time is an RFC 3339 string or a number of seconds relative to `start`.
inline k8s::Timestamp time_value(const nlohmann::json& v, k8s::Timestamp start, const std::string& path) {
  if (v.is_number()) return start + seconds_value(v, path);
  if (v.is_string()) {
    auto t = k8s::parse_time(v.get<std::string>());
    if (!t) fail(path, "not a time (\"" + v.get<std::string>() + "\" is neither RFC 3339 nor a number of seconds)");
    return *t;
  }
  fail(path, "not a time");
}

// A scaleTargetRef / describedObject: kind and name required.
template <class Reference>
Reference decode_reference_as(const Fields& f) {
  f.allow({"apiVersion", "kind", "name"});
  Reference ref;
  ref.kind = f.string("kind").value_or("");
  ref.name = f.string("name").value_or("");
  ref.api_version = f.string("apiVersion").value_or("");
  if (ref.kind.empty()) fail(f.path_of("kind"), "is required");
  if (ref.name.empty()) fail(f.path_of("name"), "is required");
  return ref;
}

}  // namespace fedmetrics::autoscaler::detail
