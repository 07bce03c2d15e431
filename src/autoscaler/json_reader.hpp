#pragma once
// Internal to the autoscaler module: what its decoders (FederatedHPA specs,
// CronFederatedHPAs, scenario files) read alike on top of k8s::Fields, which
// keeps the first error with the field's path and never throws.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "fedmetrics/autoscaler/hpa_spec.hpp"
#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/k8s/field_reader.hpp"
#include "fedmetrics/k8s/label_selector.hpp"
#include "fedmetrics/k8s/quantity.hpp"
#include "fedmetrics/k8s/time.hpp"

namespace fedmetrics::autoscaler::detail {

using k8s::FieldReader;
using k8s::Fields;

// The module's UnknownFields, which its decoders take, as the reader's.
inline k8s::UnknownFields reader_rule(UnknownFields unknown) {
  return unknown == UnknownFields::Refuse ? k8s::UnknownFields::Refuse : k8s::UnknownFields::Ignore;
}

inline std::string join(std::string_view base, std::string_view key) { return k8s::field_path(base, key); }
inline std::string index(std::string_view base, std::size_t i) { return k8s::item_path(base, i); }

// The label selector at `key` of `f` (metav1.LabelSelector), or nullopt.
inline std::optional<k8s::LabelSelector> selector(const Fields& f, std::string_view key) {
  const auto* v = f.raw(key);
  if (v == nullptr) return std::nullopt;
  const std::string path = f.path_of(key);
  if (!v->is_object()) {
    f.fail(key, "not an object");
    return std::nullopt;
  }
  if (f.refuses_unknown()) {
    const Fields s = f.child(*v, path);
    s.allow({"matchLabels", "matchExpressions"});
    s.each_object("matchExpressions", [](const Fields& e) { e.allow({"key", "operator", "values"}); });
  }
  if (!f.ok()) return std::nullopt;
  auto selector = k8s::LabelSelector::from_object(*v);
  if (!selector) {
    f.reader().fail(selector.error().at(path));
    return std::nullopt;
  }
  return std::move(*selector);
}

// The fields of metav1.ObjectMeta, for the `metadata` of a whole object.
inline void allow_object_meta(const Fields& meta) {
  meta.allow({"name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
              "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations",
              "ownerReferences", "finalizers", "managedFields"});
}

// Scenario times (docs/simulate.md, "Scenario files"): a number of seconds, bounded to
// about 3000 years so that nanoseconds stay in range.
inline std::chrono::nanoseconds seconds_value(FieldReader& reader, const nlohmann::json& v, const std::string& path) {
  constexpr double kMaxSeconds = 1.0e11;
  if (!reader.ok()) return {};
  if (!v.is_number()) {
    reader.fail(path, "not a number of seconds");
    return {};
  }
  const double s = v.get<double>();
  if (!std::isfinite(s) || std::fabs(s) > kMaxSeconds) {
    reader.fail(path, "out of range");
    return {};
  }
  return std::chrono::nanoseconds(static_cast<std::int64_t>(std::llround(s * 1e9)));
}

// A time is an RFC 3339 string or a number of seconds relative to `start`.
inline k8s::Timestamp time_value(FieldReader& reader, const nlohmann::json& v, k8s::Timestamp start,
                                 const std::string& path) {
  if (v.is_number()) return start + seconds_value(reader, v, path);
  if (!reader.ok()) return start;
  if (v.is_string()) {
    auto t = k8s::parse_time(v.get<std::string>());
    if (t) return *t;
    reader.fail(path, "not a time (\"" + v.get<std::string>() + "\" is neither RFC 3339 nor a number of seconds)");
    return start;
  }
  reader.fail(path, "not a time");
  return start;
}

// A scaleTargetRef / describedObject: kind and name required.
template <class Reference>
Reference decode_reference_as(const Fields& f) {
  f.allow({"apiVersion", "kind", "name"});
  Reference ref;
  ref.kind = f.string("kind").value_or("");
  ref.name = f.string("name").value_or("");
  ref.api_version = f.string("apiVersion").value_or("");
  if (ref.kind.empty()) f.fail("kind", "is required");
  if (ref.name.empty()) f.fail("name", "is required");
  return ref;
}

}  // namespace fedmetrics::autoscaler::detail
