#include "fedmetrics/sim/world.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "fedmetrics/k8s/time.hpp"

namespace fedmetrics::sim {

using k8s::Error;
using k8s::Expected;
using k8s::Quantity;

namespace {

// Thrown inside this file only, caught in parse_world: the parser is a tree
// walk, and unwinding to the top with the field's path is the plain way.
struct FieldError {
  std::string path;
  std::string message;
};

[[noreturn]] void fail(const std::string& path, const std::string& message) { throw FieldError{path, message}; }

std::string child(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}
std::string item(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

// A mapping node read field by field; unknown keys are errors, so that a typo
// in a world file is reported rather than silently ignored.
class Fields {
 public:
  Fields(const YAML::Node& node, std::string path, std::set<std::string> known)
      : node_(node), path_(std::move(path)), known_(std::move(known)) {
    if (!node_.IsMap()) fail(path_, "expected a mapping");
    for (const auto& kv : node_) {
      auto key = kv.first.as<std::string>();
      if (!known_.contains(key)) fail(child(path_, key), "unknown field");
    }
  }
  [[nodiscard]] YAML::Node get(std::string_view key) const {
    auto n = node_[std::string(key)];
    return n && !n.IsNull() ? n : YAML::Node();
  }
  [[nodiscard]] bool has(std::string_view key) const { return get(key).IsDefined() && !get(key).IsNull(); }
  [[nodiscard]] std::string path(std::string_view key) const { return child(path_, key); }

  std::string string(std::string_view key, bool required, std::string fallback = {}) const {
    auto n = get(key);
    if (!n.IsDefined() || n.IsNull()) {
      if (required) fail(path(key), "required");
      return fallback;
    }
    if (!n.IsScalar()) fail(path(key), "expected a string");
    auto s = n.as<std::string>();
    if (required && s.empty()) fail(path(key), "required");
    return s;
  }
  std::int64_t integer(std::string_view key, std::int64_t fallback, std::int64_t min, std::int64_t max) const {
    auto n = get(key);
    if (!n.IsDefined() || n.IsNull()) return fallback;
    return as_integer(n, path(key), min, max);
  }
  bool boolean(std::string_view key, bool fallback) const {
    auto n = get(key);
    if (!n.IsDefined() || n.IsNull()) return fallback;
    bool out = false;
    if (!n.IsScalar() || !YAML::convert<bool>::decode(n, out)) fail(path(key), "expected true or false");
    return out;
  }
  Quantity quantity(std::string_view key, Quantity fallback) const {
    auto n = get(key);
    if (!n.IsDefined() || n.IsNull()) return fallback;
    return as_quantity(n, path(key));
  }
  std::chrono::milliseconds duration(std::string_view key, std::chrono::milliseconds fallback) const {
    auto n = get(key);
    if (!n.IsDefined() || n.IsNull()) return fallback;
    if (!n.IsScalar()) fail(path(key), "expected a duration such as \"200ms\"");
    auto d = k8s::parse_duration(n.as<std::string>());
    if (!d) fail(path(key), d.error().message);
    if (d->count() < 0) fail(path(key), "must not be negative");
    return std::chrono::duration_cast<std::chrono::milliseconds>(*d);
  }
  std::vector<std::string> strings(std::string_view key) const {
    auto n = get(key);
    std::vector<std::string> out;
    if (!n.IsDefined() || n.IsNull()) return out;
    if (!n.IsSequence()) fail(path(key), "expected a list");
    for (std::size_t i = 0; i < n.size(); ++i) {
      if (!n[i].IsScalar()) fail(item(path(key), i), "expected a string");
      out.push_back(n[i].as<std::string>());
    }
    return out;
  }
  k8s::Labels labels(std::string_view key) const {
    auto n = get(key);
    k8s::Labels out;
    if (!n.IsDefined() || n.IsNull()) return out;
    if (!n.IsMap()) fail(path(key), "expected a mapping of strings");
    for (const auto& kv : n) {
      auto k = kv.first.as<std::string>();
      if (!kv.second.IsScalar()) fail(child(path(key), k), "expected a string");
      out[k] = kv.second.as<std::string>();
    }
    // Labels must be valid Kubernetes labels: check them through the selector grammar.
    for (const auto& [k, v] : out) {
      auto sel = k8s::LabelSelector::parse(k + "=" + v);
      if (!sel) fail(child(path(key), k), sel.error().message);
    }
    return out;
  }
  k8s::ResourceList resources(std::string_view key) const {
    auto n = get(key);
    k8s::ResourceList out;
    if (!n.IsDefined() || n.IsNull()) return out;
    if (!n.IsMap()) fail(path(key), "expected a mapping of quantities");
    for (const auto& kv : n) {
      auto k = kv.first.as<std::string>();
      out[k] = as_quantity(kv.second, child(path(key), k));
    }
    return out;
  }

  static std::int64_t as_integer(const YAML::Node& n, const std::string& path, std::int64_t min, std::int64_t max) {
    long long out = 0;
    if (!n.IsScalar() || !YAML::convert<long long>::decode(n, out)) fail(path, "expected an integer");
    if (out < min || out > max) fail(path, "must be between " + std::to_string(min) + " and " + std::to_string(max));
    return out;
  }
  static Quantity as_quantity(const YAML::Node& n, const std::string& path) {
    if (!n.IsScalar()) fail(path, "expected a quantity such as \"250m\"");
    auto q = Quantity::parse(n.as<std::string>());
    if (!q) fail(path, q.error().message);
    if (q->sign() < 0) fail(path, "must not be negative");
    return *q;
  }

 private:
  YAML::Node node_;
  std::string path_;
  std::set<std::string> known_;
};

// RFC 1123 label: what Kubernetes accepts for namespace and cluster names.
bool dns_label(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alnum(c) || c == '-'; });
}

// RFC 1123 subdomain: Deployment and node names.
bool dns_subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  std::size_t start = 0;
  while (start <= s.size()) {
    auto dot = s.find('.', start);
    if (dot == std::string_view::npos) dot = s.size();
    if (!dns_label(s.substr(start, dot - start))) return false;
    start = dot + 1;
  }
  return true;
}

