#include "fedmetrics/sim/world.hpp"

#include <algorithm>
#include <set>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/time.hpp"
#include "sim/world_fields.hpp"

namespace fedmetrics::sim {

using k8s::Error;
using k8s::Expected;
using k8s::Quantity;

namespace {

using detail::child;
using detail::convert_scalar;
using detail::dns_label;
using detail::dns_subdomain;
using detail::Fields;
using detail::item;
using k8s::FieldReader;
using nlohmann::json;

MetricsApis parse_apis(const Fields& f) {
  MetricsApis apis{false, false, false, false};
  const auto* n = f.get("metricsApis");
  if (n == nullptr) return apis;
  const std::string path = f.path("metricsApis");
  if (!n->is_array()) {
    f.fail(path, "expected a list of group/versions");
    return apis;
  }
  for (std::size_t i = 0; i < n->size(); ++i) {
    auto v = (*n)[i].is_string() ? (*n)[i].get<std::string>() : std::string();
    if (v == "metrics.k8s.io/v1beta1" || v == "metrics.k8s.io") apis.metrics = true;
    else if (v == "custom.metrics.k8s.io/v1beta2") apis.custom_v1beta2 = true;
    else if (v == "custom.metrics.k8s.io/v1beta1") apis.custom_v1beta1 = true;
    else if (v == "custom.metrics.k8s.io") apis.custom_v1beta1 = apis.custom_v1beta2 = true;
    else if (v == "external.metrics.k8s.io/v1beta1" || v == "external.metrics.k8s.io") apis.external = true;
    else {
      f.fail(item(path, i), "unknown API \"" + v +
                                "\" (use metrics.k8s.io/v1beta1, custom.metrics.k8s.io/v1beta2, "
                                "custom.metrics.k8s.io/v1beta1 or external.metrics.k8s.io/v1beta1)");
      return apis;
    }
  }
  return apis;
}

Faults parse_faults(FieldReader& reader, const json& n, const std::string& path) {
  Fields f(reader, n, path,
           {"latency", "errorRate", "blackhole", "refuse", "malformedJson", "malformedGzip", "wrongCertificate",
            "expiredToken"});
  Faults out;
  out.latency = f.duration("latency", out.latency);
  if (const auto* r = f.get("errorRate")) {
    double rate = 0;
    if (!convert_scalar(*r, rate)) f.fail(f.path("errorRate"), "expected a number");
    else if (!(rate >= 0.0 && rate <= 1.0)) f.fail(f.path("errorRate"), "must be between 0 and 1");
    else out.error_rate = rate;
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

MemberSpec parse_member(FieldReader& reader, const json& n, const std::string& path) {
  Fields f(reader, n, path,
           {"name", "port", "metricsApis", "latency", "weight", "kubernetesVersion", "nodes", "faults"});
  MemberSpec m;
  m.name = f.string("name", true);
  if (!dns_label(m.name)) f.fail(f.path("name"), "\"" + m.name + "\" is not a valid cluster name (RFC 1123 label)");
  m.port = static_cast<std::uint16_t>(f.integer("port", 0, 0, 65535));
  if (f.has("metricsApis")) m.apis = parse_apis(f);
  m.latency = f.duration("latency", m.latency);
  m.weight = f.integer("weight", 1, 0, 1'000'000);
  m.kubernetes_version = f.string("kubernetesVersion", false, m.kubernetes_version);
  if (m.kubernetes_version.size() < 2 || m.kubernetes_version[0] != 'v')
    f.fail(f.path("kubernetesVersion"), "expected a version such as v1.31.0");
  const auto* nodes = f.get("nodes");
  if (nodes == nullptr) {
    m.nodes.push_back(default_node(m.name, 0));
  } else if (nodes->is_string()) {
    auto count = f.as_integer(*nodes, f.path("nodes"), 1, 1000);
    for (std::int64_t i = 0; i < count && reader.ok(); ++i)
      m.nodes.push_back(default_node(m.name, static_cast<std::size_t>(i)));
  } else if (nodes->is_array()) {
    if (nodes->empty()) f.fail(f.path("nodes"), "at least one node is required");
    for (std::size_t i = 0; i < nodes->size() && reader.ok(); ++i) {
      auto p = item(f.path("nodes"), i);
      Fields nf(reader, (*nodes)[i], p, {"name", "labels", "cpu", "memory"});
      NodeSpec node = default_node(m.name, i);
      node.name = nf.string("name", false, node.name);
      if (!dns_subdomain(node.name)) nf.fail(nf.path("name"), "\"" + node.name + "\" is not a valid node name");
      node.labels = nf.labels("labels");
      node.cpu = nf.quantity("cpu", node.cpu);
      node.memory = nf.quantity("memory", node.memory);
      m.nodes.push_back(std::move(node));
    }
  } else {
    f.fail(f.path("nodes"), "expected a count or a list of nodes");
  }
  for (auto& node : m.nodes) add_node_labels(node);
  if (const auto* faults = f.get("faults")) m.faults = parse_faults(reader, *faults, f.path("faults"));
  return m;
}

// `requests` and `limits` of a container or a pod.
void parse_resources(const Fields& f, k8s::ResourceList& requests, k8s::ResourceList& limits) {
  const auto* resources = f.get("resources");
  if (resources == nullptr) return;
  Fields r(f.reader(), *resources, f.path("resources"), {"requests", "limits"});
  requests = r.resources("requests");
  limits = r.resources("limits");
}

ContainerSpec parse_container(FieldReader& reader, const json& n, const std::string& path) {
  Fields f(reader, n, path, {"name", "image", "resources", "requests", "limits"});
  ContainerSpec c;
  c.name = f.string("name", true);
  if (!dns_label(c.name)) f.fail(f.path("name"), "\"" + c.name + "\" is not a valid container name");
  c.image = f.string("image", false, c.name);
  parse_resources(f, c.requests, c.limits);
  for (const auto& [k, v] : f.resources("requests")) c.requests[k] = v;
  for (const auto& [k, v] : f.resources("limits")) c.limits[k] = v;
  return c;
}

// Whether a member of `members` is called `name`; else "no member named" at `path`.
void check_member(const Fields& f, const std::vector<MemberSpec>& members, const std::string& name,
                  const std::string& path) {
  auto known = std::any_of(members.begin(), members.end(), [&](const MemberSpec& m) { return m.name == name; });
  if (!known) f.fail(path, "no member named \"" + name + "\"");
}

// overflowAffinities: the groups after the primary one, each named, its
// members known; a member an earlier group lists belongs to that group (as
// Karmada schedules a cluster by the first group that matches it).
void parse_overflow(const Fields& f, Propagation& p, const std::vector<MemberSpec>& members) {
  const auto* overflow = f.get("overflowAffinities");
  if (overflow == nullptr) return;
  if (!overflow->is_array() || overflow->empty()) {
    f.fail(f.path("overflowAffinities"), "expected a list of {affinityName, clusterNames}");
    return;
  }
  if (f.has("weights"))
    f.fail(f.path("weights"),
           "overflowAffinities divide the replicas by what each member can run (dynamic weight): "
           "give weights or overflowAffinities, not both");
  if (p.clusters.empty()) f.fail(f.path("clusters"), "the primary group of overflowAffinities needs a member");
  p.groups.push_back({f.string("affinityName", false, "primary"), p.clusters});
  for (std::size_t i = 0; i < overflow->size() && f.reader().ok(); ++i) {
    auto op = item(f.path("overflowAffinities"), i);
    Fields o(f.reader(), (*overflow)[i], op, {"affinityName", "clusterNames"});
    ClusterGroup group{o.string("affinityName", true), o.strings("clusterNames")};
    if (group.name.size() > 32) o.fail(o.path("affinityName"), "must be at most 32 characters");
    for (const auto& earlier : p.groups)
      if (earlier.name == group.name) o.fail(o.path("affinityName"), "\"" + group.name + "\" names an earlier group");
    if (group.clusters.empty()) o.fail(o.path("clusterNames"), "at least one member is required");
    for (std::size_t j = 0; j < group.clusters.size(); ++j) {
      const auto& c = group.clusters[j];
      check_member(o, members, c, item(o.path("clusterNames"), j));
      if (std::find(p.clusters.begin(), p.clusters.end(), c) == p.clusters.end()) p.clusters.push_back(c);
    }
    p.groups.push_back(std::move(group));
  }
}

Propagation parse_propagation(FieldReader& reader, const json& n, const std::string& path,
                              const std::vector<MemberSpec>& members) {
  Fields f(reader, n, path, {"clusters", "weights", "affinityName", "overflowAffinities"});
  Propagation p;
  p.clusters = f.strings("clusters");
  std::set<std::string> seen;
  for (std::size_t i = 0; i < p.clusters.size(); ++i) {
    const auto& c = p.clusters[i];
    check_member(f, members, c, item(f.path("clusters"), i));
    if (!seen.insert(c).second) f.fail(item(f.path("clusters"), i), "\"" + c + "\" is listed twice");
  }
  if (f.has("affinityName") && !f.has("overflowAffinities"))
    f.fail(f.path("affinityName"), "names the primary group of overflowAffinities, which are not given");
  parse_overflow(f, p, members);
  if (const auto* weights = f.get("weights")) {
    if (!weights->is_object()) {
      f.fail(f.path("weights"), "expected a mapping of member name to weight");
      return p;
    }
    for (const auto& [name, weight] : weights->items()) {
      auto wp = child(f.path("weights"), name);
      if (!seen.contains(name)) f.fail(wp, "\"" + name + "\" is not in clusters");
      p.weights[name] = f.as_integer(weight, wp, 0, 1'000'000);
    }
  }
  return p;
}

void parse_load(const Fields& f, WorkloadSpec& w) {
  const auto* load = f.get("load");
  if (load == nullptr) return;
  Fields l(f.reader(), *load, f.path("load"), {"cpu", "requestsPerSecond", "schedule"});
  w.load.cpu = l.quantity("cpu", {});
  w.load.requests_per_second = l.quantity("requestsPerSecond", {});
  // schedule: [{at: 10s, cpu: "2"}, {at: 70s, cpu: "0"}]; a field left out keeps its value.
  const auto* schedule = l.get("schedule");
  if (schedule == nullptr) return;
  if (!schedule->is_array()) {
    l.fail(l.path("schedule"), "expected a list of {at, cpu, requestsPerSecond}");
    return;
  }
  Load current = w.load;
  for (std::size_t i = 0; i < schedule->size() && f.reader().ok(); ++i) {
    auto sp = item(l.path("schedule"), i);
    Fields c(f.reader(), (*schedule)[i], sp, {"at", "cpu", "requestsPerSecond"});
    if (!c.has("at")) c.fail(c.path("at"), "required (a Go duration after the start, such as 10s)");
    LoadChange change{c.duration("at", {}), current};
    change.load.cpu = c.quantity("cpu", current.cpu);
    change.load.requests_per_second = c.quantity("requestsPerSecond", current.requests_per_second);
    if (!w.load_schedule.empty() && change.at < w.load_schedule.back().at)
      c.fail(c.path("at"), "must not be earlier than the previous entry's");
    current = change.load;
    w.load_schedule.push_back(std::move(change));
  }
}

WorkloadSpec parse_workload(FieldReader& reader, const json& n, const std::string& path,
                            const std::vector<MemberSpec>& members) {
  Fields f(reader, n, path,
           {"name", "namespace", "kind", "replicas", "labels", "containers", "resources", "propagation", "load",
            "metrics", "startupDelay", "readinessDelay", "terminationGracePeriod", "baseline"});
  WorkloadSpec w;
  w.name = f.string("name", true);
  if (!dns_subdomain(w.name)) f.fail(f.path("name"), "\"" + w.name + "\" is not a valid Deployment name");
  w.namespace_name = f.string("namespace", false, "default");
  if (!dns_label(w.namespace_name))
    f.fail(f.path("namespace"), "\"" + w.namespace_name + "\" is not a valid namespace");
  auto kind = f.string("kind", false, "Deployment");
  if (kind != "Deployment") f.fail(f.path("kind"), "only Deployment is simulated");
  w.replicas = static_cast<std::int32_t>(f.integer("replicas", 1, 0, 10'000));
  w.labels = f.labels("labels");
  if (w.labels.empty()) w.labels["app"] = w.name;
  const auto* containers = f.get("containers");
  if (containers == nullptr || !containers->is_array() || containers->empty())
    f.fail(f.path("containers"), "at least one container is required");
  std::set<std::string> names;
  for (std::size_t i = 0; containers != nullptr && containers->is_array() && i < containers->size() && reader.ok();
       ++i) {
    w.containers.push_back(parse_container(reader, (*containers)[i], item(f.path("containers"), i)));
    if (!names.insert(w.containers.back().name).second)
      f.fail(item(f.path("containers"), i) + ".name", "duplicate container name");
  }
  parse_resources(f, w.pod_requests, w.pod_limits);
  const auto* propagation = f.get("propagation");
  if (propagation == nullptr) f.fail(f.path("propagation"), "required");
  else w.propagation = parse_propagation(reader, *propagation, f.path("propagation"), members);
  parse_load(f, w);
  w.custom_metrics = f.strings("metrics");
  for (std::size_t i = 0; i < w.custom_metrics.size(); ++i) {
    const auto& m = w.custom_metrics[i];
    bool ok = !m.empty() && std::all_of(m.begin(), m.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == ':';
    });
    if (!ok) f.fail(item(f.path("metrics"), i), "\"" + m + "\" is not a valid metric name");
  }
  w.startup_delay = std::chrono::duration_cast<std::chrono::seconds>(f.duration("startupDelay", {}));
  w.readiness_delay = std::chrono::duration_cast<std::chrono::seconds>(f.duration("readinessDelay", {}));
  w.termination_grace = std::chrono::duration_cast<std::chrono::seconds>(f.duration("terminationGracePeriod", {}));
  w.baseline_cpu = Quantity::from_milli(1, k8s::QuantityFormat::DecimalSI);  // 1m: an idle nginx
  w.memory_usage = Quantity::parse("8Mi").value();
  if (const auto* baseline = f.get("baseline")) {
    Fields b(reader, *baseline, f.path("baseline"), {"cpu", "memory"});
    w.baseline_cpu = b.quantity("cpu", w.baseline_cpu);
    w.memory_usage = b.quantity("memory", w.memory_usage);
  }
  return w;
}

UserSpec parse_user(FieldReader& reader, const json& n, const std::string& path,
                    const std::vector<MemberSpec>& members) {
  Fields f(reader, n, path, {"name", "token", "members", "groups", "rules"});
  UserSpec u;
  u.name = f.string("name", true);
  u.token = f.string("token", true);
  if (u.token.find_first_of(" \t\r\n") != std::string::npos) f.fail(f.path("token"), "must not contain white space");
  u.members = f.strings("members");
  for (std::size_t i = 0; i < u.members.size(); ++i) check_member(f, members, u.members[i], item(f.path("members"), i));
  u.groups = f.strings("groups");
  const auto* rules = f.get("rules");
  if (rules == nullptr) return u;
  if (!rules->is_array()) {
    f.fail(f.path("rules"), "expected a list");
    return u;
  }
  for (std::size_t i = 0; i < rules->size() && reader.ok(); ++i) {
    auto rp = item(f.path("rules"), i);
    Fields r(reader, (*rules)[i], rp, {"verbs", "apiGroups", "resources", "resourceNames", "nonResourceURLs"});
    PolicyRule rule{r.strings("verbs"), r.strings("apiGroups"), r.strings("resources"), r.strings("resourceNames"),
                    r.strings("nonResourceURLs")};
    if (rule.verbs.empty()) r.fail(r.path("verbs"), "at least one verb is required");
    if (rule.resources.empty() == rule.non_resource_urls.empty())
      r.fail(rp, "give either resources (with apiGroups) or nonResourceURLs");
    u.rules.push_back(std::move(rule));
  }
  return u;
}

ExternalMetricSpec parse_external(FieldReader& reader, const json& n, const std::string& path,
                                  const std::vector<MemberSpec>& members) {
  Fields f(reader, n, path, {"name", "labels", "value", "namespace", "members"});
  ExternalMetricSpec e;
  e.name = f.string("name", true);
  e.labels = f.labels("labels");
  if (!f.has("value")) f.fail(f.path("value"), "required");
  e.value = f.quantity("value", {});
  e.namespace_name = f.string("namespace", false);
  e.members = f.strings("members");
  for (std::size_t i = 0; i < e.members.size(); ++i) check_member(f, members, e.members[i], item(f.path("members"), i));
  return e;
}

void parse_aggregation(const Fields& f, World& world) {
  const auto* aggregation = f.get("aggregation");
  if (aggregation == nullptr) return;
  Fields a(f.reader(), *aggregation, "aggregation",
           {"address", "port", "serviceNamespace", "serviceName", "caFile", "insecureSkipTLSVerify"});
  AggregationSpec spec;
  spec.address = a.string("address", false, spec.address);
  spec.port = static_cast<std::uint16_t>(a.integer("port", spec.port, 1, 65535));
  spec.service_namespace = a.string("serviceNamespace", false, spec.service_namespace);
  spec.service_name = a.string("serviceName", false, spec.service_name);
  spec.ca_file = a.string("caFile", false);
  spec.insecure_skip_tls_verify = a.boolean("insecureSkipTLSVerify", false);
  if (spec.ca_file.empty() == !spec.insecure_skip_tls_verify)
    a.fail("aggregation", "give exactly one of caFile and insecureSkipTLSVerify: true (as an APIService)");
  if (!dns_label(spec.service_namespace)) a.fail("aggregation.serviceNamespace", "not a valid namespace");
  if (!dns_label(spec.service_name)) a.fail("aggregation.serviceName", "not a valid Service name");
  world.aggregation = spec;
}

// The list at `key` of the top level: each element read by `parse(element, its path)`.
template <class Parse>
void each_listed(const Fields& f, std::string_view key, Parse&& parse) {
  const auto* list = f.get(key);
  if (list == nullptr) return;
  if (!list->is_array()) {
    f.fail(std::string(key), "expected a list");
    return;
  }
  for (std::size_t i = 0; i < list->size() && f.reader().ok(); ++i) parse((*list)[i], item(std::string(key), i));
}

World parse_world_json(FieldReader& reader, const json& root) {
  World world;
  if (root.is_null()) {
    reader.fail("", "the world file is empty");
    return world;
  }
  Fields f(reader, root, "",
           {"apiVersion", "kind", "members", "namespaces", "workloads", "users", "externalMetrics", "aggregation"});
  const auto* members = f.get("members");
  if (members == nullptr || !members->is_array() || members->empty())
    f.fail("members", "at least one member is required");
  std::set<std::string> member_names;
  std::set<std::uint16_t> ports;
  for (std::size_t i = 0; members != nullptr && members->is_array() && i < members->size() && reader.ok(); ++i) {
    auto p = item("members", i);
    world.members.push_back(parse_member(reader, (*members)[i], p));
    const auto& m = world.members.back();
    if (!member_names.insert(m.name).second) f.fail(p + ".name", "duplicate member name \"" + m.name + "\"");
    if (m.port != 0 && !ports.insert(m.port).second)
      f.fail(p + ".port", "port " + std::to_string(m.port) + " is used twice");
    std::set<std::string> node_names;
    for (std::size_t j = 0; j < m.nodes.size(); ++j)
      if (!node_names.insert(m.nodes[j].name).second)
        f.fail(item(p + ".nodes", j) + ".name", "duplicate node name \"" + m.nodes[j].name + "\"");
  }
  world.namespaces = {"default", "kube-system"};
  auto add_namespace = [&](const std::string& ns) {
    if (std::find(world.namespaces.begin(), world.namespaces.end(), ns) == world.namespaces.end())
      world.namespaces.push_back(ns);
  };
  auto namespaces = f.strings("namespaces");
  for (std::size_t i = 0; i < namespaces.size(); ++i) {
    if (!dns_label(namespaces[i])) f.fail(item("namespaces", i), "\"" + namespaces[i] + "\" is not a valid namespace");
    add_namespace(namespaces[i]);
  }
  std::set<std::pair<std::string, std::string>> workload_names;  // (namespace, name)
  each_listed(f, "workloads", [&](const json& element, const std::string& p) {
    world.workloads.push_back(parse_workload(reader, element, p, world.members));
    const auto& w = world.workloads.back();
    if (!workload_names.emplace(w.namespace_name, w.name).second)
      f.fail(p + ".name", "duplicate workload " + w.namespace_name + "/" + w.name);
    add_namespace(w.namespace_name);
  });
  const auto* users = f.get("users");
  if (users == nullptr || (users->is_array() && users->empty())) {
    // No users declared: one, whose token is written into members.kubeconfig.
    world.users.push_back({"admin", std::string(kDefaultToken), {}, {"system:masters"}, {}});
  }
  each_listed(f, "users", [&](const json& element, const std::string& p) {
    world.users.push_back(parse_user(reader, element, p, world.members));
    for (std::size_t j = 0; j + 1 < world.users.size(); ++j)
      if (world.users[j].token == world.users.back().token) f.fail(p + ".token", "duplicate token");
  });
  parse_aggregation(f, world);
  each_listed(f, "externalMetrics", [&](const json& element, const std::string& p) {
    world.external_metrics.push_back(parse_external(reader, element, p, world.members));
  });
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
  auto document = detail::world_document(yaml_text);
  if (!document) return document.error();
  FieldReader reader;
  World world = parse_world_json(reader, *document);
  return reader.finish(std::move(world));
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
