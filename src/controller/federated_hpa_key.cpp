#include "controller/federated_hpa_key.hpp"

#include <algorithm>

namespace fedmetrics::controller {

namespace {

using nlohmann::json;

std::string string_at(const json& object, std::string_view field) {
  if (!object.is_object()) return {};
  const auto it = object.find(field);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const json& object_at(const json& object, std::string_view field) {
  static const json empty = json::object();
  if (!object.is_object()) return empty;
  const auto it = object.find(field);
  return it != object.end() && it->is_object() ? *it : empty;
}

}  // namespace

std::optional<FederatedHPAKey> federated_hpa_key(const json& object) {
  const json& meta = object_at(object, "metadata");
  FederatedHPAKey key{string_at(meta, "namespace"), string_at(meta, "name"), string_at(meta, "uid")};
  if (key.name.empty()) return std::nullopt;
  return key;
}

std::optional<ScaleTargetKey> scale_target_key(const json& object) {
  const json& ref = object_at(object_at(object, "spec"), "scaleTargetRef");
  ScaleTargetKey key;
  key.namespace_name = string_at(object_at(object, "metadata"), "namespace");
  key.kind = string_at(ref, "kind");
  key.name = string_at(ref, "name");
  if (key.kind.empty() || key.name.empty()) return std::nullopt;
  // "apps/v1" is the group apps; "v1" the core group, "".
  const std::string api_version = string_at(ref, "apiVersion");
  const auto slash = api_version.find('/');
  if (slash != std::string::npos) key.group = api_version.substr(0, slash);
  return key;
}

std::vector<std::string> controllers_of(const ScaleTargetKey& target,
                                        const std::vector<std::pair<FederatedHPAKey, ScaleTargetKey>>& known) {
  std::vector<std::string> out;
  for (const auto& [hpa, scaled] : known)
    if (scaled == target) out.push_back(hpa.str());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

namespace {

// Go's %v of a []string: "[a b]".
std::string go_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ' ';
    out += items[i];
  }
  return out + "]";
}

}  // namespace

std::string ambiguous_selector_message(std::string_view selector, const std::vector<std::string>& controllers) {
  return "pods by selector " + std::string(selector) + " are controlled by multiple HPAs: " + go_list(controllers);
}

std::string ambiguous_target_message(std::string_view kind, std::string_view name,
                                     const std::vector<std::string>& controllers) {
  return "pods of " + std::string(kind) + "/" + std::string(name) +
         " are controlled by multiple HPAs: " + go_list(controllers);
}

}  // namespace fedmetrics::controller
