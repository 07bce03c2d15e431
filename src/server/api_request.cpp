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
// Upstream's path.IsValidPathSegmentName (apimachinery pkg/api/validation/path):
// a namespace or object name that is "." or "..", or holds '/' or '%' once
// decoded, would name another path on the member; kube-apiserver refuses it.
std::optional<Status> check_path_segment(std::string_view field, std::string_view name) {
  for (std::string_view bad : {".", ".."}) {
    if (name == bad) return Status::bad_request(std::string(field) + " name may not be '" + std::string(bad) + "'");
  }
  for (std::string_view bad : {"/", "%"}) {
    if (name.find(bad) != std::string_view::npos)
      return Status::bad_request(std::string(field) + " name may not contain '" + std::string(bad) + "'");
  }
  return std::nullopt;
}

std::optional<Status> check_names(std::string_view namespace_name, std::string_view name) {
  if (!namespace_name.empty()) {
    if (auto bad = check_path_segment("namespace", namespace_name)) return bad;
  }
  if (!name.empty()) return check_path_segment("resource", name);
  return std::nullopt;
}

// The selector's bytes are checked before it is parsed (parsing is what costs).
std::optional<Status> check_selector_size(std::string_view parameter, std::string_view text) {
  if (text.size() <= kMaxSelectorBytes) return std::nullopt;
  return Status::bad_request(std::string(parameter) + " is too long: " + std::to_string(text.size()) +
                             " bytes, the limit is " + std::to_string(kMaxSelectorBytes));
}

// A label selector query parameter, bounded in bytes and requirements.
k8s::Expected<k8s::LabelSelector> parse_label_selector(const QueryValues& query, std::string_view parameter) {
  const std::string text = query_value(query, parameter);
  if (auto bad = check_selector_size(parameter, text)) return k8s::Error{bad->message};
  auto selector = k8s::LabelSelector::parse(text, kMaxSelectorRequirements);
  if (!selector) return selector.error();
  return selector;
}

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

  if (auto bad = check_names(q.namespace_name, q.name)) return *bad;

  auto labels = parse_label_selector(query, "labelSelector");
  if (!labels) return Status::bad_request(labels.error().message);
  q.label_selector = std::move(*labels);
  const std::string field_text = query_value(query, "fieldSelector");
  if (auto bad = check_selector_size("fieldSelector", field_text)) return *bad;
  auto fields = k8s::FieldSelector::parse(field_text);
  if (!fields) return Status::bad_request(fields.error().message);
  if (fields->requirements().size() > kMaxSelectorRequirements)
    return Status::bad_request("fieldSelector has more than " + std::to_string(kMaxSelectorRequirements) +
                               " requirements");
  q.field_selector = std::move(*fields);
  return q;
}

ApiRequest parse_custom_metrics(std::string_view method, k8s::CustomMetricsVersion version,
                                const std::vector<std::string>& parts, const QueryValues& query) {
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
    if (!is_read(method))
      return Status::method_not_allowed(verb_for(method, false), {std::string(kCustomGroup), "metrics"});
    return Status::bad_request("invalid request path");
  }
  if (q.resource.resource.empty() || q.name.empty() || q.metric.empty())
    return Status::bad_request("invalid request path");
  GroupResource what{std::string(kCustomGroup), q.resource.to_string()};
  if (auto bad = check_method(method, query, what, q.wildcard())) return *bad;

  if (auto bad = check_names(q.namespace_name, q.wildcard() ? std::string_view() : std::string_view(q.name)))
    return *bad;
  // The metric name is a path segment on the member too.
  if (auto bad = check_path_segment("metric", q.metric)) return *bad;

  if (q.wildcard()) {
    auto labels = parse_label_selector(query, "labelSelector");
    if (!labels) return Status::bad_request(labels.error().message);
    q.label_selector = std::move(*labels);
  }
  // Upstream answers a bad metricLabelSelector with a bare 500; 400 is the honest code.
  auto metric_labels = parse_label_selector(query, "metricLabelSelector");
  if (!metric_labels) return Status::bad_request(metric_labels.error().message);
  q.metric_selector = std::move(*metric_labels);

  // custom-metrics-apiserver: a metadata.name field selector must agree with the path.
  if (!q.wildcard()) {
    const std::string field_text = query_value(query, "fieldSelector");
    if (auto bad = check_selector_size("fieldSelector", field_text)) return *bad;
    if (auto fields = k8s::FieldSelector::parse(field_text); fields.ok()) {
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
  if (auto bad = check_names(q.namespace_name, {})) return *bad;
  if (auto bad = check_path_segment("metric", q.metric)) return *bad;
  // On this API labelSelector selects metric series (docs/api.md, "Paths").
  auto labels = parse_label_selector(query, "labelSelector");
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
