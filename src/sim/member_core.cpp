// core v1 on a simulated member: pods, nodes, namespaces and /version.
#include <algorithm>

#include "fedmetrics/k8s/status.hpp"
#include "fedmetrics/sim/placement.hpp"
#include "sim/http_util.hpp"
#include "sim/json_text.hpp"
#include "sim/member_responder.hpp"

namespace fedmetrics::sim::detail {

using k8s::GroupResource;
using k8s::Status;
using nlohmann::json;
using transport::HttpResponse;

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
  std::string minor = dot1 == std::string::npos
                          ? "0"
                          : v.substr(dot1 + 1, dot2 == std::string::npos ? std::string::npos : dot2 - dot1 - 1);
  json out{{"major", major},           {"minor", minor},
           {"gitVersion", v},          {"gitCommit", "fedmetrics-sim"},
           {"gitTreeState", "clean"},  {"buildDate", "2026-01-01T00:00:00Z"},
           {"goVersion", "go1.23.0"},  {"compiler", "gc"},
           {"platform", "linux/amd64"}};
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
    for (auto& r : doc["resources"])
      r["shortNames"] = json::array({r["name"] == "namespaces" ? "ns" : r["name"] == "nodes" ? "no" : "po"});
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

// A pod as kube-apiserver shows it, written as text (json_text.hpp): a
// member lists its pods by the thousand. Every object's keys are in
// nlohmann's (sorted) order, so that the text is what pod_json's dump() was.
std::string MemberResponder::pod_text(const SimPod& p, bool item) const {
  const auto& w = f_.world.workloads[p.workload];
  const bool ready = f_.ready(p, now_);
  const bool running = f_.running(p, now_);
  const auto created = k8s::format_time(p.created);
  const auto ready_time = k8s::format_time(ready ? f_.ready_since(p) : p.created);
  const std::string rs = w.name + "-" + p.template_hash;
  const std::string pod_ip =
      "10.244." + std::to_string(m_ + 1) + "." + std::to_string(2 + (p.uid[0] % 16) * 16 + (p.uid[1] % 16));
  bool any_resources = !w.pod_requests.empty() || !w.pod_limits.empty(), guaranteed = true;
  for (const auto& c : w.containers) {
    any_resources = any_resources || !c.requests.empty() || !c.limits.empty();
    for (const char* r : {"cpu", "memory"}) {
      auto l = c.limits.find(r);
      auto q = c.requests.find(r);
      if (l == c.limits.end() || (q != c.requests.end() && q->second != l->second)) guaranteed = false;
    }
  }
  auto resource_list = [](JsonText& j, const k8s::ResourceList& list) {
    j.begin_object();
    for (const auto& [name, quantity] : list) j.key(name).string(quantity.to_string());
    j.end_object();
  };

  std::string out;
  out.reserve(2048);
  JsonText j(out);
  j.begin_object();
  if (!item) j.key("apiVersion").string("v1").key("kind").string("Pod");

  j.key("metadata").begin_object().key("creationTimestamp").string(created);
  if (p.deleted) {
    // apiserver sets deletionTimestamp to when the grace period ends.
    j.key("deletionGracePeriodSeconds").number(w.termination_grace.count());
    j.key("deletionTimestamp").string(k8s::format_time(*p.deleted + w.termination_grace));
  }
  j.key("generateName").string(rs + "-").key("labels").begin_object();
  for (const auto& [k, v] : pod_labels(p)) j.key(k).string(v);
  j.end_object().key("name").string(p.name).key("namespace").string(w.namespace_name);
  j.key("ownerReferences").begin_array().begin_object();
  j.key("apiVersion").string("apps/v1").key("blockOwnerDeletion").boolean(true).key("controller").boolean(true);
  j.key("kind").string("ReplicaSet").key("name").string(rs);
  j.key("uid").string(object_uid(spec_.name + "/" + w.namespace_name + "/" + rs));
  j.end_object().end_array();
  j.key("resourceVersion").string(rv()).key("uid").string(p.uid).end_object();

  j.key("spec").begin_object().key("containers").begin_array();
  for (const auto& c : w.containers) {
    j.begin_object().key("image").string(c.image).key("imagePullPolicy").string("IfNotPresent");
    j.key("name").string(c.name).key("resources").begin_object();
    if (!c.limits.empty()) resource_list(j.key("limits"), c.limits);
    if (!c.requests.empty()) resource_list(j.key("requests"), c.requests);
    j.end_object();
    j.key("terminationMessagePath").string("/dev/termination-log").key("terminationMessagePolicy").string("File");
    j.end_object();
  }
  j.end_array().key("dnsPolicy").string("ClusterFirst").key("nodeName").string(p.node);
  if (!w.pod_requests.empty() || !w.pod_limits.empty()) {
    j.key("resources").begin_object();
    if (!w.pod_limits.empty()) resource_list(j.key("limits"), w.pod_limits);
    if (!w.pod_requests.empty()) resource_list(j.key("requests"), w.pod_requests);
    j.end_object();
  }
  j.key("restartPolicy").string("Always").key("schedulerName").string("default-scheduler");
  j.key("serviceAccountName")
      .string("default")
      .key("terminationGracePeriodSeconds")
      .number(w.termination_grace.count());
  j.end_object();

  j.key("status").begin_object().key("conditions").begin_array();
  auto condition = [&](const char* type, bool status, const std::string& at, bool unready_reason) {
    j.begin_object().key("lastProbeTime").null().key("lastTransitionTime").string(at);
    if (unready_reason)
      j.key("message").string("containers with unready status").key("reason").string("ContainersNotReady");
    j.key("status").string(status ? "True" : "False").key("type").string(type).end_object();
  };
  condition("Initialized", true, created, false);
  condition("Ready", ready, ready_time, !ready);
  condition("ContainersReady", ready, ready_time, !ready);
  condition("PodScheduled", true, created, false);
  j.end_array().key("containerStatuses").begin_array();
  const std::string container_id = "containerd://" + p.uid;
  for (const auto& c : w.containers) {
    j.begin_object().key("containerID").string(container_id).key("image").string(c.image);
    j.key("imageID").string("docker.io/library/" + c.image + "@sha256:" + std::string(64, '0'));
    j.key("name").string(c.name).key("ready").boolean(ready).key("restartCount").number(0);
    j.key("started").boolean(running).key("state").begin_object();
    if (running)
      j.key("running").begin_object().key("startedAt").string(k8s::format_time(f_.started_at(p))).end_object();
    else j.key("waiting").begin_object().key("reason").string("ContainerCreating").end_object();
    j.end_object().end_object();
  }
  j.end_array().key("hostIP").string(node_ip(p.node)).key("phase").string(running ? "Running" : "Pending");
  j.key("podIP")
      .string(pod_ip)
      .key("podIPs")
      .begin_array()
      .begin_object()
      .key("ip")
      .string(pod_ip)
      .end_object()
      .end_array();
  j.key("qosClass").string(!any_resources ? "BestEffort" : (guaranteed ? "Guaranteed" : "Burstable"));
  j.key("startTime").string(created).end_object();
  j.end_object();
  return out;
}

json MemberResponder::pod_json(const SimPod& p, bool item) const { return json::parse(pod_text(p, item)); }

HttpResponse MemberResponder::pod_list(std::string_view ns) const {
  // pkg/registry/core/pod/strategy.go PodToSelectableFields.
  static const std::vector<std::string_view> kPodFields = {
      "metadata.name",      "metadata.namespace",      "spec.nodeName",    "spec.restartPolicy",
      "spec.schedulerName", "spec.serviceAccountName", "spec.hostNetwork", "status.phase",
      "status.podIP",       "status.nominatedNodeName"};
  k8s::LabelSelector labels;
  k8s::FieldSelector fields;
  if (auto error = selectors(labels, fields, &kPodFields)) return *error;
  // Each pod is written as text into the list's text, keys in the order
  // nlohmann writes them: a list of 1,000 pods built as JSON values, then
  // copied into the list and encoded, cost 75 ms of cpu.
  std::string body = R"({"apiVersion":"v1","items":[)";
  bool first = true;
  for (const auto* p : pods(ns)) {
    if (!labels.matches(pod_labels(*p))) continue;
    std::string pod = pod_text(*p, true);
    if (!fields.empty() && !fields.matches([fields_of = json::parse(pod)](std::string_view field) -> std::string {
          // The pod's JSON is the source of truth for its fields.
          auto dot = field.find('.');
          auto section = fields_of.find(std::string(field.substr(0, dot)));
          if (section == fields_of.end()) return "";
          auto it = section->find(std::string(field.substr(dot + 1)));
          if (it == section->end() || it->is_null()) return field == "spec.hostNetwork" ? "false" : "";
          return it->is_string() ? it->get<std::string>() : it->dump();
        }))
      continue;
    if (!first) body += ',';
    first = false;
    body += pod;
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
  out["status"] = {{"capacity", resource_list_json(capacity)},
                   {"allocatable", resource_list_json(capacity)},
                   {"conditions", json::array({{{"type", "Ready"},
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
        fields.matches(
            [&ns](std::string_view field) -> std::string { return field == "metadata.name" ? ns : "Active"; }))
      items.push_back(namespace_json(ns, true));
  json out{
      {"kind", "NamespaceList"}, {"apiVersion", "v1"}, {"metadata", {{"resourceVersion", rv()}}}, {"items", items}};
  return json_response(out.dump());
}
}  // namespace fedmetrics::sim::detail
