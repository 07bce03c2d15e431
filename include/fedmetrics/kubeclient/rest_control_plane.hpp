#pragma once
// The loops' control-plane ports over HTTPS to karmada-apiserver
// (--kubeconfig): FederatedHPA list and watch, their status subresource and
// the fields fedmetrics owns (merge patches), the target's scale subresource
// and retain label, its ResourceBinding, CronFederatedHPAs, Leases and
// core/v1 Events (created, or their count patched, as the EventRecorder
// decides). One connection pool for all of them but the Leases, which have
// a client of their own (RestLeaseClient).
#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "fedmetrics/controller/control_plane.hpp"
#include "fedmetrics/controller/event_correlator.hpp"
#include "fedmetrics/controller/leader_election.hpp"
#include "fedmetrics/kube/https_client.hpp"
#include "fedmetrics/transport/executor.hpp"

namespace fedmetrics::kube {
class Reflector;
}

namespace fedmetrics::kubeclient {

class RestControlPlane final : public controller::FederatedHPAStore,
                               public controller::FederatedHPAWriter,
                               public controller::ScaleClient,
                               public controller::PlacementReader {
 public:
  // Throws std::runtime_error naming --kubeconfig when it cannot be used.
  RestControlPlane(kube::ClientRuntime& runtime, const std::string& kubeconfig, std::chrono::milliseconds timeout);
  ~RestControlPlane() override;

  // Every port, on this client (the cron store and the Events beside it).
  static controller::ControlPlanePorts ports(const std::shared_ptr<RestControlPlane>& control_plane);

  // FederatedHPAStore
  async::Task<k8s::Expected<std::vector<nlohmann::json>>> list(const k8s::LabelSelector& selector) override;
  async::Task<k8s::Expected<std::vector<nlohmann::json>>> list_from_server(const k8s::LabelSelector& selector) override;
  async::Task<k8s::Expected<nlohmann::json>> get(const std::string& namespace_name, const std::string& name) override;
  std::unique_ptr<controller::Watch> watch(const k8s::LabelSelector& selector,
                                           std::function<void(nlohmann::json)> on_added) override;
  // FederatedHPAWriter
  async::Task<k8s::Expected<bool>> update_status(const std::string& namespace_name, const std::string& name,
                                                 const nlohmann::json& status) override;
  async::Task<k8s::Expected<bool>> update_replicas(const std::string& namespace_name, const std::string& name,
                                                   std::int32_t min_replicas, std::int32_t max_replicas,
                                                   const std::string& resource_version) override;
  async::Task<k8s::Expected<bool>> set_finalizers(const std::string& namespace_name, const std::string& name,
                                                  const std::vector<std::string>& finalizers,
                                                  const std::string& resource_version) override;
  async::Task<k8s::Expected<bool>> set_distribution_annotation(const std::string& namespace_name,
                                                               const std::string& name,
                                                               const std::optional<std::string>& value) override;
  async::Task<k8s::Expected<bool>> set_annotation(const std::string& namespace_name, const std::string& name,
                                                  const std::string& key,
                                                  const std::optional<std::string>& value) override;
  // ScaleClient
  async::Task<k8s::Expected<controller::Scale>> get_scale(
      const std::string& namespace_name, const autoscaler::CrossVersionObjectReference& target) override;
  async::Task<k8s::Expected<controller::Scale>> update_scale(const std::string& namespace_name,
                                                             const autoscaler::CrossVersionObjectReference& target,
                                                             std::int32_t replicas,
                                                             const std::string& resource_version) override;
  async::Task<k8s::Expected<bool>> get_retain_replicas(const std::string& namespace_name,
                                                       const autoscaler::CrossVersionObjectReference& target) override;
  async::Task<k8s::Expected<bool>> set_retain_replicas(const std::string& namespace_name,
                                                       const autoscaler::CrossVersionObjectReference& target,
                                                       bool retain) override;
  // PlacementReader
  async::Task<k8s::Expected<std::optional<std::vector<controller::TargetCluster>>>> target_clusters(
      const std::string& namespace_name, const autoscaler::CrossVersionObjectReference& target) override;

  // What the cron store shares with it.
  [[nodiscard]] const std::shared_ptr<kube::HttpsClient>& client() const { return client_; }
  // The Leases' client: the same control plane and credentials, its own
  // connections (RestLeaseClient).
  [[nodiscard]] const std::shared_ptr<kube::HttpsClient>& lease_client() const { return lease_client_; }
  [[nodiscard]] const async::Executor& executor() const { return executor_; }
  [[nodiscard]] std::chrono::milliseconds timeout() const { return timeout_; }

 private:
  struct CacheWatch;
  std::shared_ptr<kube::HttpsClient> client_;
  std::shared_ptr<kube::HttpsClient> lease_client_;
  async::Executor executor_;  // where the watches' reflectors run
  std::chrono::milliseconds timeout_;
  // Events go through client-go's correlation: repeats patch one Event's count.
  std::shared_ptr<controller::EventRecorder> events_;
  // The FederatedHPAs' watch while one runs (list() is served from it for its selector).
  std::mutex cache_mutex_;
  const kube::Reflector* cache_ = nullptr;
  std::string cached_selector_;
};

// The CronFederatedHPAs, on the same client.
class RestCronStore final : public controller::CronStore {
 public:
  explicit RestCronStore(std::shared_ptr<RestControlPlane> control_plane) : control_plane_(std::move(control_plane)) {}
  async::Task<k8s::Expected<std::vector<nlohmann::json>>> list(const k8s::LabelSelector& selector) override;
  async::Task<k8s::Expected<bool>> update_status(const std::string& namespace_name, const std::string& name,
                                                 const nlohmann::json& status) override;
  std::unique_ptr<controller::Watch> watch(const k8s::LabelSelector& selector,
                                           std::function<void()> on_change) override;

 private:
  std::shared_ptr<RestControlPlane> control_plane_;
};

// Lease reads and writes for the leader election, on a client of their own
// to the same control plane (its lease_client()), as upstream's leader
// election has its own client: its own connections, strand and rate limit,
// so that a renewal never waits behind the loop's requests, which at
// thousands of FederatedHPAs fill every connection of the loop's client and
// queue for one.
class RestLeaseClient final : public controller::LeaseClient {
 public:
  explicit RestLeaseClient(std::shared_ptr<RestControlPlane> control_plane)
      : control_plane_(std::move(control_plane)) {}
  async::Task<k8s::Expected<std::optional<nlohmann::json>>> get(const std::string& ns, const std::string& name,
                                                                Deadline deadline) override;
  async::Task<k8s::Expected<nlohmann::json>> create(const std::string& ns, const nlohmann::json& lease,
                                                    Deadline deadline) override;
  async::Task<k8s::Expected<nlohmann::json>> update(const std::string& ns, const std::string& name,
                                                    const nlohmann::json& lease, Deadline deadline) override;

 private:
  std::shared_ptr<RestControlPlane> control_plane_;
};

}  // namespace fedmetrics::kubeclient
