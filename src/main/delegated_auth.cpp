#include "main/delegated_auth.hpp"

#include <future>
#include <map>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "fedmetrics/auth/authenticators.hpp"
#include "fedmetrics/kube/kubeconfig.hpp"

namespace fedmetrics::cli {

namespace {

// apiserver's webhook clients time out after 10 s.
constexpr auto kReviewTimeout = std::chrono::seconds(10);

// The HTTP status (0 without an answer) and the body, or an error naming the request.
std::pair<int, k8s::Expected<std::string>> status_and_body(const std::string& what, kube::HttpResult result) {
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

// `done` gets status_and_body().
std::function<void(kube::HttpResult)> status_and_body_of(std::string what,
                                                         std::function<void(int, k8s::Expected<std::string>)> done) {
  return [what = std::move(what), done = std::move(done)](kube::HttpResult result) {
    auto [status, body] = status_and_body(what, std::move(result));
    done(status, std::move(body));
  };
}

std::function<void(kube::HttpResult)> body_of(std::string what, std::function<void(k8s::Expected<std::string>)> done) {
  return status_and_body_of(std::move(what),
                            [done = std::move(done)](int, k8s::Expected<std::string> body) { done(std::move(body)); });
}

constexpr std::string_view kAuthenticationConfigMap = "kube-system/extension-apiserver-authentication";

}  // namespace

HttpsReviewClient::HttpsReviewClient(kube::ClientRuntime& runtime, const std::string& kubeconfig,
                                     const std::string& flag) {
  auto endpoint = kube::load_kubeconfig_current_context(kubeconfig);
  if (!endpoint) throw std::runtime_error(flag + ": " + endpoint.error().message);
  try {
    kube::ClientOptions options;
    options.peer_name = "the control plane";
    client_ = std::make_unique<kube::HttpsClient>(runtime, std::move(*endpoint), options);
  } catch (const std::exception& e) {
    throw std::runtime_error(flag + ": " + e.what());
  }
}

void HttpsReviewClient::post(std::string path, std::string body, std::function<void(k8s::Expected<std::string>)> done) {
  kube::OutgoingRequest request;
  request.method = "POST";
  std::string what = "POST " + path;
  request.target = std::move(path);
  request.body = std::move(body);
  request.content_type = "application/json";
  // TokenReview and SubjectAccessReview create nothing: sending one twice is harmless.
  request.replayable = true;
  client_->send(std::move(request), std::chrono::steady_clock::now() + kReviewTimeout, body_of(what, std::move(done)));
}

void HttpsReviewClient::get(std::string path, std::function<void(int, k8s::Expected<std::string>)> done) {
  std::string what = "GET " + path;
  client_->get(std::move(path), std::chrono::steady_clock::now() + kReviewTimeout,
               status_and_body_of(what, std::move(done)));
}

async::Task<std::pair<int, k8s::Expected<std::string>>> HttpsReviewClient::get(std::string path) {
  std::string what = "GET " + path;
  kube::OutgoingRequest request;
  request.target = std::move(path);
  const auto deadline = std::chrono::steady_clock::now() + kReviewTimeout;
  auto answer = client_->request(std::move(request), deadline);  // a named task (GCC 12, transport/async.hpp)
  auto result = co_await std::move(answer);
  co_return status_and_body(what, std::move(result));
}

namespace {

// k8s.io/apiserver lookupMissingConfigInCluster: a missing ConfigMap is
// not an error (there is simply nothing to trust from it); a 403 says
// which RoleBinding would let us read it.
PublishedTrust parse_published_trust(int status, const k8s::Expected<std::string>& body) {
  if (status == 404) return std::optional<server::CertificateTrust>();
  if (status == 403)
    return k8s::Error{"cannot read " + std::string(kAuthenticationConfigMap) + " (" + body.error().message +
                      "); usually fixed by 'kubectl create rolebinding -n kube-system ROLEBINDING_NAME "
                      "--role=extension-apiserver-authentication-reader --serviceaccount=YOUR_NS:YOUR_SA'"};
  if (!body) return body.error();
  auto doc = nlohmann::json::parse(*body, nullptr, false);
  if (!doc.is_object() || !doc.contains("data") || !doc["data"].is_object())
    return k8s::Error{std::string(kAuthenticationConfigMap) + ": no data"};
  std::map<std::string, std::string> data;
  for (const auto& [key, value] : doc["data"].items())
    if (value.is_string()) data[key] = value.get<std::string>();
  auto parsed = auth::parse_extension_apiserver_authentication(data);
  if (!parsed) return k8s::Error{std::string(kAuthenticationConfigMap) + ": " + parsed.error().message};
  return std::optional<server::CertificateTrust>(
      server::CertificateTrust{parsed->request_header, parsed->client_ca_pem});
}

}  // namespace

void fetch_extension_apiserver_authentication(HttpsReviewClient& client, std::function<void(PublishedTrust)> done) {
  client.get("/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication",
             [done = std::move(done)](int status, k8s::Expected<std::string> body) {
               done(parse_published_trust(status, body));
             });
}

async::Task<PublishedTrust> fetch_extension_apiserver_authentication(HttpsReviewClient& client) {
  auto answer = client.get("/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication");
  auto [status, body] = co_await std::move(answer);
  co_return parse_published_trust(status, body);
}

PublishedTrust fetch_extension_apiserver_authentication(HttpsReviewClient& client, std::chrono::milliseconds timeout) {
  auto promise = std::make_shared<std::promise<PublishedTrust>>();
  auto future = promise->get_future();
  fetch_extension_apiserver_authentication(client,
                                           [promise](PublishedTrust trust) { promise->set_value(std::move(trust)); });
  if (future.wait_for(timeout) != std::future_status::ready)
    return k8s::Error{"reading " + std::string(kAuthenticationConfigMap) + ": no answer in time"};
  return future.get();
}

}  // namespace fedmetrics::cli
