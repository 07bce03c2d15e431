#pragma once
// controller::ControlPlane over HTTPS to karmada-apiserver (--kubeconfig):
// FederatedHPA list and watch, the target's scale subresource, the status
// subresource (merge patch) and core/v1 Events (created, or their count
// patched, as the EventRecorder decides).
#include <memory>
#include <string>

#include "fedmetrics/kube/https_client.hpp"
#include "fedmetrics/kube/reflector.hpp"
#include "fedmetrics/controller/control_plane.hpp"
#include "fedmetrics/controller/event_correlator.hpp"
#include "fedmetrics/controller/leader_election.hpp"

namespace fedmetrics::cli {

class RestControlPlane : public controller::ControlPlane {
 public:
  // Throws std::runtime_error naming --kubeconfig when it cannot be used.
  RestControlPlane(kube::ClientRuntime& runtime, const std::string& kubeconfig,
                   std::chrono::milliseconds timeout);

  ~RestControlPlane() override;
  void list_federated_hpas(const k8s::LabelSelector& selector,
                           controller::Done<std::vector<nlohmann::json>> done) override;
  void watch_federated_hpas(const k8s::LabelSelector& selector, std::function<void(nlohmann::json)> on_added) override;
  // Ends the watch (before the client runtime stops). Idempotent.
  void stop_watching() override;
  void get_scale(const std::string& namespace_name, const autoscaler::CrossVersionObjectReference& target,
                 controller::Done<controller::Scale> done) override;
  void update_scale(const std::string& namespace_name, const autoscaler::CrossVersionObjectReference& target,
                    std::int32_t replicas, const std::string& resource_version,
                    controller::Done<controller::Scale> done) override;
  void get_target_clusters(const std::string& namespace_name, const autoscaler::CrossVersionObjectReference& target,
                           controller::Done<std::optional<std::vector<controller::TargetCluster>>> done) override;
  void update_status(const std::string& namespace_name, const std::string& name, nlohmann::json status,
                     controller::Done<bool> done) override;
  void record_event(const controller::EventSubject& subject, const std::string& type, const std::string& reason,
                    const std::string& message) override;
  void set_retain_replicas(const std::string& namespace_name, const autoscaler::CrossVersionObjectReference& target,
                           bool retain, controller::Done<bool> done) override;
  void set_distribution_annotation(const std::string& namespace_name, const std::string& name,
                                   std::optional<std::string> value, controller::Done<bool> done) override;
  void get_retain_replicas(const std::string& namespace_name, const autoscaler::CrossVersionObjectReference& target,
                           controller::Done<bool> done) override;
  void set_federated_hpa_finalizers(const std::string& namespace_name, const std::string& name,
                                    std::vector<std::string> finalizers, const std::string& resource_version,
                                    controller::Done<bool> done) override;
  void watch_cron_federated_hpas(const k8s::LabelSelector& selector, std::function<void()> on_change) override;
  void list_federated_hpas_from_server(const k8s::LabelSelector& selector,
                                       controller::Done<std::vector<nlohmann::json>> done) override;
  void list_cron_federated_hpas(const k8s::LabelSelector& selector,
                                controller::Done<std::vector<nlohmann::json>> done) override;
  void get_federated_hpa(const std::string& namespace_name, const std::string& name,
                         controller::Done<nlohmann::json> done) override;
  void update_federated_hpa_replicas(const std::string& namespace_name, const std::string& name,
                                     std::int32_t min_replicas, std::int32_t max_replicas,
                                     const std::string& resource_version, controller::Done<bool> done) override;
  void update_cron_status(const std::string& namespace_name, const std::string& name, nlohmann::json status,
                          controller::Done<bool> done) override;

 private:
  // (Re)starts `reflector` on an autoscaling.karmada.io/v1alpha1 collection.
  // `watched_selector` (may be null): where to keep the selector, for a list served from the cache.
  void watch(std::unique_ptr<kube::Reflector>& reflector, std::string* watched_selector,
             const std::string& resource, const char* what, const k8s::LabelSelector& selector,
             std::function<void(const kube::ReflectorChange&)> on_change);
  // GET of an autoscaling.karmada.io/v1alpha1 collection (all namespaces): its items.
  void list_items(const std::string& resource, const std::string& kind, const k8s::LabelSelector& selector,
                  controller::Done<std::vector<nlohmann::json>> done);
  static std::string object_path(const std::string& resource, const std::string& namespace_name, const std::string& name);
  void call(std::string method, std::string path, std::string content_type, std::string body,
            controller::Done<nlohmann::json> done);
  // The same, with the HTTP status (0 when there was no answer).
  void call_with_status(std::string method, std::string path, std::string content_type, std::string body,
                        std::function<void(int, k8s::Expected<nlohmann::json>)> done);
  // The same, answered by `deadline` rather than by the control-plane timeout.
  void call_until(std::string method, std::string path, std::string content_type, std::string body,
                  std::chrono::steady_clock::time_point deadline,
                  std::function<void(int, k8s::Expected<nlohmann::json>)> done);

  std::shared_ptr<kube::HttpsClient> client_;
  std::chrono::milliseconds timeout_;
  // Events go through client-go's correlation: repeats patch one Event's count.
  std::unique_ptr<controller::EventRecorder> events_;
  // The FederatedHPAs, once watch_federated_hpas was called (for that selector only).
  std::unique_ptr<kube::Reflector> federated_hpas_;
  std::string watched_selector_;
  // The CronFederatedHPAs, once watch_cron_federated_hpas was called: a
  // change signal only (their lists are read from the server).
  std::unique_ptr<kube::Reflector> cron_federated_hpas_;
  friend class RestLeaseClient;
};

// Lease reads and writes for the leader election, on the same connection pool.
class RestLeaseClient : public controller::LeaseClient {
 public:
  explicit RestLeaseClient(std::shared_ptr<RestControlPlane> control_plane) : control_plane_(std::move(control_plane)) {}
  void get(const std::string& ns, const std::string& name, Deadline deadline,
           controller::Done<std::optional<nlohmann::json>> done) override;
  void create(const std::string& ns, const nlohmann::json& lease, Deadline deadline,
              controller::Done<nlohmann::json> done) override;
  void update(const std::string& ns, const std::string& name, const nlohmann::json& lease, Deadline deadline,
              controller::Done<nlohmann::json> done) override;

 private:
  std::shared_ptr<RestControlPlane> control_plane_;
};

}  // namespace fedmetrics::cli
