#pragma once
// Turns an HTTP method and request target into what is asked: an information
// endpoint (health, version, discovery) or a metrics query, or the Kubernetes
// Status that answers a malformed request. Pure: no I/O. Wire contract 0 and 1.
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

// `target` is the request-target as sent (origin form: path and query).
ApiRequest parse_api_request(std::string_view method, std::string_view target);

// Splits "deployments.apps" into resource "deployments" and group "apps".
k8s::GroupResource parse_group_resource(std::string_view text);

}  // namespace fedmetrics::server
