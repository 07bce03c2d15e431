#include "fedmetrics/clusterclient/member_plan.hpp"

#include <algorithm>
#include <cctype>
#include <optional>

#include "fedmetrics/k8s/ascii.hpp"
#include "fedmetrics/kube/resource_path.hpp"

namespace fedmetrics::clusterclient {

namespace {

std::string describe_readiness(const k8s::KarmadaCluster& c) {
  if (!c.ready) return "no Ready condition yet";
  std::string out = "Ready=" + (c.ready->status.empty() ? std::string("Unknown") : c.ready->status);
  if (!c.ready->reason.empty() || !c.ready->message.empty())
    out += " (" + c.ready->reason + (c.ready->reason.empty() || c.ready->message.empty() ? "" : ": ") +
           c.ready->message + ")";
  return out;
}

// The cluster a decoding error names: parse_cluster_list prefixes the error
// of an item that has a name with `cluster "<name>": ` (karmada_cluster.hpp).
std::string named_in(const std::string& error, std::string* rest) {
  static constexpr std::string_view kPrefix = "cluster \"";
  if (error.rfind(kPrefix, 0) != 0) return {};
  auto end = error.find("\": ", kPrefix.size());
  if (end == std::string::npos) return {};
  *rest = error.substr(end + 3);
  return error.substr(kPrefix.size(), end - kPrefix.size());
}

// spec.apiEndpoint may be a URL or host[:port]; client-go defaults the scheme
// to https when TLS settings are given, and https is all HttpsClient speaks.
k8s::Expected<std::string> server_url(const std::string& api_endpoint) {
  if (api_endpoint.empty()) return k8s::Error{"spec.apiEndpoint is empty"};
  auto scheme_end = api_endpoint.find("://");
  if (scheme_end == std::string::npos) return "https://" + api_endpoint;
  if (!k8s::iequals(std::string_view(api_endpoint).substr(0, scheme_end), "https"))
    return k8s::Error{"spec.apiEndpoint \"" + api_endpoint + "\": only https is supported"};
  return api_endpoint;
}

// Karmada's BuildClusterConfig, in its order: endpoint, secretRef, token, caBundle.
k8s::Expected<kube::ClusterEndpoint> direct_endpoint(const k8s::KarmadaCluster& c, const SecretLookup& secrets) {
  auto server = server_url(c.api_endpoint);
  if (!server) return server.error();
  if (!c.secret_ref)
    return k8s::Error{"no spec.secretRef to take its token and CA from (--member-access=proxy would not need one)"};
  const std::string secret_name = "secret " + c.secret_ref->to_string();
  auto found = secrets.find(*c.secret_ref);
  if (found == secrets.end()) return k8s::Error{secret_name + " was not read"};
  if (!found->second) return found->second.error().at(secret_name);
  const auto& data = found->second->data;
  auto value = [&data](const char* key) {
    auto it = data.find(key);
    return it == data.end() ? std::string() : it->second;
  };
  kube::ClusterEndpoint e;
  e.name = c.name;
  e.server = std::move(*server);
  e.token = value("token");
  e.ca_pem = value("caBundle");
  e.insecure_skip_tls_verify = c.insecure_skip_tls_verification;
  if (e.token.empty()) return k8s::Error{secret_name + " has no data.token"};
  if (e.ca_pem.empty() && !e.insecure_skip_tls_verify)
    return k8s::Error{secret_name + " has no data.caBundle, and spec.insecureSkipTLSVerification is false"};
  e.proxy_url = c.proxy_url;  // an http:// proxy (HTTP CONNECT); the client refuses other kinds by name
  return e;
}

kube::ClusterEndpoint proxy_endpoint(const k8s::KarmadaCluster& c, const kube::ClusterEndpoint& control_plane) {
  kube::ClusterEndpoint e = control_plane;  // its CA, token or client certificate, and TLS settings
  e.name = c.name;
  e.server = cluster_proxy_server(control_plane.server, c.name);
  return e;
}

}  // namespace

std::string not_ready_reason(const k8s::KarmadaCluster& c) {
  if (!c.ready) return "Cluster has no Ready condition yet";
  std::string out = c.ready->status == "False"
                        ? "Cluster NotReady"
                        : "Cluster Ready=" + (c.ready->status.empty() ? std::string("Unknown") : c.ready->status);
  if (!c.ready->reason.empty()) out += " (" + c.ready->reason + ")";
  return out;
}

bool through_proxy(const k8s::KarmadaCluster& cluster, MemberAccess access) {
  return access == MemberAccess::Proxy || cluster.sync_mode == "Pull";
}

namespace {

// The companion Secret the annotation names, when it names one well.
std::optional<k8s::SecretReference> prometheus_secret(const k8s::KarmadaCluster& c) {
  auto found = c.annotations.find(std::string(kPrometheusSecretAnnotation));
  if (found == c.annotations.end()) return std::nullopt;
  const auto slash = found->second.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == found->second.size()) return std::nullopt;
  return k8s::SecretReference{found->second.substr(0, slash), found->second.substr(slash + 1)};
}

// The annotations' Prometheus endpoint: nullopt when the Cluster names none.
std::optional<k8s::Expected<kube::ClusterEndpoint>> prometheus_endpoint(const k8s::KarmadaCluster& c,
                                                                        const SecretLookup& secrets) {
  auto url = c.annotations.find(std::string(kPrometheusUrlAnnotation));
  if (url == c.annotations.end()) return std::nullopt;
  const std::string where = "annotation " + std::string(kPrometheusUrlAnnotation);
  if (url->second.rfind("http://", 0) != 0 && url->second.rfind("https://", 0) != 0)
    return k8s::Error{"\"" + url->second + "\" is not an http:// or https:// URL"}.at(where);
  kube::ClusterEndpoint e;
  e.name = c.name;
  e.server = url->second;
  if (c.annotations.count(std::string(kPrometheusSecretAnnotation))) {
    auto ref = prometheus_secret(c);
    if (!ref) return k8s::Error{"is not NAMESPACE/NAME"}.at("annotation " + std::string(kPrometheusSecretAnnotation));
    const std::string secret_name = "secret " + ref->to_string();
    auto found = secrets.find(*ref);
    if (found == secrets.end()) return k8s::Error{secret_name + " was not read"};
    if (!found->second) return found->second.error().at(secret_name);
    const auto& data = found->second->data;
    if (auto ca = data.find("ca.crt"); ca != data.end()) e.ca_pem = ca->second;
    if (auto token = data.find("token"); token != data.end()) e.token = token->second;
  }
  return e;
}

}  // namespace

