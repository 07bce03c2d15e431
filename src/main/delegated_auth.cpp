#include "main/delegated_auth.hpp"

#include <future>
#include <map>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "fedmetrics/auth/authenticators.hpp"
#include "fedmetrics/clusterclient/kubeconfig.hpp"

namespace fedmetrics::cli {

namespace {

// apiserver's webhook clients time out after 10 s.
constexpr auto kReviewTimeout = std::chrono::seconds(10);

std::function<void(clusterclient::HttpResult)> body_of(std::string what,
                                                       std::function<void(k8s::Expected<std::string>)> done) {
  return [what = std::move(what), done = std::move(done)](clusterclient::HttpResult result) {
    if (auto* e = std::get_if<aggregator::MemberError>(&result)) return done(k8s::Error{what + ": " + e->message});
    auto& reply = std::get<clusterclient::HttpReply>(result);
    if (reply.status < 200 || reply.status > 299) {
      std::string message = "HTTP " + std::to_string(reply.status);
      auto parsed = nlohmann::json::parse(reply.body, nullptr, false);
      if (auto status = k8s::Status::from_json(parsed)) message += ": " + status->message;
      return done(k8s::Error{what + ": " + message});
    }
    done(std::move(reply.body));
  };
}

}  // namespace

HttpsReviewClient::HttpsReviewClient(clusterclient::ClientRuntime& runtime, const std::string& kubeconfig,
                                     const std::string& flag) {
  auto endpoint = clusterclient::load_kubeconfig_current_context(kubeconfig);
  if (!endpoint) throw std::runtime_error(flag + ": " + endpoint.error().message);
  try {
    clusterclient::ClientOptions options;
    options.peer_name = "the control plane";
    client_ = std::make_unique<clusterclient::HttpsClient>(runtime, std::move(*endpoint), options);
  } catch (const std::exception& e) {
    throw std::runtime_error(flag + ": " + e.what());
  }
}

void HttpsReviewClient::post(std::string path, std::string body, std::function<void(k8s::Expected<std::string>)> done) {
  clusterclient::OutgoingRequest request;
  request.method = "POST";
  std::string what = "POST " + path;
  request.target = std::move(path);
  request.body = std::move(body);
  request.content_type = "application/json";
  // TokenReview and SubjectAccessReview create nothing: sending one twice is harmless.
  request.replayable = true;
  client_->send(std::move(request), std::chrono::steady_clock::now() + kReviewTimeout, body_of(what, std::move(done)));
}

void HttpsReviewClient::get(std::string path, std::function<void(k8s::Expected<std::string>)> done) {
  std::string what = "GET " + path;
  client_->get(std::move(path), std::chrono::steady_clock::now() + kReviewTimeout, body_of(what, std::move(done)));
}

k8s::Expected<server::CertificateTrust> fetch_extension_apiserver_authentication(HttpsReviewClient& client,
                                                                                std::chrono::milliseconds timeout) {
  auto promise = std::make_shared<std::promise<k8s::Expected<std::string>>>();
  auto future = promise->get_future();
  client.get("/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication",
             [promise](k8s::Expected<std::string> body) { promise->set_value(std::move(body)); });
  if (future.wait_for(timeout) != std::future_status::ready)
    return k8s::Error{"reading kube-system/extension-apiserver-authentication: no answer in time"};
  auto body = future.get();
  if (!body) return body.error();
  auto doc = nlohmann::json::parse(*body, nullptr, false);
  if (!doc.is_object() || !doc.contains("data") || !doc["data"].is_object())
    return k8s::Error{"kube-system/extension-apiserver-authentication: no data"};
  std::map<std::string, std::string> data;
  for (const auto& [key, value] : doc["data"].items())
    if (value.is_string()) data[key] = value.get<std::string>();
  auto parsed = auth::parse_extension_apiserver_authentication(data);
  if (!parsed) return k8s::Error{"kube-system/extension-apiserver-authentication: " + parsed.error().message};
  return server::CertificateTrust{parsed->request_header, parsed->client_ca_pem};
}

}  // namespace fedmetrics::cli
