// A simulated member's API groups and their resources.
#include <algorithm>

#include "fedmetrics/k8s/status.hpp"
#include "fedmetrics/sim/member_hpa_type.hpp"
#include "sim/http_util.hpp"
#include "sim/member_responder.hpp"

namespace fedmetrics::sim::detail {

using k8s::GroupResource;
using k8s::Status;
using nlohmann::json;
using transport::HttpResponse;

std::vector<std::string> MemberResponder::custom_versions() const {
  std::vector<std::string> out;
  if (spec_.apis.custom_v1beta2) out.emplace_back("custom.metrics.k8s.io/v1beta2");
  if (spec_.apis.custom_v1beta1) out.emplace_back("custom.metrics.k8s.io/v1beta1");
  return out;
}

std::vector<k8s::APIGroup> MemberResponder::groups() const {
  std::vector<k8s::APIGroup> out;
  if (spec_.apis.metrics) out.push_back(k8s::make_api_group(kMetricsGroup, {"metrics.k8s.io/v1beta1"}));
  if (spec_.apis.custom()) out.push_back(k8s::make_api_group(kCustomGroup, custom_versions()));
  if (spec_.apis.external) out.push_back(k8s::make_api_group(kExternalGroup, {"external.metrics.k8s.io/v1beta1"}));
  // Stored by MemberObjects; discovery lists them here with the rest.
  out.push_back(k8s::make_api_group("autoscaling", {"autoscaling/v2"}));
  // The workloads propagated here, read-only (what Karmada's work agent
  // applied): a client can ask whether this member has the target.
  out.push_back(k8s::make_api_group("apps", {"apps/v1"}));
  return out;
}

// Whether this member serves group/version.
bool MemberResponder::serves(std::string_view group, std::string_view version) const {
  for (const auto& g : groups())
    if (g.name == group)
      for (const auto& v : g.versions)
        if (v.version == version) return true;
  return false;
}

// workloads propagated here.
std::set<std::string> MemberResponder::custom_metric_names() const {
  std::set<std::string> out;
  for (const auto& w : f_.world.workloads)
    if (std::find(w.propagation.clusters.begin(), w.propagation.clusters.end(), spec_.name) !=
        w.propagation.clusters.end())
      out.insert(w.custom_metrics.begin(), w.custom_metrics.end());
  return out;
}

std::vector<const ExternalMetricSpec*> MemberResponder::external_series() const {
  std::vector<const ExternalMetricSpec*> out;
  for (const auto& e : f_.world.external_metrics)
    if (e.members.empty() || std::find(e.members.begin(), e.members.end(), spec_.name) != e.members.end())
      out.push_back(&e);
  return out;
}

k8s::APIResourceList MemberResponder::resources(std::string_view group, std::string_view version) const {
  k8s::APIResourceList list;
  list.group_version = std::string(group) + "/" + std::string(version);
  if (group == kMetricsGroup) {
    list.resources = {{"nodes", "", false, "NodeMetrics", {"get", "list"}},
                      {"pods", "", true, "PodMetrics", {"get", "list"}}};
  } else if (group == kCustomGroup) {
    // prometheus-adapter: one entry per (resource, metric); namespaces are
    // cluster-scoped (series_registry.go).
    for (const auto& m : custom_metric_names()) {
      list.resources.push_back({"deployments.apps/" + m, "", true, "MetricValueList", {"get"}});
      list.resources.push_back({"namespaces/" + m, "", false, "MetricValueList", {"get"}});
      list.resources.push_back({"pods/" + m, "", true, "MetricValueList", {"get"}});
    }
  } else if (group == kExternalGroup) {
    std::set<std::string> names;
    for (const auto* e : external_series()) names.insert(e->name);
    for (const auto& n : names) list.resources.push_back({n, "", true, "ExternalMetricValueList", {"get"}});
  }
  return list;
}

// autoscaling/v2 as kube-apiserver lists it: kubectl resolves "hpa" through the short name.
json MemberResponder::autoscaling_resources() {
  auto type = horizontal_pod_autoscaler_type();
  k8s::APIResourceList list{"autoscaling/v2", {{type.resource, "", true, type.kind, type.verbs}}};
  auto doc = k8s::to_json(list);
  doc["resources"][0]["shortNames"] = type.short_names;
  doc["resources"][0]["categories"] = {"all"};
  doc["resources"].push_back({{"name", type.resource + "/status"},
                              {"singularName", ""},
                              {"namespaced", true},
                              {"kind", type.kind},
                              {"verbs", {"get", "patch", "update"}}});
  return doc;
}

json MemberResponder::apps_resources() {
  k8s::APIResourceList list{"apps/v1", {{"deployments", "", true, "Deployment", {"get", "list"}}}};
  auto doc = k8s::to_json(list);
  doc["resources"][0]["shortNames"] = {"deploy"};
  doc["resources"][0]["categories"] = {"all"};
  return doc;
}

HttpResponse MemberResponder::apis() const {
  const auto& s = t_.segments;
  if (s.size() == 1) return json_response(k8s::api_group_list_to_json(groups()).dump());
  if (s.size() == 2) {
    for (const auto& g : groups())
      if (g.name == s[1]) return json_response(k8s::to_json(g).dump());
    return not_found();
  }
  if (!serves(s[1], s[2])) return not_found();
  if (s.size() == 3 && s[1] == "autoscaling") return json_response(autoscaling_resources().dump());
  if (s.size() == 3 && s[1] == "apps") return json_response(apps_resources().dump());
  if (s.size() == 3) return json_response(k8s::to_json(resources(s[1], s[2])).dump());
  if (s[1] == "autoscaling") return not_found();  // served by MemberObjects
  std::vector<std::string> rest(s.begin() + 3, s.end());
  if (s[1] == "apps") return deployments(rest);
  if (s[1] == kMetricsGroup) return resource_metrics(rest);
  if (s[1] == kCustomGroup)
    return custom_metrics(rest,
                          s[2] == "v1beta1" ? k8s::CustomMetricsVersion::V1beta1 : k8s::CustomMetricsVersion::V1beta2);
  return external_metrics(rest);
}
}  // namespace fedmetrics::sim::detail
