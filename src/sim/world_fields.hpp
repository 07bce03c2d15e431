#pragma once
// The reading of a world file, shared by the parts of world.cpp: the YAML
// text turned into a JSON document (world_yaml.cpp), and a mapping of it read
// field by field, with the names Kubernetes accepts (world_fields.cpp).
// Internal to the sim module.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/k8s/field_reader.hpp"
#include "fedmetrics/k8s/label_selector.hpp"
#include "fedmetrics/k8s/metrics_types.hpp"
#include "fedmetrics/k8s/quantity.hpp"

namespace fedmetrics::sim::detail {

using k8s::FieldReader;
using k8s::Quantity;
using nlohmann::json;

inline std::string child(const std::string& path, std::string_view key) { return k8s::field_path(path, key); }
inline std::string item(const std::string& path, std::size_t i) { return k8s::item_path(path, i); }

// A world file's YAML as JSON, for the field reader: mappings become
// objects, sequences arrays, null stays null, and every other scalar is a
// string of its text as written (convert_scalar reads it as yaml-cpp would).
// A syntax error, or aliases that expand beyond bounds, is an error naming
// the line and column.
k8s::Expected<json> world_document(std::string_view yaml_text);

// A scalar's text read as yaml-cpp converts it (YAML::convert<T>): "0x1F"
// is an integer, "yes" and "on" are true. False when it is not one.
bool convert_scalar(const json& value, long long& out);
bool convert_scalar(const json& value, bool& out);
bool convert_scalar(const json& value, double& out);

// A mapping of a world file read field by field; unknown keys are errors,
// so that a typo in a world file is reported rather than silently ignored.
// Errors go to the reader, which keeps the first; after one, every read
// returns its fallback.
class Fields {
 public:
  Fields(FieldReader& reader, const json& node, std::string path, std::initializer_list<std::string_view> known)
      : reader_(&reader), node_(&node), path_(std::move(path)) {
    if (!node.is_object()) {
      fail(path_, "expected a mapping");
      node_ = &empty_object();
      return;
    }
    for (const auto& [key, value] : node.items()) {
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        fail(child(path_, key), "unknown field");
        return;
      }
    }
  }
  // The value at `key`, or nullptr when absent, null, or after an error.
  [[nodiscard]] const json* get(std::string_view key) const {
    if (!reader_->ok()) return nullptr;
    auto it = node_->find(key);
    return it == node_->end() || it->is_null() ? nullptr : &*it;
  }
  [[nodiscard]] bool has(std::string_view key) const { return get(key) != nullptr; }
  [[nodiscard]] std::string path(std::string_view key) const { return child(path_, key); }
  void fail(const std::string& path, std::string_view message) const { reader_->fail(path, message); }

  std::string string(std::string_view key, bool required, std::string fallback = {}) const;
  std::int64_t integer(std::string_view key, std::int64_t fallback, std::int64_t min, std::int64_t max) const;
  bool boolean(std::string_view key, bool fallback) const;
  Quantity quantity(std::string_view key, Quantity fallback) const;
  std::chrono::milliseconds duration(std::string_view key, std::chrono::milliseconds fallback) const;
  std::vector<std::string> strings(std::string_view key) const;
  k8s::Labels labels(std::string_view key) const;
  k8s::ResourceList resources(std::string_view key) const;
  std::int64_t as_integer(const json& n, const std::string& path, std::int64_t min, std::int64_t max) const;
  Quantity as_quantity(const json& n, const std::string& path) const;

  [[nodiscard]] FieldReader& reader() const { return *reader_; }

 private:
  static const json& empty_object() {
    static const json empty = json::object();
    return empty;
  }

  FieldReader* reader_;
  const json* node_;
  std::string path_;
};

// RFC 1123 label: what Kubernetes accepts for namespace and cluster names.
bool dns_label(std::string_view s);
// RFC 1123 subdomain: Deployment and node names.
bool dns_subdomain(std::string_view s);

}  // namespace fedmetrics::sim::detail
