#pragma once
// A member whose custom and external metrics come from its own Prometheus,
// with no prometheus-adapter in the member: the aggregator's MemberCluster
// port answered from PromQL over Prometheus' HTTP API, as prometheus-adapter
// answers from the same rules file (docs/prometheus.md). The APIs the rules
// cover (custom metrics with `rules`, external with `externalRules`,
// metrics.k8s.io with `resourceRules`) are asked of Prometheus; everything
// else (pods, the probe, the objects a selector chooses) of the member's API
// server, through the member client it wraps.
//
// Which metrics exist comes from a relist (`/api/v1/series` of every rule's
// seriesQuery), run in the background every --metrics-relist-interval by
// PrometheusRelister and swapped whole, never on a query's path
// (prometheus-adapter's --metrics-relist-interval, pkg/custom-provider/
// periodic_metric_lister.go). Until one relist has succeeded, the member's
// custom and external metrics are unknown and it is reported as not
// discovered yet.
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fedmetrics/aggregator/member_cluster.hpp"
#include "fedmetrics/clusterclient/rest_member_cluster.hpp"
#include "fedmetrics/kube/https_client.hpp"
#include "fedmetrics/promsource/metric_namer.hpp"
#include "fedmetrics/promsource/prometheus_answer.hpp"

namespace fedmetrics::clusterclient {

// Where a member's Prometheus is, and how it is named in messages.
struct PrometheusLocation {
  // "Prometheus http://10.0.0.5:9090", "Prometheus monitoring/prometheus-k8s:9090".
  std::string description;
  // Its server: an http:// URL reached in the clear, or an https:// one with
  // these credentials (the member's own, for its API server's service proxy).
  kube::ClusterEndpoint endpoint;
};

struct PrometheusOptions {
  std::shared_ptr<const promsource::CompiledRules> rules;
  std::chrono::milliseconds relist_interval{std::chrono::minutes(10)};  // prometheus-adapter's default
  promsource::AnswerLimits limits;
};

class PrometheusMemberCluster final : public aggregator::MemberCluster {
 public:
  // Throws std::runtime_error naming the member when the location's server
  // cannot be used.
  PrometheusMemberCluster(std::shared_ptr<RestMemberCluster> member, PrometheusLocation location,
                          PrometheusOptions options, kube::ClientRuntime& runtime, kube::ClientOptions client);

  const std::string& name() const override;
  // The member's own capabilities, with the custom or external metrics its
  // rules cover replaced by the last relist's; null until both the member's
  // discovery and one relist have succeeded.
  std::shared_ptr<const aggregator::MemberCapabilities> capabilities() const override;

  async::Task<aggregator::MemberResult<std::vector<k8s::PodMetrics>>> pod_metrics(
      const std::string& namespace_name, const k8s::LabelSelector& labels, const k8s::FieldSelector& fields,
      aggregator::Deadline deadline) override;
  async::Task<aggregator::MemberResult<k8s::EncodedItems>> pod_metrics_items(
      const std::string& namespace_name, const k8s::LabelSelector& labels, const k8s::FieldSelector& fields,
      std::shared_ptr<const k8s::ItemPreparation> preparation, aggregator::Deadline deadline) override;
  async::Task<aggregator::MemberResult<std::vector<k8s::NodeMetrics>>> node_metrics(
      const k8s::LabelSelector& labels, const k8s::FieldSelector& fields, aggregator::Deadline deadline) override;
  async::Task<aggregator::MemberResult<std::vector<k8s::MetricValue>>> custom_metrics(
      const aggregator::CustomMetricsQuery& query, aggregator::Deadline deadline) override;
  async::Task<aggregator::MemberResult<std::vector<k8s::ExternalMetricValue>>> external_metrics(
      const aggregator::ExternalMetricsQuery& query, aggregator::Deadline deadline) override;
  async::Task<aggregator::MemberResult<std::vector<k8s::Pod>>> pods(const std::string& namespace_name,
                                                                    const k8s::LabelSelector& labels,
                                                                    aggregator::Deadline deadline) override;
  async::Task<std::optional<aggregator::MemberError>> probe(aggregator::Deadline deadline) override;

  // One relist: every distinct seriesQuery asked of /api/v1/series over the
  // last relist interval, the metrics they name swapped in whole. On
  // failure the previous metrics stay and the error is returned (and kept
  // for the answers that need it).
  async::Task<std::optional<k8s::Error>> relist(aggregator::Deadline deadline);
  // Whether a relist is due at `now` (never relisted, or the interval passed).
  [[nodiscard]] bool relist_due(std::chrono::steady_clock::time_point now) const;
  [[nodiscard]] const PrometheusLocation& location() const;
  [[nodiscard]] const std::shared_ptr<RestMemberCluster>& member() const;

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace fedmetrics::clusterclient
