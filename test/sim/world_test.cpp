#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "fedmetrics/sim/world.hpp"
#include "sim/sim_test_support.hpp"

using namespace fedmetrics::sim;
using fedmetrics::k8s::Quantity;

namespace {
std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

TEST_CASE("World: the shared test world parses with every field", "[sim][world]") {
  auto w = sim_test::world();
  REQUIRE(w.members.size() == 3);
  CHECK(w.members[0].name == "member1");
  CHECK(w.members[0].apis == MetricsApis{});
  CHECK(w.members[1].apis == MetricsApis{true, false, true, false});
  CHECK(w.members[2].apis == MetricsApis{true, false, false, false});
  REQUIRE(w.members[0].nodes.size() == 2);
  CHECK(w.members[0].nodes[0].cpu == Quantity::parse("4").value());
  CHECK(w.members[0].nodes[0].labels.at("zone") == "a");
  CHECK(w.members[0].nodes[0].labels.at("kubernetes.io/hostname") == "m1-node-a");
  CHECK(w.members[1].nodes.size() == 1);  // default: one node
  CHECK(w.members[1].nodes[0].name == "member2-node-1");
  CHECK(w.namespaces == std::vector<std::string>{"default", "kube-system", "shop"});
  REQUIRE(w.workloads.size() == 2);
  const auto& web = w.workloads[0];
  CHECK(web.namespace_name == "shop");
  CHECK(web.replicas == 4);
  CHECK(web.containers[0].requests.at("cpu") == Quantity::parse("100m").value());
  CHECK(web.containers[0].limits.at("memory") == Quantity::parse("64Mi").value());
  CHECK(web.propagation.clusters == std::vector<std::string>{"member1", "member2"});
  CHECK(web.propagation.weights.at("member2") == 1);
  CHECK(web.load.cpu == Quantity::parse("1").value());
  CHECK(web.load.requests_per_second == Quantity::parse("8").value());
  CHECK(web.custom_metrics == std::vector<std::string>{"http_requests"});
  CHECK(w.workloads[1].containers[0].requests.at("cpu") == Quantity::parse("25m").value());
  CHECK(w.users.size() == 2);
  CHECK(w.users[1].members == std::vector<std::string>{"member2"});
  CHECK(w.external_metrics.size() == 2);
  CHECK(w.member_index("member3") == 2u);
  CHECK(w.workload_index("shop", "web") == 0u);
  CHECK_FALSE(w.workload_index("default", "web"));
}

TEST_CASE("World: the shipped example worlds parse", "[sim][world]") {
  for (const char* name : {"nginx.yaml", "sample-app.yaml", "demo.yaml"}) {
    INFO(name);
    auto w = parse_world(read(std::string(FEDMETRICS_SOURCE_DIR) + "/examples/worlds/" + name));
    REQUIRE(w.ok());
    CHECK(w->members.size() == 3);
  }
  auto nginx = parse_world(read(std::string(FEDMETRICS_SOURCE_DIR) + "/examples/worlds/nginx.yaml")).value();
  REQUIRE(nginx.workloads.size() == 1);
  CHECK(nginx.workloads[0].containers[0].limits.at("cpu") == Quantity::parse("25m").value());
  CHECK(nginx.workloads[0].propagation.clusters == std::vector<std::string>{"member1", "member2"});
  auto demo = parse_world(read(std::string(FEDMETRICS_SOURCE_DIR) + "/examples/worlds/demo.yaml")).value();
  CHECK(demo.members[1].apis == MetricsApis{true, false, true, false});
  CHECK_FALSE(demo.members[2].apis.custom());
}

TEST_CASE("World: errors name the field", "[sim][world]") {
  const std::string user = "users: [{name: a, token: t}]\n";
  const std::string container = "containers: [{name: c}]";
  struct Row {
    std::string yaml;
    std::string error;
  };
  const Row rows[] = {
      {"", "the world file is empty"},
      {"members: []\n" + user, "members: at least one member is required"},
      {"members: [{name: member1}, {port: 5}]\n" + user, "members[1].name: required"},
      {"members: [{name: member1}, {name: member1}]\n" + user, "members[1].name: duplicate member name \"member1\""},
      {"members: [{name: Member_1}]\n" + user,
       "members[0].name: \"Member_1\" is not a valid cluster name (RFC 1123 label)"},
      {"members: [{name: m1, lateny: 5ms}]\n" + user, "members[0].lateny: unknown field"},
      {"members: [{name: m1, latency: fast}]\n" + user, "members[0].latency: time: invalid duration \"fast\""},
      {"members: [{name: m1, port: 70000}]\n" + user, "members[0].port: must be between 0 and 65535"},
      {"members: [{name: m1, metricsApis: [metrics.k8s.io/v2]}]\n" + user,
       "members[0].metricsApis[0]: unknown API \"metrics.k8s.io/v2\" (use metrics.k8s.io/v1beta1, "
       "custom.metrics.k8s.io/v1beta2, custom.metrics.k8s.io/v1beta1 or external.metrics.k8s.io/v1beta1)"},
      {"members: [{name: m1, faults: {errorRate: 2}}]\n" + user,
       "members[0].faults.errorRate: must be between 0 and 1"},
      {"members: [{name: m1}]\nusers: {name: a}\n", "users: expected a list"},
      {"members: [{name: m1}]\nusers: [{name: a}]\n", "users[0].token: required"},
      {"members: [{name: m1}]\nworkloads: [{name: web, " + container + "}]\n" + user,
       "workloads[0].propagation: required"},
      {"members: [{name: m1}]\nworkloads: [{name: web, propagation: {clusters: [m1]}}]\n" + user,
       "workloads[0].containers: at least one container is required"},
      {"members: [{name: m1}]\nworkloads: [{name: web, " + container + ", propagation: {clusters: [m2]}}]\n" + user,
       "workloads[0].propagation.clusters[0]: no member named \"m2\""},
      {"members: [{name: m1}]\nworkloads: [{name: web, " + container +
           ", propagation: {clusters: [m1], weights: {m2: 1}}}]\n" + user,
       "workloads[0].propagation.weights.m2: \"m2\" is not in clusters"},
      {"members: [{name: m1}]\nworkloads: [{name: web, containers: [{name: c, requests: {cpu: lots}}], propagation: "
       "{clusters: [m1]}}]\n" +
           user,
       "workloads[0].containers[0].requests.cpu: quantities must match the regular expression "
       "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
      {"members: [{name: m1}]\nworkloads: [{name: web, " + container +
           ", propagation: {clusters: [m1]}, load: {cpu: -1}}]\n" + user,
       "workloads[0].load.cpu: must not be negative"},
      {"members: [{name: m1}]\nworkloads: [{name: web, " + container +
           ", propagation: {clusters: [m1]}}, {name: web, " + container + ", propagation: {clusters: [m1]}}]\n" + user,
       "workloads[1].name: duplicate workload default/web"},
      {"members: [{name: m1}, {name: m2}]\nworkloads: [{name: web, " + container +
           ", propagation: {clusters: [m1], weights: {m1: 1}, overflowAffinities: [{affinityName: b, clusterNames: "
           "[m2]}]}}]\n" +
           user,
       "workloads[0].propagation.weights: overflowAffinities divide the replicas by what each member can run "
       "(dynamic weight): give weights or overflowAffinities, not both"},
      {"members: [{name: m1}]\nworkloads: [{name: web, " + container +
           ", propagation: {clusters: [m1], overflowAffinities: [{affinityName: b, clusterNames: [m2]}]}}]\n" + user,
       "workloads[0].propagation.overflowAffinities[0].clusterNames[0]: no member named \"m2\""},
      {"members: [{name: m1}, {name: m2}]\nworkloads: [{name: web, " + container +
           ", propagation: {clusters: [m1], overflowAffinities: [{clusterNames: [m2]}]}}]\n" + user,
       "workloads[0].propagation.overflowAffinities[0].affinityName: required"},
      {"members: [{name: m1}, {name: m2}]\nworkloads: [{name: web, " + container +
           ", propagation: {clusters: [m1], affinityName: a, overflowAffinities: [{affinityName: a, clusterNames: "
           "[m2]}]}}]\n" +
           user,
       "workloads[0].propagation.overflowAffinities[0].affinityName: \"a\" names an earlier group"},
      {"members: [{name: m1}, {name: m2}]\nworkloads: [{name: web, " + container +
           ", propagation: {clusters: [m1], overflowAffinities: [{affinityName: b, clusterNames: []}]}}]\n" + user,
       "workloads[0].propagation.overflowAffinities[0].clusterNames: at least one member is required"},
      {"members: [{name: m1}, {name: m2}]\nworkloads: [{name: web, " + container +
           ", propagation: {clusters: [m1], overflowAffinities: []}}]\n" + user,
       "workloads[0].propagation.overflowAffinities: expected a list of {affinityName, clusterNames}"},
      {"members: [{name: m1}, {name: m2}]\nworkloads: [{name: web, " + container +
           ", propagation: {clusters: [], overflowAffinities: [{affinityName: b, clusterNames: [m2]}]}}]\n" + user,
       "workloads[0].propagation.clusters: the primary group of overflowAffinities needs a member"},
      {"members: [{name: m1}]\nworkloads: [{name: web, " + container +
           ", propagation: {clusters: [m1], affinityName: a}}]\n" + user,
       "workloads[0].propagation.affinityName: names the primary group of overflowAffinities, which are not given"},
      {"members: [{name: m1}]\nexternalMetrics: [{name: q}]\n" + user, "externalMetrics[0].value: required"},
      {"members: [{name: m1}\n", "invalid YAML"},
  };
  for (const auto& row : rows) {
    INFO(row.yaml);
    auto w = parse_world(row.yaml);
    REQUIRE_FALSE(w.ok());
    if (row.error == "invalid YAML") CHECK_THAT(w.error().message, Catch::StartsWith("invalid YAML: line"));
    else CHECK(w.error().message == row.error);
  }
}

TEST_CASE("World: a scalar reads as yaml-cpp converts it, quoted or not", "[sim][world]") {
  auto w = parse_world(
      "members: [{name: m1, port: '8443', weight: 0x10, nodes: \"2\", "
      "faults: {blackhole: yes, refuse: On, errorRate: '0.25', latency: 5ms}}]\n");
  REQUIRE(w.ok());
  const auto& m = w->members[0];
  CHECK(m.port == 8443);
  CHECK(m.weight == 16);
  CHECK(m.nodes.size() == 2);
  CHECK(m.faults.blackhole);
  CHECK(m.faults.refuse);
  CHECK(m.faults.error_rate == 0.25);
  CHECK(m.faults.latency == std::chrono::milliseconds(5));
  // A null value is an absent field, a null key is the field "null", a key
  // that is a mapping is refused with its line.
  CHECK(parse_world("members: [{name: m1, port: ~, latency: }]\n").ok());
  CHECK(parse_world("members: [{name: m1, ~: 1}]\n").error().message == "members[0].null: unknown field");
  CHECK(parse_world("members:\n  - name: m1\n    {a: b}: 1\n").error().message ==
        "invalid world file: yaml-cpp: error at line 3, column 5: bad conversion");
}

TEST_CASE("World: the first error is reported and aliases cannot expand without bound", "[sim][world]") {
  CHECK(parse_world("members: [{name: m1, port: x, weight: y}]\nnamespaces: [Bad]\n").error().message ==
        "members[0].port: expected an integer");
  // An alias inside the node it names, and aliases of aliases (a "billion laughs").
  CHECK_THAT(parse_world("members: &a [*a]\n").error().message,
             Catch::StartsWith("invalid world file: line 1, column ") && Catch::Contains("nested more than 100 deep"));
  std::string laughs = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 9; ++i) {
    const std::string a = "a" + std::to_string(i);
    const std::string b = "*a" + std::to_string(i - 1);
    laughs += a + ": &" + a + " [" + b + ", " + b + ", " + b + ", " + b + ", " + b + ", " + b + ", " + b + ", " + b +
              ", " + b + ", " + b + "]\n";
  }
  CHECK_THAT(parse_world(laughs + "members: [{name: m1}]\n").error().message,
             Catch::Contains("values once aliases are expanded"));
}

TEST_CASE("World: without users, one default user and token", "[sim][world]") {
  auto w = parse_world("members: [{name: m1}]\n");
  REQUIRE(w.ok());
  REQUIRE(w->users.size() == 1);
  CHECK(w->users[0].token == std::string(kDefaultToken));
  CHECK(w->users[0].members.empty());
}

TEST_CASE("World: faults from JSON merge into a base and reject bad fields", "[sim][world]") {
  auto f = faults_from_json(nlohmann::json::parse(R"({"latency":"200ms","errorRate":0.5,"blackhole":true})"));
  REQUIRE(f.ok());
  CHECK(f->latency == std::chrono::milliseconds(200));
  CHECK(f->error_rate == 0.5);
  CHECK(f->blackhole);
  CHECK_FALSE(f->refuse);
  auto merged = faults_from_json(nlohmann::json::parse(R"({"refuse":true})"), *f);
  REQUIRE(merged.ok());
  CHECK(merged->blackhole);
  CHECK(merged->refuse);
  CHECK(faults_from_json(nlohmann::json::parse(R"({"errorRate":1.5})")).error().message ==
        "errorRate: must be between 0 and 1");
  CHECK(faults_from_json(nlohmann::json::parse(R"({"blackhole":"yes"})")).error().message ==
        "blackhole: expected true or false");
  CHECK(faults_from_json(nlohmann::json::parse(R"({"slow":true})")).error().message == "slow: unknown field");
  CHECK(to_json(*merged)["latency"] == "200ms");
}

TEST_CASE("World: a load schedule and startup delay", "[sim][world]") {
  auto w = fedmetrics::sim::parse_world(R"(
members: [{name: m1}]
workloads:
  - name: web
    containers: [{name: web, resources: {requests: {cpu: 100m}}}]
    propagation: {clusters: [m1]}
    startupDelay: 3s
    load:
      cpu: "1"
      requestsPerSecond: "5"
      schedule:
        - {at: 10s, cpu: "2"}
        - {at: 70s, requestsPerSecond: "0"}
)");
  REQUIRE(w.ok());
  const auto& wl = w->workloads[0];
  CHECK(wl.startup_delay == std::chrono::seconds(3));
  REQUIRE(wl.load_schedule.size() == 2);
  CHECK(wl.load_schedule[0].at == std::chrono::seconds(10));
  CHECK(wl.load_schedule[0].load.cpu.to_string() == "2");
  CHECK(wl.load_schedule[0].load.requests_per_second.to_string() == "5");  // kept
  CHECK(wl.load_schedule[1].load.cpu.to_string() == "2");                  // carried on
  CHECK(wl.load_schedule[1].load.requests_per_second.to_string() == "0");
  auto bad = fedmetrics::sim::parse_world(R"(
members: [{name: m1}]
workloads:
  - name: web
    containers: [{name: web}]
    propagation: {clusters: [m1]}
    load: {schedule: [{at: 20s, cpu: "1"}, {at: 10s, cpu: "0"}]}
)");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message == "workloads[0].load.schedule[1].at: must not be earlier than the previous entry's");
}

TEST_CASE("World: overflow affinities after the primary group", "[sim][world]") {
  auto w = parse_world(R"(
members: [{name: m1}, {name: m2}, {name: m3}]
workloads:
  - name: web
    containers: [{name: c}]
    propagation:
      clusters: [m1]
      affinityName: on-prem
      overflowAffinities:
        - {affinityName: cloud, clusterNames: [m2, m1]}
        - {affinityName: last, clusterNames: [m3]}
)");
  REQUIRE(w.ok());
  const auto& p = w->workloads[0].propagation;
  // Every member once, in the order written: m1 stays in the primary group.
  CHECK(p.clusters == std::vector<std::string>{"m1", "m2", "m3"});
  REQUIRE(p.groups.size() == 3);
  CHECK(p.groups[0].name == "on-prem");
  CHECK(p.groups[0].clusters == std::vector<std::string>{"m1"});
  CHECK(p.groups[1].name == "cloud");
  CHECK(p.groups[1].clusters == std::vector<std::string>{"m2", "m1"});
  CHECK(p.groups[2].clusters == std::vector<std::string>{"m3"});
  auto plain = parse_world(
      "members: [{name: m1}]\nworkloads: [{name: web, containers: [{name: c}], propagation: "
      "{clusters: [m1]}}]\n");
  REQUIRE(plain.ok());
  CHECK(plain->workloads[0].propagation.groups.empty());
}
