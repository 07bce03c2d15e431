#pragma once
// Turns an HTTP method and request target into what is asked: an information
// endpoint (health, version, discovery) or a metrics query, or the Kubernetes
// Status that answers a malformed request. Pure: no I/O. The paths: docs/api.md, "Paths".
#include <cstddef>
#include <string>
#include <string_view>
#include <variant>

#include "fedmetrics/aggregator/query.hpp"
#include "fedmetrics/k8s/status.hpp"

namespace fedmetrics::server {

enum class Endpoint {
  Healthz,
  Livez,
  Readyz,
  Version,
  SelfMetrics,      // /metrics, Prometheus text
  ApiGroupList,     // /apis
  ApiGroup,         // /apis/{group}
  ApiResourceList,  // /apis/{group}/{version}
};

struct InfoRequest {
  Endpoint endpoint = Endpoint::Healthz;
  std::string group;    // ApiGroup, ApiResourceList
  std::string version;  // ApiResourceList
  friend bool operator==(const InfoRequest&, const InfoRequest&) = default;
};

using ApiRequest = std::variant<InfoRequest, aggregator::ResourceMetricsQuery, aggregator::CustomMetricsQuery,
                                aggregator::ExternalMetricsQuery, k8s::Status>;

// Bounds on each selector of a request (labelSelector, fieldSelector,
// metricLabelSelector), checked before it is parsed and before any member is
// asked. kube-apiserver has no explicit cap, only its ~1 MiB header limit;
// parsing costs about 100 times the selector's size, so a bounded selector
// bounds the memory of a request. 64 KiB and 1,000 requirements are far above
// what the HPA controller or kubectl send (a handful of terms), and cap one
// request's parse at a few MB.
inline constexpr std::size_t kMaxSelectorBytes = 64 * 1024;
inline constexpr std::size_t kMaxSelectorRequirements = 1000;

// `target` is the request-target as sent (origin form: path and query).
ApiRequest parse_api_request(std::string_view method, std::string_view target);

// Splits "deployments.apps" into resource "deployments" and group "apps".
k8s::GroupResource parse_group_resource(std::string_view text);

}  // namespace fedmetrics::server
