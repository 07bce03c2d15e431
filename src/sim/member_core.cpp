// core v1 on a simulated member: pods, nodes, namespaces and /version.
#include <algorithm>

#include "fedmetrics/k8s/status.hpp"
#include "fedmetrics/sim/placement.hpp"
#include "sim/http_util.hpp"
#include "sim/member_responder.hpp"


namespace fedmetrics::sim::detail {

using nlohmann::json;
using transport::HttpResponse;
using k8s::GroupResource;
using k8s::Status;

bool MemberResponder::namespace_exists(std::string_view ns) const {
  return std::find(f_.world.namespaces.begin(), f_.world.namespaces.end(), ns) != f_.world.namespaces.end();
}


const NodeSpec* MemberResponder::find_node(std::string_view name) const {
  for (const auto& n : spec_.nodes)
    if (n.name == name) return &n;
  return nullptr;
}

std::string MemberResponder::node_ip(std::string_view node) const {
  std::size_t i = 0;
  for (; i < spec_.nodes.size(); ++i)
    if (spec_.nodes[i].name == node) break;
  return "172.18." + std::to_string(m_ + 1) + "." + std::to_string(i + 2);
}

HttpResponse MemberResponder::version() const {
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

HttpResponse MemberResponder::core() const {
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

json MemberResponder::pod_json(const SimPod& p, bool item) const {
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

HttpResponse MemberResponder::pod_list(std::string_view ns) const {
  // pkg/registry/core/pod/strategy.go PodToSelectableFields.
  static const std::vector<std::string_view> kPodFields = {
      "metadata.name",         "metadata.namespace",  "spec.nodeName",   "spec.restartPolicy",
      "spec.schedulerName",    "spec.serviceAccountName", "spec.hostNetwork", "status.phase",
      "status.podIP",          "status.nominatedNodeName"};
  k8s::LabelSelector labels;
  k8s::FieldSelector fields;
  if (auto error = selectors(labels, fields, &kPodFields)) return *error;
  // Each pod is encoded as soon as it is built, into the list's text with
  // the keys in the order nlohmann writes them: a list of 1,000 pods held as
  // JSON values, then copied into the list and encoded, cost 75 ms of cpu.
  std::string body = R"({"apiVersion":"v1","items":[)";
  bool first = true;
  for (const auto* p : pods(ns)) {
    if (!labels.matches(pod_labels(*p))) continue;
    json pod = pod_json(*p, true);
    const json& fields_of = pod;
    bool selected = fields.empty() || fields.matches([&fields_of](std::string_view field) -> std::string {
      // The pod's JSON is the source of truth for its fields.
      auto dot = field.find('.');
      auto section = fields_of.find(std::string(field.substr(0, dot)));
      if (section == fields_of.end()) return "";
      auto it = section->find(std::string(field.substr(dot + 1)));
      if (it == section->end() || it->is_null()) return field == "spec.hostNetwork" ? "false" : "";
      return it->is_string() ? it->get<std::string>() : it->dump();
    });
    if (!selected) continue;
    if (!first) body += ',';
    first = false;
    body += pod.dump();
  }
  body += R"(],"kind":"PodList","metadata":)";
  body += json{{"resourceVersion", rv()}}.dump();
  body += '}';
  return json_response(std::move(body));
}

json MemberResponder::node_json(const NodeSpec& n, bool item) const {
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

HttpResponse MemberResponder::node_list() const {
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

json MemberResponder::namespace_json(const std::string& ns, bool item) const {
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

HttpResponse MemberResponder::namespace_list() const {
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
}  // namespace fedmetrics::sim::detail
