#include "fedmetrics/sim/member_api.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/ascii.hpp"
#include "fedmetrics/k8s/discovery.hpp"
#include "fedmetrics/sim/deployment.hpp"
#include "fedmetrics/sim/member_hpa_type.hpp"
#include "fedmetrics/k8s/field_selector.hpp"
#include "fedmetrics/k8s/label_selector.hpp"
#include "fedmetrics/k8s/metrics_types.hpp"
#include "fedmetrics/k8s/status.hpp"
#include "fedmetrics/k8s/url.hpp"
#include "fedmetrics/transport/gzip.hpp"
#include "sim/http_util.hpp"
#include "sim/table_json.hpp"

namespace fedmetrics::sim {

using nlohmann::json;
using transport::HttpRequest;
using transport::HttpResponse;
using namespace std::chrono_literals;

namespace {

using detail::json_response;
using detail::status_response;
using detail::text_response;
using detail::column;
using detail::human_duration;
using k8s::GroupResource;
using k8s::Status;

constexpr std::string_view kMetricsGroup = "metrics.k8s.io";
constexpr std::string_view kCustomGroup = "custom.metrics.k8s.io";
constexpr std::string_view kExternalGroup = "external.metrics.k8s.io";
// metrics-server's scrape resolution: the window of every resource metric.
constexpr auto kResourceWindow = 15s;
// prometheus-adapter's rate window: the window of every custom and external metric, seconds.
constexpr std::int64_t kCustomWindowSeconds = 60;

json resource_list_json(const k8s::ResourceList& list) {
  json out = json::object();
  for (const auto& [k, v] : list) out[k] = v.to_string();
  return out;
}

json labels_json(const k8s::Labels& labels) {
  json out = json::object();
  for (const auto& [k, v] : labels) out[k] = v;
  return out;
}

std::string verb_for(std::string_view method) {
  if (method == "POST") return "create";
  if (method == "PUT") return "update";
  if (method == "PATCH") return "patch";
  if (method == "DELETE") return "delete";
  return std::string(method);
}

// The resource a path names, for 405 messages: the segment after the
// (optional) namespaces/{ns} prefix of /api/v1/... or /apis/{g}/{v}/....
GroupResource resource_of(const std::vector<std::string>& s) {
  GroupResource gr;
  std::size_t i = 0;
  if (!s.empty() && s[0] == "api") i = 2;
  else if (s.size() >= 3 && s[0] == "apis") { gr.group = s[1]; i = 3; }
  if (i + 2 < s.size() && s[i] == "namespaces") i += 2;
  if (i < s.size()) gr.resource = s[i];
  return gr;
}

class Responder {
 public:
  Responder(const Federation& f, std::size_t member, const k8s::RequestTarget& target, k8s::Timestamp now)
      : f_(f), m_(member), spec_(f.world.members[member]), state_(f.members[member]), t_(target), now_(now) {}

  HttpResponse route() const {
    const auto& s = t_.segments;
    if (s.empty()) return not_found();
    if (s[0] == "version" && s.size() == 1) return version();
    if (s[0] == "api") return core();
    if (s[0] == "apis") return apis();
    return not_found();
  }

 private:
  // ---- helpers ----
  static HttpResponse not_found() { return status_response(Status::not_found_resource()); }
  [[nodiscard]] std::string rv() const { return std::to_string(f_.resource_version); }

  [[nodiscard]] k8s::Labels pod_labels(const SimPod& p) const {
    k8s::Labels labels = f_.world.workloads[p.workload].labels;
    labels["pod-template-hash"] = p.template_hash;
    return labels;
  }

  bool namespace_exists(std::string_view ns) const {
    return std::find(f_.world.namespaces.begin(), f_.world.namespaces.end(), ns) != f_.world.namespaces.end();
  }

  // Parses labelSelector and fieldSelector; an error response when malformed.
  // `core_fields`: the selectable fields of a core resource (kube-apiserver's
  // field label conversions); without, metrics-server's metadata.* only.
  std::optional<HttpResponse> selectors(k8s::LabelSelector& labels, k8s::FieldSelector& fields,
                                        const std::vector<std::string_view>* core_fields = nullptr) const {
    auto l = k8s::LabelSelector::parse(k8s::query_value(t_.query, "labelSelector"));
    if (!l) return status_response(Status::bad_request(l.error().message));
    labels = std::move(*l);
    auto text = k8s::query_value(t_.query, "fieldSelector");
    auto fs = core_fields != nullptr ? k8s::FieldSelector::parse_for(text, *core_fields) : k8s::FieldSelector::parse(text);
    if (!fs) return status_response(Status::bad_request(fs.error().message));
    fields = std::move(*fs);
    return std::nullopt;
  }

  // The member's existing pods, optionally in one namespace, sorted by namespace then name.
  std::vector<const SimPod*> pods(std::string_view ns) const {
    std::vector<const SimPod*> out;
    for (const auto& p : state_.pods) {
      if (!f_.exists(p, now_)) continue;
      if (!ns.empty() && f_.world.workloads[p.workload].namespace_name != ns) continue;
      out.push_back(&p);
    }
    std::sort(out.begin(), out.end(), [&](const SimPod* a, const SimPod* b) {
      const auto& na = f_.world.workloads[a->workload].namespace_name;
      const auto& nb = f_.world.workloads[b->workload].namespace_name;
      return na != nb ? na < nb : a->name < b->name;
    });
    return out;
  }

  const SimPod* find_pod(std::string_view ns, std::string_view name) const {
    for (const auto* p : pods(ns))
      if (p->name == name) return p;
    return nullptr;
  }

  const NodeSpec* find_node(std::string_view name) const {
    for (const auto& n : spec_.nodes)
      if (n.name == name) return &n;
    return nullptr;
  }

  std::string node_ip(std::string_view node) const {
    std::size_t i = 0;
    for (; i < spec_.nodes.size(); ++i)
      if (spec_.nodes[i].name == node) break;
    return "172.18." + std::to_string(m_ + 1) + "." + std::to_string(i + 2);
  }

