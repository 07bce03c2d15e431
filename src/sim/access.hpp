#pragma once
// Who may do what on the simulated control plane, as kube-apiserver decides
// it: the world file's users and their bearer tokens, ServiceAccount tokens
// that TokenRequest issued, the world's rules and the RBAC objects stored
// (ClusterRoleBindings, RoleBindings); and the reviews kubectl and servers
// ask for: TokenRequest (`kubectl create token`), TokenReview,
// SubjectAccessReview, SelfSubjectAccessReview (`kubectl auth can-i`) and
// SelfSubjectReview (`kubectl auth whoami`). Internal to the sim module.
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/time.hpp"
#include "fedmetrics/sim/karmada_api.hpp"
#include "fedmetrics/sim/object_store.hpp"
#include "fedmetrics/sim/world.hpp"
#include "fedmetrics/transport/http_message.hpp"

namespace fedmetrics::sim::detail {

// An authenticated user (k8s.io/apiserver user.Info).
struct UserInfo {
  std::string name;
  std::string uid;
  std::vector<std::string> groups;  // system:authenticated included
  // The world file's user, whose rules apply; null for a ServiceAccount.
  const UserSpec* world_user = nullptr;
};

// The tokens TokenRequest issued. A token authenticates its ServiceAccount
// until it expires and while that ServiceAccount (same uid) and the object it
// is bound to exist, as kube-apiserver's bound service account tokens do.
class ServiceAccountTokens {
 public:
  struct Grant {
    std::string namespace_name, name, uid;
    k8s::Timestamp expires{};
    std::vector<std::string> audiences;
    std::string bound_resource, bound_name, bound_uid;  // "secrets"/"pods", or empty
  };
  std::string issue(Grant grant);
  [[nodiscard]] std::optional<Grant> find(std::string_view token) const;

 private:
  mutable std::mutex mutex_;
  std::mt19937_64 random_{std::random_device{}()};
  std::map<std::string, Grant, std::less<>> grants_;
};

// A bearer token's user, or nullopt (401).
std::optional<UserInfo> authenticate_token(const World& world, const ObjectStore& store,
                                           const ServiceAccountTokens& tokens, std::string_view token,
                                           k8s::Timestamp now);

// The decision for a SubjectAccessReview spec about `user`: the world user's
// rules (none: everything) or, for anyone, the stored RBAC bindings.
AccessDecision authorize_user(const ObjectStore& store, const UserInfo& user, const nlohmann::json& sar_spec);

// Answers to POST of the review kinds and of serviceaccounts/{name}/token.
transport::HttpResponse token_request(ObjectStore& store, ServiceAccountTokens& tokens,
                                      const std::string& namespace_name, const std::string& name,
                                      const std::string& body, k8s::Timestamp now);
transport::HttpResponse token_review(const World& world, const ObjectStore& store, const ServiceAccountTokens& tokens,
                                     const std::string& body, k8s::Timestamp now);
transport::HttpResponse subject_access_review(const World& world, const ObjectStore& store, const std::string& body);
transport::HttpResponse self_subject_access_review(const ObjectStore& store, const UserInfo& user,
                                                   const std::string& body);
transport::HttpResponse self_subject_review(const UserInfo& user, k8s::Timestamp now);

// The ClusterRole and Role kube-apiserver bootstraps that deploy/base/control-plane.yaml binds.
void seed_bootstrap_roles(ObjectStore& store);

}  // namespace fedmetrics::sim::detail