std::vector<k8s::SecretReference> secrets_to_read(const ClusterObjects& clusters, MemberAccess access) {
  std::vector<k8s::SecretReference> out;
  auto add = [&](const k8s::SecretReference& ref) {
    if (std::find(out.begin(), out.end(), ref) == out.end()) out.push_back(ref);
  };
  for (const auto& c : clusters) {
    if (!c || !c->is_ready()) continue;
    if (!through_proxy(*c, access) && c->secret_ref) add(*c->secret_ref);
    if (auto ref = prometheus_secret(*c)) add(*ref);
  }
  return out;
}

MemberPlan plan_members(const ClusterObjects& clusters, const SecretLookup& secrets,
                        const kube::ClusterEndpoint& control_plane, MemberAccess access) {
  MemberPlan plan;
  for (const auto& c : clusters) {
    if (!c) {
      plan.unusable.push_back(c.error().message);
      std::string why;
      if (auto name = named_in(c.error().message, &why); !name.empty())
        plan.left_out.push_back({std::move(name), "Cluster cannot be used: " + why});
      continue;
    }
    if (!c->is_ready()) {
      plan.not_ready.emplace(c->name, describe_readiness(*c));
      plan.left_out.push_back({c->name, not_ready_reason(*c)});
      continue;
    }
    // Its Prometheus, when its Cluster names one; one that cannot be used
    // is logged, and the member is asked as if it named none.
    if (auto prometheus = prometheus_endpoint(*c, secrets)) {
      if (*prometheus) plan.prometheus.emplace(c->name, std::move(**prometheus));
      else plan.unusable.push_back(prometheus->error().at("cluster \"" + c->name + "\": Prometheus").message);
    }
    if (through_proxy(*c, access)) {
      plan.members.push_back(proxy_endpoint(*c, control_plane));
      continue;
    }
    auto direct = direct_endpoint(*c, secrets);
    if (direct) {
      plan.members.push_back(std::move(*direct));
    } else {
      plan.unusable.push_back(direct.error().at("cluster \"" + c->name + "\"").message);
      plan.left_out.push_back({c->name, "Cluster cannot be reached: " + direct.error().message});
    }
  }
  return plan;
}

std::string cluster_proxy_server(std::string_view control_plane_server, std::string_view cluster) {
  std::string server(control_plane_server);
  while (!server.empty() && server.back() == '/') server.pop_back();
  auto proxy = kube::ResourcePath::in_group("cluster.karmada.io", "v1alpha1", "clusters", {}, std::string(cluster));
  proxy.subresource = "proxy";
  return server + proxy.target();
}

}  // namespace fedmetrics::clusterclient