  // ---- core v1 ----
  HttpResponse version() const {
    const auto& v = spec_.kubernetes_version;  // "v1.31.0"
    auto dot1 = v.find('.');
    auto dot2 = v.find('.', dot1 == std::string::npos ? v.size() : dot1 + 1);
    std::string major = v.substr(1, dot1 == std::string::npos ? std::string::npos : dot1 - 1);
    std::string minor = dot1 == std::string::npos ? "0" : v.substr(dot1 + 1, dot2 == std::string::npos ? std::string::npos : dot2 - dot1 - 1);
    json out{{"major", major},       {"minor", minor},          {"gitVersion", v},
             {"gitCommit", "fedmetrics-sim"}, {"gitTreeState", "clean"}, {"buildDate", "2026-01-01T00:00:00Z"},
             {"goVersion", "go1.23.0"}, {"compiler", "gc"},      {"platform", "linux/amd64"}};
    return json_response(out.dump());
  }

  HttpResponse core() const {
    const auto& s = t_.segments;
    if (s.size() == 1) return json_response(json{{"kind", "APIVersions"}, {"versions", {"v1"}}}.dump());
    if (s[1] != "v1") return not_found();
    if (s.size() == 2) {
      k8s::APIResourceList list{"v1",
                                {{"namespaces", "namespace", false, "Namespace", {"get", "list"}},
                                 {"nodes", "node", false, "Node", {"get", "list"}},
                                 {"pods", "pod", true, "Pod", {"get", "list"}}}};
      auto doc = k8s::to_json(list);
      // kubectl resolves "po", "no" and "ns" through discovery.
      for (auto& r : doc["resources"]) r["shortNames"] = json::array({r["name"] == "namespaces" ? "ns" : r["name"] == "nodes" ? "no" : "po"});
      return json_response(doc.dump());
    }
    if (s[2] == "pods" && s.size() == 3) return pod_list("");
    if (s[2] == "nodes" && s.size() == 3) return node_list();
    if (s[2] == "nodes" && s.size() == 4) {
      const auto* n = find_node(s[3]);
      if (n == nullptr) return status_response(Status::not_found({"", "nodes"}, s[3]));
      return json_response(node_json(*n, false).dump());
    }
    if (s[2] == "namespaces") {
      if (s.size() == 3) return namespace_list();
      if (!namespace_exists(s[3]) && s.size() == 4) return status_response(Status::not_found({"", "namespaces"}, s[3]));
      if (s.size() == 4) return json_response(namespace_json(s[3], false).dump());
      if (s[4] == "pods" && s.size() == 5) return pod_list(s[3]);
      if (s[4] == "pods" && s.size() == 6) {
        const auto* p = find_pod(s[3], s[5]);
        if (p == nullptr) return status_response(Status::not_found({"", "pods"}, s[5]));
        return json_response(pod_json(*p, false).dump());
      }
    }
    return not_found();
  }

  json pod_json(const SimPod& p, bool item) const {
    const auto& w = f_.world.workloads[p.workload];
    bool ready = f_.ready(p, now_);
    bool running = f_.running(p, now_);
    auto started = k8s::format_time(f_.started_at(p));
    auto ready_time = ready ? f_.ready_since(p) : p.created;
    auto created = k8s::format_time(p.created);
    std::string rs = w.name + "-" + p.template_hash;
    json meta{{"name", p.name},
              {"generateName", rs + "-"},
              {"namespace", w.namespace_name},
              {"uid", p.uid},
              {"resourceVersion", rv()},
              {"creationTimestamp", created},
              {"labels", labels_json(pod_labels(p))},
              {"ownerReferences",
               json::array({{{"apiVersion", "apps/v1"},
                             {"kind", "ReplicaSet"},
                             {"name", rs},
                             {"uid", object_uid(spec_.name + "/" + w.namespace_name + "/" + rs)},
                             {"controller", true},
                             {"blockOwnerDeletion", true}}})}};
    if (p.deleted) {
      // apiserver sets deletionTimestamp to when the grace period ends.
      meta["deletionTimestamp"] = k8s::format_time(*p.deleted + w.termination_grace);
      meta["deletionGracePeriodSeconds"] = w.termination_grace.count();
    }
    json containers = json::array();
    json statuses = json::array();
    bool any_resources = false, guaranteed = true;
    for (const auto& c : w.containers) {
      json resources = json::object();
      if (!c.requests.empty()) resources["requests"] = resource_list_json(c.requests);
      if (!c.limits.empty()) resources["limits"] = resource_list_json(c.limits);
      any_resources = any_resources || !c.requests.empty() || !c.limits.empty();
      for (const char* r : {"cpu", "memory"}) {
        auto l = c.limits.find(r);
        auto q = c.requests.find(r);
        if (l == c.limits.end() || (q != c.requests.end() && q->second != l->second)) guaranteed = false;
      }
      containers.push_back({{"name", c.name},
                            {"image", c.image},
                            {"imagePullPolicy", "IfNotPresent"},
                            {"resources", resources},
                            {"terminationMessagePath", "/dev/termination-log"},
                            {"terminationMessagePolicy", "File"}});
      statuses.push_back({{"name", c.name},
                          {"image", c.image},
                          {"imageID", "docker.io/library/" + c.image + "@sha256:" + std::string(64, '0')},
                          {"containerID", "containerd://" + p.uid},
                          {"ready", ready},
                          {"started", running},
                          {"restartCount", 0},
                          {"state", running ? json{{"running", {{"startedAt", started}}}}
                                            : json{{"waiting", {{"reason", "ContainerCreating"}}}}}});
    }
    auto condition = [&](const char* type, bool status, k8s::Timestamp at) {
      return json{{"type", type},
                  {"status", status ? "True" : "False"},
                  {"lastProbeTime", nullptr},
                  {"lastTransitionTime", k8s::format_time(at)}};
    };
    json conditions = json::array({condition("Initialized", true, p.created), condition("Ready", ready, ready_time),
                                   condition("ContainersReady", ready, ready_time),
                                   condition("PodScheduled", true, p.created)});
    if (!ready) {
      conditions[1]["reason"] = conditions[2]["reason"] = "ContainersNotReady";
      conditions[1]["message"] = conditions[2]["message"] = "containers with unready status";
    }
    std::string pod_ip = "10.244." + std::to_string(m_ + 1) + "." + std::to_string(2 + (p.uid[0] % 16) * 16 + (p.uid[1] % 16));
    json out = json::object();
    if (!item) {
      out["kind"] = "Pod";
      out["apiVersion"] = "v1";
    }
    out["metadata"] = std::move(meta);
    out["spec"] = {{"containers", containers},
                   {"nodeName", p.node},
                   {"restartPolicy", "Always"},
                   {"schedulerName", "default-scheduler"},
                   {"serviceAccountName", "default"},
                   {"terminationGracePeriodSeconds", w.termination_grace.count()},
                   {"dnsPolicy", "ClusterFirst"}};
    out["status"] = {{"phase", running ? "Running" : "Pending"},
                     {"conditions", conditions},
                     {"hostIP", node_ip(p.node)},
                     {"podIP", pod_ip},
                     {"podIPs", json::array({{{"ip", pod_ip}}})},
                     {"startTime", created},
                     {"containerStatuses", statuses},
                     {"qosClass", !any_resources ? "BestEffort" : (guaranteed ? "Guaranteed" : "Burstable")}};
    return out;
  }

