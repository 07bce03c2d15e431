#pragma once
// What the aggregator offers its users (the API server, the autoscaler):
// merged answers across every member cluster, as typed values plus the
// warnings that make partial failure visible. No HTTP here.
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "fedmetrics/aggregator/query.hpp"
#include "fedmetrics/k8s/discovery.hpp"
#include "fedmetrics/k8s/metrics_types.hpp"
#include "fedmetrics/k8s/status.hpp"

namespace fedmetrics::aggregator {

// The annotation naming the member an item came from (Karmada's key).
inline constexpr std::string_view kQueryFromClusterAnnotation = "resource.karmada.io/query-from-cluster";

template <class T>
struct Answer {
  std::variant<T, k8s::Status> result;
  // One per member that failed while others answered, naming it and the
  // reason; the server sends each as a `Warning: 299 - "..."` header.
  std::vector<std::string> warnings;
};

// For a get by name the list holds exactly one item.
using PodMetricsAnswer = Answer<std::vector<k8s::PodMetrics>>;
using NodeMetricsAnswer = Answer<std::vector<k8s::NodeMetrics>>;
using CustomMetricsAnswer = Answer<std::vector<k8s::MetricValue>>;
using ExternalMetricsAnswer = Answer<std::vector<k8s::ExternalMetricValue>>;

class MetricsService {
 public:
  virtual ~MetricsService() = default;
  // Each callback is called exactly once, possibly on another thread.
  virtual void pod_metrics(const ResourceMetricsQuery& query, std::function<void(PodMetricsAnswer)> done) = 0;
  virtual void node_metrics(const ResourceMetricsQuery& query, std::function<void(NodeMetricsAnswer)> done) = 0;
  virtual void custom_metrics(const CustomMetricsQuery& query, std::function<void(CustomMetricsAnswer)> done) = 0;
  virtual void external_metrics(const ExternalMetricsQuery& query, std::function<void(ExternalMetricsAnswer)> done) = 0;

  // Discovery from the members' cached capabilities; never waits on a member.
  [[nodiscard]] virtual k8s::APIResourceList custom_metrics_resources(k8s::CustomMetricsVersion version) const = 0;
  [[nodiscard]] virtual k8s::APIResourceList external_metrics_resources() const = 0;
  // True once at least one member has answered a query or discovery.
  [[nodiscard]] virtual bool has_served() const = 0;
};

}  // namespace fedmetrics::aggregator
