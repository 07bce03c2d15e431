#pragma once
// One member cluster reached over HTTPS: the aggregator's MemberCluster port
// implemented with typed calls to the member's metrics APIs (coroutines on
// the kube client's), and its capability discovery, refreshed in the
// background by its owner. Its calls build the request before they return:
// their arguments need not outlive the task.
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "fedmetrics/aggregator/member_cluster.hpp"
#include "fedmetrics/kube/https_client.hpp"

namespace fedmetrics::clusterclient {

// The outcome of one health probe of a member's API server.
struct MemberHealth {
  bool healthy = false;
  // "ok", or why not: "GET /readyz: HTTP 500: [-]etcd failed ...", or the transport error.
  std::string reason;
  std::chrono::system_clock::time_point checked{};
};

class RestMemberCluster final : public aggregator::MemberCluster {
 public:
  RestMemberCluster(kube::ClientRuntime& runtime, kube::ClusterEndpoint endpoint, kube::ClientOptions options = {});

  const std::string& name() const override { return name_; }
  std::shared_ptr<const aggregator::MemberCapabilities> capabilities() const override { return capabilities_.load(); }

  async::Task<aggregator::MemberResult<std::vector<k8s::PodMetrics>>> pod_metrics(
      const std::string& namespace_name, const k8s::LabelSelector& labels, const k8s::FieldSelector& fields,
      aggregator::Deadline deadline) override;
  // The member's text straight to encoded items (k8s::transcode_pod_metrics_list).
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
  // The names of the objects of `resource` (in `group`/`version`; in
  // `namespace_name`, empty for all or a cluster-scoped resource) that
  // match `labels`, in the member's order: what a Prometheus member lists
  // before it asks for a metric of every object a selector chooses, as
  // prometheus-adapter does (pkg/custom-provider/provider.go
  // GetMetricBySelector).
  async::Task<aggregator::MemberResult<std::vector<std::string>>> object_names(
      const std::string& group, const std::string& version, const std::string& resource,
      const std::string& namespace_name, const k8s::LabelSelector& labels, aggregator::Deadline deadline);
  // GET /readyz: any answer, whatever its status, is an answer.
  async::Task<std::optional<aggregator::MemberError>> probe(aggregator::Deadline deadline) override;

  // Re-reads the member's discovery documents; `done(true)` once the
  // capabilities are replaced, `done(false)` when the member could not be read
  // (the previous capabilities stay).
  void refresh_capabilities(aggregator::Deadline deadline, std::function<void(bool ok, std::string error)> done);

  // Karmada's cluster health check (the cluster status controller): GET
  // /readyz, or /healthz when the member has no /readyz (404); healthy when
  // it answers 200. The result is also kept (last_health()).
  void probe_health(aggregator::Deadline deadline, std::function<void(const MemberHealth&)> done);
  // The last probe's outcome; null before the first one finished.
  [[nodiscard]] std::shared_ptr<const MemberHealth> last_health() const { return health_->load(); }

  [[nodiscard]] kube::ClientStats stats() const { return client_->stats(); }
  [[nodiscard]] const kube::ClusterEndpoint& endpoint() const { return client_->endpoint(); }

 private:
  std::string name_;
  std::shared_ptr<kube::HttpsClient> client_;
  std::atomic<std::shared_ptr<const aggregator::MemberCapabilities>> capabilities_;
  // Shared with probes in flight, which may answer after this member is gone.
  std::shared_ptr<std::atomic<std::shared_ptr<const MemberHealth>>> health_ =
      std::make_shared<std::atomic<std::shared_ptr<const MemberHealth>>>();
};

}  // namespace fedmetrics::clusterclient