  HttpResponse pod_list(std::string_view ns) const {
    // pkg/registry/core/pod/strategy.go PodToSelectableFields.
    static const std::vector<std::string_view> kPodFields = {
        "metadata.name",         "metadata.namespace",  "spec.nodeName",   "spec.restartPolicy",
        "spec.schedulerName",    "spec.serviceAccountName", "spec.hostNetwork", "status.phase",
        "status.podIP",          "status.nominatedNodeName"};
    k8s::LabelSelector labels;
    k8s::FieldSelector fields;
    if (auto error = selectors(labels, fields, &kPodFields)) return *error;
    json items = json::array();
    for (const auto* p : pods(ns)) {
      if (!labels.matches(pod_labels(*p))) continue;
      json pod = pod_json(*p, true);
      bool selected = fields.matches([&pod](std::string_view field) -> std::string {
        // The pod's JSON is the source of truth for its fields.
        auto dot = field.find('.');
        const json& section = pod[std::string(field.substr(0, dot))];
        auto it = section.find(std::string(field.substr(dot + 1)));
        if (it == section.end() || it->is_null()) return field == "spec.hostNetwork" ? "false" : "";
        return it->is_string() ? it->get<std::string>() : it->dump();
      });
      if (selected) items.push_back(std::move(pod));
    }
    json out{{"kind", "PodList"}, {"apiVersion", "v1"}, {"metadata", {{"resourceVersion", rv()}}}, {"items", items}};
    return json_response(out.dump());
  }

  json node_json(const NodeSpec& n, bool item) const {
    auto started = k8s::format_time(f_.started);
    k8s::ResourceList capacity{{"cpu", n.cpu},
                               {"memory", n.memory},
                               {"pods", k8s::Quantity::from_value(110, k8s::QuantityFormat::DecimalSI)},
                               {"ephemeral-storage", k8s::Quantity::parse("100Gi").value()}};
    json out = json::object();
    if (!item) {
      out["kind"] = "Node";
      out["apiVersion"] = "v1";
    }
    out["metadata"] = {{"name", n.name},
                       {"uid", object_uid(spec_.name + "/node/" + n.name)},
                       {"resourceVersion", rv()},
                       {"creationTimestamp", started},
                       {"labels", labels_json(n.labels)}};
    out["spec"] = json::object();
    out["status"] = {
        {"capacity", resource_list_json(capacity)},
        {"allocatable", resource_list_json(capacity)},
        {"conditions",
         json::array({{{"type", "Ready"},
                       {"status", "True"},
                       {"reason", "KubeletReady"},
                       {"message", "kubelet is posting ready status"},
                       {"lastHeartbeatTime", k8s::format_time(now_)},
                       {"lastTransitionTime", started}}})},
        {"addresses", json::array({{{"type", "InternalIP"}, {"address", node_ip(n.name)}},
                                   {{"type", "Hostname"}, {"address", n.name}}})},
        {"nodeInfo",
         {{"machineID", ""},
          {"systemUUID", object_uid(n.name)},
          {"bootID", ""},
          {"kernelVersion", "6.1.0"},
          {"osImage", "fedmetrics simulated node"},
          {"containerRuntimeVersion", "containerd://1.7.0"},
          {"kubeletVersion", spec_.kubernetes_version},
          {"kubeProxyVersion", spec_.kubernetes_version},
          {"operatingSystem", "linux"},
          {"architecture", "amd64"}}}};
    return out;
  }

  HttpResponse node_list() const {
    // pkg/registry/core/node/strategy.go NodeToSelectableFields.
    static const std::vector<std::string_view> kNodeFields = {"metadata.name", "spec.unschedulable"};
    k8s::LabelSelector labels;
    k8s::FieldSelector fields;
    if (auto error = selectors(labels, fields, &kNodeFields)) return *error;
    std::vector<const NodeSpec*> nodes;
    for (const auto& n : spec_.nodes) {
      bool selected = fields.matches([&n](std::string_view field) -> std::string {
        return field == "metadata.name" ? n.name : "false";  // simulated nodes are schedulable
      });
      if (labels.matches(n.labels) && selected) nodes.push_back(&n);
    }
    std::sort(nodes.begin(), nodes.end(), [](auto* a, auto* b) { return a->name < b->name; });
    json items = json::array();
    for (const auto* n : nodes) items.push_back(node_json(*n, true));
    json out{{"kind", "NodeList"}, {"apiVersion", "v1"}, {"metadata", {{"resourceVersion", rv()}}}, {"items", items}};
    return json_response(out.dump());
  }

