#pragma once
// The loops' control-plane ports over HTTPS to karmada-apiserver
// (--kubeconfig): FederatedHPA list and watch, their status subresource and
// the fields fedmetrics owns (merge patches), the target's scale subresource
// and retain label, its ResourceBinding, CronFederatedHPAs, Leases and
// core/v1 Events (created, or their count patched, as the EventRecorder
// decides). One connection pool for all of them.
#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "fedmetrics/kube/https_client.hpp"
#include "fedmetrics/kube/reflector.hpp"
#include "fedmetrics/controller/control_plane.hpp"
#include "fedmetrics/controller/event_correlator.hpp"
#include "fedmetrics/controller/leader_election.hpp"
#include "main/rest_json.hpp"

namespace fedmetrics::cli {

class RestControlPlane final : public controller::FederatedHPAStore,
                               public controller::FederatedHPAWriter,
                               public controller::ScaleClient,
                               public controller::PlacementReader {
 public:
  // Throws std::runtime_error naming --kubeconfig when it cannot be used.
  RestControlPlane(kube::ClientRuntime& runtime, const std::string& kubeconfig, std::chrono::milliseconds timeout);

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

  // One request with the control-plane timeout, or by `deadline`.
  async::Task<JsonReply> call(std::string method, std::string path, std::string content_type, std::string body);
  async::Task<JsonReply> call_until(std::string method, std::string path, std::string content_type, std::string body,
                                    std::chrono::steady_clock::time_point deadline);
  // GET of an autoscaling.karmada.io/v1alpha1 collection (all namespaces): its items.
  async::Task<k8s::Expected<std::vector<nlohmann::json>>> list_items(std::string resource, std::string kind,
                                                                     const k8s::LabelSelector& selector);
  // A watch of an autoscaling.karmada.io/v1alpha1 collection, running while the result lives.
  std::unique_ptr<controller::Watch> watch_collection(const std::string& resource, const char* what,
                                                      const k8s::LabelSelector& selector,
                                                      std::function<void(const kube::ReflectorChange&)> on_change,
                                                      bool serves_list);
  static std::string object_path(const std::string& resource, const std::string& namespace_name,
                                 const std::string& name);

 private:
  struct CacheWatch;
  std::shared_ptr<kube::HttpsClient> client_;
  std::chrono::milliseconds timeout_;
  // Events go through client-go's correlation: repeats patch one Event's count.
  std::shared_ptr<controller::EventRecorder> events_;
  // The FederatedHPAs' watch while one runs (list() is served from it for its selector).
  std::mutex cache_mutex_;
  std::shared_ptr<kube::Reflector> cache_;
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

// Lease reads and writes for the leader election, on the same client.
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

}  // namespace fedmetrics::cli
