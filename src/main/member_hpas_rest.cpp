#include "main/member_hpas_rest.hpp"

#include "fedmetrics/kube/resource_path.hpp"
#include "main/rest_json.hpp"

namespace fedmetrics::cli {

using nlohmann::json;

namespace {

constexpr std::string_view kHpas = "/apis/autoscaling/v2";

std::string collection(const std::string& ns) {
  if (ns.empty()) return std::string(kHpas) + "/horizontalpodautoscalers";
  return std::string(kHpas) + "/namespaces/" + kube::escape_path_segment(ns) + "/horizontalpodautoscalers";
}

std::string item(const std::string& ns, const std::string& name) {
  return collection(ns) + "/" + kube::escape_path_segment(name);
}

std::string meta(const json& hpa, const char* field) {
  const json& metadata = hpa.is_object() ? hpa.value("metadata", json::object()) : json::object();
  auto it = metadata.find(field);
  return it != metadata.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

RestMemberHPAs::RestMemberHPAs(std::shared_ptr<kube::HttpsClient> client, std::string member,
                               std::chrono::milliseconds timeout)
    : client_(std::move(client)), member_(std::move(member)), timeout_(timeout) {}

void RestMemberHPAs::call(std::string method, std::string path, std::string body,
                          std::function<void(int, k8s::Expected<json>)> done) {
  send_json(*client_, std::move(method), std::move(path), body.empty() ? "" : "application/json", std::move(body),
            std::chrono::steady_clock::now() + timeout_,
            [member = member_, done = std::move(done)](int status, k8s::Expected<json> doc) {
              if (!doc) return done(status, k8s::Error{member + ": " + doc.error().message});
              done(status, std::move(doc));
            });
}

void RestMemberHPAs::list(const std::string& namespace_name, const k8s::LabelSelector& selector,
                          controller::Done<std::vector<json>> done) {
  std::string path = collection(namespace_name);
  if (!selector.empty()) path += "?labelSelector=" + kube::escape_query_value(selector.to_string());
  call("GET", path, "", [member = member_, done = std::move(done)](int, k8s::Expected<json> doc) {
    if (!doc) return done(doc.error());
    auto items = doc->find("items");
    if (items == doc->end() || !items->is_array())
      return done(k8s::Error{member + ": HorizontalPodAutoscalerList without items"});
    done(std::vector<json>(items->begin(), items->end()));
  });
}

void RestMemberHPAs::get(const std::string& namespace_name, const std::string& name,
                         controller::Done<std::optional<json>> done) {
  call("GET", item(namespace_name, name), "", [done = std::move(done)](int status, k8s::Expected<json> doc) {
    if (status == 404) return done(std::optional<json>());
    if (!doc) return done(doc.error());
    done(std::optional<json>(std::move(*doc)));
  });
}

void RestMemberHPAs::create(json hpa, controller::Done<json> done) {
  const std::string ns = meta(hpa, "namespace");
  call("POST", collection(ns), hpa.dump(), [done = std::move(done)](int, k8s::Expected<json> doc) { done(std::move(doc)); });
}

void RestMemberHPAs::update(json hpa, controller::Done<json> done) {
  if (meta(hpa, "resourceVersion").empty())
    return done(k8s::Error{member_ + ": an update of HorizontalPodAutoscaler " + meta(hpa, "name") +
                           " needs the resourceVersion it was read at"});
  const std::string path = item(meta(hpa, "namespace"), meta(hpa, "name"));
  call("PUT", path, hpa.dump(), [done = std::move(done)](int, k8s::Expected<json> doc) { done(std::move(doc)); });
}

void RestMemberHPAs::has_target(const std::string& namespace_name, const autoscaler::CrossVersionObjectReference& target,
                                controller::Done<bool> done) {
  const auto r = controller::target_resource(target);
  const std::string path = (r.group.empty() ? "/api/" + r.version : "/apis/" + r.group + "/" + r.version) +
                           "/namespaces/" + kube::escape_path_segment(namespace_name) + "/" + r.resource + "/" +
                           kube::escape_path_segment(target.name);
  call("GET", path, "", [done = std::move(done)](int status, k8s::Expected<json> doc) {
    if (status == 404) return done(false);
    if (!doc) return done(doc.error());
    done(true);
  });
}

void RestMemberHPAs::remove(const std::string& namespace_name, const std::string& name, const std::string& uid,
                            controller::Done<bool> done) {
  std::string options;
  if (!uid.empty())
    options = json{{"apiVersion", "v1"}, {"kind", "DeleteOptions"}, {"preconditions", {{"uid", uid}}}}.dump();
  call("DELETE", item(namespace_name, name), std::move(options), [done = std::move(done)](int status, k8s::Expected<json> doc) {
    if (status == 404) return done(false);
    if (!doc) return done(doc.error());
    done(true);
  });
}

std::shared_ptr<controller::MemberHPAs> make_member_hpas(kube::ClientRuntime& runtime,
                                                         const kube::ClusterEndpoint& endpoint,
                                                         std::chrono::milliseconds timeout,
                                                         kube::ClientOptions options) {
  if (options.peer_name.empty()) options.peer_name = endpoint.name;
  auto client = std::make_shared<kube::HttpsClient>(runtime, endpoint, options);
  return std::make_shared<RestMemberHPAs>(std::move(client), endpoint.name, timeout);
}

}  // namespace fedmetrics::cli
