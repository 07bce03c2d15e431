#pragma once
// The generic REST of a kube-apiserver over an ObjectStore, shared by the
// simulated control plane and the simulated members: one stored type's get,
// list (label and field selectors), watch, create, update, patch, delete and
// status subresource, and the OpenAPI v3 index kubectl reads before it
// creates or applies. Internal to the sim module.
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/k8s/status.hpp"
#include "fedmetrics/k8s/url.hpp"
#include "fedmetrics/sim/object_store.hpp"
#include "fedmetrics/transport/http_message.hpp"

namespace fedmetrics::sim::detail {

k8s::Expected<nlohmann::json> parse_object(const std::string& body);
transport::HttpResponse store_response(const StoreResult& result, int success = 200);
k8s::Status unsupported_media_type();

// Which object a resource request names, below its group and version.
struct ResourcePath {
  std::string namespace_name;  // empty: all namespaces, or a cluster-scoped type
  std::string name;            // empty: the collection
  std::string subresource;     // "" or "status"
};

struct StoredServing {
  // Whether a namespace exists (a create in another one is 404).
  std::function<bool(const std::string&)> namespace_exists;
  // What a read answers with: the stored object or list as the client asked
  // for it (a Table for kubectl get). Absent: as stored.
  std::function<transport::HttpResponse(StoreResult, int success)> answer;
  // What a watch event carries for a stored object (a Table when the watch
  // asked for one, see table_json.hpp). Called with one watch's events in
  // order, on the thread that made each change, after the request is
  // answered: it must own what it uses. Absent: the object.
  std::function<nlohmann::json(const nlohmann::json&)> watch_object;
  // Called with the result of every PUT or PATCH of the main resource.
  std::function<void(const StoreResult&)> after_update;
};

// Serves `request` for `type` as apiserver's generic registry handlers do. A
// watch is answered with a stream that the store feeds until the watch's
// timeout, and that leaves the store when the server is done with it.
transport::HttpResponse serve_stored(ObjectStore& store, const ResourceType& type, const ResourcePath& path,
                                     const transport::HttpRequest& request, const k8s::RequestTarget& target,
                                     const StoredServing& serving);

// GET /openapi/v3[/{group-version}]: the index of the served group-versions
// and, per document, the PATCH operations that declare the fieldValidation
// parameter per kind (cli-runtime query_param_verifier_v3.go), so that
// `kubectl create/apply` leave validation to the server. No schemas.
transport::HttpResponse openapi_v3(const std::vector<std::string>& segments, const std::vector<ResourceType>& types,
                                   const std::vector<std::pair<std::string, std::vector<std::string>>>& groups);

}  // namespace fedmetrics::sim::detail
