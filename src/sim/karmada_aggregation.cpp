// apiregistration.k8s.io on the simulated control plane: where an APIService's
// Service is reached, its availability and discovery as the shell probed them,
// and the aggregation layer's proxy (kube-aggregator handler_proxy.go).
#include <mutex>
#include <string>

#include "fedmetrics/k8s/ascii.hpp"
#include "fedmetrics/k8s/base64.hpp"
#include "sim/http_util.hpp"
#include "sim/karmada_call.hpp"

namespace fedmetrics::sim {

using detail::ready_condition_of;
using detail::resolve_apiservice;
using k8s::Status;
using nlohmann::json;
using transport::HttpRequest;
using transport::HttpResponse;

// Where an APIService's Service is reached (kube-aggregator's resolver): an
// ExternalName's name, or a loopback clusterIP; the TLS name is always
// <service>.<namespace>.svc. A string says why it cannot be reached.
std::variant<Upstream, std::string> detail::resolve_apiservice(const ObjectStore& store, const json& apiservice) {
  const auto& spec = apiservice.value("spec", json::object());
  const auto& service = spec.value("service", json::object());
  const std::string ns = service.value("namespace", ""), name = service.value("name", "");
  auto svc = store.get(*store.find_type("", "v1", "services"), ns, name);
  if (std::holds_alternative<Status>(svc)) return "service/" + name + " in \"" + ns + "\" is not present";
  const auto& svc_spec = std::get<json>(svc).value("spec", json::object());
  std::string host = svc_spec.value("type", "") == "ExternalName" ? svc_spec.value("externalName", "")
                                                                  : svc_spec.value("clusterIP", "");
  if (host.empty() || host == "None")
    return "service/" + name + " in \"" + ns + "\" has no address (use type ExternalName with externalName 127.0.0.1)";
  Upstream up;
  up.server = "https://" + host + ":" + std::to_string(service.value("port", 443));
  up.insecure = spec.value("insecureSkipTLSVerify", false);
  up.ca_pem = k8s::base64_decode(spec.value("caBundle", "")).value_or("");
  up.server_name = name + "." + ns + ".svc";
  up.front_proxy = true;
  return up;
}

std::vector<KarmadaApi::AvailabilityTarget> KarmadaApi::availability_targets() const {
  std::vector<AvailabilityTarget> out;
  auto list = store_->list(*store_->find_type("apiregistration.k8s.io", "v1", "apiservices"), "", {}, {});
  const auto* doc = std::get_if<json>(&list);
  if (doc == nullptr) return out;
  for (const auto& a : (*doc)["items"]) {
    const auto& spec = a.value("spec", json::object());
    if (!spec.is_object() || !spec.value("service", json()).is_object()) continue;
    AvailabilityTarget t;
    t.name = a["metadata"].value("name", "");
    t.path = "/apis/" + spec.value("group", "") + "/" + spec.value("version", "");
    auto resolved = resolve_apiservice(*store_, a);
    if (auto* up = std::get_if<Upstream>(&resolved)) t.upstream = *up;
    else t.unreachable = std::get<std::string>(resolved);
    out.push_back(std::move(t));
  }
  return out;
}

void KarmadaApi::set_available(const std::string& name, bool available, const std::string& reason,
                               const std::string& message) {
  const auto* apiservices = store_->find_type("apiregistration.k8s.io", "v1", "apiservices");
  auto current = store_->get(*apiservices, "", name);
  auto* object = std::get_if<json>(&current);
  if (object == nullptr) return;
  auto condition = ready_condition_of(*object, "Available");
  std::string status = available ? "True" : "False";
  if (condition.value("status", "") == status && condition.value("reason", "") == reason &&
      condition.value("message", "") == message)
    return;  // unchanged: no write, no watch event (the probe does not feed itself)
  (*object)["status"]["conditions"] = json::array({{{"type", "Available"},
                                                    {"status", status},
                                                    {"reason", reason},
                                                    {"message", message},
                                                    {"lastTransitionTime", k8s::format_time(hooks_.clock())}}});
  (*object)["metadata"].erase("resourceVersion");
  store_->update(*apiservices, "", name, std::move(*object), "status");
}

void KarmadaApi::set_discovered(const std::string& name, std::optional<json> resource_list) {
  std::lock_guard lock(discovered_mutex_);
  if (resource_list) discovered_[name] = std::move(*resource_list);
  else discovered_.erase(name);
}

std::optional<json> KarmadaApi::discovered(const std::string& name) const {
  std::lock_guard lock(discovered_mutex_);
  auto it = discovered_.find(name);
  if (it == discovered_.end()) return std::nullopt;
  return it->second;
}

namespace detail {

// The aggregation layer (kube-aggregator handler_proxy.go) for a group-version an APIService names.
std::optional<Outcome> KarmadaCall::aggregated() {
  if (target.segments.size() < 3 || target.segments[0] != "apis") return std::nullopt;
  const auto* apiservices = store.find_type("apiregistration.k8s.io", "v1", "apiservices");
  auto found = store.get(*apiservices, "", target.segments[2] + "." + target.segments[1]);
  auto* apiservice = std::get_if<json>(&found);
  if (apiservice == nullptr || !apiservice->value("spec", json::object()).value("service", json()).is_object())
    return std::nullopt;  // not registered, or served locally
  // While the availability check has not passed, kube-aggregator answers plain text 503.
  if (ready_condition_of(*apiservice, "Available").value("status", "") != "True")
    return HttpResponse{503, "text/plain; charset=utf-8", "service unavailable\n", {}};
  auto resolved = resolve_apiservice(store, *apiservice);
  if (auto* why = std::get_if<std::string>(&resolved)) return fail(Status::service_unavailable(*why));
  Upstream up = std::get<Upstream>(resolved);
  HttpRequest out = request;
  std::erase_if(out.headers, [](const auto& h) {
    auto n = k8s::ascii_lowercase(h.first);
    return n == "authorization" || n.starts_with("impersonate-") || n.starts_with("x-remote-") || n == "host" ||
           n == "content-length";
  });
  out.headers.emplace_back("X-Remote-User", user.name);
  for (const auto& g : user.groups) out.headers.emplace_back("X-Remote-Group", g);
  out.peer_certificates_pem.clear();
  return ForwardedRequest{std::move(up), std::move(out)};
}

}  // namespace detail

}  // namespace fedmetrics::sim
