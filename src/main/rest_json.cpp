#include "main/rest_json.hpp"

#include "fedmetrics/kube/resource_path.hpp"
#include "fedmetrics/controller/scale_client.hpp"
#include "fedmetrics/k8s/status.hpp"
#include "fedmetrics/transport/async.hpp"

namespace fedmetrics::cli {

using nlohmann::json;

namespace {

JsonReply decode(const std::string& what, kube::HttpResult result) {
  if (auto* e = std::get_if<k8s::Error>(&result)) return {0, k8s::Error{what + ": " + e->message}};
  auto& reply = std::get<kube::HttpReply>(result);
  auto doc = json::parse(reply.body, nullptr, false);
  if (reply.status < 200 || reply.status > 299) {
    std::string message = what + ": HTTP " + std::to_string(reply.status);
    if (auto status = k8s::Status::from_json(doc)) message = what + ": " + status->message;
    return {reply.status, k8s::Error{message}};
  }
  if (doc.is_discarded()) return {reply.status, k8s::Error{what + ": the answer is not JSON"}};
  return {reply.status, std::move(doc)};
}

}  // namespace

void send_json(kube::HttpsClient& client, std::string method, std::string path, std::string content_type,
               std::string body, std::chrono::steady_clock::time_point deadline, std::function<void(JsonReply)> done) {
  kube::OutgoingRequest request;
  request.method = std::move(method);
  std::string what = request.method + " " + path;
  request.target = std::move(path);
  request.content_type = std::move(content_type);
  request.body = std::move(body);
  // Writes that can be sent twice without harm (retry_policy.hpp): a merge
  // PATCH sets the same fields again (a status, an Event's count). Not a PUT,
  // although each carries its resourceVersion: a replay of one the server
  // applied would fail with 409 and report a scale or a Lease renewal as
  // failed when it was not (Go's transport does not replay PUT either).
  // POSTs (a new Event, a new Lease) are not replayed.
  request.replayable = request.method == "PATCH";
  client.send(std::move(request), deadline,
              [what, done = std::move(done)](kube::HttpResult result) { done(decode(what, std::move(result))); });
}

async::Task<JsonReply> request_json(kube::HttpsClient& client, std::string method, std::string path,
                                    std::string content_type, std::string body,
                                    std::chrono::steady_clock::time_point deadline) {
  // The HTTPS client is callback-shaped this round: the one bridge to it.
  co_return co_await async::await_callback<JsonReply>([&](auto done) {
    send_json(client, std::move(method), std::move(path), std::move(content_type), std::move(body), deadline,
              std::move(done));
  });
}

k8s::Expected<bool> written(const JsonReply& reply) {
  if (!reply.body) return reply.body.error();
  return true;
}

std::string target_path(const std::string& ns, const autoscaler::CrossVersionObjectReference& target) {
  auto r = controller::target_resource(target);
  std::string base = r.group.empty() ? "/api/" + r.version : "/apis/" + r.group + "/" + r.version;
  return base + "/namespaces/" + kube::escape_path_segment(ns) + "/" + r.resource + "/" +
         kube::escape_path_segment(target.name);
}

}  // namespace fedmetrics::cli
