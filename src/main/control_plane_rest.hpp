#pragma once
// controller::ControlPlane over HTTPS to karmada-apiserver (--kubeconfig):
// FederatedHPA list, the target's scale subresource, the status
// subresource (merge patch) and core/v1 Events.
#include <memory>
#include <string>

#include "fedmetrics/clusterclient/https_client.hpp"
#include "fedmetrics/controller/control_plane.hpp"

namespace fedmetrics::cli {

class RestControlPlane : public controller::ControlPlane {
 public:
  // Throws std::runtime_error naming --kubeconfig when it cannot be used.
  RestControlPlane(clusterclient::ClientRuntime& runtime, const std::string& kubeconfig,
                   std::chrono::milliseconds timeout);

  void list_federated_hpas(const k8s::LabelSelector& selector,
                           controller::Done<std::vector<nlohmann::json>> done) override;
  void get_scale(const std::string& namespace_name, const autoscaler::CrossVersionObjectReference& target,
                 controller::Done<controller::Scale> done) override;
  void update_scale(const std::string& namespace_name, const autoscaler::CrossVersionObjectReference& target,
                    std::int32_t replicas, const std::string& resource_version,
                    controller::Done<controller::Scale> done) override;
  void update_status(const std::string& namespace_name, const std::string& name, nlohmann::json status,
                     controller::Done<bool> done) override;
  void record_event(const controller::EventSubject& subject, const std::string& type, const std::string& reason,
                    const std::string& message) override;

 private:
  void call(std::string method, std::string path, std::string content_type, std::string body,
            controller::Done<nlohmann::json> done);

  std::unique_ptr<clusterclient::HttpsClient> client_;
  std::chrono::milliseconds timeout_;
};

}  // namespace fedmetrics::cli
