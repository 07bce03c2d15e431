#pragma once
// One read of a simulated member cluster answered from the federation
// snapshot, one file per API group: member_core.cpp (core v1: pods, nodes,
// namespaces, /version), member_apps.cpp (apps/v1 Deployments as propagated),
// member_metrics.cpp (metrics.k8s.io, as metrics-server answers),
// member_custom_metrics.cpp (custom.metrics.k8s.io as prometheus-adapter
// answers, and external.metrics.k8s.io), member_discovery.cpp (the groups
// and their resources); member_api.cpp routes and shares the helpers.
// Internal to the sim module.
#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/discovery.hpp"
#include "fedmetrics/k8s/field_selector.hpp"
#include "fedmetrics/k8s/label_selector.hpp"
#include "fedmetrics/k8s/metrics_types.hpp"
#include "fedmetrics/k8s/url.hpp"
#include "fedmetrics/sim/federation.hpp"
#include "fedmetrics/transport/http_message.hpp"

namespace fedmetrics::sim::detail {

inline constexpr std::string_view kMetricsGroup = "metrics.k8s.io";
inline constexpr std::string_view kCustomGroup = "custom.metrics.k8s.io";
inline constexpr std::string_view kExternalGroup = "external.metrics.k8s.io";
// metrics-server's scrape resolution: the window of every resource metric.
inline constexpr std::chrono::seconds kResourceWindow{15};
// prometheus-adapter's rate window: the window of every custom and external metric, seconds.
inline constexpr std::int64_t kCustomWindowSeconds = 60;

nlohmann::json resource_list_json(const k8s::ResourceList& list);
nlohmann::json labels_json(const k8s::Labels& labels);

// A core list or object as the meta.k8s.io/v1 Table that `kubectl get` asks
// for (member_tables.cpp); nullopt for kinds that have no table here.
std::optional<nlohmann::json> member_table(const nlohmann::json& doc, k8s::Timestamp now);

class MemberResponder {
 public:
  MemberResponder(const Federation& f, std::size_t member, const k8s::RequestTarget& target, k8s::Timestamp now)
      : f_(f), m_(member), spec_(f.world.members[member]), state_(f.members[member]), t_(target), now_(now) {}

  [[nodiscard]] transport::HttpResponse route() const;

 private:
  // member_api.cpp: what every group uses.
  static transport::HttpResponse not_found();
  [[nodiscard]] std::string rv() const { return std::to_string(f_.resource_version); }
  [[nodiscard]] k8s::Labels pod_labels(const SimPod& p) const;
  // Parses labelSelector and fieldSelector; an error response when malformed.
  // `core_fields`: the selectable fields of a core resource (kube-apiserver's
  // field label conversions); without, metrics-server's metadata.* only.
  std::optional<transport::HttpResponse> selectors(k8s::LabelSelector& labels, k8s::FieldSelector& fields,
                                                   const std::vector<std::string_view>* core_fields = nullptr) const;
  // The member's existing pods, optionally in one namespace, sorted by namespace then name.
  [[nodiscard]] std::vector<const SimPod*> pods(std::string_view ns) const;
  [[nodiscard]] const SimPod* find_pod(std::string_view ns, std::string_view name) const;
  [[nodiscard]] PodUsage usage_of(const SimPod& p) const;

  // member_core.cpp
  [[nodiscard]] bool namespace_exists(std::string_view ns) const;
  [[nodiscard]] const NodeSpec* find_node(std::string_view name) const;
  [[nodiscard]] std::string node_ip(std::string_view node) const;
  [[nodiscard]] transport::HttpResponse version() const;
  [[nodiscard]] transport::HttpResponse core() const;
  [[nodiscard]] std::string pod_text(const SimPod& p, bool item) const;
  [[nodiscard]] nlohmann::json pod_json(const SimPod& p, bool item) const;
  [[nodiscard]] transport::HttpResponse pod_list(std::string_view ns) const;
  [[nodiscard]] nlohmann::json node_json(const NodeSpec& n, bool item) const;
  [[nodiscard]] transport::HttpResponse node_list() const;
  [[nodiscard]] nlohmann::json namespace_json(const std::string& ns, bool item) const;
  [[nodiscard]] transport::HttpResponse namespace_list() const;

  // member_discovery.cpp
  [[nodiscard]] std::vector<std::string> custom_versions() const;
  [[nodiscard]] std::vector<k8s::APIGroup> groups() const;
  // Whether this member serves group/version.
  [[nodiscard]] bool serves(std::string_view group, std::string_view version) const;
  // The custom metrics this member's Prometheus has series for: those of the
  // workloads propagated here.
  [[nodiscard]] std::set<std::string> custom_metric_names() const;
  [[nodiscard]] std::vector<const ExternalMetricSpec*> external_series() const;
  [[nodiscard]] k8s::APIResourceList resources(std::string_view group, std::string_view version) const;
  static nlohmann::json autoscaling_resources();
  static nlohmann::json apps_resources();
  [[nodiscard]] transport::HttpResponse apis() const;

  // member_apps.cpp
  [[nodiscard]] std::optional<nlohmann::json> deployment(const WorkloadSpec& w, std::size_t index) const;
  [[nodiscard]] transport::HttpResponse deployments(const std::vector<std::string>& rest) const;

  // member_metrics.cpp
  [[nodiscard]] k8s::PodMetrics pod_metrics(const SimPod& p) const;
  [[nodiscard]] k8s::NodeMetrics node_metrics(const NodeSpec& n) const;
  [[nodiscard]] transport::HttpResponse resource_metrics(const std::vector<std::string>& r) const;

  // member_custom_metrics.cpp
  struct Series {
    k8s::ObjectReference object;
    k8s::Labels object_labels;  // what labelSelector selects
    k8s::Labels labels;         // the series' labels, what metricLabelSelector selects
    double value = 0;           // per second
  };
  [[nodiscard]] std::vector<Series> pod_series(std::string_view ns, const std::string& metric) const;
  [[nodiscard]] std::vector<Series> deployment_series(std::string_view ns, const std::string& metric) const;
  [[nodiscard]] std::vector<Series> namespace_series(std::string_view ns, const std::string& metric) const;
  [[nodiscard]] transport::HttpResponse custom_metrics(const std::vector<std::string>& r,
                                                       k8s::CustomMetricsVersion version) const;
  [[nodiscard]] transport::HttpResponse external_metrics(const std::vector<std::string>& r) const;

  const Federation& f_;
  std::size_t m_;
  const MemberSpec& spec_;
  const MemberState& state_;
  const k8s::RequestTarget& t_;
  k8s::Timestamp now_;
  // Who shares each load, counted on first use: a pod's usage is its share
  // of the load it is offered, and counting per pod would make an answer
  // quadratic in the federation's pods.
  mutable std::optional<LoadShares> shares_;
};

}  // namespace fedmetrics::sim::detail
