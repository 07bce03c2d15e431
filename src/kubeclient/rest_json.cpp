#include "kubeclient/rest_json.hpp"

#include "fedmetrics/controller/scale_client.hpp"
#include "fedmetrics/k8s/status.hpp"

namespace fedmetrics::kubeclient {

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

kube::OutgoingRequest outgoing(std::string method, const kube::ResourcePath& path, std::string content_type,
                               std::string body) {
  kube::OutgoingRequest request;
  request.method = std::move(method);
  request.target = path.target();
  request.content_type = std::move(content_type);
  request.body = std::move(body);
  // Writes that can be sent twice without harm (retry_policy.hpp): a merge
  // PATCH sets the same fields again (a status, an Event's count). Not a PUT,
  // although each carries its resourceVersion: a replay of one the server
  // applied would fail with 409 and report a scale or a Lease renewal as
  // failed when it was not (Go's transport does not replay PUT either).
  // POSTs (a new Event, a new Lease) are not replayed.
  request.replayable = request.method == "PATCH";
  return request;
}

}  // namespace

void send_json(kube::HttpsClient& client, std::string method, const kube::ResourcePath& path, std::string content_type,
               std::string body, kube::Deadline deadline, std::function<void(JsonReply)> done) {
  auto request = outgoing(std::move(method), path, std::move(content_type), std::move(body));
  std::string what = request.method + " " + request.target;
  client.send(std::move(request), deadline,
              [what, done = std::move(done)](kube::HttpResult result) { done(decode(what, std::move(result))); });
}

async::Task<JsonReply> request_json(std::shared_ptr<kube::HttpsClient> client, std::string method,
                                    kube::ResourcePath path, std::string content_type, std::string body,
                                    kube::Deadline deadline) {
  auto request = outgoing(std::move(method), path, std::move(content_type), std::move(body));
  std::string what = request.method + " " + request.target;
  // The operation built first: its arguments are not temporaries of the co_await (GCC 12).
  auto answer = client->request(std::move(request), deadline);
  auto result = co_await std::move(answer);
  co_return decode(what, std::move(result));
}

k8s::Expected<bool> written(const JsonReply& reply) {
  if (!reply.body) return reply.body.error();
  return true;
}

k8s::Expected<std::vector<json>> items_of(JsonReply reply, const std::string& list) {
  if (!reply.body) return reply.body.error();
  auto& doc = *reply.body;
  auto items = doc.find("items");
  if (items == doc.end() || !items->is_array()) return k8s::Error{list + " without items"};
  return std::vector<json>(items->begin(), items->end());
}

kube::ResourcePath karmada_autoscaling(std::string resource, std::string ns, std::string name) {
  return kube::ResourcePath::in_group("autoscaling.karmada.io", "v1alpha1", std::move(resource), std::move(ns),
                                      std::move(name));
}

kube::ResourcePath target_path(const std::string& ns, const autoscaler::CrossVersionObjectReference& target) {
  auto r = controller::target_resource(target);
  return kube::ResourcePath::in_group(r.group, r.version, r.resource, ns, target.name);
}

}  // namespace fedmetrics::kubeclient