MetricsApis parse_apis(const YAML::Node& n, const std::string& path) {
  if (!n.IsSequence()) fail(path, "expected a list of group/versions");
  MetricsApis apis{false, false, false, false};
  for (std::size_t i = 0; i < n.size(); ++i) {
    auto v = n[i].IsScalar() ? n[i].as<std::string>() : std::string();
    if (v == "metrics.k8s.io/v1beta1" || v == "metrics.k8s.io") apis.metrics = true;
    else if (v == "custom.metrics.k8s.io/v1beta2") apis.custom_v1beta2 = true;
    else if (v == "custom.metrics.k8s.io/v1beta1") apis.custom_v1beta1 = true;
    else if (v == "custom.metrics.k8s.io") apis.custom_v1beta1 = apis.custom_v1beta2 = true;
    else if (v == "external.metrics.k8s.io/v1beta1" || v == "external.metrics.k8s.io") apis.external = true;
    else
      fail(item(path, i), "unknown API \"" + v +
                              "\" (use metrics.k8s.io/v1beta1, custom.metrics.k8s.io/v1beta2, "
                              "custom.metrics.k8s.io/v1beta1 or external.metrics.k8s.io/v1beta1)");
  }
  return apis;
}

Faults parse_faults_yaml(const YAML::Node& n, const std::string& path) {
  Fields f(n, path,
           {"latency", "errorRate", "blackhole", "refuse", "malformedJson", "malformedGzip", "wrongCertificate",
            "expiredToken"});
  Faults out;
  out.latency = f.duration("latency", out.latency);
  if (f.has("errorRate")) {
    double rate = 0;
    auto r = f.get("errorRate");
    if (!r.IsScalar() || !YAML::convert<double>::decode(r, rate)) fail(f.path("errorRate"), "expected a number");
    if (!(rate >= 0.0 && rate <= 1.0)) fail(f.path("errorRate"), "must be between 0 and 1");
    out.error_rate = rate;
  }
  out.blackhole = f.boolean("blackhole", false);
  out.refuse = f.boolean("refuse", false);
  out.malformed_json = f.boolean("malformedJson", false);
  out.malformed_gzip = f.boolean("malformedGzip", false);
  out.wrong_certificate = f.boolean("wrongCertificate", false);
  out.expired_token = f.boolean("expiredToken", false);
  return out;
}