  json namespace_json(const std::string& ns, bool item) const {
    json out = json::object();
    if (!item) {
      out["kind"] = "Namespace";
      out["apiVersion"] = "v1";
    }
    out["metadata"] = {{"name", ns},
                       {"uid", object_uid(spec_.name + "/namespace/" + ns)},
                       {"resourceVersion", rv()},
                       {"creationTimestamp", k8s::format_time(f_.started)},
                       {"labels", {{"kubernetes.io/metadata.name", ns}}}};
    out["spec"] = {{"finalizers", {"kubernetes"}}};
    out["status"] = {{"phase", "Active"}};
    return out;
  }

  HttpResponse namespace_list() const {
    // pkg/registry/core/namespace/strategy.go NamespaceToSelectableFields.
    static const std::vector<std::string_view> kNamespaceFields = {"metadata.name", "status.phase"};
    k8s::LabelSelector labels;
    k8s::FieldSelector fields;
    if (auto error = selectors(labels, fields, &kNamespaceFields)) return *error;
    auto names = f_.world.namespaces;
    std::sort(names.begin(), names.end());
    json items = json::array();
    for (const auto& ns : names)
      if (labels.matches(k8s::Labels{{"kubernetes.io/metadata.name", ns}}) &&
          fields.matches([&ns](std::string_view field) -> std::string { return field == "metadata.name" ? ns : "Active"; }))
        items.push_back(namespace_json(ns, true));
    json out{{"kind", "NamespaceList"}, {"apiVersion", "v1"}, {"metadata", {{"resourceVersion", rv()}}}, {"items", items}};
    return json_response(out.dump());
  }

  // ---- discovery ----
  std::vector<std::string> custom_versions() const {
    std::vector<std::string> out;
    if (spec_.apis.custom_v1beta2) out.emplace_back("custom.metrics.k8s.io/v1beta2");
    if (spec_.apis.custom_v1beta1) out.emplace_back("custom.metrics.k8s.io/v1beta1");
    return out;
  }

  std::vector<k8s::APIGroup> groups() const {
    std::vector<k8s::APIGroup> out;
    if (spec_.apis.metrics) out.push_back(k8s::make_api_group(kMetricsGroup, {"metrics.k8s.io/v1beta1"}));
    if (spec_.apis.custom()) out.push_back(k8s::make_api_group(kCustomGroup, custom_versions()));
    if (spec_.apis.external)
      out.push_back(k8s::make_api_group(kExternalGroup, {"external.metrics.k8s.io/v1beta1"}));
    // Stored by MemberObjects; discovery lists them here with the rest.
    out.push_back(k8s::make_api_group("autoscaling", {"autoscaling/v2"}));
    // The workloads propagated here, read-only (what Karmada's work agent
    // applied): a client can ask whether this member has the target.
    out.push_back(k8s::make_api_group("apps", {"apps/v1"}));
    return out;
  }

  // Whether this member serves group/version.
  bool serves(std::string_view group, std::string_view version) const {
    for (const auto& g : groups())
      if (g.name == group)
        for (const auto& v : g.versions)
          if (v.version == version) return true;
    return false;
  }

  // The custom metrics this member's Prometheus has series for: those of the
  // workloads propagated here.
  std::set<std::string> custom_metric_names() const {
    std::set<std::string> out;
    for (const auto& w : f_.world.workloads)
      if (std::find(w.propagation.clusters.begin(), w.propagation.clusters.end(), spec_.name) !=
          w.propagation.clusters.end())
        out.insert(w.custom_metrics.begin(), w.custom_metrics.end());
    return out;
  }

  std::vector<const ExternalMetricSpec*> external_series() const {
    std::vector<const ExternalMetricSpec*> out;
    for (const auto& e : f_.world.external_metrics)
      if (e.members.empty() || std::find(e.members.begin(), e.members.end(), spec_.name) != e.members.end())
        out.push_back(&e);
    return out;
  }

  k8s::APIResourceList resources(std::string_view group, std::string_view version) const {
    k8s::APIResourceList list;
    list.group_version = std::string(group) + "/" + std::string(version);
    if (group == kMetricsGroup) {
      list.resources = {{"nodes", "", false, "NodeMetrics", {"get", "list"}},
                        {"pods", "", true, "PodMetrics", {"get", "list"}}};
    } else if (group == kCustomGroup) {
      // prometheus-adapter: one entry per (resource, metric); namespaces are
      // cluster-scoped (series_registry.go).
      for (const auto& m : custom_metric_names()) {
        list.resources.push_back({"deployments.apps/" + m, "", true, "MetricValueList", {"get"}});
        list.resources.push_back({"namespaces/" + m, "", false, "MetricValueList", {"get"}});
        list.resources.push_back({"pods/" + m, "", true, "MetricValueList", {"get"}});
      }
    } else if (group == kExternalGroup) {
      std::set<std::string> names;
      for (const auto* e : external_series()) names.insert(e->name);
      for (const auto& n : names) list.resources.push_back({n, "", true, "ExternalMetricValueList", {"get"}});
    }
    return list;
  }

  // autoscaling/v2 as kube-apiserver lists it: kubectl resolves "hpa" through the short name.
  static json autoscaling_resources() {
    auto type = horizontal_pod_autoscaler_type();
    k8s::APIResourceList list{"autoscaling/v2", {{type.resource, "", true, type.kind, type.verbs}}};
    auto doc = k8s::to_json(list);
    doc["resources"][0]["shortNames"] = type.short_names;
    doc["resources"][0]["categories"] = {"all"};
    doc["resources"].push_back({{"name", type.resource + "/status"}, {"singularName", ""}, {"namespaced", true},
                                {"kind", type.kind}, {"verbs", {"get", "patch", "update"}}});
    return doc;
  }

  static json apps_resources() {
    k8s::APIResourceList list{"apps/v1", {{"deployments", "", true, "Deployment", {"get", "list"}}}};
    auto doc = k8s::to_json(list);
    doc["resources"][0]["shortNames"] = {"deploy"};
    doc["resources"][0]["categories"] = {"all"};
    return doc;
  }

