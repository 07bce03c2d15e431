#include "main/rest_json.hpp"

#include "fedmetrics/k8s/status.hpp"

namespace fedmetrics::cli {

using nlohmann::json;

void send_json(kube::HttpsClient& client, std::string method, std::string path, std::string content_type,
               std::string body, std::chrono::steady_clock::time_point deadline,
               std::function<void(int, k8s::Expected<json>)> done) {
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
  client.send(std::move(request), deadline, [what, done = std::move(done)](kube::HttpResult result) {
    if (auto* e = std::get_if<k8s::Error>(&result)) return done(0, k8s::Error{what + ": " + e->message});
    auto& reply = std::get<kube::HttpReply>(result);
    auto doc = json::parse(reply.body, nullptr, false);
    if (reply.status < 200 || reply.status > 299) {
      std::string message = what + ": HTTP " + std::to_string(reply.status);
      if (auto status = k8s::Status::from_json(doc)) message = what + ": " + status->message;
      return done(reply.status, k8s::Error{message});
    }
    if (doc.is_discarded()) return done(reply.status, k8s::Error{what + ": the answer is not JSON"});
    done(reply.status, std::move(doc));
  });
}

}  // namespace fedmetrics::cli