NodeSpec default_node(const std::string& member, std::size_t i) {
  NodeSpec node;
  node.name = member + "-node-" + std::to_string(i + 1);
  node.cpu = Quantity::from_value(4, k8s::QuantityFormat::DecimalSI);
  node.memory = Quantity::parse("16Gi").value();
  return node;
}

void add_node_labels(NodeSpec& node) {
  node.labels.emplace("kubernetes.io/hostname", node.name);
  node.labels.emplace("kubernetes.io/os", "linux");
  node.labels.emplace("kubernetes.io/arch", "amd64");
}

MemberSpec parse_member(const YAML::Node& n, const std::string& path) {
  Fields f(n, path, {"name", "port", "metricsApis", "latency", "weight", "kubernetesVersion", "nodes", "faults"});
  MemberSpec m;
  m.name = f.string("name", true);
  if (!dns_label(m.name)) fail(f.path("name"), "\"" + m.name + "\" is not a valid cluster name (RFC 1123 label)");
  m.port = static_cast<std::uint16_t>(f.integer("port", 0, 0, 65535));
  if (f.has("metricsApis")) m.apis = parse_apis(f.get("metricsApis"), f.path("metricsApis"));
  m.latency = f.duration("latency", m.latency);
  m.weight = f.integer("weight", 1, 0, 1'000'000);
  m.kubernetes_version = f.string("kubernetesVersion", false, m.kubernetes_version);
  if (m.kubernetes_version.size() < 2 || m.kubernetes_version[0] != 'v')
    fail(f.path("kubernetesVersion"), "expected a version such as v1.31.0");
  auto nodes = f.get("nodes");
  if (!nodes.IsDefined() || nodes.IsNull()) {
    m.nodes.push_back(default_node(m.name, 0));
  } else if (nodes.IsScalar()) {
    auto count = Fields::as_integer(nodes, f.path("nodes"), 1, 1000);
    for (std::int64_t i = 0; i < count; ++i) m.nodes.push_back(default_node(m.name, static_cast<std::size_t>(i)));
  } else if (nodes.IsSequence()) {
    if (nodes.size() == 0) fail(f.path("nodes"), "at least one node is required");
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      auto p = item(f.path("nodes"), i);
      Fields nf(nodes[i], p, {"name", "labels", "cpu", "memory"});
      NodeSpec node = default_node(m.name, i);
      node.name = nf.string("name", false, node.name);
      if (!dns_subdomain(node.name)) fail(nf.path("name"), "\"" + node.name + "\" is not a valid node name");
      node.labels = nf.labels("labels");
      node.cpu = nf.quantity("cpu", node.cpu);
      node.memory = nf.quantity("memory", node.memory);
      m.nodes.push_back(std::move(node));
    }
  } else {
    fail(f.path("nodes"), "expected a count or a list of nodes");
  }
  for (auto& node : m.nodes) add_node_labels(node);
  if (f.has("faults")) m.faults = parse_faults_yaml(f.get("faults"), f.path("faults"));
  return m;
}

ContainerSpec parse_container(const YAML::Node& n, const std::string& path) {
  Fields f(n, path, {"name", "image", "resources", "requests", "limits"});
  ContainerSpec c;
  c.name = f.string("name", true);
  if (!dns_label(c.name)) fail(f.path("name"), "\"" + c.name + "\" is not a valid container name");
  c.image = f.string("image", false, c.name);
  if (f.has("resources")) {
    Fields r(f.get("resources"), f.path("resources"), {"requests", "limits"});
    c.requests = r.resources("requests");
    c.limits = r.resources("limits");
  }
  for (const auto& [k, v] : f.resources("requests")) c.requests[k] = v;
  for (const auto& [k, v] : f.resources("limits")) c.limits[k] = v;
  return c;
}

