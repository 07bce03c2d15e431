#pragma once
// The Kubernetes error object (metav1.Status) and its HTTP code, with one
// named constructor per reason we answer with. Texts follow apimachinery
// pkg/api/errors/errors.go and custom-metrics-apiserver pkg/provider/errors.go
// This is the one place where an error becomes HTTP.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace fedmetrics::k8s {

// expected.hpp includes this header (its Error holds a Status), and is
// included at the end of it for the callers of from_json.
template <class T>
class Expected;

// "pods" or "pods.metrics.k8s.io": a resource qualified by its group (core has none).
struct GroupResource {
  std::string group;
  std::string resource;
  [[nodiscard]] std::string to_string() const { return group.empty() ? resource : resource + "." + group; }
};

struct StatusCause {
  std::string reason;
  std::string message;
  std::string field;
  friend bool operator==(const StatusCause&, const StatusCause&) = default;
};

struct StatusDetails {
  std::string name;
  std::string group;
  std::string kind;
  std::vector<StatusCause> causes;
  std::int32_t retry_after_seconds = 0;
  [[nodiscard]] bool empty() const {
    return name.empty() && group.empty() && kind.empty() && causes.empty() && retry_after_seconds == 0;
  }
  friend bool operator==(const StatusDetails&, const StatusDetails&) = default;
};

struct Status {
  int code = 500;
  std::string reason;  // "NotFound", ...; empty when unknown
  std::string message;
  StatusDetails details;

  // 404 `{resource[.group]} "{name}" not found`.
  static Status not_found(const GroupResource& what, std::string_view name);
  // 404 for a query the server does not serve at all.
  static Status not_found_resource();
  // 404 with the custom-metrics wording: `the server could not find the metric
  // {metric} for {groupresource}[ {name}][ with selector {selector}]`.
  static Status metric_not_found(std::string_view metric, const GroupResource& what, std::string_view name = {},
                                 std::string_view selector = {});
  static Status bad_request(std::string_view message);
  static Status unauthorized(std::string_view message = "Unauthorized");
  // 403 for a resource request, with apiserver's exact wording.
  static Status forbidden(std::string_view user, std::string_view verb, const GroupResource& what,
                          std::string_view subresource, std::string_view namespace_name, std::string_view name,
                          std::string_view reason);
  // 403 for a non-resource path.
  static Status forbidden_path(std::string_view user, std::string_view verb, std::string_view path);
  // 409 `Operation cannot be fulfilled on {resource.group} "{name}": {why}`.
  static Status conflict(const GroupResource& what, std::string_view name, std::string_view why);
  static Status method_not_allowed(std::string_view verb, const GroupResource& what);
  // 406 NotAcceptable: `only the following media types are accepted: {types}`
  // (apiserver's negotiation.errNotAcceptable), `types` comma-separated.
  static Status not_acceptable(std::string_view types);
  static Status service_unavailable(std::string_view message, std::int32_t retry_after_seconds = 0);
  static Status timeout(std::string_view message, std::int32_t retry_after_seconds = 0);
  static Status internal_error(std::string_view error);

  [[nodiscard]] nlohmann::json to_json() const;
  [[nodiscard]] std::string to_json_string() const;
  // Decodes a Status a member cluster sent; an error if it is not one.
  static Expected<Status> from_json(const nlohmann::json& in);

  friend bool operator==(const Status&, const Status&) = default;
};

struct Error;
// The one mapping of an Error to what a client is answered: the Status a
// server sent, passed on as it is; otherwise by kind: NotFound 404,
// Conflict 409, Invalid 422, Unauthorized 401, Forbidden 403, Throttled 429,
// Timeout 504, Internal 500, an error status by its code, and a server
// that could not be reached or read (refused, TLS, network, malformed, too
// large, left out) 503, as kube-aggregator answers for an unavailable backend.
Status to_status(const Error& error);

}  // namespace fedmetrics::k8s

#include "fedmetrics/k8s/expected.hpp"  // IWYU pragma: export
