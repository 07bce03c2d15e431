#pragma once
// The network side of delegated authentication and authorization: the
// ReviewClient that posts TokenReview and SubjectAccessReview documents to
// the control plane given by --authentication-kubeconfig /
// --authorization-kubeconfig, and the reader of the
// kube-system/extension-apiserver-authentication ConfigMap.
#include <memory>
#include <optional>
#include <string>

#include "fedmetrics/auth/authenticators.hpp"
#include "fedmetrics/auth/review_client.hpp"
#include "fedmetrics/kube/https_client.hpp"

namespace fedmetrics::kubeclient {

// What the control plane publishes for its delegates to trust: nullopt when
// the ConfigMap does not exist (404, not an error, as k8s.io/apiserver's
// lookupMissingConfigInCluster); an error says what failed, and for a 403
// which RoleBinding to create.
using PublishedTrust = k8s::Expected<std::optional<auth::ExtensionApiserverAuthentication>>;

class RestReviewClient final : public auth::ReviewClient {
 public:
  // Throws std::runtime_error naming `flag` when the kubeconfig is unusable.
  RestReviewClient(kube::ClientRuntime& runtime, const std::string& kubeconfig, const std::string& flag);
  // Answered within 10 s, as apiserver's webhook clients.
  async::Task<k8s::Expected<std::string>> post(std::string path, std::string body) override;
  // Reads kube-system/extension-apiserver-authentication, by the same deadline.
  async::Task<PublishedTrust> published_trust();

 private:
  std::shared_ptr<kube::HttpsClient> client_;
};

}  // namespace fedmetrics::kubeclient
