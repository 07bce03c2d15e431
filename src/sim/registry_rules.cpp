#include "sim/registry_rules.hpp"

#include <algorithm>
#include <charconv>

#include "fedmetrics/k8s/ascii.hpp"

namespace fedmetrics::sim {
namespace detail {

using nlohmann::json;

std::optional<std::string> shape_error(const json& object) {
  if (!object.is_object()) return "the body of the request must be a JSON object";
  auto meta = object.find("metadata");
  if (meta == object.end() || meta->is_null()) return std::nullopt;
  if (!meta->is_object()) return "metadata: expected an object";
  for (const char* key : {"name", "generateName", "namespace", "uid", "resourceVersion", "creationTimestamp"}) {
    auto value = meta->find(key);
    if (value != meta->end() && !value->is_string() && !value->is_null()) {
      return std::string("metadata.") + key + ": expected a string";
    }
  }
  for (const char* key : {"labels", "annotations"}) {
    auto value = meta->find(key);
    if (value == meta->end() || value->is_null()) continue;
    const bool strings =
        value->is_object() && std::all_of(value->begin(), value->end(), [](const json& v) { return v.is_string(); });
    if (!strings) return std::string("metadata.") + key + ": expected a map of strings";
  }
  return std::nullopt;
}

std::string meta_string(const json& object, const char* key) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return {};
  auto value = meta->find(key);
  return value != meta->end() && value->is_string() ? value->get<std::string>() : std::string();
}

std::int64_t meta_generation(const json& object) {
  const auto& meta = object.at("metadata");
  auto value = meta.find("generation");
  return value != meta.end() && value->is_number_integer() ? value->get<std::int64_t>() : 0;
}

// metadata.finalizers holds at least one name.
bool has_finalizers(const json& object) {
  const auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return false;
  const auto finalizers = meta->find("finalizers");
  return finalizers != meta->end() && finalizers->is_array() && !finalizers->empty();
}

k8s::Labels labels_of(const json& object) {
  k8s::Labels labels;
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return labels;
  auto found = meta->find("labels");
  if (found == meta->end() || !found->is_object()) return labels;
  for (const auto& [key, value] : found->items()) {
    if (value.is_string()) labels.emplace(key, value.get<std::string>());
  }
  return labels;
}

// apimachinery errors.NewAlreadyExists.
k8s::Status already_exists(const ResourceType& type, const std::string& name) {
  const auto what = type.group_resource();
  return {409,
          "AlreadyExists",
          what.to_string() + " \"" + name + "\" already exists",
          {name, what.group, what.resource, {}, 0}};
}

// apimachinery errors.NewInvalid with one field error:
// `{Kind}[.{group}] "{name}" is invalid: {field}: {detail}`.
k8s::Status invalid(const ResourceType& type, const std::string& name, const std::string& field,
                    const std::string& cause, const std::string& detail) {
  const std::string kind = type.group.empty() ? type.kind : type.kind + "." + type.group;
  return {422,
          "Invalid",
          kind + " \"" + name + "\" is invalid: " + field + ": " + detail,
          {name, type.group, type.kind, {k8s::StatusCause{cause, detail, field}}, 0}};
}

// apimachinery errors.NewInvalid with the causes a strategy's Validate found:
// one is spelled as above, several as `is invalid: [a, b]`.
std::optional<k8s::Status> validation_error(const ResourceType& type, const json& object) {
  if (!type.validate) return std::nullopt;
  auto causes = type.validate(object);
  if (causes.empty()) return std::nullopt;
  const std::string name = meta_string(object, "name");
  const std::string kind = type.group.empty() ? type.kind : type.kind + "." + type.group;
  std::string list;
  for (const auto& c : causes) list += (list.empty() ? "" : ", ") + c.field + ": " + c.message;
  if (causes.size() > 1) list = "[" + list + "]";
  return k8s::Status{422,
                     "Invalid",
                     kind + " \"" + name + "\" is invalid: " + list,
                     {name, type.group, type.kind, std::move(causes), 0}};
}

// A JSON patch that decoded but does not apply. patch.go answers with
// errors.NewGenericServerResponse(422), whose message is generic; we add the
// reason as a cause, which upstream leaves out, so that it can be debugged.
k8s::Status patch_rejected(std::string why) {
  if (auto end = why.find("] "); why.starts_with("[json.exception.") && end != std::string::npos) {
    why.erase(0, end + 2);  // nlohmann's "[json.exception.out_of_range.403] " prefix
  }
  return {422,
          "Invalid",
          "the server rejected our request due to an error in our request",
          {{}, {}, {}, {k8s::StatusCause{{}, std::move(why), {}}}, 0}};
}

// The strategic-merge-patch directives ($patch, $retainKeys,
// $setElementOrder/..., $deleteFromPrimitiveList/...) would otherwise be merged
// in as fields. Without the types' patch strategies we merge as RFC 7386 does:
// lists are replaced whole and the directives are dropped.
json without_directives(const json& patch) {
  if (patch.is_array()) {
    json out = json::array();
    for (const auto& item : patch) out.push_back(without_directives(item));
    return out;
  }
  if (!patch.is_object()) return patch;
  json out = json::object();
  for (const auto& [key, value] : patch.items()) {
    if (!key.starts_with("$")) out[key] = without_directives(value);
  }
  return out;
}

std::optional<std::uint64_t> parse_rv(std::string_view text) {
  std::uint64_t value = 0;
  const auto* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

// The JSON that generation tracks: everything outside metadata, and outside
// status too when status is a subresource (the CRD strategy's PrepareForUpdate).
json tracked_content(json object, const ResourceType& type) {
  object.erase("metadata");
  object.erase("apiVersion");
  object.erase("kind");
  if (type.status_subresource) object.erase("status");
  return object;
}

std::string random_uid(std::mt19937_64& random) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::uniform_int_distribution<int> digit(0, 15);
  std::string out;
  for (int i = 0; i < 32; ++i) {
    if (i == 8 || i == 12 || i == 16 || i == 20) out += '-';
    int d = digit(random);
    if (i == 12) d = 4;            // version 4 (random)
    if (i == 16) d = 8 | (d & 3);  // RFC 4122 variant
    out += kHex[d];
  }
  return out;
}

// apiserver's names.SimpleNameGenerator: the base cut to 63 - 5 characters,
// then five characters from utilrand's alphabet (no vowels, no look-alikes).
std::string generate_name(std::string base, std::mt19937_64& random) {
  static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  std::uniform_int_distribution<std::size_t> pick(0, kAlphabet.size() - 1);
  if (base.size() > 58) base.resize(58);
  for (int i = 0; i < 5; ++i) base += kAlphabet[pick(random)];
  return base;
}

// endpoints/handlers checkName: the body names the object of the URL.
std::optional<k8s::Status> check_name(const ResourceType& type, const ObjectKey& key, const json& object) {
  if (auto error = shape_error(object)) return k8s::Status::bad_request(*error);
  const std::string name = meta_string(object, "name");
  if (name != key.second) {
    return k8s::Status::bad_request("the name of the object (" + name + ") does not match the name on the URL (" +
                                    key.second + ")");
  }
  const std::string ns = meta_string(object, "namespace");
  if (type.namespaced && !ns.empty() && ns != key.first) {
    return k8s::Status::bad_request("the namespace of the object (" + ns +
                                    ") does not match the namespace on the URL (" + key.first + ")");
  }
  return std::nullopt;
}

}  // namespace detail

