#include "fedmetrics/sim/event_fields.hpp"

#include <string>

#include <nlohmann/json.hpp>

namespace fedmetrics::sim {
namespace {

using nlohmann::json;

// A string member of `object` (or of its member `section`), "" when absent or
// not a string: Go reads a missing field as its zero value.
std::string string_at(const json& object, const char* section, const char* key) {
  const json* at = &object;
  if (section != nullptr) {
    auto found = object.find(section);
    if (found == object.end() || !found->is_object()) return {};
    at = &*found;
  }
  auto value = at->find(key);
  return value != at->end() && value->is_string() ? value->get<std::string>() : std::string();
}

SelectableField field(std::string label, const char* section, const char* key) {
  return {std::move(label), [section, key](const json& object) { return string_at(object, section, key); }};
}

// The object reference's fields, under `prefix` ("involvedObject" or "regarding").
std::vector<SelectableField> reference_fields(const char* prefix) {
  std::vector<SelectableField> out;
  for (const char* key : {"kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"})
    out.push_back(field(std::string(prefix) + "." + key, prefix, key));
  return out;
}

// "source": the reporting component of the old API, else the new one's controller.
SelectableField source_field(const char* source_section, const char* controller_key) {
  return {"source", [source_section, controller_key](const json& object) {
            std::string component = string_at(object, source_section, "component");
            return component.empty() ? string_at(object, nullptr, controller_key) : component;
          }};
}

// An Event version's fields under its names: the object reference's
// section, the reporting controller's field, and the old source's section.
std::vector<SelectableField> event_fields(const char* reference, const char* controller, const char* source) {
  auto out = reference_fields(reference);
  out.push_back(field("reason", nullptr, "reason"));
  out.push_back(field(controller, nullptr, controller));
  out.push_back(source_field(source, controller));
  out.push_back(field("type", nullptr, "type"));
  return out;
}

}  // namespace

std::vector<SelectableField> core_event_fields() {
  return event_fields("involvedObject", "reportingComponent", "source");
}

std::vector<SelectableField> events_v1_event_fields() {
  return event_fields("regarding", "reportingController", "deprecatedSource");
}

}  // namespace fedmetrics::sim
