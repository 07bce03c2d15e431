#pragma once
// The network side of delegated authentication and authorization: the
// ReviewClient that posts TokenReview and SubjectAccessReview documents to
// the control plane given by --authentication-kubeconfig /
// --authorization-kubeconfig, and the reader of the
// kube-system/extension-apiserver-authentication ConfigMap.
#include <chrono>
#include <memory>
#include <string>

#include "fedmetrics/clusterclient/https_client.hpp"
#include "server/request_gate.hpp"

namespace fedmetrics::cli {

class HttpsReviewClient : public server::ReviewClient {
 public:
  // Throws std::runtime_error naming `flag` when the kubeconfig is unusable.
  HttpsReviewClient(clusterclient::ClientRuntime& runtime, const std::string& kubeconfig, const std::string& flag);
  void post(std::string path, std::string body, std::function<void(k8s::Expected<std::string>)> done) override;
  // GET, for the ConfigMap.
  void get(std::string path, std::function<void(k8s::Expected<std::string>)> done);

 private:
  std::unique_ptr<clusterclient::HttpsClient> client_;
};

// Reads the ConfigMap (waiting up to `timeout`); an error says what failed.
k8s::Expected<server::CertificateTrust> fetch_extension_apiserver_authentication(HttpsReviewClient& client,
                                                                                std::chrono::milliseconds timeout);

}  // namespace fedmetrics::cli
