#pragma once
// What the simulated control plane's storage checks and sets on an object, as
// apiserver's generic registry and its handlers do (object_store.cpp keeps
// the objects, their history and the watches): metadata reads, the checks of
// a body against its URL and type, the errors they answer with in
// apimachinery's wording, and the names and uids it makes. Internal to the
// sim module.
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/label_selector.hpp"
#include "fedmetrics/k8s/status.hpp"
#include "fedmetrics/sim/object_store.hpp"

namespace fedmetrics::sim::detail {

using ObjectKey = std::pair<std::string, std::string>;  // namespace ("" when cluster-scoped), name

// metadata.<key> when it is a string, else "".
std::string meta_string(const nlohmann::json& object, const char* key);
// metadata.generation, 0 when absent.
std::int64_t meta_generation(const nlohmann::json& object);
// metadata.finalizers holds at least one name.
bool has_finalizers(const nlohmann::json& object);
// metadata.labels, those whose value is a string.
k8s::Labels labels_of(const nlohmann::json& object);

// What decoding the body into an object with ObjectMeta would reject: checked
// up front, so that nothing later meets a field of the wrong JSON type.
std::optional<std::string> shape_error(const nlohmann::json& object);

// apimachinery errors.NewAlreadyExists.
k8s::Status already_exists(const ResourceType& type, const std::string& name);
// apimachinery errors.NewInvalid with one field error:
// `{Kind}[.{group}] "{name}" is invalid: {field}: {detail}`.
k8s::Status invalid(const ResourceType& type, const std::string& name, const std::string& field,
                    const std::string& cause, const std::string& detail);
// apimachinery errors.NewInvalid with the causes the type's validate found:
// one is spelled as above, several as `is invalid: [a, b]`. Nullopt when valid.
std::optional<k8s::Status> validation_error(const ResourceType& type, const nlohmann::json& object);
// A JSON patch that decoded but does not apply (patch.go's generic 422), the
// reason as its cause.
k8s::Status patch_rejected(std::string why);
// A strategic merge patch without its directives ($patch, $retainKeys, ...),
// to be merged as RFC 7386 does.
nlohmann::json without_directives(const nlohmann::json& patch);
// A resourceVersion as a number; nullopt when it is none.
std::optional<std::uint64_t> parse_rv(std::string_view text);
// The JSON whose changes raise metadata.generation.
nlohmann::json tracked_content(nlohmann::json object, const ResourceType& type);
// A random (version 4) uid.
std::string random_uid(std::mt19937_64& random);
// metadata.generateName's name: the base and five random characters.
std::string generate_name(std::string base, std::mt19937_64& random);
// endpoints/handlers checkName: the body is an object that names the object
// of the URL; the 400 to answer when not.
std::optional<k8s::Status> check_name(const ResourceType& type, const ObjectKey& key, const nlohmann::json& object);

}  // namespace fedmetrics::sim::detail
