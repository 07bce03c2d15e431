#include "fedmetrics/kubeclient/rest_review_client.hpp"

#include <map>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/status.hpp"
#include "fedmetrics/kube/kubeconfig.hpp"
#include "fedmetrics/kube/resource_path.hpp"

namespace fedmetrics::kubeclient {

namespace {

// apiserver's webhook clients time out after 10 s.
constexpr auto kReviewTimeout = std::chrono::seconds(10);

struct StatusAndBody {
  int status = 0;  // 0 without an answer
  k8s::Expected<std::string> body = k8s::Error{""};
};

// The HTTP status and the body, or an error naming the request.
StatusAndBody status_and_body_of(const std::string& what, kube::HttpResult result) {
  if (auto* e = std::get_if<k8s::Error>(&result)) return {0, k8s::Error{what + ": " + e->message}};
  auto& reply = std::get<kube::HttpReply>(result);
  if (reply.status < 200 || reply.status > 299) {
    std::string message = "HTTP " + std::to_string(reply.status);
    auto parsed = nlohmann::json::parse(reply.body, nullptr, false);
    if (auto status = k8s::Status::from_json(parsed)) message += ": " + status->message;
    return {reply.status, k8s::Error{what + ": " + message}};
  }
  return {reply.status, std::move(reply.body)};
}

constexpr std::string_view kAuthenticationConfigMap = "kube-system/extension-apiserver-authentication";

// k8s.io/apiserver lookupMissingConfigInCluster: a missing ConfigMap is
// not an error (there is simply nothing to trust from it); a 403 says
// which RoleBinding would let us read it.
PublishedTrust parse_published_trust(const StatusAndBody& answer) {
  if (answer.status == 404) return std::optional<auth::ExtensionApiserverAuthentication>();
  if (answer.status == 403)
    return k8s::Error{"cannot read " + std::string(kAuthenticationConfigMap) + " (" + answer.body.error().message +
                      "); usually fixed by 'kubectl create rolebinding -n kube-system ROLEBINDING_NAME "
                      "--role=extension-apiserver-authentication-reader --serviceaccount=YOUR_NS:YOUR_SA'"};
  if (!answer.body) return answer.body.error();
  auto doc = nlohmann::json::parse(*answer.body, nullptr, false);
  if (!doc.is_object() || !doc.contains("data") || !doc["data"].is_object())
    return k8s::Error{std::string(kAuthenticationConfigMap) + ": no data"};
  std::map<std::string, std::string> data;
  for (const auto& [key, value] : doc["data"].items())
    if (value.is_string()) data[key] = value.get<std::string>();
  auto parsed = auth::parse_extension_apiserver_authentication(data);
  if (!parsed) return k8s::Error{std::string(kAuthenticationConfigMap) + ": " + parsed.error().message};
  return std::optional<auth::ExtensionApiserverAuthentication>(std::move(*parsed));
}

}  // namespace

RestReviewClient::RestReviewClient(kube::ClientRuntime& runtime, const std::string& kubeconfig,
                                   const std::string& flag) {
  auto endpoint = kube::load_kubeconfig_current_context(kubeconfig);
  if (!endpoint) throw std::runtime_error(flag + ": " + endpoint.error().message);
  try {
    kube::ClientOptions options;
    options.peer_name = "the control plane";
    client_ = std::make_shared<kube::HttpsClient>(runtime, std::move(*endpoint), options);
  } catch (const std::exception& e) {
    throw std::runtime_error(flag + ": " + e.what());
  }
}

async::Task<k8s::Expected<std::string>> RestReviewClient::post(std::string path, std::string body) {
  kube::OutgoingRequest request;
  request.method = "POST";
  std::string what = "POST " + path;
  request.target = std::move(path);
  request.body = std::move(body);
  request.content_type = "application/json";
  // TokenReview and SubjectAccessReview create nothing: sending one twice is harmless.
  request.replayable = true;
  auto answer = client_->request(std::move(request), std::chrono::steady_clock::now() + kReviewTimeout);
  auto result = co_await std::move(answer);
  co_return status_and_body_of(what, std::move(result)).body;
}

async::Task<PublishedTrust> RestReviewClient::published_trust() {
  const std::string path =
      kube::ResourcePath::core("configmaps", "kube-system", "extension-apiserver-authentication").target();
  kube::OutgoingRequest request;
  request.target = path;
  auto answer = client_->request(std::move(request), std::chrono::steady_clock::now() + kReviewTimeout);
  auto result = co_await std::move(answer);
  co_return parse_published_trust(status_and_body_of("GET " + path, std::move(result)));
}

}  // namespace fedmetrics::kubeclient
