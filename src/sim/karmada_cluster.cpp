// cluster.karmada.io on the simulated control plane: a Cluster's Ready
// condition and the cluster proxy to its member.
#include <string>

#include "fedmetrics/k8s/ascii.hpp"
#include "fedmetrics/k8s/base64.hpp"
#include "sim/http_util.hpp"
#include "sim/karmada_call.hpp"

namespace fedmetrics::sim {

using detail::kClusterGroup;
using detail::ready_condition_of;
using k8s::Status;
using nlohmann::json;
using transport::HttpRequest;

void KarmadaApi::set_cluster_ready(const std::string& name, bool ready, const std::string& message) {
  const auto* clusters = store_->find_type(kClusterGroup, "v1alpha1", "clusters");
  auto current = store_->get(*clusters, "", name);
  auto* object = std::get_if<json>(&current);
  if (object == nullptr) return;
  auto condition = ready_condition_of(*object, "Ready");
  std::string status = ready ? "True" : "False";
  if (condition.value("status", "") == status) return;
  json conditions = {{{"type", "Ready"},
                      {"status", status},
                      {"reason", ready ? "ClusterReady" : "ClusterNotReachable"},
                      {"message", message},
                      {"lastTransitionTime", k8s::format_time(hooks_.clock())}}};
  (*object)["status"]["conditions"] = conditions;
  (*object)["metadata"].erase("resourceVersion");
  store_->update(*clusters, "", name, std::move(*object), "status");
}

namespace detail {

// /apis/cluster.karmada.io/v1alpha1/clusters/{name}/proxy/{path}: to the member, with its Secret's token.
Outcome KarmadaCall::cluster_proxy() {
  const auto* clusters = store.find_type(kClusterGroup, "v1alpha1", "clusters");
  auto cluster = store.get(*clusters, "", name);
  if (auto* s = std::get_if<Status>(&cluster)) return fail(*s);
  const auto& c = std::get<json>(cluster);
  const auto& spec = c.value("spec", json::object());
  Upstream up;
  up.server = spec.value("apiEndpoint", "");
  up.insecure = spec.value("insecureSkipTLSVerification", false);
  const auto& ref = spec.value("secretRef", json::object());
  auto secret = store.get(*store.find_type("", "v1", "secrets"), ref.value("namespace", ""), ref.value("name", ""));
  if (auto* s = std::get_if<Status>(&secret))
    return fail(Status::internal_error("cluster " + name + ": its secretRef: " + s->message));
  const auto& data = std::get<json>(secret).value("data", json::object());
  up.token = k8s::base64_decode(data.value("token", "")).value_or("");
  up.ca_pem = k8s::base64_decode(data.value("caBundle", "")).value_or("");
  // The raw remainder of the path after .../proxy, escapes kept, and the query.
  std::string prefix = "/apis/cluster.karmada.io/v1alpha1/clusters/" + name + "/proxy";
  std::string raw = request.target;
  std::string rest = raw.size() > prefix.size() && raw.starts_with(prefix) ? raw.substr(prefix.size()) : "/";
  if (rest.empty() || rest[0] == '?') rest = "/" + rest;
  HttpRequest out = request;
  out.target = rest;
  std::erase_if(out.headers, [](const auto& h) {
    auto n = k8s::ascii_lowercase(h.first);
    return n == "authorization" || n.starts_with("impersonate-") || n == "host" || n == "content-length";
  });
  return ForwardedRequest{std::move(up), std::move(out)};
}

}  // namespace detail

}  // namespace fedmetrics::sim
