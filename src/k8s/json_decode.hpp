#pragma once
// Internal to the wire library: reading untrusted JSON objects field by field,
// with errors that name the field's path ("items[2].usage.cpu: ...") and
// without letting nlohmann's exceptions escape. A JSON null reads as absent,
// as Go's decoder leaves the zero value.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/k8s/label_selector.hpp"
#include "fedmetrics/k8s/metrics_types.hpp"
#include "fedmetrics/k8s/quantity.hpp"
#include "fedmetrics/k8s/time.hpp"

namespace fedmetrics::k8s {

enum class Need { Required, Optional };

inline std::string json_type_name(const nlohmann::json& j) { return j.type_name(); }

inline std::string join_path(std::string_view base, std::string_view key) {
  if (base.empty()) return std::string(key);
  return std::string(base) + "." + std::string(key);
}

inline std::string index_path(std::string_view base, std::size_t index) {
  return std::string(base) + "[" + std::to_string(index) + "]";
}

class ObjectReader {
 public:
  // `json` must outlive the reader. An absent reader (present() false) reads
  // every field as absent.
  ObjectReader(const nlohmann::json& json, std::string path) : json_(&json), path_(std::move(path)) {
    if (!json.is_object() && !json.is_null()) {
      error_ = Error{"expected an object, got " + json_type_name(json)}.at(path_);
    }
  }
  static ObjectReader absent(std::string path) { return ObjectReader(std::move(path)); }

  [[nodiscard]] bool ok() const { return error_.message.empty(); }
  [[nodiscard]] const Error& error() const { return error_; }
  [[nodiscard]] bool present() const { return json_ != nullptr && json_->is_object(); }
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] std::string path_of(std::string_view key) const { return join_path(path_, key); }

  // The field's JSON, or nullptr when absent or null.
  [[nodiscard]] const nlohmann::json* raw(std::string_view key) const {
    if (!present()) return nullptr;
    auto it = json_->find(key);
    if (it == json_->end() || it->is_null()) return nullptr;
    return &*it;
  }

  Expected<std::string> string(std::string_view key, Need need) const {
    const auto* v = raw(key);
    if (v == nullptr) return missing_or(key, need, std::string());
    if (!v->is_string()) return type_error(key, "a string", *v);
    return v->get<std::string>();
  }

  Expected<std::int64_t> integer(std::string_view key, Need need) const {
    const auto* v = raw(key);
    if (v == nullptr) return missing_or<std::int64_t>(key, need, 0);
    if (v->is_number_integer()) return v->get<std::int64_t>();
    if (v->is_number_unsigned()) {
      auto u = v->get<std::uint64_t>();
      if (u <= static_cast<std::uint64_t>(INT64_MAX)) return static_cast<std::int64_t>(u);
    }
    return type_error(key, "an integer", *v);
  }

  Expected<bool> boolean(std::string_view key, Need need) const {
    const auto* v = raw(key);
    if (v == nullptr) return missing_or(key, need, false);
    if (!v->is_boolean()) return type_error(key, "a boolean", *v);
    return v->get<bool>();
  }

  Expected<ObjectReader> object(std::string_view key, Need need) const {
    const auto* v = raw(key);
    if (v == nullptr) {
      if (need == Need::Required) return missing(key);
      return absent(path_of(key));
    }
    ObjectReader child(*v, path_of(key));
    if (!child.ok()) return child.error();
    return child;
  }

  // The array, or an empty array when absent.
  Expected<const nlohmann::json*> array(std::string_view key, Need need) const {
    static const nlohmann::json empty = nlohmann::json::array();
    const auto* v = raw(key);
    if (v == nullptr) return missing_or<const nlohmann::json*>(key, need, &empty);
    if (!v->is_array()) return type_error(key, "an array", *v);
    return v;
  }

  Expected<Quantity> quantity(std::string_view key, Need need) const {
    const auto* v = raw(key);
    if (v == nullptr) return missing_or(key, need, Quantity());
    auto q = quantity_from_json(*v);
    if (!q) return q.error().at(path_of(key));
    return q;
  }

  Expected<Timestamp> time(std::string_view key, Need need) const {
    const auto* v = raw(key);
    if (v == nullptr) return missing_or(key, need, Timestamp());
    if (!v->is_string()) return type_error(key, "a time string", *v);
    auto t = parse_time(v->get_ref<const std::string&>());
    if (!t) return t.error().at(path_of(key));
    return t;
  }

  // A corev1.ResourceList ({"cpu": "250m", ...}); empty when absent.
  Expected<ResourceList> resource_list(std::string_view key) const {
    const auto* v = raw(key);
    ResourceList out;
    if (v == nullptr) return out;
    if (!v->is_object()) return type_error(key, "an object of quantities", *v);
    for (const auto& [name, q] : v->items()) {
      auto parsed = quantity_from_json(q);
      if (!parsed) return parsed.error().at(path_of(key) + "." + name);
      out.emplace(name, std::move(*parsed));
    }
    return out;
  }

  // A map of string to string (labels, annotations).
  Expected<Labels> string_map(std::string_view key, Need need) const {
    const auto* v = raw(key);
    if (v == nullptr) return missing_or(key, need, Labels());
    if (!v->is_object()) return type_error(key, "an object of strings", *v);
    Labels out;
    for (const auto& [k, val] : v->items()) {
      if (!val.is_string()) return Error{"expected a string, got " + json_type_name(val)}.at(path_of(key) + "." + k);
      out.emplace(k, val.get<std::string>());
    }
    return out;
  }

 private:
  explicit ObjectReader(std::string path) : json_(nullptr), path_(std::move(path)) {}

  Error missing(std::string_view key) const { return Error{"required field is missing"}.at(path_of(key)); }
  template <class T>
  Expected<T> missing_or(std::string_view key, Need need, T fallback) const {
    if (need == Need::Required) return missing(key);
    return fallback;
  }
  Error type_error(std::string_view key, std::string_view expected, const nlohmann::json& got) const {
    return Error{"expected " + std::string(expected) + ", got " + json_type_name(got)}.at(path_of(key));
  }

  const nlohmann::json* json_;
  std::string path_;
  Error error_;
};

// Parses a document without letting nlohmann's exception escape.
inline Expected<nlohmann::json> parse_json_document(std::string_view text) {
  auto doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Error{"malformed JSON"};
  return doc;
}

}  // namespace fedmetrics::k8s
