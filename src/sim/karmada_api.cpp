#include "fedmetrics/sim/karmada_api.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/ascii.hpp"
#include "fedmetrics/k8s/base64.hpp"
#include "fedmetrics/k8s/discovery.hpp"
#include "fedmetrics/k8s/karmada_cluster.hpp"
#include "fedmetrics/k8s/label_selector.hpp"
#include "fedmetrics/k8s/status.hpp"
#include "fedmetrics/k8s/url.hpp"
#include "fedmetrics/sim/deployment.hpp"
#include "fedmetrics/sim/event_fields.hpp"
#include "sim/access.hpp"
#include "sim/aggregated_discovery.hpp"
#include "sim/http_util.hpp"
#include "sim/store_rest.hpp"
#include "sim/table_json.hpp"

namespace fedmetrics::sim {

using nlohmann::json;
using transport::HttpRequest;
using transport::HttpResponse;

namespace {

using detail::column;
using detail::openapi_v3;
using detail::parse_object;
using detail::store_response;
using detail::unsupported_media_type;
using detail::header;
using detail::human_duration;
using detail::json_response;
using detail::status_response;
using detail::text_response;
using k8s::ascii_lowercase;
using k8s::GroupResource;
using k8s::Status;
using Respond = std::function<void(HttpResponse)>;

constexpr std::string_view kClusterGroup = "cluster.karmada.io";
constexpr std::string_view kClusterNamespace = "karmada-cluster";
// A template with this label "true" leaves each member's replica count to the
// member (an HPA there scales it); Karmada's replicas syncer keeps the
// template's spec.replicas at the members' sum.
constexpr std::string_view kRetainReplicasLabel = "resourcetemplate.karmada.io/retain-replicas";

// The types a Karmada control plane serves that the metrics path and the
// autoscaler touch (plus what kubectl needs around them).
std::vector<ResourceType> karmada_types() {
  return {
      {"", "v1", "namespaces", "Namespace", false, true, {"ns"}},
      {"", "v1", "secrets", "Secret", true, false, {}},
      {"", "v1", "configmaps", "ConfigMap", true, false, {"cm"}},
      {"", "v1", "services", "Service", true, true, {"svc"}},
      {"", "v1", "events", "Event", true, false, {"ev"}},
      {"", "v1", "pods", "Pod", true, true, {"po"}},
      {"", "v1", "nodes", "Node", false, true, {"no"}},
      {"apps", "v1", "deployments", "Deployment", true, true, {"deploy"}},
      {"cluster.karmada.io", "v1alpha1", "clusters", "Cluster", false, true, {}},
      {"autoscaling.karmada.io", "v1alpha1", "federatedhpas", "FederatedHPA", true, true, {"fhpa"}},
      {"autoscaling.karmada.io", "v1alpha1", "cronfederatedhpas", "CronFederatedHPA", true, true, {"cronfhpa"}},
      {"policy.karmada.io", "v1alpha1", "propagationpolicies", "PropagationPolicy", true, false, {"pp"}},
      {"work.karmada.io", "v1alpha2", "resourcebindings", "ResourceBinding", true, true, {"rb"}},
      {"coordination.k8s.io", "v1", "leases", "Lease", true, false, {}},
      {"events.k8s.io", "v1", "events", "Event", true, false, {"ev"}},
      {"apiregistration.k8s.io", "v1", "apiservices", "APIService", false, true, {}},
      // What deploy/*.yaml creates besides, so that it applies as it would to a real control plane.
      {"", "v1", "serviceaccounts", "ServiceAccount", true, false, {"sa"}},
      {"rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", false, false, {}},
      {"rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", false, false, {}},
      {"rbac.authorization.k8s.io", "v1", "roles", "Role", true, false, {}},
      {"rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", true, false, {}},
      {"policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", true, true, {"pdb"}},
  };
}

// What a request asks for, as apiserver's RequestInfo (requestinfo.go).
struct RequestInfo {
  bool resource_request = false;
  std::string verb;  // get, list, watch, create, update, patch, delete; or the lowercase method
  std::string path;
  std::string group, version, namespace_name, resource, name, subresource;
  std::vector<std::string> rest;  // segments after the subresource (the cluster proxy's path)
};

RequestInfo request_info(const std::string& method, const k8s::RequestTarget& target) {
  RequestInfo info;
  const auto& s = target.segments;
  for (const auto& segment : s) info.path += "/" + segment;
  if (info.path.empty()) info.path = "/";
  info.verb = ascii_lowercase(method);
  std::size_t at = 0;
  if (s.size() >= 3 && s[0] == "api") {
    info.version = s[1];
    at = 2;
  } else if (s.size() >= 4 && s[0] == "apis") {
    info.group = s[1];
    info.version = s[2];
    at = 3;
  } else {
    return info;  // non-resource
  }
  info.resource_request = true;
  std::vector<std::string> parts(s.begin() + static_cast<std::ptrdiff_t>(at), s.end());
  if (parts.size() >= 3 && parts[0] == "namespaces") {
    info.namespace_name = parts[1];
    parts.erase(parts.begin(), parts.begin() + 2);
  } else if (parts[0] == "namespaces" && parts.size() == 2) {
    info.namespace_name = parts[1];  // a namespace is in itself
  }
  info.resource = parts[0];
  if (parts.size() >= 2) info.name = parts[1];
  if (parts.size() >= 3) info.subresource = parts[2];
  if (parts.size() >= 4) info.rest.assign(parts.begin() + 3, parts.end());
  if (method == "GET" || method == "HEAD") info.verb = info.name.empty() ? (k8s::query_bool(target.query, "watch") ? "watch" : "list") : "get";
  else if (method == "POST") info.verb = "create";
  else if (method == "PUT") info.verb = "update";
  else if (method == "PATCH") info.verb = "patch";
  else if (method == "DELETE") info.verb = info.name.empty() ? "deletecollection" : "delete";
  return info;
}

std::optional<detail::UserInfo> authenticate(const World& world, const ObjectStore& store,
                                             const detail::ServiceAccountTokens& tokens, const HttpRequest& request,
                                             k8s::Timestamp now) {
  auto value = header(request, "Authorization");
  auto space = value.find(' ');
  if (space == std::string_view::npos || ascii_lowercase(value.substr(0, space)) != "bearer") return std::nullopt;
  return detail::authenticate_token(world, store, tokens, value.substr(space + 1), now);
}

json sar_spec_for(const detail::UserInfo& user, const RequestInfo& info) {
  json spec{{"user", user.name}, {"groups", user.groups}};
  if (info.resource_request) {
    spec["resourceAttributes"] = {{"namespace", info.namespace_name}, {"verb", info.verb},      {"group", info.group},
                                  {"version", info.version},          {"resource", info.resource}, {"subresource", info.subresource},
                                  {"name", info.name}};
  } else {
    spec["nonResourceAttributes"] = {{"path", info.path}, {"verb", info.verb}};
  }
  return spec;
}

std::string selector_string(const json& label_selector) {
  auto selector = k8s::LabelSelector::from_object(label_selector);
  return selector ? selector->to_string() : std::string();
}

std::string text_of(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "<none>";
  return v.dump();
}

json ready_condition_of(const json& object, std::string_view type) {
  const auto& status = object.value("status", json::object());
  if (!status.is_object()) return json::object();
  for (const auto& c : status.value("conditions", json::array()))
    if (c.is_object() && c.value("type", "") == type) return c;
  return json::object();
}

json ready_condition(const json& object) { return ready_condition_of(object, "Ready"); }

// The columns `kubectl get` shows for each kind: the built-in printers' and,
// for Karmada's CRDs, their additionalPrinterColumns.
json to_table(const json& doc, const ResourceType& type, k8s::Timestamp now) {
  bool list = doc.contains("items");
  json items = list ? doc["items"] : json::array({doc});
  auto age = [&](const json& item) {
    auto created = k8s::parse_time(item["metadata"].value("creationTimestamp", ""));
    return created ? human_duration(now - *created) : std::string("<unknown>");
  };
  std::vector<json> columns{column("Name", "string", 0, "name")};
  std::function<std::vector<json>(const json&)> cells = [](const json&) { return std::vector<json>{}; };
  // The columns after AGE (priority 1: `-o wide`).
  std::vector<json> wide_columns;
  std::function<std::vector<json>(const json&)> wide_cells = cells;
  const std::string& kind = type.kind;
  if (kind == "FederatedHPA") {
    for (auto* c : {"Reference-Kind", "Reference-Name", "MinPods", "MaxPods", "Replicas"}) columns.push_back(column(c, "string", 0));
    cells = [](const json& o) {
      const auto& spec = o.value("spec", json::object());
      const auto& ref = spec.value("scaleTargetRef", json::object());
      return std::vector<json>{text_of(ref.value("kind", json())), text_of(ref.value("name", json())),
                               spec.value("minReplicas", 1), spec.value("maxReplicas", 0),
                               o.value("status", json::object()).value("currentReplicas", 0)};
    };
  } else if (kind == "CronFederatedHPA") {
    // Karmada's CRD printer columns: the target, then AGE.
    for (auto* c : {"Reference-Kind", "Reference-Name"}) columns.push_back(column(c, "string", 0));
    cells = [](const json& o) {
      const auto& ref = o.value("spec", json::object()).value("scaleTargetRef", json::object());
      return std::vector<json>{text_of(ref.value("kind", json())), text_of(ref.value("name", json()))};
    };
  } else if (kind == "Deployment") {
    for (auto& c : deployment_columns()) columns.push_back(std::move(c));
    wide_columns = deployment_wide_columns();
    cells = deployment_cells;
    wide_cells = deployment_wide_cells;
  } else if (kind == "Cluster") {
    for (auto* c : {"Version", "Mode", "Ready"}) columns.push_back(column(c, "string", 0));
    cells = [](const json& o) {
      return std::vector<json>{text_of(o["status"].value("kubernetesVersion", json())),
                               text_of(o["spec"].value("syncMode", json())),
                               text_of(ready_condition(o).value("status", json("Unknown")))};
    };
  } else if (kind == "Lease") {
    columns.push_back(column("Holder", "string", 0));
    cells = [](const json& o) { return std::vector<json>{text_of(o.value("spec", json::object()).value("holderIdentity", json("")))}; };
  } else if (kind == "APIService") {
    for (auto* c : {"Service", "Available"}) columns.push_back(column(c, "string", 0));
    cells = [](const json& o) {
      const auto& svc = o["spec"].value("service", json());
      std::string service = svc.is_object() ? svc.value("namespace", "") + "/" + svc.value("name", "") : "Local";
      auto available = ready_condition_of(o, "Available");
      std::string shown = available.value("status", svc.is_object() ? "Unknown" : "True");
      if (shown == "False") shown += " (" + available.value("reason", "") + ")";
      return std::vector<json>{service, shown};
    };
  } else if (kind == "Secret") {
    for (auto* c : {"Type", "Data"}) columns.push_back(column(c, "string", 0));
    cells = [](const json& o) {
      return std::vector<json>{o.value("type", "Opaque"), o.value("data", json::object()).size()};
    };
  } else if (kind == "Namespace") {
    columns.push_back(column("Status", "string", 0));
    cells = [](const json&) { return std::vector<json>{"Active"}; };
  } else if (kind == "Event") {
    for (auto* c : {"Type", "Reason", "Object", "Message"}) columns.push_back(column(c, "string", 0));
    cells = [](const json& o) {
      const auto& ref = o.contains("regarding") ? o["regarding"] : o.value("involvedObject", json::object());
      return std::vector<json>{o.value("type", ""), o.value("reason", ""),
                               ascii_lowercase(ref.value("kind", "")) + "/" + ref.value("name", ""),
                               o.contains("note") ? o.value("note", "") : o.value("message", "")};
    };
  }
  columns.push_back(column("Age", "string", 0));
  for (auto& c : wide_columns) columns.push_back(std::move(c));
  json rows = json::array();
  for (const auto& item : items) {
    json row_cells = json::array({item["metadata"].value("name", "")});
    for (auto& c : cells(item)) row_cells.push_back(std::move(c));
    row_cells.push_back(age(item));
    for (auto& c : wide_cells(item)) row_cells.push_back(std::move(c));
    rows.push_back({{"cells", row_cells}});
  }
  // The rows' objects and the metadata: detail::complete_table.
  return json{{"kind", "Table"}, {"apiVersion", "meta.k8s.io/v1"}, {"metadata", json::object()}, {"columnDefinitions", columns}, {"rows", rows}};
}

// Where an APIService's Service is reached (kube-aggregator's resolver): an
// ExternalName's name, or a loopback clusterIP; the TLS name is always
// <service>.<namespace>.svc. A string says why it cannot be reached.
std::variant<Upstream, std::string> resolve_apiservice(const ObjectStore& store, const json& apiservice) {
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

}  // namespace

KarmadaApi::KarmadaApi(std::shared_ptr<ObjectStore> store, KarmadaHooks hooks)
    : store_(std::move(store)), hooks_(std::move(hooks)), tokens_(std::make_shared<detail::ServiceAccountTokens>()) {
  for (auto& t : karmada_types()) {
    if (t.kind == "Event") t.selectable_fields = t.group.empty() ? core_event_fields() : events_v1_event_fields();
    store_->register_type(std::move(t));
  }
}

namespace {

json deployment_for(const WorkloadSpec& w, std::int32_t replicas) {
  json labels = json::object();
  for (const auto& [k, v] : w.labels) labels[k] = v;
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata", {{"name", w.name}, {"namespace", w.namespace_name}, {"labels", labels}}},
          {"spec", {{"replicas", replicas}, {"selector", {{"matchLabels", labels}}}, {"template", pod_template(w)}}}};
}

// spec.clusters of a workload's ResourceBinding: where the scheduler put its
// replicas, clusters given none left out (Karmada's removeZeroReplicasCluster).
json binding_clusters(const std::vector<TargetCluster>& placement) {
  json clusters = json::array();
  for (const auto& t : placement)
    if (t.replicas > 0) clusters.push_back({{"name", t.name}, {"replicas", t.replicas}});
  return clusters;
}

json binding_for(const WorkloadSpec& w, std::int32_t replicas, const std::vector<TargetCluster>& placement) {
  return {{"apiVersion", "work.karmada.io/v1alpha2"},
          {"kind", "ResourceBinding"},
          {"metadata", {{"name", k8s::resource_binding_name(w.name, "Deployment")}, {"namespace", w.namespace_name}}},
          {"spec",
           {{"resource", {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"namespace", w.namespace_name}, {"name", w.name}}},
            {"replicas", replicas},
            {"clusters", binding_clusters(placement)}}}};
}

// Keeps every workload's ResourceBinding on its current placement (after a
// scale moved replicas between members), writing only what changed.
void sync_bindings(ObjectStore& store, const Federation& federation) {
  const auto* bindings = store.find_type("work.karmada.io", "v1alpha2", "resourcebindings");
  for (std::size_t w = 0; w < federation.world.workloads.size(); ++w) {
    const auto& spec = federation.world.workloads[w];
    const auto& state = federation.workloads[w];
    auto current = store.get(*bindings, spec.namespace_name, k8s::resource_binding_name(spec.name, "Deployment"));
    auto* object = std::get_if<json>(&current);
    if (object == nullptr) {
      store.create(*bindings, spec.namespace_name, binding_for(spec, state.replicas, state.placement));
      continue;
    }
    auto clusters = binding_clusters(state.placement);
    if ((*object)["spec"].value("clusters", json()) == clusters && (*object)["spec"].value("replicas", -1) == state.replicas)
      continue;
    (*object)["spec"]["clusters"] = std::move(clusters);
    (*object)["spec"]["replicas"] = state.replicas;
    (*object)["metadata"].erase("resourceVersion");
    store.update(*bindings, spec.namespace_name, k8s::resource_binding_name(spec.name, "Deployment"), std::move(*object));
  }
}

}  // namespace

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
    if (spec.apis.custom_v1beta2) apis.push_back({{"groupVersion", "custom.metrics.k8s.io/v1beta2"}, {"resources", json::array()}});
    if (spec.apis.custom_v1beta1) apis.push_back({{"groupVersion", "custom.metrics.k8s.io/v1beta1"}, {"resources", json::array()}});
    if (spec.apis.external) apis.push_back({{"groupVersion", "external.metrics.k8s.io/v1beta1"}, {"resources", json::array()}});
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
    // As deploy/apiservice.yaml: v1beta2 of custom metrics preferred.
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

