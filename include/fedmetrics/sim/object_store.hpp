#pragma once
// The simulated control plane's object storage: what etcd plus the generic
// registry (apiserver pkg/registry/generic/registry/store.go) give a real
// kube-apiserver. Objects are JSON values grouped by resource type; every
// change takes the next resourceVersion from one counter, as etcd's revision;
// updates carrying a resourceVersion are optimistic (409 Conflict when stale);
// a type with a `status` subresource keeps spec and status apart; watches get
// the changes after a resourceVersion from a bounded history (410 Gone when
// it is too old). Pure and thread-safe: no I/O, the clock is passed in.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/field_selector.hpp"
#include "fedmetrics/k8s/label_selector.hpp"
#include "fedmetrics/k8s/status.hpp"
#include "fedmetrics/k8s/time.hpp"

namespace fedmetrics::sim {

// A field a field selector may name on a type besides metadata.name and
// metadata.namespace, with its value in a stored object: one entry of the
// type's field label conversion and of its strategy's ToSelectableFields
// (kube-apiserver pkg/registry/core/event/strategy.go for Events). An object
// without the field has "", as a Go fields.Set lookup gives.
struct SelectableField {
  std::string label;  // "involvedObject.name"
  std::function<std::string(const nlohmann::json&)> value;
};

struct ResourceType {
  std::string group;     // "" for the core group
  std::string version;   // "v1"
  std::string resource;  // plural, "federatedhpas"
  std::string kind;      // "FederatedHPA"
  bool namespaced = true;
  bool status_subresource = false;       // has /status: spec and status updated apart
  std::vector<std::string> short_names;  // for discovery ("fhpa")
  std::vector<std::string> verbs = {"create", "delete", "get", "list", "patch", "update", "watch"};
  // The type's registry strategy, when it has one: `defaults` fills absent
  // fields of an object written through the main resource (the scheme's
  // SetDefaults at decoding); `validate` names what is wrong with an object
  // about to be stored, which is then refused with 422 Invalid listing every
  // cause (apimachinery's NewInvalid).
  std::function<void(nlohmann::json&)> defaults = {};
  std::function<std::vector<k8s::StatusCause>(const nlohmann::json&)> validate = {};
  // The fields its field selectors may name besides metadata.name and
  // metadata.namespace. A type with some has a field label conversion of its
  // own, which refuses any other field with "field label not supported:
  // {field}"; a type with none refuses it as the default conversion does
  // (`"{field}" is not a known field selector: only "metadata.name",
  // "metadata.namespace"`).
  std::vector<SelectableField> selectable_fields = {};

  [[nodiscard]] std::string api_version() const { return group.empty() ? version : group + "/" + version; }
  [[nodiscard]] k8s::GroupResource group_resource() const { return {group, resource}; }
};

// A stored object or list, or the Status that explains why not.
using StoreResult = std::variant<nlohmann::json, k8s::Status>;

struct WatchEvent {
  std::string type;  // ADDED, MODIFIED, DELETED, ERROR
  nlohmann::json object;
};

// Receives the events of one watch, in order; returning false ends the watch.
// Called with the store's lock released, on the thread that made the change
// (or, for the initial events, the thread that started the watch).
using WatchSink = std::function<bool(const WatchEvent&)>;

enum class PatchType { Merge, Strategic, Json };  // application/{merge-patch,strategic-merge-patch,json-patch}+json

class ObjectStore {
 public:
  explicit ObjectStore(std::function<k8s::Timestamp()> clock, std::size_t history = 10'000);

  void register_type(ResourceType type);
  [[nodiscard]] const ResourceType* find_type(std::string_view group, std::string_view version,
                                              std::string_view resource) const;
  [[nodiscard]] std::vector<ResourceType> types() const;

  // Sets metadata.uid, creationTimestamp, resourceVersion, generation 1
  // (namespace from `namespace_name` for namespaced types; metadata.generateName
  // honoured). 409 AlreadyExists, 422 Invalid when the name is missing, 400
  // when the body's namespace differs from the path's.
  StoreResult create(const ResourceType& type, std::string_view namespace_name, nlohmann::json object);
  StoreResult get(const ResourceType& type, std::string_view namespace_name, std::string_view name) const;
  // `namespace_name` empty = all namespaces. A `{Kind}List` with metadata.resourceVersion.
  StoreResult list(const ResourceType& type, std::string_view namespace_name, const k8s::LabelSelector& labels,
                   const k8s::FieldSelector& fields) const;
  // `subresource` is "" or "status". A resourceVersion in the body must match
  // (409 Conflict otherwise); without one the update is unconditional. The main
  // resource keeps its status when the type has a status subresource, the
  // status subresource changes only status. generation is bumped when
  // anything outside metadata and status changes.
  StoreResult update(const ResourceType& type, std::string_view namespace_name, std::string_view name,
                     nlohmann::json object, std::string_view subresource = {});
  StoreResult patch(const ResourceType& type, std::string_view namespace_name, std::string_view name,
                    PatchType patch_type, const nlohmann::json& patch, std::string_view subresource = {});
  // DeleteOptions.preconditions: the delete happens only when the stored
  // object still has this uid / resourceVersion (409 Conflict otherwise, as
  // kube-apiserver answers), so that a client deletes what it read, not an
  // object created meanwhile under the same name.
  struct DeletePreconditions {
    std::optional<std::string> uid;
    std::optional<std::string> resource_version;
  };
  // Returns the deleted object. An object with metadata.finalizers is only
  // marked (deletionTimestamp) and returned; it is deleted when an update
  // removes its last finalizer.
  StoreResult remove(const ResourceType& type, std::string_view namespace_name, std::string_view name,
                     const DeletePreconditions& preconditions = {});

  // Starts a watch. `resource_version` empty or "0": ADDED for every current
  // object first; otherwise the stored changes after it (410 Gone, as an
  // ERROR event carrying the Status, when it is older than the history).
  // Returns an id for unwatch(), or nullopt when the watch ended at once.
  std::optional<std::uint64_t> watch(const ResourceType& type, std::string namespace_name, k8s::LabelSelector labels,
                                     k8s::FieldSelector fields, std::string_view resource_version, WatchSink sink);
  void unwatch(std::uint64_t id);
  [[nodiscard]] std::size_t watch_count() const;

  [[nodiscard]] std::uint64_t resource_version() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// A list's or watch's fieldSelector for `type`, or the 400 message when it is
// malformed or names a field the type cannot select on.
k8s::Expected<k8s::FieldSelector> parse_field_selector(const ResourceType& type, std::string_view text);
// Whether a stored object of `type` has the fields `selector` asks for.
bool fields_match(const std::vector<SelectableField>& fields, const k8s::FieldSelector& selector,
                  const nlohmann::json& object);

// The media type of a PATCH's Content-Type, or nullopt when it is not one.
std::optional<PatchType> patch_type_from_content_type(std::string_view content_type);

}  // namespace fedmetrics::sim
