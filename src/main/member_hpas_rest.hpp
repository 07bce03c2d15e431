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

#include "fedmetrics/kube/https_client.hpp"
#include "fedmetrics/controller/member_hpas.hpp"

namespace fedmetrics::cli {

class RestMemberHPAs final : public controller::MemberHPAs {
 public:
  // `member` names the member in errors ("member2: PUT ...: <Status message>").
  RestMemberHPAs(std::shared_ptr<kube::HttpsClient> client, std::string member,
                 std::chrono::milliseconds timeout);

  [[nodiscard]] const std::string& member() const override { return member_; }
  void list(const std::string& namespace_name, const k8s::LabelSelector& selector,
            controller::Done<std::vector<nlohmann::json>> done) override;
  void get(const std::string& namespace_name, const std::string& name,
           controller::Done<std::optional<nlohmann::json>> done) override;
  void create(nlohmann::json hpa, controller::Done<nlohmann::json> done) override;
  void update(nlohmann::json hpa, controller::Done<nlohmann::json> done) override;
  void has_target(const std::string& namespace_name, const autoscaler::CrossVersionObjectReference& target,
                  controller::Done<bool> done) override;
  void remove(const std::string& namespace_name, const std::string& name, const std::string& uid,
              controller::Done<bool> done) override;

 private:
  void call(std::string method, std::string path, std::string body,
            std::function<void(int, k8s::Expected<nlohmann::json>)> done);
  std::shared_ptr<kube::HttpsClient> client_;
  std::string member_;
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

}  // namespace fedmetrics::cli