  // This member's Deployment of workload `w`: the template as propagated,
  // spec.replicas its share, the status from its pods. nullopt when the
  // workload is not placed here.
  std::optional<json> deployment(const WorkloadSpec& w, std::size_t index) const {
    const auto& placement = f_.workloads[index].placement;
    const auto here = std::find_if(placement.begin(), placement.end(),
                                   [&](const TargetCluster& t) { return t.name == spec_.name; });
    if (here == placement.end()) return std::nullopt;
    std::int32_t existing = 0;
    std::int32_t ready = 0;
    for (const auto& p : state_.pods) {
      if (p.workload != index || !f_.exists(p, now_) || p.deleted) continue;
      ++existing;
      if (f_.ready(p, now_)) ++ready;
    }
    json labels = json::object();
    for (const auto& [k, v] : w.labels) labels[k] = v;
    return json{{"apiVersion", "apps/v1"},
                {"kind", "Deployment"},
                {"metadata",
                 {{"name", w.name},
                  {"namespace", w.namespace_name},
                  {"uid", spec_.name + "-deployment-" + w.namespace_name + "-" + w.name},
                  {"resourceVersion", rv()},
                  {"generation", 1},
                  {"creationTimestamp", k8s::format_time(f_.started)},
                  {"labels", labels}}},
                {"spec",
                 {{"replicas", here->replicas},
                  {"selector", {{"matchLabels", labels}}},
                  {"template", pod_template(w)}}},
                {"status",
                 {{"observedGeneration", 1},
                  {"replicas", existing},
                  {"updatedReplicas", existing},
                  {"readyReplicas", ready},
                  {"availableReplicas", ready}}}};
  }

  // GET /apis/apps/v1/[namespaces/{ns}/]deployments[/{name}]: read-only.
  HttpResponse deployments(const std::vector<std::string>& rest) const {
    std::string ns;
    std::size_t i = 0;
    if (rest.size() >= 2 && rest[0] == "namespaces") {
      ns = rest[1];
      i = 2;
    }
    if (rest.size() <= i || rest[i] != "deployments" || rest.size() > i + 2) return not_found();
    const k8s::GroupResource gr{"apps", "deployments"};
    if (rest.size() == i + 2) {
      if (ns.empty()) return not_found();
      for (std::size_t w = 0; w < f_.world.workloads.size(); ++w) {
        const auto& spec = f_.world.workloads[w];
        if (spec.namespace_name != ns || spec.name != rest[i + 1]) continue;
        if (auto doc = deployment(spec, w)) return json_response(doc->dump());
      }
      return status_response(Status::not_found(gr, rest[i + 1]));
    }
    json items = json::array();
    for (std::size_t w = 0; w < f_.world.workloads.size(); ++w) {
      const auto& spec = f_.world.workloads[w];
      if (!ns.empty() && spec.namespace_name != ns) continue;
      if (auto doc = deployment(spec, w)) items.push_back(std::move(*doc));
    }
    return json_response(
        json{{"apiVersion", "apps/v1"}, {"kind", "DeploymentList"}, {"metadata", {{"resourceVersion", rv()}}}, {"items", items}}
            .dump());
  }

  HttpResponse apis() const {
    const auto& s = t_.segments;
    if (s.size() == 1) return json_response(k8s::api_group_list_to_json(groups()).dump());
    if (s.size() == 2) {
      for (const auto& g : groups())
        if (g.name == s[1]) return json_response(k8s::to_json(g).dump());
      return not_found();
    }
    if (!serves(s[1], s[2])) return not_found();
    if (s.size() == 3 && s[1] == "autoscaling") return json_response(autoscaling_resources().dump());
    if (s.size() == 3 && s[1] == "apps") return json_response(apps_resources().dump());
    if (s.size() == 3) return json_response(k8s::to_json(resources(s[1], s[2])).dump());
    if (s[1] == "autoscaling") return not_found();  // served by MemberObjects
    std::vector<std::string> rest(s.begin() + 3, s.end());
    if (s[1] == "apps") return deployments(rest);
    if (s[1] == kMetricsGroup) return resource_metrics(rest);
    if (s[1] == kCustomGroup)
      return custom_metrics(rest, s[2] == "v1beta1" ? k8s::CustomMetricsVersion::V1beta1
                                                    : k8s::CustomMetricsVersion::V1beta2);
    return external_metrics(rest);
  }

  // ---- metrics.k8s.io ----
  k8s::PodMetrics pod_metrics(const SimPod& p) const {
    k8s::PodMetrics out;
    out.metadata.name = p.name;
    out.metadata.namespace_name = f_.world.workloads[p.workload].namespace_name;
    out.metadata.labels = pod_labels(p);
    out.metadata.creation_timestamp = now_;
    out.timestamp = now_;
    out.window = kResourceWindow;
    auto usage = usage_of(p);
    for (const auto& c : usage.containers) {
      out.containers.push_back({c.name,
                                {{"cpu", k8s::Quantity::from_nanos(c.cpu_nanocores)},
                                 {"memory", k8s::Quantity::from_value(c.memory_bytes, k8s::QuantityFormat::BinarySI)}}});
    }
    return out;
  }

  k8s::NodeMetrics node_metrics(const NodeSpec& n) const {
    std::int64_t cpu = kNodeBaselineNanocores, memory = kNodeBaselineBytes;
    for (const auto* p : pods("")) {
      if (p->node != n.name) continue;
      auto u = usage_of(*p);
      cpu += u.cpu_nanocores();
      memory += u.memory_bytes();
    }
    k8s::NodeMetrics out;
    out.metadata.name = n.name;
    out.metadata.labels = n.labels;
    out.metadata.creation_timestamp = now_;
    out.timestamp = now_;
    out.window = kResourceWindow;
    out.usage = {{"cpu", k8s::Quantity::from_nanos(cpu)},
                 {"memory", k8s::Quantity::from_value(memory, k8s::QuantityFormat::BinarySI)}};
    return out;
  }