Propagation parse_propagation(const YAML::Node& n, const std::string& path, const std::vector<MemberSpec>& members) {
  Fields f(n, path, {"clusters", "weights"});
  Propagation p;
  p.clusters = f.strings("clusters");
  std::set<std::string> seen;
  for (std::size_t i = 0; i < p.clusters.size(); ++i) {
    const auto& c = p.clusters[i];
    auto known = std::any_of(members.begin(), members.end(), [&](const MemberSpec& m) { return m.name == c; });
    if (!known) fail(item(f.path("clusters"), i), "no member named \"" + c + "\"");
    if (!seen.insert(c).second) fail(item(f.path("clusters"), i), "\"" + c + "\" is listed twice");
  }
  auto weights = f.get("weights");
  if (weights.IsDefined() && !weights.IsNull()) {
    if (!weights.IsMap()) fail(f.path("weights"), "expected a mapping of member name to weight");
    for (const auto& kv : weights) {
      auto name = kv.first.as<std::string>();
      auto wp = child(f.path("weights"), name);
      if (!seen.contains(name)) fail(wp, "\"" + name + "\" is not in clusters");
      p.weights[name] = Fields::as_integer(kv.second, wp, 0, 1'000'000);
    }
  }
  return p;
}

WorkloadSpec parse_workload(const YAML::Node& n, const std::string& path, const std::vector<MemberSpec>& members) {
  Fields f(n, path,
           {"name", "namespace", "kind", "replicas", "labels", "containers", "resources", "propagation", "load",
            "metrics", "startupDelay", "readinessDelay", "terminationGracePeriod", "baseline"});
  WorkloadSpec w;
  w.name = f.string("name", true);
  if (!dns_subdomain(w.name)) fail(f.path("name"), "\"" + w.name + "\" is not a valid Deployment name");
  w.namespace_name = f.string("namespace", false, "default");
  if (!dns_label(w.namespace_name)) fail(f.path("namespace"), "\"" + w.namespace_name + "\" is not a valid namespace");
  auto kind = f.string("kind", false, "Deployment");
  if (kind != "Deployment") fail(f.path("kind"), "only Deployment is simulated");
  w.replicas = static_cast<std::int32_t>(f.integer("replicas", 1, 0, 10'000));
  w.labels = f.labels("labels");
  if (w.labels.empty()) w.labels["app"] = w.name;
  auto containers = f.get("containers");
  if (!containers.IsDefined() || containers.IsNull() || !containers.IsSequence() || containers.size() == 0)
    fail(f.path("containers"), "at least one container is required");
  std::set<std::string> names;
  for (std::size_t i = 0; i < containers.size(); ++i) {
    w.containers.push_back(parse_container(containers[i], item(f.path("containers"), i)));
    if (!names.insert(w.containers.back().name).second)
      fail(item(f.path("containers"), i) + ".name", "duplicate container name");
  }
  if (f.has("resources")) {
    Fields r(f.get("resources"), f.path("resources"), {"requests", "limits"});
    w.pod_requests = r.resources("requests");
    w.pod_limits = r.resources("limits");
  }
  if (!f.has("propagation")) fail(f.path("propagation"), "required");
  w.propagation = parse_propagation(f.get("propagation"), f.path("propagation"), members);
  if (f.has("load")) {
    Fields l(f.get("load"), f.path("load"), {"cpu", "requestsPerSecond", "schedule"});
    w.load.cpu = l.quantity("cpu", {});
    w.load.requests_per_second = l.quantity("requestsPerSecond", {});
    // schedule: [{at: 10s, cpu: "2"}, {at: 70s, cpu: "0"}]; a field left out keeps its value.
    auto schedule = l.get("schedule");
    if (schedule.IsDefined() && !schedule.IsNull()) {
      if (!schedule.IsSequence()) fail(l.path("schedule"), "expected a list of {at, cpu, requestsPerSecond}");
      Load current = w.load;
      for (std::size_t i = 0; i < schedule.size(); ++i) {
        auto sp = item(l.path("schedule"), i);
        Fields c(schedule[i], sp, {"at", "cpu", "requestsPerSecond"});
        if (!c.has("at")) fail(c.path("at"), "required (a Go duration after the start, such as 10s)");
        LoadChange change{c.duration("at", {}), current};
        change.load.cpu = c.quantity("cpu", current.cpu);
        change.load.requests_per_second = c.quantity("requestsPerSecond", current.requests_per_second);
        if (!w.load_schedule.empty() && change.at < w.load_schedule.back().at)
          fail(c.path("at"), "must not be earlier than the previous entry's");
        current = change.load;
        w.load_schedule.push_back(std::move(change));
      }
    }
  }
  w.custom_metrics = f.strings("metrics");
  for (std::size_t i = 0; i < w.custom_metrics.size(); ++i) {
    const auto& m = w.custom_metrics[i];
    bool ok = !m.empty() && std::all_of(m.begin(), m.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == ':';
    });
    if (!ok) fail(item(f.path("metrics"), i), "\"" + m + "\" is not a valid metric name");
  }
  w.startup_delay = std::chrono::duration_cast<std::chrono::seconds>(f.duration("startupDelay", {}));
  w.readiness_delay = std::chrono::duration_cast<std::chrono::seconds>(f.duration("readinessDelay", {}));
  w.termination_grace = std::chrono::duration_cast<std::chrono::seconds>(f.duration("terminationGracePeriod", {}));
  w.baseline_cpu = Quantity::from_milli(1, k8s::QuantityFormat::DecimalSI);  // 1m: an idle nginx
  w.memory_usage = Quantity::parse("8Mi").value();
  if (f.has("baseline")) {
    Fields b(f.get("baseline"), f.path("baseline"), {"cpu", "memory"});
    w.baseline_cpu = b.quantity("cpu", w.baseline_cpu);
    w.memory_usage = b.quantity("memory", w.memory_usage);
  }
  return w;
}

UserSpec parse_user(const YAML::Node& n, const std::string& path, const std::vector<MemberSpec>& members) {
  Fields f(n, path, {"name", "token", "members", "groups", "rules"});
  UserSpec u;
  u.name = f.string("name", true);
  u.token = f.string("token", true);
  if (u.token.find_first_of(" \t\r\n") != std::string::npos) fail(f.path("token"), "must not contain white space");
  u.members = f.strings("members");
  for (std::size_t i = 0; i < u.members.size(); ++i) {
    auto known =
        std::any_of(members.begin(), members.end(), [&](const MemberSpec& m) { return m.name == u.members[i]; });
    if (!known) fail(item(f.path("members"), i), "no member named \"" + u.members[i] + "\"");
  }
  u.groups = f.strings("groups");
  auto rules = f.get("rules");
  bool has_rules = rules.IsDefined() && !rules.IsNull();
  if (has_rules && !rules.IsSequence()) fail(f.path("rules"), "expected a list");
  for (std::size_t i = 0; has_rules && i < rules.size(); ++i) {
    auto rp = item(f.path("rules"), i);
    Fields r(rules[i], rp, {"verbs", "apiGroups", "resources", "resourceNames", "nonResourceURLs"});
    PolicyRule rule{r.strings("verbs"), r.strings("apiGroups"), r.strings("resources"), r.strings("resourceNames"),
                    r.strings("nonResourceURLs")};
    if (rule.verbs.empty()) fail(r.path("verbs"), "at least one verb is required");
    if (rule.resources.empty() == rule.non_resource_urls.empty())
      fail(rp, "give either resources (with apiGroups) or nonResourceURLs");
    u.rules.push_back(std::move(rule));
  }
  return u;
}

ExternalMetricSpec parse_external(const YAML::Node& n, const std::string& path,
                                  const std::vector<MemberSpec>& members) {
  Fields f(n, path, {"name", "labels", "value", "namespace", "members"});
  ExternalMetricSpec e;
  e.name = f.string("name", true);
  e.labels = f.labels("labels");
  if (!f.has("value")) fail(f.path("value"), "required");
  e.value = f.quantity("value", {});
  e.namespace_name = f.string("namespace", false);
  e.members = f.strings("members");
  for (std::size_t i = 0; i < e.members.size(); ++i) {
    auto known =
        std::any_of(members.begin(), members.end(), [&](const MemberSpec& m) { return m.name == e.members[i]; });
    if (!known) fail(item(f.path("members"), i), "no member named \"" + e.members[i] + "\"");
  }
  return e;
}

World parse_world_node(const YAML::Node& root) {
  if (!root.IsDefined() || root.IsNull()) fail("", "the world file is empty");
  Fields f(root, "",
           {"apiVersion", "kind", "members", "namespaces", "workloads", "users", "externalMetrics", "aggregation"});
  World world;
  auto members = f.get("members");
  if (!members.IsDefined() || !members.IsSequence() || members.size() == 0)
    fail("members", "at least one member is required");
  std::set<std::string> member_names;
  std::set<std::uint16_t> ports;
  for (std::size_t i = 0; i < members.size(); ++i) {
    auto p = item("members", i);
    world.members.push_back(parse_member(members[i], p));
    const auto& m = world.members.back();
    if (!member_names.insert(m.name).second) fail(p + ".name", "duplicate member name \"" + m.name + "\"");
    if (m.port != 0 && !ports.insert(m.port).second)
      fail(p + ".port", "port " + std::to_string(m.port) + " is used twice");
    std::set<std::string> node_names;
    for (std::size_t j = 0; j < m.nodes.size(); ++j)
      if (!node_names.insert(m.nodes[j].name).second)
        fail(item(p + ".nodes", j) + ".name", "duplicate node name \"" + m.nodes[j].name + "\"");
  }
  world.namespaces = {"default", "kube-system"};
  auto add_namespace = [&](const std::string& ns) {
    if (std::find(world.namespaces.begin(), world.namespaces.end(), ns) == world.namespaces.end())
      world.namespaces.push_back(ns);
  };
  auto namespaces = f.strings("namespaces");
  for (std::size_t i = 0; i < namespaces.size(); ++i) {
    if (!dns_label(namespaces[i])) fail(item("namespaces", i), "\"" + namespaces[i] + "\" is not a valid namespace");
    add_namespace(namespaces[i]);
  }
  auto workloads = f.get("workloads");
  if (workloads.IsDefined() && !workloads.IsNull()) {
    if (!workloads.IsSequence()) fail("workloads", "expected a list");
    std::set<std::pair<std::string, std::string>> workload_names;  // (namespace, name)
    for (std::size_t i = 0; i < workloads.size(); ++i) {
      auto p = item("workloads", i);
      world.workloads.push_back(parse_workload(workloads[i], p, world.members));
      const auto& w = world.workloads.back();
      if (!workload_names.emplace(w.namespace_name, w.name).second)
        fail(p + ".name", "duplicate workload " + w.namespace_name + "/" + w.name);
      add_namespace(w.namespace_name);
    }
  }
  auto users = f.get("users");
  if (users.IsDefined() && !users.IsNull() && !users.IsSequence()) fail("users", "expected a list");
  if (!users.IsDefined() || users.IsNull() || users.size() == 0) {
    // No users declared: one, whose token is written into members.kubeconfig.
    world.users.push_back({"admin", std::string(kDefaultToken), {}, {"system:masters"}, {}});
  }
  for (std::size_t i = 0; users.IsDefined() && users.IsSequence() && i < users.size(); ++i) {
    world.users.push_back(parse_user(users[i], item("users", i), world.members));
    for (std::size_t j = 0; j + 1 < world.users.size(); ++j)
      if (world.users[j].token == world.users.back().token) fail(item("users", i) + ".token", "duplicate token");
  }
  if (f.has("aggregation")) {
    Fields a(f.get("aggregation"), "aggregation",
             {"address", "port", "serviceNamespace", "serviceName", "caFile", "insecureSkipTLSVerify"});
    AggregationSpec spec;
    spec.address = a.string("address", false, spec.address);
    spec.port = static_cast<std::uint16_t>(a.integer("port", spec.port, 1, 65535));
    spec.service_namespace = a.string("serviceNamespace", false, spec.service_namespace);
    spec.service_name = a.string("serviceName", false, spec.service_name);
    spec.ca_file = a.string("caFile", false);
    spec.insecure_skip_tls_verify = a.boolean("insecureSkipTLSVerify", false);
    if (spec.ca_file.empty() == !spec.insecure_skip_tls_verify)
      fail("aggregation", "give exactly one of caFile and insecureSkipTLSVerify: true (as an APIService)");
    if (!dns_label(spec.service_namespace)) fail("aggregation.serviceNamespace", "not a valid namespace");
    if (!dns_label(spec.service_name)) fail("aggregation.serviceName", "not a valid Service name");
    world.aggregation = spec;
  }
  auto externals = f.get("externalMetrics");
  if (externals.IsDefined() && !externals.IsNull()) {
    if (!externals.IsSequence()) fail("externalMetrics", "expected a list");
    for (std::size_t i = 0; i < externals.size(); ++i)
      world.external_metrics.push_back(parse_external(externals[i], item("externalMetrics", i), world.members));
  }
  return world;
}

}  // namespace

