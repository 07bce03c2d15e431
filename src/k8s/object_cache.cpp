#include "fedmetrics/k8s/object_cache.hpp"

#include "fedmetrics/k8s/status.hpp"

namespace fedmetrics::k8s {

using nlohmann::json;

namespace {

std::string string_at(const json& object, const char* field) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return {};
  auto value = meta->find(field);
  return value != meta->end() && value->is_string() ? value->get<std::string>() : std::string();
}

}  // namespace

std::string WatchCache::key_of(const json& object) {
  if (!object.is_object()) return {};
  auto ns = string_at(object, "namespace");
  auto name = string_at(object, "name");
  if (name.empty()) return {};
  return ns.empty() ? name : ns + "/" + name;
}

Expected<std::vector<std::string>> WatchCache::replace(std::string_view list_body) {
  auto doc = json::parse(list_body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return Error{"the list answer is not a JSON object"};
  auto items = doc.find("items");
  if (items == doc.end() || !(items->is_array() || items->is_null()))
    return Error{"the list answer has no items array"};
  std::map<std::string, json> fresh;
  if (items->is_array()) {
    for (std::size_t i = 0; i < items->size(); ++i) {
      auto key = key_of((*items)[i]);
      if (key.empty()) return Error{"items[" + std::to_string(i) + "] has no metadata.name"};
      fresh[key] = std::move((*items)[i]);
    }
  }
  auto added = store_all(std::move(fresh));
  if (added) resource_version_ = string_at(doc, "resourceVersion");
  return added;
}

WatchCache::EventOutcome WatchCache::apply(std::string_view event_line) {
  using Kind = EventOutcome::Kind;
  auto doc = json::parse(event_line, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return {Kind::Failed, {}, "a watch event that is not a JSON object"};
  auto type = doc.find("type");
  auto object = doc.find("object");
  if (type == doc.end() || !type->is_string() || object == doc.end() || !object->is_object())
    return {Kind::Failed, {}, "a watch event without type and object"};
  const auto& t = type->get_ref<const std::string&>();
  if (t == "ERROR") {
    auto status = Status::from_json(*object);
    std::string message = status ? status->message : object->dump();
    // 410: Gone (newer servers, reason Expired) and the old "too old resource version" (also 410).
    if (status && status->code == 410) return {Kind::Expired, {}, message};
    return {Kind::Failed, {}, "the server ended the watch: " + message};
  }
  auto version = string_at(*object, "resourceVersion");
  if (t == "BOOKMARK") {
    if (!version.empty()) resource_version_ = version;
    return {Kind::Bookmark, {}, {}};
  }
  if (t != "ADDED" && t != "MODIFIED" && t != "DELETED")
    return {Kind::Failed, {}, "a watch event of unknown type \"" + t + "\""};
  auto key = key_of(*object);
  if (key.empty()) return {Kind::Failed, {}, "a " + t + " event whose object has no metadata.name"};
  if (t == "DELETED") {
    if (!version.empty()) resource_version_ = version;
    drop(key);
    return {Kind::Deleted, key, {}};
  }
  auto inserted = store(key, std::move(*object));
  // Refused: the resourceVersion stays before this event, so that the list
  // that follows starts afresh.
  if (!inserted) return {Kind::Failed, {}, inserted.error().message};
  if (!version.empty()) resource_version_ = version;
  return {*inserted ? Kind::Added : Kind::Modified, key, {}};
}

Expected<std::vector<std::string>> ObjectCache::store_all(std::map<std::string, json> objects) {
  std::vector<std::string> added;
  for (const auto& [key, object] : objects)
    if (!objects_.count(key)) added.push_back(key);
  objects_ = std::move(objects);
  return added;
}

Expected<bool> ObjectCache::store(const std::string& key, json object) {
  auto [it, inserted] = objects_.insert_or_assign(key, std::move(object));
  (void)it;
  return inserted;
}

std::vector<json> ObjectCache::items() const {
  std::vector<json> out;
  out.reserve(objects_.size());
  for (const auto& [key, object] : objects_) out.push_back(object);
  return out;
}

}  // namespace fedmetrics::k8s