  HttpResponse resource_metrics(const std::vector<std::string>& r) const {
    if (r.size() == 1 && r[0] == "nodes") {
      k8s::LabelSelector labels;
      k8s::FieldSelector fields;
      if (auto error = selectors(labels, fields)) return *error;
      std::vector<k8s::NodeMetrics> items;
      for (const auto& n : spec_.nodes)
        if (labels.matches(n.labels) && fields.matches(n.name, "")) items.push_back(node_metrics(n));
      std::sort(items.begin(), items.end(), [](auto& a, auto& b) { return a.metadata.name < b.metadata.name; });
      return json_response(k8s::encode_node_metrics_list(items));
    }
    if (r.size() == 2 && r[0] == "nodes") {
      const auto* n = find_node(r[1]);
      // metrics-server looks the node up with the node lister, whose resource is "node".
      if (n == nullptr) return status_response(Status::not_found({"", "node"}, r[1]));
      return json_response(k8s::encode_node_metrics(node_metrics(*n)));
    }
    bool all = r.size() == 1 && r[0] == "pods";
    bool in_ns = r.size() == 3 && r[0] == "namespaces" && r[2] == "pods";
    if (all || in_ns) {
      k8s::LabelSelector labels;
      k8s::FieldSelector fields;
      if (auto error = selectors(labels, fields)) return *error;
      std::vector<k8s::PodMetrics> items;
      for (const auto* p : pods(in_ns ? r[1] : "")) {
        if (!f_.running(*p, now_)) continue;  // metrics-server reports pods whose containers run
        if (!labels.matches(pod_labels(*p))) continue;
        if (!fields.matches(p->name, f_.world.workloads[p->workload].namespace_name)) continue;
        items.push_back(pod_metrics(*p));
      }
      return json_response(k8s::encode_pod_metrics_list(items));
    }
    if (r.size() == 4 && r[0] == "namespaces" && r[2] == "pods") {
      const auto* p = find_pod(r[1], r[3]);
      if (p == nullptr) return status_response(Status::not_found({"", "pods"}, r[3]));
      // metrics-server: the pod exists but has no metrics yet.
      if (!f_.running(*p, now_)) return status_response(Status::not_found({"metrics.k8s.io", "pods"}, r[1] + "/" + r[3]));
      return json_response(k8s::encode_pod_metrics(pod_metrics(*p)));
    }
    return not_found();
  }

  // ---- custom.metrics.k8s.io ----
  struct Series {
    k8s::ObjectReference object;
    k8s::Labels object_labels;  // what labelSelector selects
    k8s::Labels labels;         // the series' labels, what metricLabelSelector selects
    double value = 0;  // per second
  };

  std::vector<Series> pod_series(std::string_view ns, const std::string& metric) const {
    std::vector<Series> out;
    for (const auto* p : pods(ns)) {
      const auto& w = f_.world.workloads[p->workload];
      if (std::find(w.custom_metrics.begin(), w.custom_metrics.end(), metric) == w.custom_metrics.end()) continue;
      Series s;
      s.object = {"Pod", w.namespace_name, p->name, "/v1", {}, {}, {}};
      s.object_labels = pod_labels(*p);
      s.labels = s.object_labels;
      s.labels["namespace"] = w.namespace_name;
      s.labels["pod"] = p->name;
      s.value = usage_of(*p).requests_per_second;
      out.push_back(std::move(s));
    }
    return out;
  }

  std::vector<Series> deployment_series(std::string_view ns, const std::string& metric) const {
    std::vector<Series> out;
    for (std::size_t i = 0; i < f_.world.workloads.size(); ++i) {
      const auto& w = f_.world.workloads[i];
      if (!ns.empty() && w.namespace_name != ns) continue;
      if (std::find(w.custom_metrics.begin(), w.custom_metrics.end(), metric) == w.custom_metrics.end()) continue;
      if (std::find(w.propagation.clusters.begin(), w.propagation.clusters.end(), spec_.name) ==
          w.propagation.clusters.end())
        continue;
      Series s;
      s.object = {"Deployment", w.namespace_name, w.name, "apps/v1", {}, {}, {}};
      s.object_labels = w.labels;
      s.labels = w.labels;
      s.labels["namespace"] = w.namespace_name;
      s.labels["deployment"] = w.name;
      for (const auto* p : pods(w.namespace_name))
        if (p->workload == i) s.value += usage_of(*p).requests_per_second;
      out.push_back(std::move(s));
    }
    std::sort(out.begin(), out.end(), [](auto& a, auto& b) {
      return a.object.namespace_name != b.object.namespace_name ? a.object.namespace_name < b.object.namespace_name
                                                                : a.object.name < b.object.name;
    });
    return out;
  }

  std::vector<Series> namespace_series(std::string_view ns, const std::string& metric) const {
    std::vector<Series> out;
    auto names = f_.world.namespaces;
    std::sort(names.begin(), names.end());
    for (const auto& name : names) {
      if (ns != "*" && name != ns) continue;
      auto in_ns = pod_series(name, metric);
      if (in_ns.empty()) continue;
      Series s;
      s.object = {"Namespace", "", name, "/v1", {}, {}, {}};
      s.labels = {{"namespace", name}};
      for (const auto& p : in_ns) s.value += p.value;
      out.push_back(std::move(s));
    }
    return out;
  }

