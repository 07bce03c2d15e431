#include "sim/store_watch.hpp"

#include <utility>

#include "sim/registry_rules.hpp"

namespace fedmetrics::sim::detail {

using nlohmann::json;

bool Watch::matches(const json& object) const {
  const std::string ns = meta_string(object, "namespace");
  if (namespaced && !namespace_name.empty() && ns != namespace_name) return false;
  return fields_match(selectable, fields, object) && labels.matches(labels_of(object));
}

WatchEvent Watch::make(std::string type, json object) const {
  if (!object.contains("apiVersion") || object["apiVersion"] != api_version) object["apiVersion"] = api_version;
  return {std::move(type), std::move(object)};
}

std::optional<WatchEvent> Watch::event_for(const Change& change) const {
  if (change.group_resource != group_resource || change.rv <= after) return std::nullopt;
  const bool now = matches(*change.object);
  if (change.type != "MODIFIED") {
    if (!now) return std::nullopt;
    return make(change.type, *change.object);
  }
  const bool before = matches(*change.previous);
  if (now) return make(before ? "MODIFIED" : "ADDED", *change.object);
  if (!before) return std::nullopt;
  json gone = *change.previous;
  gone["metadata"]["resourceVersion"] = std::to_string(change.rv);
  return make("DELETED", std::move(gone));
}

}  // namespace fedmetrics::sim::detail
