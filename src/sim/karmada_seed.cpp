// The objects a fresh Karmada control plane with the world's members has.
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "fedmetrics/k8s/base64.hpp"
#include "sim/karmada_call.hpp"

namespace fedmetrics::sim {

using detail::deployment_for;
using detail::kClusterGroup;
using detail::kClusterNamespace;
using detail::sync_bindings;
using nlohmann::json;

void KarmadaApi::seed(const Federation& federation, const std::vector<ClusterRegistration>& clusters,
                      const AuthenticationTrust& trust, const std::string& aggregation_ca_pem) {
  const auto& world = federation.world;
  auto type = [this](std::string_view group, std::string_view resource) {
    return *store_->find_type(group, group.empty() ? "v1" : (group == kClusterGroup ? "v1alpha1" : "v1"), resource);
  };
  std::set<std::string> namespaces(world.namespaces.begin(), world.namespaces.end());
  namespaces.insert({"default", "kube-system", "kube-public", "karmada-system", std::string(kClusterNamespace)});
  for (const auto& ns : namespaces)
    store_->create(type("", "namespaces"), "", {{"metadata", {{"name", ns}}}, {"status", {{"phase", "Active"}}}});
  auto now = k8s::format_time(hooks_.clock());
  for (std::size_t i = 0; i < clusters.size(); ++i) {
    const auto& c = clusters[i];
    const auto& spec = world.members[i];
    store_->create(type("", "secrets"), kClusterNamespace,
                   {{"metadata", {{"name", c.name}}},
                    {"type", "Opaque"},
                    {"data", {{"token", k8s::base64_encode(c.token)}, {"caBundle", k8s::base64_encode(c.ca_pem)}}}});
    json apis = json::array();
    if (spec.apis.metrics) apis.push_back({{"groupVersion", "metrics.k8s.io/v1beta1"}, {"resources", json::array()}});
    if (spec.apis.custom_v1beta2)
      apis.push_back({{"groupVersion", "custom.metrics.k8s.io/v1beta2"}, {"resources", json::array()}});
    if (spec.apis.custom_v1beta1)
      apis.push_back({{"groupVersion", "custom.metrics.k8s.io/v1beta1"}, {"resources", json::array()}});
    if (spec.apis.external)
      apis.push_back({{"groupVersion", "external.metrics.k8s.io/v1beta1"}, {"resources", json::array()}});
    store_->create(type(kClusterGroup, "clusters"), "",
                   {{"metadata", {{"name", c.name}}},
                    {"spec",
                     {{"apiEndpoint", c.api_endpoint},
                      {"syncMode", "Push"},
                      {"secretRef", {{"namespace", kClusterNamespace}, {"name", c.name}}},
                      {"insecureSkipTLSVerification", false}}},
                    {"status",
                     {{"kubernetesVersion", spec.kubernetes_version},
                      {"apiEnablements", apis},
                      {"conditions",
                       {{{"type", "Ready"},
                         {"status", "True"},
                         {"reason", "ClusterReady"},
                         {"message", "cluster is healthy and ready to accept workloads"},
                         {"lastTransitionTime", now}}}}}}});
  }
  for (std::size_t w = 0; w < world.workloads.size(); ++w)
    store_->create(type("apps", "deployments"), world.workloads[w].namespace_name,
                   deployment_for(world.workloads[w], federation.workloads[w].replicas));
  sync_bindings(*store_, federation);  // one ResourceBinding per Deployment, as Karmada's detector makes
  detail::seed_bootstrap_roles(*store_);
  if (const auto& a = world.aggregation) {
    store_->create(type("", "namespaces"), "", {{"metadata", {{"name", a->service_namespace}}}});
    store_->create(type("", "services"), a->service_namespace,
                   {{"metadata", {{"name", a->service_name}}},
                    {"spec", {{"type", "ExternalName"}, {"externalName", a->address}}}});
    // As deploy/base/apiservice.yaml: v1beta2 of custom metrics preferred.
    for (const auto& [group, version, priority] :
         std::vector<std::tuple<std::string, std::string, int>>{{"metrics.k8s.io", "v1beta1", 100},
                                                                {"custom.metrics.k8s.io", "v1beta2", 200},
                                                                {"custom.metrics.k8s.io", "v1beta1", 100},
                                                                {"external.metrics.k8s.io", "v1beta1", 100}}) {
      json spec = {{"group", group},
                   {"version", version},
                   {"service", {{"namespace", a->service_namespace}, {"name", a->service_name}, {"port", a->port}}},
                   {"groupPriorityMinimum", 100},
                   {"versionPriority", priority}};
      if (a->insecure_skip_tls_verify) spec["insecureSkipTLSVerify"] = true;
      else spec["caBundle"] = k8s::base64_encode(aggregation_ca_pem);
      store_->create(*store_->find_type("apiregistration.k8s.io", "v1", "apiservices"), "",
                     {{"metadata", {{"name", version + "." + group}}}, {"spec", spec}});
    }
  }
  auto strings = [](const std::vector<std::string>& v) { return json(v).dump(); };
  store_->create(type("", "configmaps"), "kube-system",
                 {{"metadata", {{"name", "extension-apiserver-authentication"}}},
                  {"data",
                   {{"client-ca-file", trust.client_ca_pem},
                    {"requestheader-client-ca-file", trust.requestheader_client_ca_pem},
                    {"requestheader-allowed-names", strings(trust.requestheader_allowed_names)},
                    {"requestheader-username-headers", strings({"X-Remote-User"})},
                    {"requestheader-uid-headers", strings({"X-Remote-Uid"})},
                    {"requestheader-group-headers", strings({"X-Remote-Group"})},
                    {"requestheader-extra-headers-prefix", strings({"X-Remote-Extra-"})}}}});
}

}  // namespace fedmetrics::sim
