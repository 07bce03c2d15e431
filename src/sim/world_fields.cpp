#include <algorithm>
#include <string>

#include "fedmetrics/k8s/time.hpp"
#include "sim/world_fields.hpp"

namespace fedmetrics::sim::detail {

std::string Fields::string(std::string_view key, bool required, std::string fallback) const {
  const auto* n = get(key);
  if (n == nullptr) {
    if (required) fail(path(key), "required");
    return fallback;
  }
  if (!n->is_string()) {
    fail(path(key), "expected a string");
    return fallback;
  }
  auto s = n->get<std::string>();
  if (required && s.empty()) fail(path(key), "required");
  return s;
}
std::int64_t Fields::integer(std::string_view key, std::int64_t fallback, std::int64_t min, std::int64_t max) const {
  const auto* n = get(key);
  if (n == nullptr) return fallback;
  return as_integer(*n, path(key), min, max);
}
bool Fields::boolean(std::string_view key, bool fallback) const {
  const auto* n = get(key);
  if (n == nullptr) return fallback;
  bool out = false;
  if (!convert_scalar(*n, out)) fail(path(key), "expected true or false");
  return out;
}
Quantity Fields::quantity(std::string_view key, Quantity fallback) const {
  const auto* n = get(key);
  if (n == nullptr) return fallback;
  return as_quantity(*n, path(key));
}
std::chrono::milliseconds Fields::duration(std::string_view key, std::chrono::milliseconds fallback) const {
  const auto* n = get(key);
  if (n == nullptr) return fallback;
  if (!n->is_string()) {
    fail(path(key), "expected a duration such as \"200ms\"");
    return fallback;
  }
  auto d = k8s::parse_duration(n->get<std::string>());
  if (!d) {
    fail(path(key), d.error().message);
    return fallback;
  }
  if (d->count() < 0) fail(path(key), "must not be negative");
  return std::chrono::duration_cast<std::chrono::milliseconds>(*d);
}
std::vector<std::string> Fields::strings(std::string_view key) const {
  const auto* n = get(key);
  std::vector<std::string> out;
  if (n == nullptr) return out;
  if (!n->is_array()) {
    fail(path(key), "expected a list");
    return out;
  }
  for (std::size_t i = 0; i < n->size(); ++i) {
    if (!(*n)[i].is_string()) {
      fail(item(path(key), i), "expected a string");
      return out;
    }
    out.push_back((*n)[i].get<std::string>());
  }
  return out;
}
k8s::Labels Fields::labels(std::string_view key) const {
  const auto* n = get(key);
  k8s::Labels out;
  if (n == nullptr) return out;
  if (!n->is_object()) {
    fail(path(key), "expected a mapping of strings");
    return out;
  }
  for (const auto& [k, v] : n->items()) {
    if (!v.is_string()) {
      fail(child(path(key), k), "expected a string");
      return out;
    }
    out[k] = v.get<std::string>();
  }
  // Labels must be valid Kubernetes labels: check them through the selector grammar.
  for (const auto& [k, v] : out) {
    auto sel = k8s::LabelSelector::parse(k + "=" + v);
    if (!sel) fail(child(path(key), k), sel.error().message);
  }
  return out;
}
k8s::ResourceList Fields::resources(std::string_view key) const {
  const auto* n = get(key);
  k8s::ResourceList out;
  if (n == nullptr) return out;
  if (!n->is_object()) {
    fail(path(key), "expected a mapping of quantities");
    return out;
  }
  for (const auto& [k, v] : n->items()) out[k] = as_quantity(v, child(path(key), k));
  return out;
}

std::int64_t Fields::as_integer(const json& n, const std::string& path, std::int64_t min, std::int64_t max) const {
  long long out = 0;
  if (!reader_->ok()) return min;
  if (!convert_scalar(n, out)) {
    fail(path, "expected an integer");
    return min;
  }
  if (out < min || out > max) {
    fail(path, "must be between " + std::to_string(min) + " and " + std::to_string(max));
    return min;
  }
  return out;
}
Quantity Fields::as_quantity(const json& n, const std::string& path) const {
  if (!reader_->ok()) return {};
  if (!n.is_string()) {
    fail(path, "expected a quantity such as \"250m\"");
    return {};
  }
  auto q = Quantity::parse(n.get<std::string>());
  if (!q) {
    fail(path, q.error().message);
    return {};
  }
  if (q->sign() < 0) fail(path, "must not be negative");
  return *q;
}

// RFC 1123 label: what Kubernetes accepts for namespace and cluster names.
bool dns_label(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alnum(c) || c == '-'; });
}

// RFC 1123 subdomain: Deployment and node names.
bool dns_subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  std::size_t start = 0;
  while (start <= s.size()) {
    auto dot = s.find('.', start);
    if (dot == std::string_view::npos) dot = s.size();
    if (!dns_label(s.substr(start, dot - start))) return false;
    start = dot + 1;
  }
  return true;
}

}  // namespace fedmetrics::sim::detail
