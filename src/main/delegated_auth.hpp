#pragma once
// The network side of delegated authentication and authorization: the
// ReviewClient that posts TokenReview and SubjectAccessReview documents to
// the control plane given by --authentication-kubeconfig /
// --authorization-kubeconfig, and the reader of the
// kube-system/extension-apiserver-authentication ConfigMap.
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "fedmetrics/kube/https_client.hpp"
#include "server/request_gate.hpp"

namespace fedmetrics::cli {

class HttpsReviewClient : public server::ReviewClient {
 public:
  // Throws std::runtime_error naming `flag` when the kubeconfig is unusable.
  HttpsReviewClient(kube::ClientRuntime& runtime, const std::string& kubeconfig, const std::string& flag);
  void post(std::string path, std::string body, std::function<void(k8s::Expected<std::string>)> done) override;
  // GET, for the ConfigMap: `done` gets the HTTP status too (0 without an answer).
  void get(std::string path, std::function<void(int, k8s::Expected<std::string>)> done);
  // The same, awaited: the HTTP status (0 without an answer) and the body,
  // or an error naming the request. Cancelled with the awaiting coroutine.
  async::Task<std::pair<int, k8s::Expected<std::string>>> get(std::string path);

 private:
  std::unique_ptr<kube::HttpsClient> client_;
};

// Reads extension-apiserver-authentication: nullopt when it does not exist
// (404, not an error, as k8s.io/apiserver's lookupMissingConfigInCluster);
// an error says what failed, and for a 403 which RoleBinding to create.
// `done` once, from any thread.
using PublishedTrust = k8s::Expected<std::optional<server::CertificateTrust>>;
void fetch_extension_apiserver_authentication(HttpsReviewClient& client, std::function<void(PublishedTrust)> done);
// The same, awaited.
async::Task<PublishedTrust> fetch_extension_apiserver_authentication(HttpsReviewClient& client);
// The same, waited for (start-up, on the main thread): no answer within `timeout` is an error.
PublishedTrust fetch_extension_apiserver_authentication(HttpsReviewClient& client, std::chrono::milliseconds timeout);

}  // namespace fedmetrics::cli