  HttpResponse custom_metrics(const std::vector<std::string>& r, k8s::CustomMetricsVersion version) const {
    // custom-metrics-apiserver's routes (cmhandlers.go).
    std::string ns, resource, name, metric;
    bool namespace_metric = false;
    if (r.size() == 4 && r[0] == "namespaces" && r[2] == "metrics") {
      ns = r[1];
      resource = "namespaces";
      metric = r[3];
      namespace_metric = true;
    } else if (r.size() == 5 && r[0] == "namespaces") {
      ns = r[1];
      resource = r[2];
      name = r[3];
      metric = r[4];
    } else if (r.size() == 3 && r[0] != "namespaces") {
      resource = r[0];
      name = r[1];
      metric = r[2];
    } else {
      return status_response(Status::bad_request("invalid request path"));
    }
    auto gr_text = resource;
    auto dot = resource.find('.');
    GroupResource gr{dot == std::string::npos ? "" : resource.substr(dot + 1), resource.substr(0, dot)};

    auto msel_text = k8s::query_value(t_.query, "metricLabelSelector");
    auto msel = k8s::LabelSelector::parse(msel_text);
    if (!msel) return status_response(Status::bad_request(msel.error().message));
    bool wildcard = name == "*";
    k8s::LabelSelector objects;
    if (wildcard) {
      auto l = k8s::LabelSelector::parse(k8s::query_value(t_.query, "labelSelector"));
      if (!l) return status_response(Status::bad_request(l.error().message));
      objects = std::move(*l);
    }
    auto fsel = k8s::query_value(t_.query, "fieldSelector");
    if (!fsel.empty() && !wildcard && !namespace_metric) {
      auto fs = k8s::FieldSelector::parse(fsel);
      if (!fs) return status_response(Status::bad_request(fs.error().message));
      for (const auto& req : fs->requirements())
        if (req.field == "metadata.name" && !req.negated && req.value != name)
          return status_response(Status::bad_request("fieldSelector metadata.name doesn't match requested name"));
    }

    auto known = custom_metric_names();
    if (!known.contains(metric)) {
      if (namespace_metric) return status_response(Status::metric_not_found(metric, gr, ns == "*" ? "" : ns));
      return status_response(Status::metric_not_found(metric, gr, wildcard ? "" : name));
    }
    std::vector<Series> series;
    if (namespace_metric) series = namespace_series(ns, metric);
    else if (gr.resource == "pods" && gr.group.empty()) series = pod_series(ns, metric);
    else if (gr.resource == "deployments" && (gr.group == "apps" || gr.group.empty())) series = deployment_series(ns, metric);
    else return status_response(Status::metric_not_found(metric, gr, wildcard ? "" : name));

    std::vector<k8s::MetricValue> items;
    for (const auto& s : series) {
      if (!namespace_metric) {
        if (wildcard ? !objects.matches(s.object_labels) : s.object.name != name)
          continue;
      }
      if (!msel->matches(s.labels)) continue;
      k8s::MetricValue v;
      v.described_object = s.object;
      v.metric_name = metric;
      v.metric_selector = msel->empty() ? json(nullptr) : msel->to_object();
      v.timestamp = now_;
      v.window_seconds = kCustomWindowSeconds;
      // prometheus-adapter: resource.NewMilliQuantity(int64(value*1000.0), DecimalSI).
      v.value = k8s::Quantity::from_milli(static_cast<std::int64_t>(s.value * 1000.0), k8s::QuantityFormat::DecimalSI);
      items.push_back(std::move(v));
    }
    if (items.empty() && !wildcard && !(namespace_metric && ns == "*")) {
      auto who = namespace_metric ? ns : name;
      return status_response(Status::metric_not_found(metric, gr, who, msel->empty() ? "" : msel->to_string()));
    }
    return json_response(k8s::metric_value_list_to_json(items, version).dump());
  }

  // ---- external.metrics.k8s.io ----
  HttpResponse external_metrics(const std::vector<std::string>& r) const {
    if (r.size() != 3 || r[0] != "namespaces") return not_found();
    const auto& ns = r[1];
    const auto& metric = r[2];
    auto sel = k8s::LabelSelector::parse(k8s::query_value(t_.query, "labelSelector"));
    if (!sel) return status_response(Status::bad_request(sel.error().message));
    bool known = false;
    std::vector<k8s::ExternalMetricValue> items;
    for (const auto* e : external_series()) {
      if (e->name != metric) continue;
      known = true;
      if (!e->namespace_name.empty() && e->namespace_name != ns) continue;
      if (!sel->matches(e->labels)) continue;
      items.push_back({e->name, e->labels, now_, kCustomWindowSeconds, e->value});
    }
    if (!known) return status_response(Status::metric_not_found(metric, {std::string(kExternalGroup), "namespaces"}, ns));
    return json_response(k8s::external_metric_value_list_to_json(items).dump());
  }

  const Federation& f_;
  std::size_t m_;
  const MemberSpec& spec_;
  const MemberState& state_;
  const k8s::RequestTarget& t_;
  k8s::Timestamp now_;
  // Who shares each load, counted on first use: a pod's usage is its share
  // of the load it is offered, and counting per pod would make an answer
  // quadratic in the federation's pods.
  mutable std::optional<LoadShares> shares_;

