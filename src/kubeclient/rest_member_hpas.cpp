#include "fedmetrics/kubeclient/rest_member_hpas.hpp"

#include "kubeclient/rest_json.hpp"

namespace fedmetrics::kubeclient {

using nlohmann::json;

namespace {

// The autoscaling/v2 HorizontalPodAutoscalers of `ns` (of every namespace when empty), or one of them.
kube::ResourcePath hpas(const std::string& ns, std::string name = {}) {
  return kube::ResourcePath::in_group("autoscaling", "v2", "horizontalpodautoscalers", ns, std::move(name));
}

std::string meta(const json& hpa, const char* field) {
  const json& metadata = hpa.is_object() ? hpa.value("metadata", json::object()) : json::object();
  auto it = metadata.find(field);
  return it != metadata.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

RestMemberHPAs::RestMemberHPAs(std::shared_ptr<kube::HttpsClient> client, std::string member,
                               std::chrono::milliseconds timeout)
    : MemberHPAs(std::move(member)), client_(std::move(client)), timeout_(timeout) {}

async::Task<JsonReply> RestMemberHPAs::call(std::string method, kube::ResourcePath path, std::string body) {
  std::string content_type = body.empty() ? "" : "application/json";
  // The operation built first: its by-value arguments are not temporaries of the co_await (GCC 12).
  auto op = request_json(client_, std::move(method), std::move(path), std::move(content_type), std::move(body),
                         std::chrono::steady_clock::now() + timeout_);
  auto reply = co_await std::move(op);
  if (!reply.body) reply.body = k8s::Error{member() + ": " + reply.body.error().message};
  co_return reply;
}

async::Task<k8s::Expected<std::vector<json>>> RestMemberHPAs::list(const std::string& namespace_name,
                                                                   const k8s::LabelSelector& selector) {
  auto op = call("GET", hpas(namespace_name).with("labelSelector", selector.to_string()), "");
  auto reply = co_await std::move(op);
  co_return items_of(std::move(reply), member() + ": HorizontalPodAutoscalerList");
}

async::Task<k8s::Expected<std::optional<json>>> RestMemberHPAs::get(const std::string& namespace_name,
                                                                    const std::string& name) {
  auto op = call("GET", hpas(namespace_name, name), "");
  auto reply = co_await std::move(op);
  if (reply.status == 404) co_return std::optional<json>();
  if (!reply.body) co_return reply.body.error();
  co_return std::optional<json>(std::move(*reply.body));
}

async::Task<k8s::Expected<json>> RestMemberHPAs::create(const json& hpa) {
  auto op = call("POST", hpas(meta(hpa, "namespace")), hpa.dump());
  auto reply = co_await std::move(op);
  co_return std::move(reply.body);
}

async::Task<k8s::Expected<json>> RestMemberHPAs::update(const json& hpa) {
  if (meta(hpa, "resourceVersion").empty())
    co_return k8s::Error{member() + ": an update of HorizontalPodAutoscaler " + meta(hpa, "name") +
                         " needs the resourceVersion it was read at"};
  auto op = call("PUT", hpas(meta(hpa, "namespace"), meta(hpa, "name")), hpa.dump());
  auto reply = co_await std::move(op);
  co_return std::move(reply.body);
}

async::Task<k8s::Expected<bool>> RestMemberHPAs::has_target(const std::string& namespace_name,
                                                            const autoscaler::CrossVersionObjectReference& target) {
  auto op = call("GET", target_path(namespace_name, target), "");
  auto reply = co_await std::move(op);
  if (reply.status == 404) co_return false;
  co_return written(reply);
}

async::Task<k8s::Expected<bool>> RestMemberHPAs::remove(const std::string& namespace_name, const std::string& name,
                                                        const std::string& uid) {
  std::string options;
  if (!uid.empty())
    options = json{{"apiVersion", "v1"}, {"kind", "DeleteOptions"}, {"preconditions", {{"uid", uid}}}}.dump();
  auto op = call("DELETE", hpas(namespace_name, name), std::move(options));
  auto reply = co_await std::move(op);
  if (reply.status == 404) co_return false;
  co_return written(reply);
}

std::shared_ptr<controller::MemberHPAs> make_member_hpas(kube::ClientRuntime& runtime,
                                                         const kube::ClusterEndpoint& endpoint,
                                                         std::chrono::milliseconds timeout,
                                                         kube::ClientOptions options) {
  if (options.peer_name.empty()) options.peer_name = endpoint.name;
  auto client = std::make_shared<kube::HttpsClient>(runtime, endpoint, options);
  return std::make_shared<RestMemberHPAs>(std::move(client), endpoint.name, timeout);
}

}  // namespace fedmetrics::kubeclient