using detail::meta_string;
using nlohmann::json;

k8s::Expected<k8s::FieldSelector> parse_field_selector(const ResourceType& type, std::string_view text) {
  if (type.selectable_fields.empty()) return k8s::FieldSelector::parse(text);
  std::vector<std::string_view> known{"metadata.name", "metadata.namespace"};
  for (const auto& field : type.selectable_fields) known.push_back(field.label);
  return k8s::FieldSelector::parse_for(text, known);
}

bool fields_match(const std::vector<SelectableField>& fields, const k8s::FieldSelector& selector, const json& object) {
  if (selector.empty()) return true;
  return selector.matches([&](std::string_view label) -> std::string {
    if (label == "metadata.name") return meta_string(object, "name");
    if (label == "metadata.namespace") return meta_string(object, "namespace");
    for (const auto& field : fields)
      if (field.label == label) return field.value(object);
    return {};  // a selector parsed for this type names no other field
  });
}

std::optional<PatchType> patch_type_from_content_type(std::string_view content_type) {
  std::string_view media = content_type.substr(0, content_type.find(';'));
  while (!media.empty() && (media.front() == ' ' || media.front() == '\t')) media.remove_prefix(1);
  while (!media.empty() && (media.back() == ' ' || media.back() == '\t')) media.remove_suffix(1);
  const std::string lower = k8s::ascii_lowercase(media);
  if (lower == "application/merge-patch+json") return PatchType::Merge;
  if (lower == "application/strategic-merge-patch+json") return PatchType::Strategic;
  if (lower == "application/json-patch+json") return PatchType::Json;
  return std::nullopt;  // application/apply-patch+yaml: server-side apply is not simulated
}

}  // namespace fedmetrics::sim