std::optional<std::size_t> World::member_index(std::string_view name) const {
  for (std::size_t i = 0; i < members.size(); ++i)
    if (members[i].name == name) return i;
  return std::nullopt;
}

std::optional<std::size_t> World::workload_index(std::string_view namespace_name, std::string_view name) const {
  for (std::size_t i = 0; i < workloads.size(); ++i)
    if (workloads[i].name == name && workloads[i].namespace_name == namespace_name) return i;
  return std::nullopt;
}

Expected<World> parse_world(std::string_view yaml_text) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    return Error{"invalid YAML: line " + std::to_string(e.mark.line + 1) + ", column " +
                 std::to_string(e.mark.column + 1) + ": " + e.msg};
  }
  try {
    return parse_world_node(root);
  } catch (const FieldError& e) {
    return Error{e.message}.at(e.path);
  } catch (const YAML::Exception& e) {
    return Error{"invalid world file: " + std::string(e.what())};
  }
}

Expected<Faults> faults_from_json(const nlohmann::json& in, Faults base) {
  if (!in.is_object()) return Error{"expected an object"};
  Faults out = base;
  static const std::set<std::string> known{"latency",       "errorRate",     "blackhole",        "refuse",
                                           "malformedJson", "malformedGzip", "wrongCertificate", "expiredToken"};
  for (const auto& [key, value] : in.items()) {
    if (!known.contains(key)) return Error{"unknown field"}.at(key);
    if (value.is_null()) continue;
    if (key == "latency") {
      if (!value.is_string()) return Error{"expected a duration string such as \"200ms\""}.at(key);
      auto d = k8s::parse_duration(value.get<std::string>());
      if (!d) return d.error().at(key);
      if (d->count() < 0) return Error{"must not be negative"}.at(key);
      out.latency = std::chrono::duration_cast<std::chrono::milliseconds>(*d);
    } else if (key == "errorRate") {
      if (!value.is_number()) return Error{"expected a number between 0 and 1"}.at(key);
      double rate = value.get<double>();
      if (!(rate >= 0.0 && rate <= 1.0)) return Error{"must be between 0 and 1"}.at(key);
      out.error_rate = rate;
    } else {
      if (!value.is_boolean()) return Error{"expected true or false"}.at(key);
      bool b = value.get<bool>();
      if (key == "blackhole") out.blackhole = b;
      else if (key == "refuse") out.refuse = b;
      else if (key == "malformedJson") out.malformed_json = b;
      else if (key == "malformedGzip") out.malformed_gzip = b;
      else if (key == "wrongCertificate") out.wrong_certificate = b;
      else out.expired_token = b;
    }
  }
  return out;
}

nlohmann::json to_json(const Faults& f) {
  return nlohmann::json{{"latency", k8s::format_duration(f.latency)},
                        {"errorRate", f.error_rate},
                        {"blackhole", f.blackhole},
                        {"refuse", f.refuse},
                        {"malformedJson", f.malformed_json},
                        {"malformedGzip", f.malformed_gzip},
                        {"wrongCertificate", f.wrong_certificate},
                        {"expiredToken", f.expired_token}};
}

}  // namespace fedmetrics::sim