  PodUsage usage_of(const SimPod& p) const {
    if (!shares_) shares_ = f_.load_shares(now_);
    return f_.usage(m_, p, now_, *shares_);
  }
};

// A core list or object as the meta.k8s.io/v1 Table that `kubectl get` asks
// for, with the columns of kube-apiserver's printers (pkg/printers/internalversion).
// nullopt for kinds that have no table here.
std::optional<json> to_table(const json& doc, k8s::Timestamp now) {
  if (!doc.is_object() || !doc.contains("kind")) return std::nullopt;
  std::string kind = doc["kind"];
  bool list = kind.size() > 4 && kind.ends_with("List");
  if (list) kind = kind.substr(0, kind.size() - 4);
  json items = list ? doc["items"] : json::array({doc});
  auto age = [&](const json& item) {
    auto created = k8s::parse_time(item["metadata"].value("creationTimestamp", ""));
    return created ? human_duration(now - *created) : std::string("<unknown>");
  };
  json columns, rows = json::array();
  if (kind == "Pod") {
    columns = {column("Name", "string", 0, "name"), column("Ready", "string", 0), column("Status", "string", 0),
               column("Restarts", "string", 0),     column("Age", "string", 0),   column("IP", "string", 1),
               column("Node", "string", 1),         column("Nominated Node", "string", 1),
               column("Readiness Gates", "string", 1)};
    for (const auto& p : items) {
      int ready = 0, total = 0;
      for (const auto& c : p["status"]["containerStatuses"]) {
        ++total;
        if (c.value("ready", false)) ++ready;
      }
      std::string status = p["metadata"].contains("deletionTimestamp") ? "Terminating" : p["status"].value("phase", "");
      rows.push_back({{"cells", {p["metadata"]["name"], std::to_string(ready) + "/" + std::to_string(total), status, "0",
                                 age(p), p["status"].value("podIP", ""), p["spec"].value("nodeName", ""), "<none>", "<none>"}}});
    }
  } else if (kind == "Node") {
    columns = {column("Name", "string", 0, "name"), column("Status", "string", 0),  column("Roles", "string", 0),
               column("Age", "string", 0),          column("Version", "string", 0), column("Internal-IP", "string", 1),
               column("External-IP", "string", 1),  column("OS-Image", "string", 1), column("Kernel-Version", "string", 1),
               column("Container-Runtime", "string", 1)};
    for (const auto& n : items) {
      const auto& info = n["status"]["nodeInfo"];
      rows.push_back({{"cells", {n["metadata"]["name"], "Ready", "<none>", age(n), info["kubeletVersion"],
                                 n["status"]["addresses"][0]["address"], "<none>", info["osImage"], info["kernelVersion"],
                                 info["containerRuntimeVersion"]}}});
    }
  } else if (kind == "Namespace") {
    columns = {column("Name", "string", 0, "name"), column("Status", "string", 0), column("Age", "string", 0)};
    for (const auto& n : items) rows.push_back({{"cells", {n["metadata"]["name"], n["status"]["phase"], age(n)}}});
  } else if (kind == "Deployment") {
    columns = json::array({column("Name", "string", 0, "name")});
    for (auto& c : deployment_columns()) columns.push_back(std::move(c));
    columns.push_back(column("Age", "string", 0));
    for (auto& c : deployment_wide_columns()) columns.push_back(std::move(c));
    for (const auto& d : items) {
      json cells = json::array({d["metadata"]["name"]});
      for (auto& c : deployment_cells(d)) cells.push_back(std::move(c));
      cells.push_back(age(d));
      for (auto& c : deployment_wide_cells(d)) cells.push_back(std::move(c));
      rows.push_back({{"cells", cells}});
    }
  } else {
    return std::nullopt;
  }
  // The rows' objects and the metadata: detail::complete_table.
  return json{{"kind", "Table"}, {"apiVersion", "meta.k8s.io/v1"}, {"metadata", json::object()},
              {"columnDefinitions", columns}, {"rows", rows}};
}

}  // namespace

bool member_authenticated(const Federation& f, std::size_t member, const HttpRequest& request) {
  if (f.members[member].faults.expired_token) return false;
  // apiserver's bearer-token authenticator: "Bearer <token>", scheme case-insensitive.
  auto value = detail::header(request, "Authorization");
  auto space = value.find(' ');
  if (space == std::string_view::npos) return false;
  auto scheme = value.substr(0, space);
  auto token = value.substr(space + 1);
  if (!k8s::iequals(scheme, "bearer") || token.empty() || token.find(' ') != std::string_view::npos) return false;
  const auto& name = f.world.members[member].name;
  for (const auto& u : f.world.users) {
    if (u.token != token) continue;
    if (u.members.empty() || std::find(u.members.begin(), u.members.end(), name) != u.members.end()) return true;
  }
  return false;
}

HttpResponse MemberApi::handle(const HttpRequest& request, k8s::Timestamp now, double fault_draw) const {
  const auto& faults = federation_.members[member_].faults;
  auto decoded = k8s::parse_request_target(request.target);
  if (!decoded) return status_response(Status::bad_request("invalid URL escape in the request path"));
  const auto& target = *decoded;
  const auto& s = target.segments;
  // Health endpoints are open to anyone (apiserver's AlwaysAllowPaths), as kubelet probes send no credentials.
  if (s.size() == 1 && (s[0] == "healthz" || s[0] == "livez" || s[0] == "readyz")) {
    // A member failing its requests (errorRate) fails readiness as often, with
    // kube-apiserver's verbose-less wording.
    if (s[0] == "readyz" && fault_draw < faults.error_rate) {
      return text_response("[-]simulated-fault failed: reason withheld\nreadyz check failed\n", 500);
    }
    return text_response("ok");
  }
  if (!member_authenticated(federation_, member_, request)) return status_response(Status::unauthorized());
  if (fault_draw < faults.error_rate) return status_response(Status::internal_error("simulated fault"));

  bool read = request.method == "GET" || request.method == "HEAD";
  HttpResponse response;
  if (!read) {
    response = status_response(Status::method_not_allowed(verb_for(request.method), resource_of(s)));
  } else if (k8s::query_bool(target.query, "watch")) {
    response = status_response(Status::method_not_allowed("watch", resource_of(s)));
  } else {
    response = Responder(federation_, member_, target, now).route();
    // kubectl get asks for a Table (Accept: application/json;as=Table;v=v1;g=meta.k8s.io,...).
    auto table = detail::table_request(request, target);
    bool built_in = !s.empty() && (s[0] == "api" || (s[0] == "apis" && s.size() > 3 && s[1] == "apps"));
    if (!table) {
      response = status_response(Status::bad_request(table.error().message));
    } else if (*table && response.status == 200 && built_in) {
      auto doc = json::parse(response.body, nullptr, false);
      if (auto t = to_table(doc, now)) {
        detail::complete_table(*t, doc, **table);
        response.body = t->dump();
      }
    }
  }
  if (faults.malformed_json && response.status == 200 && response.content_type == "application/json") {
    // Cut mid-document: a body that no JSON parser accepts.
    response.body = response.body.substr(0, response.body.size() / 2);
  }
  if (faults.malformed_gzip && response.status == 200 && transport::accepts_gzip(detail::header(request, "Accept-Encoding"))) {
    // Compressed whatever its size, then the CRC-32 (the trailer's first four
    // bytes, RFC 1952) broken: every byte inflates to the right answer and
    // only a decoder that checks the trailer, as Go's gzip.Reader does, fails.
    // The listener leaves a body that has a Content-Encoding alone.
    std::string gzipped = transport::gzip_compress(response.body);
    gzipped[gzipped.size() - 8] = static_cast<char>(gzipped[gzipped.size() - 8] ^ 0xff);
    response.body = std::move(gzipped);
    response.headers.emplace_back("Content-Encoding", "gzip");
    response.headers.emplace_back("Vary", "Accept-Encoding");
  }
  return response;
}

}  // namespace fedmetrics::sim
