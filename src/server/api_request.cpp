#include "server/api_request.hpp"

#include <optional>
#include <vector>

#include "fedmetrics/k8s/url.hpp"

namespace fedmetrics::server {

using aggregator::CustomMetricsQuery;
using aggregator::ExternalMetricsQuery;
using aggregator::ResourceMetricsQuery;
using k8s::GroupResource;
using k8s::query_value;
using k8s::QueryValues;
using k8s::Status;

namespace {

constexpr std::string_view kMetricsGroup = "metrics.k8s.io";
constexpr std::string_view kCustomGroup = "custom.metrics.k8s.io";
constexpr std::string_view kExternalGroup = "external.metrics.k8s.io";

// The Kubernetes verb for an HTTP method on a resource (apiserver request info).
std::string_view verb_for(std::string_view method, bool is_list) {
  if (method == "POST") return "create";
  if (method == "PUT") return "update";
  if (method == "PATCH") return "patch";
  if (method == "DELETE") return is_list ? "deletecollection" : "delete";
  return method;
}

bool is_read(std::string_view method) { return method == "GET" || method == "HEAD"; }

// Rejects writes and watches on a metrics resource with apiserver's 405.
std::optional<Status> check_method(std::string_view method, const QueryValues& query, const GroupResource& what,
                                   bool is_list) {
  if (!is_read(method)) return Status::method_not_allowed(verb_for(method, is_list), what);
  if (k8s::query_bool(query, "watch")) return Status::method_not_allowed("watch", what);
  return std::nullopt;
}

ApiRequest parse_resource_metrics(std::string_view method, const std::vector<std::string>& parts,
                                  const QueryValues& query) {
  // parts after /apis/metrics.k8s.io/v1beta1
  ResourceMetricsQuery q;
  bool matched = false;
  if (!parts.empty() && parts[0] == "nodes" && parts.size() <= 2) {
    q.kind = ResourceMetricsQuery::Kind::Nodes;
    if (parts.size() == 2) q.name = parts[1];
    matched = true;
  } else if (!parts.empty() && parts[0] == "pods" && parts.size() == 1) {
    q.kind = ResourceMetricsQuery::Kind::Pods;
    matched = true;
  } else if (parts.size() >= 3 && parts.size() <= 4 && parts[0] == "namespaces" && parts[2] == "pods") {
    q.kind = ResourceMetricsQuery::Kind::Pods;
    q.namespace_name = parts[1];
    if (parts.size() == 4) q.name = parts[3];
    matched = true;
  }
  if (!matched) return Status::not_found_resource();
  GroupResource what{std::string(kMetricsGroup), q.kind == ResourceMetricsQuery::Kind::Pods ? "pods" : "nodes"};
  if (auto bad = check_method(method, query, what, q.name.empty())) return *bad;

  auto labels = k8s::LabelSelector::parse(query_value(query, "labelSelector"));
  if (!labels) return Status::bad_request(labels.error().message);
  q.label_selector = std::move(*labels);
  auto fields = k8s::FieldSelector::parse(query_value(query, "fieldSelector"));
  if (!fields) return Status::bad_request(fields.error().message);
  q.field_selector = std::move(*fields);
  return q;
}

ApiRequest parse_custom_metrics(std::string_view method, k8s::CustomMetricsVersion version,
                                const std::vector<std::string>& parts,
                                const QueryValues& query) {
  // parts after /apis/custom.metrics.k8s.io/{version}; custom-metrics-apiserver's routes.
  CustomMetricsQuery q;
  q.version = version;
  if (parts.size() == 3 && parts[0] != "namespaces") {
    q.resource = parse_group_resource(parts[0]);
    q.name = parts[1];
    q.metric = parts[2];
  } else if (parts.size() == 4 && parts[0] == "namespaces" && parts[2] == "metrics") {
    // A metric describing the Namespace object itself: root-scoped lookup.
    q.resource = GroupResource{"", "namespaces"};
    q.name = parts[1];
    q.metric = parts[3];
  } else if (parts.size() == 5 && parts[0] == "namespaces") {
    q.namespace_name = parts[1];
    q.resource = parse_group_resource(parts[2]);
    q.name = parts[3];
    q.metric = parts[4];
  } else {
    if (!is_read(method)) return Status::method_not_allowed(verb_for(method, false), {std::string(kCustomGroup), "metrics"});
    return Status::bad_request("invalid request path");
  }
  if (q.resource.resource.empty() || q.name.empty() || q.metric.empty()) return Status::bad_request("invalid request path");
  GroupResource what{std::string(kCustomGroup), q.resource.to_string()};
  if (auto bad = check_method(method, query, what, q.wildcard())) return *bad;

  if (q.wildcard()) {
    auto labels = k8s::LabelSelector::parse(query_value(query, "labelSelector"));
    if (!labels) return Status::bad_request(labels.error().message);
    q.label_selector = std::move(*labels);
  }
  // Upstream answers a bad metricLabelSelector with a bare 500; 400 is the honest code.
  auto metric_labels = k8s::LabelSelector::parse(query_value(query, "metricLabelSelector"));
  if (!metric_labels) return Status::bad_request(metric_labels.error().message);
  q.metric_selector = std::move(*metric_labels);

  // custom-metrics-apiserver: a metadata.name field selector must agree with the path.
  if (!q.wildcard()) {
    if (auto fields = k8s::FieldSelector::parse(query_value(query, "fieldSelector")); fields.ok()) {
      for (const auto& r : fields->requirements()) {
        if (r.field == "metadata.name" && !r.negated && r.value != q.name)
          return Status::bad_request("fieldSelector metadata.name doesn't match requested name");
      }
    }
  }
  return q;
}

ApiRequest parse_external_metrics(std::string_view method, const std::vector<std::string>& parts,
                                  const QueryValues& query) {
  if (parts.size() != 3 || parts[0] != "namespaces") return Status::not_found_resource();
  ExternalMetricsQuery q;
  q.namespace_name = parts[1];
  q.metric = parts[2];
  if (auto bad = check_method(method, query, {std::string(kExternalGroup), q.metric}, true)) return *bad;
  // On this API labelSelector selects metric series (wire contract 1.3).
  auto labels = k8s::LabelSelector::parse(query_value(query, "labelSelector"));
  if (!labels) return Status::bad_request(labels.error().message);
  q.metric_selector = std::move(*labels);
  return q;
}

bool known_group_version(std::string_view group, std::string_view version) {
  if (group == kMetricsGroup) return version == "v1beta1";
  if (group == kCustomGroup) return version == "v1beta2" || version == "v1beta1";
  if (group == kExternalGroup) return version == "v1beta1";
  return false;
}

}  // namespace

GroupResource parse_group_resource(std::string_view text) {
  auto dot = text.find('.');
  if (dot == std::string_view::npos) return GroupResource{"", std::string(text)};
  return GroupResource{std::string(text.substr(dot + 1)), std::string(text.substr(0, dot))};
}

ApiRequest parse_api_request(std::string_view method, std::string_view target) {
  auto decoded = k8s::parse_request_target(target);
  if (!decoded) return Status::bad_request("invalid URL escape in path");
  const auto& parts = decoded->segments;
  const auto& query = decoded->query;

  if (parts.size() == 1 && !is_read(method) &&
      (parts[0] == "healthz" || parts[0] == "livez" || parts[0] == "readyz" || parts[0] == "version" ||
       parts[0] == "metrics"))
    return Status::method_not_allowed(verb_for(method, false), {"", parts[0]});
  if (parts.size() == 1 && is_read(method)) {
    if (parts[0] == "healthz") return InfoRequest{Endpoint::Healthz, {}, {}};
    if (parts[0] == "livez") return InfoRequest{Endpoint::Livez, {}, {}};
    if (parts[0] == "readyz") return InfoRequest{Endpoint::Readyz, {}, {}};
    if (parts[0] == "version") return InfoRequest{Endpoint::Version, {}, {}};
    if (parts[0] == "metrics") return InfoRequest{Endpoint::SelfMetrics, {}, {}};
  }
  if (parts.empty() || parts[0] != "apis") return Status::not_found_resource();  // includes /api, /openapi
  if (parts.size() == 1) {
    if (!is_read(method)) return Status::method_not_allowed(verb_for(method, true), {"", "APIGroupList"});
    return InfoRequest{Endpoint::ApiGroupList, {}, {}};
  }
  const std::string& group = parts[1];
  if (parts.size() == 2) {
    if (group != kMetricsGroup && group != kCustomGroup && group != kExternalGroup) return Status::not_found_resource();
    // The discovery document's kind (not GroupResource{group, ""}, which reads ".metrics.k8s.io").
    if (!is_read(method)) return Status::method_not_allowed(verb_for(method, true), {"", "APIGroup"});
    return InfoRequest{Endpoint::ApiGroup, group, {}};
  }
  const std::string& version = parts[2];
  if (!known_group_version(group, version)) return Status::not_found_resource();
  if (parts.size() == 3) {
    if (!is_read(method)) return Status::method_not_allowed(verb_for(method, true), {"", "APIResourceList"});
    return InfoRequest{Endpoint::ApiResourceList, group, version};
  }
  std::vector<std::string> rest(parts.begin() + 3, parts.end());
  if (group == kMetricsGroup) return parse_resource_metrics(method, rest, query);
  if (group == kCustomGroup) {
    auto v = version == "v1beta1" ? k8s::CustomMetricsVersion::V1beta1 : k8s::CustomMetricsVersion::V1beta2;
    return parse_custom_metrics(method, v, rest, query);
  }
  return parse_external_metrics(method, rest, query);
}

}  // namespace fedmetrics::server
