#pragma once
// The network side of delegated authentication and authorization: the
// ReviewClient that posts TokenReview and SubjectAccessReview documents to
// the control plane given by --authentication-kubeconfig /
// --authorization-kubeconfig, and the reader of the
// kube-system/extension-apiserver-authentication ConfigMap.
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "fedmetrics/clusterclient/https_client.hpp"
#include "server/request_gate.hpp"

namespace fedmetrics::cli {

class HttpsReviewClient : public server::ReviewClient {
 public:
  // Throws std::runtime_error naming `flag` when the kubeconfig is unusable.
  HttpsReviewClient(clusterclient::ClientRuntime& runtime, const std::string& kubeconfig, const std::string& flag);
  void post(std::string path, std::string body, std::function<void(k8s::Expected<std::string>)> done) override;
  // GET, for the ConfigMap: `done` gets the HTTP status too (0 without an answer).
  void get(std::string path, std::function<void(int, k8s::Expected<std::string>)> done);

 private:
  std::unique_ptr<clusterclient::HttpsClient> client_;
};

// Reads the ConfigMap (waiting up to `timeout`): nullopt when it does not
// exist (404, not an error, as k8s.io/apiserver's
// lookupMissingConfigInCluster); an error says what failed, and for a 403
// which RoleBinding to create.
k8s::Expected<std::optional<server::CertificateTrust>> fetch_extension_apiserver_authentication(
    HttpsReviewClient& client, std::chrono::milliseconds timeout);

}  // namespace fedmetrics::cli
