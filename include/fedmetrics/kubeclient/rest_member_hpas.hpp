#pragma once
// controller::MemberHPAs over HTTPS to one member cluster: the
// autoscaling/v2 HorizontalPodAutoscaler collection, reached the way the
// metrics reads reach that member (its ClusterEndpoint: the member's own
// server and credentials, or the control plane's cluster proxy
// .../clusters/{name}/proxy with the control plane's credentials, as
// clusterclient::plan_members decided with --member-access).
#include <chrono>
#include <memory>
#include <string>

#include "fedmetrics/controller/member_hpas.hpp"
#include "fedmetrics/kube/https_client.hpp"
#include "fedmetrics/kube/resource_path.hpp"

namespace fedmetrics::kubeclient {

struct JsonReply;

class RestMemberHPAs final : public controller::MemberHPAs {
 public:
  // `member` names the member in errors ("member2: PUT ...: <Status message>").
  RestMemberHPAs(std::shared_ptr<kube::HttpsClient> client, std::string member, std::chrono::milliseconds timeout);

  async::Task<k8s::Expected<std::vector<nlohmann::json>>> list(const std::string& namespace_name,
                                                               const k8s::LabelSelector& selector) override;
  async::Task<k8s::Expected<std::optional<nlohmann::json>>> get(const std::string& namespace_name,
                                                                const std::string& name) override;
  async::Task<k8s::Expected<nlohmann::json>> create(const nlohmann::json& hpa) override;
  async::Task<k8s::Expected<nlohmann::json>> update(const nlohmann::json& hpa) override;
  async::Task<k8s::Expected<bool>> has_target(const std::string& namespace_name,
                                              const autoscaler::CrossVersionObjectReference& target) override;
  async::Task<k8s::Expected<bool>> remove(const std::string& namespace_name, const std::string& name,
                                          const std::string& uid) override;

 private:
  // The request, its error prefixed with the member's name.
  async::Task<JsonReply> call(std::string method, kube::ResourcePath path, std::string body);
  std::shared_ptr<kube::HttpsClient> client_;
  std::chrono::milliseconds timeout_;
};

// The factory the loop calls per member: `endpoint` is the member's
// ClusterEndpoint as the member source planned it
// (RestMemberCluster::endpoint(): direct, or the cluster proxy with
// --member-access=proxy and for Pull clusters). A client of its own on
// `runtime` (writes do not queue behind metric reads). Throws
// std::runtime_error naming the member when its TLS material cannot be used.
std::shared_ptr<controller::MemberHPAs> make_member_hpas(kube::ClientRuntime& runtime,
                                                         const kube::ClusterEndpoint& endpoint,
                                                         std::chrono::milliseconds timeout,
                                                         kube::ClientOptions options = {});

}  // namespace fedmetrics::kubeclient