void KarmadaApi::sync_replicas(const Federation& federation) {
  const auto* deployments = store_->find_type("apps", "v1", "deployments");
  for (std::size_t w = 0; w < federation.world.workloads.size(); ++w) {
    const auto& spec = federation.world.workloads[w];
    auto current = store_->get(*deployments, spec.namespace_name, spec.name);
    auto* object = std::get_if<json>(&current);
    if (object == nullptr || (*object)["spec"].value("replicas", -1) == federation.workloads[w].replicas) continue;
    (*object)["spec"]["replicas"] = federation.workloads[w].replicas;
    (*object)["metadata"].erase("resourceVersion");
    store_->update(*deployments, spec.namespace_name, spec.name, std::move(*object));
  }
  sync_bindings(*store_, federation);
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

void KarmadaApi::set_cluster_ready(const std::string& name, bool ready, const std::string& message) {
  const auto* clusters = store_->find_type(kClusterGroup, "v1alpha1", "clusters");
  auto current = store_->get(*clusters, "", name);
  auto* object = std::get_if<json>(&current);
  if (object == nullptr) return;
  auto condition = ready_condition(*object);
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

namespace {

// A Deployment as read: spec from the store, status from the simulated pods
// of workload `w` (`counts`: Federation::pod_counts_by_workload).
void deployment_as_read(json& d, std::optional<std::size_t> w, const std::vector<PodCounts>& counts) {
  json status = json::object();
  if (w) {
    const auto existing = static_cast<std::int64_t>(counts[*w].existing);
    const auto ready = static_cast<std::int64_t>(counts[*w].serving);
    status = {{"observedGeneration", d["metadata"].value("generation", 1)},
              {"replicas", existing},
              {"updatedReplicas", existing},
              {"readyReplicas", ready},
              {"availableReplicas", ready}};
  }
  d["status"] = status;
}

std::optional<std::size_t> workload_of_object(const json& d, const Federation& federation) {
  return federation.world.workload_index(d["metadata"].value("namespace", ""), d["metadata"].value("name", ""));
}

// An object or list of `type` as read (Deployments get their status). The
// pods are counted once per answer, and a list's items found by name in one
// index: per item, a list of every Deployment would cost Deployments x pods.
void as_read(json& doc, const ResourceType& type, const Federation& federation, k8s::Timestamp now) {
  if (type.resource != "deployments" || type.group != "apps") return;
  const auto counts = federation.pod_counts_by_workload(now);
  if (!doc.contains("items")) return deployment_as_read(doc, workload_of_object(doc, federation), counts);
  std::map<std::pair<std::string_view, std::string_view>, std::size_t> index;  // (namespace, name)
  const auto& workloads = federation.world.workloads;
  for (std::size_t w = 0; w < workloads.size(); ++w)
    index.emplace(std::pair<std::string_view, std::string_view>(workloads[w].namespace_name, workloads[w].name), w);
  for (auto& item : doc["items"]) {
    const auto& meta = item["metadata"];
    auto found = index.find({meta.value("namespace", ""), meta.value("name", "")});
    deployment_as_read(item, found == index.end() ? std::nullopt : std::optional(found->second), counts);
  }
}

// One request's context while it is being answered.
struct Call {
  ObjectStore& store;
  const KarmadaHooks& hooks;
  std::shared_ptr<const Federation> federation;
  const detail::UserInfo& user;
  HttpRequest& request;
  const k8s::RequestTarget& target;
  const RequestInfo& info;
  Respond& respond;

  void reply(HttpResponse r) { respond(std::move(r)); }
  void fail(const Status& s) { respond(status_response(s)); }

  std::optional<std::size_t> workload_of(std::string_view ns, std::string_view name) const {
    return federation->world.workload_index(ns, name);
  }

  // A Deployment as read: spec from the store, status from the simulated pods.
  void overlay_deployment(json& d) const {
    deployment_as_read(d, workload_of_object(d, *federation), federation->pod_counts_by_workload(hooks.clock()));
  }

  // `table`: what the request asked of a Table (table_request).
  HttpResponse answered(StoreResult result, const ResourceType& type, std::optional<k8s::IncludeObject> table,
                        int success = 200) const {
    if (auto* doc = std::get_if<json>(&result)) {
      as_read(*doc, type, *federation, hooks.clock());
      if (table && (info.verb == "get" || info.verb == "list")) {
        json t = to_table(*doc, type, hooks.clock());
        detail::complete_table(t, *doc, *table);
        return json_response(t.dump(), success);
      }
    }
    return store_response(result, success);
  }

  // What a watch's events carry: the objects as read, or their Tables. The
  // function outlives this call, so it holds the hooks it needs, not `this`.
  std::function<json(const json&)> watch_object(const ResourceType& type, std::optional<k8s::IncludeObject> table) const {
    auto read = [type = &type, clock = hooks.clock, federation_of = hooks.federation](json& object) {
      const auto now = clock();
      if (auto federation = federation_of()) as_read(object, *type, *federation, now);
      return now;
    };
    if (table) {
      return detail::watch_tables(
          [read, type = &type](json& object) {
            const auto now = read(object);
            return to_table(object, *type, now);
          },
          *table);
    }
    if (type.resource != "deployments" || type.group != "apps") return {};
    return [read](const json& object) {
      json out = object;
      read(out);
      return out;
    };
  }

  json scale_of(const json& deployment) const {
    json d = deployment;
    overlay_deployment(d);
    const auto& m = d["metadata"];
    return {{"kind", "Scale"},
            {"apiVersion", "autoscaling/v1"},
            {"metadata",
             {{"name", m["name"]}, {"namespace", m["namespace"]}, {"uid", m.value("uid", "")},
              {"resourceVersion", m.value("resourceVersion", "")}, {"creationTimestamp", m.value("creationTimestamp", "")}}},
            {"spec", {{"replicas", d["spec"].value("replicas", 0)}}},
            {"status", {{"replicas", d["status"].value("replicas", 0)}, {"selector", selector_string(d["spec"].value("selector", json::object()))}}}};
  }

  // GET, PUT and PATCH of deployments/{name}/scale (autoscaling/v1 Scale).
  void scale(const ResourceType& type) {
    auto current = store.get(type, info.namespace_name, info.name);
    if (auto* s = std::get_if<Status>(&current)) return fail(*s);
    auto& deployment = std::get<json>(current);
    if (request.method == "GET" || request.method == "HEAD") return reply(json_response(scale_of(deployment).dump()));
    json wanted;
    if (request.method == "PUT") {
      auto body = parse_object(request.body);
      if (!body) return fail(Status::bad_request(body.error().message));
      wanted = std::move(*body);
    } else if (request.method == "PATCH") {
      auto patch_type = patch_type_from_content_type(header(request, "Content-Type"));
      if (!patch_type) return fail(unsupported_media_type());
      auto patch = json::parse(request.body, nullptr, false);
      if (patch.is_discarded()) return fail(Status::bad_request("the patch is not valid JSON"));
      wanted = scale_of(deployment);
      wanted["metadata"].erase("resourceVersion");  // only a resourceVersion the patch sets is a precondition
      try {
        wanted = *patch_type == PatchType::Json ? wanted.patch(patch) : (wanted.merge_patch(patch), wanted);
      } catch (const std::exception& e) {
        return fail(Status::bad_request(std::string("the patch cannot be applied: ") + e.what()));
      }
    } else {
      return fail(Status::method_not_allowed(request.method, {"apps", "deployments/scale"}));
    }
    const auto& replicas = wanted.value("spec", json::object()).value("replicas", json());
    if (!replicas.is_number_integer() || replicas.get<std::int64_t>() < 0 || replicas.get<std::int64_t>() > INT32_MAX)
      return fail(invalid("Scale", info.name, "spec.replicas", "must be greater than or equal to 0"));
    auto name_in_body = wanted.value("metadata", json::object()).value("name", info.name);
    if (name_in_body != info.name)
      return fail(Status::bad_request("the name of the object (" + name_in_body + ") does not match the name on the URL (" +
                                      info.name + ")"));
    json updated = deployment;
    updated["spec"]["replicas"] = replicas;
    auto rv = wanted.value("metadata", json::object()).value("resourceVersion", "");
    updated["metadata"]["resourceVersion"] = rv.empty() ? deployment["metadata"].value("resourceVersion", "") : rv;
    auto result = store.update(type, info.namespace_name, info.name, std::move(updated));
    if (auto* s = std::get_if<Status>(&result)) return fail(*s);
    if (auto w = workload_of(info.namespace_name, info.name)) {
      hooks.set_replicas(*w, replicas.get<std::int32_t>());
      if (auto now = hooks.federation()) sync_bindings(store, *now);  // the scheduler's new placement
    }
    // The answer is the template as it is now: a template that retains its
    // members' replicas is back at their sum already (the syncer ran above),
    // and the answer says so rather than the count that did not take effect.
    auto now = store.get(type, info.namespace_name, info.name);
    reply(json_response(scale_of(std::get<json>(std::holds_alternative<json>(now) ? now : result)).dump()));
  }

  static Status invalid(std::string_view kind, std::string_view name, std::string_view field, std::string_view why) {
    Status s;
    s.code = 422;
    s.reason = "Invalid";
    s.message = std::string(kind) + " \"" + std::string(name) + "\" is invalid: " + std::string(field) + ": Invalid value: " + why.data();
    s.details.name = std::string(name);
    s.details.kind = ascii_lowercase(kind);
    return s;
  }

  void resource() {
    const auto* type = store.find_type(info.group, info.version, info.resource);
    if (type == nullptr) return fail(Status::not_found_resource());
    if (!type->namespaced && !info.namespace_name.empty() && info.resource != "namespaces")
      return fail(Status::not_found_resource());
    if (!info.rest.empty()) return fail(Status::not_found_resource());
    if (info.subresource == "scale" && type->group == "apps" && type->resource == "deployments") return scale(*type);
    detail::StoredServing serving;
    serving.schedule = hooks.schedule;
    serving.namespace_exists = [this](const std::string& ns) { return namespace_exists(ns); };
    auto table = detail::table_request(request, target);
    if (!table) return fail(Status::bad_request(table.error().message));
    serving.answer = [this, type, table = *table](StoreResult result, int success) {
      return answered(std::move(result), *type, table, success);
    };
    if (info.verb == "watch") serving.watch_object = watch_object(*type, *table);
    serving.after_update = [this, type](const StoreResult& result) { after_deployment_change(*type, result); };
    detail::serve_stored(store, *type, {info.namespace_name, info.name, info.subresource}, request, target, serving, respond);
  }

  bool namespace_exists(const std::string& ns) const {
    const auto* namespaces = store.find_type("", "v1", "namespaces");
    return std::holds_alternative<json>(store.get(*namespaces, "", ns));
  }

  // A Deployment edited directly (kubectl edit/patch of spec.replicas) moves the simulated pods too.
  void after_deployment_change(const ResourceType& type, const StoreResult& result) const {
    if (type.resource != "deployments" || type.group != "apps" || !info.subresource.empty()) return;
    const auto* d = std::get_if<json>(&result);
    if (d == nullptr) return;
    auto w = workload_of(info.namespace_name, info.name);
    if (!w) return;
    // Karmada's retain label is read before the count: with it, the members keep theirs.
    const auto& labels = d->value("metadata", json::object()).value("labels", json::object());
    if (hooks.set_retain_replicas) hooks.set_retain_replicas(*w, labels.value(std::string(kRetainReplicasLabel), "") == "true");
    if ((*d)["spec"]["replicas"].is_number_integer()) hooks.set_replicas(*w, (*d)["spec"]["replicas"].get<std::int32_t>());
  }

  // /apis/cluster.karmada.io/v1alpha1/clusters/{name}/proxy/{path}: to the member, with its Secret's token.
  void cluster_proxy() {
    const auto* clusters = store.find_type(kClusterGroup, "v1alpha1", "clusters");
    auto cluster = store.get(*clusters, "", info.name);
    if (auto* s = std::get_if<Status>(&cluster)) return fail(*s);
    const auto& c = std::get<json>(cluster);
    const auto& spec = c.value("spec", json::object());
    Upstream up;
    up.server = spec.value("apiEndpoint", "");
    up.insecure = spec.value("insecureSkipTLSVerification", false);
    const auto& ref = spec.value("secretRef", json::object());
    auto secret = store.get(*store.find_type("", "v1", "secrets"), ref.value("namespace", ""), ref.value("name", ""));
    if (auto* s = std::get_if<Status>(&secret))
      return fail(Status::internal_error("cluster " + info.name + ": its secretRef: " + s->message));
    const auto& data = std::get<json>(secret).value("data", json::object());
    up.token = k8s::base64_decode(data.value("token", "")).value_or("");
    up.ca_pem = k8s::base64_decode(data.value("caBundle", "")).value_or("");
    // The raw remainder of the path after .../proxy, escapes kept, and the query.
    std::string prefix = "/apis/cluster.karmada.io/v1alpha1/clusters/" + info.name + "/proxy";
    std::string raw = request.target;
    std::string rest = raw.size() > prefix.size() && raw.starts_with(prefix) ? raw.substr(prefix.size()) : "/";
    if (rest.empty() || rest[0] == '?') rest = "/" + rest;
    HttpRequest out = request;
    out.target = rest;
    std::erase_if(out.headers, [](const auto& h) {
      auto n = ascii_lowercase(h.first);
      return n == "authorization" || n.starts_with("impersonate-") || n == "host" || n == "content-length";
    });
    hooks.forward(up, std::move(out), std::move(respond));
  }

  // The aggregation layer (kube-aggregator handler_proxy.go) for a group-version an APIService names.
  bool aggregated() {
    if (target.segments.size() < 3 || target.segments[0] != "apis") return false;
    const auto* apiservices = store.find_type("apiregistration.k8s.io", "v1", "apiservices");
    auto found = store.get(*apiservices, "", target.segments[2] + "." + target.segments[1]);
    auto* apiservice = std::get_if<json>(&found);
    if (apiservice == nullptr || !apiservice->value("spec", json::object()).value("service", json()).is_object())
      return false;  // not registered, or served locally
    // While the availability check has not passed, kube-aggregator answers plain text 503.
    if (ready_condition_of(*apiservice, "Available").value("status", "") != "True") {
      reply(HttpResponse{503, "text/plain; charset=utf-8", "service unavailable\n", {}});
      return true;
    }
    auto resolved = resolve_apiservice(store, *apiservice);
    if (auto* why = std::get_if<std::string>(&resolved)) {
      fail(Status::service_unavailable(*why));
      return true;
    }
    Upstream up = std::get<Upstream>(resolved);
    HttpRequest out = request;
    std::erase_if(out.headers, [](const auto& h) {
      auto n = ascii_lowercase(h.first);
      return n == "authorization" || n.starts_with("impersonate-") || n.starts_with("x-remote-") || n == "host" ||
             n == "content-length";
    });
    out.headers.emplace_back("X-Remote-User", user.name);
    for (const auto& g : user.groups) out.headers.emplace_back("X-Remote-Group", g);
    out.peer_certificates_pem.clear();
    hooks.forward(up, std::move(out), std::move(respond));
    return true;
  }
};

}  // namespace

void KarmadaApi::handle(HttpRequest request, Respond respond) {
  // Bodies and stored objects are client input: a field of an unexpected
  // type is the client's error (400), never the simulator's end.
  auto responded = std::make_shared<std::atomic<bool>>(false);
  Respond once = [respond = std::move(respond), responded](HttpResponse r) {
    if (!responded->exchange(true)) respond(std::move(r));
  };
  try {
    handle_unguarded(std::move(request), once);
  } catch (const nlohmann::json::exception& e) {
    once(status_response(Status::bad_request(std::string("the request could not be handled: ") + e.what())));
  }
}

void KarmadaApi::handle_unguarded(HttpRequest request, Respond respond) {
  auto decoded = k8s::parse_request_target(request.target);
  if (!decoded) return respond(status_response(Status::bad_request("invalid URL escape in the request path")));
  const auto& target = *decoded;
  const auto& s = target.segments;
  if (s.size() == 1 && (s[0] == "healthz" || s[0] == "livez" || s[0] == "readyz")) return respond(text_response("ok"));
  auto federation = hooks_.federation();
  const auto now = hooks_.clock();
  const auto user = authenticate(federation->world, *store_, *tokens_, request, now);
  if (!user) return respond(status_response(Status::unauthorized()));
  auto info = request_info(request.method, target);
  // Discovery is open to every authenticated user (RBAC's system:discovery).
  bool discovery = !info.resource_request &&
                   (s.empty() || s[0] == "api" || s[0] == "apis" || s[0] == "version" || s[0] == "openapi");
  // Asking about oneself is open to every authenticated user (RBAC's system:basic-user).
  const bool self_review = request.method == "POST" && info.name.empty() &&
                           ((info.group == "authorization.k8s.io" && info.resource == "selfsubjectaccessreviews") ||
                            (info.group == "authentication.k8s.io" && info.resource == "selfsubjectreviews"));
  if (!discovery && !self_review) {
    auto decision = detail::authorize_user(*store_, *user, sar_spec_for(*user, info));
    if (!decision.allowed) {
      if (info.resource_request)
        return respond(status_response(Status::forbidden(user->name, info.verb, {info.group, info.resource}, info.subresource,
                                                         info.namespace_name, info.name, decision.reason)));
      return respond(status_response(Status::forbidden_path(user->name, info.verb, info.path)));
    }
  }
  Call call{*store_, hooks_, federation, *user, request, target, info, respond};
  if (call.aggregated()) return;
  if (s.empty()) {
    json paths = json::array({"/api", "/api/v1", "/apis", "/healthz", "/livez", "/readyz", "/version"});
    return respond(json_response(json{{"paths", paths}}.dump()));
  }
  if (s[0] == "version" && s.size() == 1)
    return respond(json_response(json{{"major", "1"},
                                      {"minor", "31"},
                                      {"gitVersion", "v1.31.0-karmada-sim"},
                                      {"platform", "linux/amd64"}}
                                     .dump()));
  const bool aggregated_discovery = s.size() == 1 && (s[0] == "api" || s[0] == "apis") &&
                                    detail::wants_aggregated_discovery(header(request, "Accept"));
  if (s[0] == "api" && s.size() == 1 && !aggregated_discovery)
    return respond(json_response(json{{"kind", "APIVersions"},
                                      {"versions", {"v1"}},
                                      {"serverAddressByClientCIDRs", {{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", "127.0.0.1"}}}}}
                                     .dump()));
  auto types = store_->types();
  // Discovery: groups in registration order, then the aggregated ones.
  auto resource_list = [&](const std::string& group, const std::string& version) {
    k8s::APIResourceList list{group.empty() ? version : group + "/" + version, {}};
    json extra = json::array();
    for (const auto& t : types) {
      if (t.group != group || t.version != version) continue;
      list.resources.push_back({t.resource, "", t.namespaced, t.kind, t.verbs});
    }
    auto doc = k8s::to_json(list);
    for (auto& r : doc["resources"]) {
      for (const auto& t : types)
        if (t.group == group && t.version == version && t.resource == r["name"] && !t.short_names.empty())
          r["shortNames"] = t.short_names;
    }
    for (const auto& t : types) {
      if (t.group != group || t.version != version) continue;
      if (t.status_subresource)
        doc["resources"].push_back({{"name", t.resource + "/status"}, {"singularName", ""}, {"namespaced", t.namespaced},
                                    {"kind", t.kind}, {"verbs", {"get", "patch", "update"}}});
      if (t.group == "apps" && t.resource == "deployments")
        doc["resources"].push_back({{"name", "deployments/scale"}, {"singularName", ""}, {"namespaced", true},
                                    {"group", "autoscaling"}, {"version", "v1"}, {"kind", "Scale"},
                                    {"verbs", {"get", "patch", "update"}}});
    }
    // The create-only kinds (kube-apiserver's discovery of them), and TokenRequest as serviceaccounts/token.
    auto create_only = [&](const char* name, const char* kind) {
      doc["resources"].push_back(
          {{"name", name}, {"singularName", ""}, {"namespaced", false}, {"kind", kind}, {"verbs", {"create"}}});
    };
    if (group == "authentication.k8s.io") {
      create_only("selfsubjectreviews", "SelfSubjectReview");
      create_only("tokenreviews", "TokenReview");
    }
    if (group == "authorization.k8s.io") {
      create_only("selfsubjectaccessreviews", "SelfSubjectAccessReview");
      create_only("subjectaccessreviews", "SubjectAccessReview");
    }
    if (group.empty())
      doc["resources"].push_back({{"name", "serviceaccounts/token"}, {"singularName", ""}, {"namespaced", true},
                                  {"group", "authentication.k8s.io"}, {"version", "v1"}, {"kind", "TokenRequest"},
                                  {"verbs", {"create"}}});
    return doc;
  };
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  std::set<std::string> remote;
  auto add_group = [&](const std::string& group, const std::string& version) {
    for (auto& [g, versions] : groups)
      if (g == group) {
        if (std::find(versions.begin(), versions.end(), group + "/" + version) == versions.end())
          versions.push_back(group + "/" + version);
        return;
      }
    groups.push_back({group, {group + "/" + version}});
  };
  for (const auto& t : types)
    if (!t.group.empty()) add_group(t.group, t.version);
  add_group("authentication.k8s.io", "v1");
  add_group("authorization.k8s.io", "v1");
  {
    // APIServices that point at a Service, ordered by versionPriority (higher first).
    // Their group-versions (`remote`) are served by another server.
    const auto* apiservices = store_->find_type("apiregistration.k8s.io", "v1", "apiservices");
    auto list = store_->list(*apiservices, "", {}, {});
    if (auto* doc = std::get_if<json>(&list)) {
      std::vector<json> items((*doc)["items"].begin(), (*doc)["items"].end());
      std::stable_sort(items.begin(), items.end(), [](const json& a, const json& b) {
        return a["spec"].value("versionPriority", 0) > b["spec"].value("versionPriority", 0);
      });
      for (const auto& a : items)
        if (a["spec"].value("service", json()).is_object()) {
          add_group(a["spec"].value("group", ""), a["spec"].value("version", ""));
          remote.insert(a["spec"].value("group", "") + "/" + a["spec"].value("version", ""));
        }
    }
  }
  if (aggregated_discovery) {
    // kube-aggregator's discovery manager: an aggregated group-version as its
    // server last described it, Stale while it could not be asked.
    std::vector<std::pair<std::string, std::vector<json>>> out;
    if (s[0] == "api") out.push_back({"", {detail::version_discovery(resource_list("", "v1"), "v1", true)}});
    for (const auto& [g, versions] : groups) {
      if (s[0] == "api") break;
      std::vector<json> listed;
      for (const auto& gv : versions) {
        const std::string version = gv.substr(g.size() + 1);
        if (!remote.contains(gv)) {
          listed.push_back(detail::version_discovery(resource_list(g, version), version, true));
          continue;
        }
        auto served = discovered(version + "." + g);
        listed.push_back(detail::version_discovery(served.value_or(json::object()), version, served.has_value()));
      }
      out.push_back({g, std::move(listed)});
    }
    return respond(detail::aggregated_discovery(out));
  }
  if (s[0] == "api" && s.size() == 2 && s[1] == "v1") return respond(json_response(resource_list("", "v1").dump()));
  if (s[0] == "openapi") return respond(openapi_v3(s, types, groups));
  if (s[0] == "apis" && s.size() == 1) {
    std::vector<k8s::APIGroup> out;
    for (const auto& [g, versions] : groups) out.push_back(k8s::make_api_group(g, versions));
    return respond(json_response(k8s::api_group_list_to_json(out).dump()));
  }
  if (s[0] == "apis" && s.size() == 2) {
    for (const auto& [g, versions] : groups)
      if (g == s[1]) return respond(json_response(k8s::to_json(k8s::make_api_group(g, versions)).dump()));
    return respond(status_response(Status::not_found_resource()));
  }
  if (s[0] == "apis" && s.size() == 3) {
    bool known = std::any_of(groups.begin(), groups.end(), [&](const auto& g) {
      return g.first == s[1] && std::find(g.second.begin(), g.second.end(), s[1] + "/" + s[2]) != g.second.end();
    });
    if (!known) return respond(status_response(Status::not_found_resource()));
    return respond(json_response(resource_list(s[1], s[2]).dump()));
  }
  if (info.resource_request) {
    const auto& world = federation->world;
    const bool post = request.method == "POST";
    if (post && info.group == "authentication.k8s.io" && info.resource == "tokenreviews" && info.name.empty())
      return respond(detail::token_review(world, *store_, *tokens_, request.body, now));
    if (post && info.group == "authorization.k8s.io" && info.resource == "subjectaccessreviews" && info.name.empty())
      return respond(detail::subject_access_review(world, *store_, request.body));
    if (self_review && info.resource == "selfsubjectaccessreviews")
      return respond(detail::self_subject_access_review(*store_, *user, request.body));
    if (self_review) return respond(detail::self_subject_review(*user, now));
    if (info.group.empty() && info.resource == "serviceaccounts" && info.subresource == "token" && !info.name.empty() &&
        info.rest.empty()) {
      if (!post) return respond(status_response(Status::method_not_allowed(info.verb, {"", "serviceaccounts/token"})));
      return respond(detail::token_request(*store_, *tokens_, info.namespace_name, info.name, request.body, now));
    }
    if (info.group == kClusterGroup && info.resource == "clusters" && info.subresource == "proxy" && !info.name.empty())
      return call.cluster_proxy();
    if ((s[0] == "api" && info.version == "v1") || s[0] == "apis") return call.resource();
  }
  respond(status_response(Status::not_found_resource()));
}

}  // namespace fedmetrics::sim
