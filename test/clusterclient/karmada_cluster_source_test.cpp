// The pure half of KarmadaClusterSource: Cluster and Secret objects as the
// control plane serves them, decoded, and the decision of which clusters are
// members and how each is reached (member_plan.hpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>

#include <nlohmann/json.hpp>

#include "fedmetrics/clusterclient/member_plan.hpp"
#include "fedmetrics/k8s/base64.hpp"
#include "fedmetrics/k8s/karmada_cluster.hpp"

using namespace fedmetrics;
using namespace fedmetrics::clusterclient;
using nlohmann::json;

namespace {

// A Cluster as `karmadactl join` leaves it (and as `fedmetrics sim` serves it).
json cluster(const std::string& name, const std::string& ready = "True") {
  return {{"apiVersion", "cluster.karmada.io/v1alpha1"},
          {"kind", "Cluster"},
          {"metadata", {{"name", name}, {"resourceVersion", "7"}}},
          {"spec",
           {{"apiEndpoint", "https://10.0.0." + std::to_string(name.size()) + ":6443"},
            {"syncMode", "Push"},
            {"secretRef", {{"namespace", "karmada-cluster"}, {"name", name}}},
            {"insecureSkipTLSVerification", false}}},
          {"status",
           {{"kubernetesVersion", "v1.31.0"},
            {"conditions",
             {{{"type", "Ready"},
               {"status", ready},
               {"reason", ready == "True" ? "ClusterReady" : "ClusterNotReachable"},
               {"message",
                ready == "True" ? "cluster is healthy and ready to accept workloads" : "cluster is not reachable"},
               {"lastTransitionTime", "2026-01-01T00:00:00Z"}}}}}}};
}

std::string list_of(const std::vector<json>& items) {
  return json{{"apiVersion", "cluster.karmada.io/v1alpha1"},
              {"kind", "ClusterList"},
              {"metadata", {{"resourceVersion", "9"}}},
              {"items", items}}
      .dump();
}

std::string secret_json(const std::string& name, const std::string& token, const std::string& ca) {
  json data = json::object();
  if (!token.empty()) data["token"] = k8s::base64_encode(token);
  if (!ca.empty()) data["caBundle"] = k8s::base64_encode(ca);
  return json{{"apiVersion", "v1"},
              {"kind", "Secret"},
              {"metadata", {{"name", name}, {"namespace", "karmada-cluster"}}},
              {"type", "Opaque"},
              {"data", data}}
      .dump();
}

k8s::SecretReference ref(const std::string& name) { return {"karmada-cluster", name}; }

// The Secrets of `names`, read as the source reads them.
SecretLookup secrets_of(const std::vector<std::string>& names) {
  SecretLookup out;
  for (const auto& n : names) out.emplace(ref(n), k8s::parse_secret(secret_json(n, "token-" + n, "CA-" + n)));
  return out;
}

kube::ClusterEndpoint control_plane() {
  kube::ClusterEndpoint e;
  e.name = "karmada-apiserver";
  e.server = "https://127.0.0.1:5443";
  e.ca_pem = "CONTROL-PLANE-CA";
  e.token = "admin-token";
  return e;
}

ClusterObjects parse(const std::vector<json>& items) {
  auto parsed = k8s::parse_cluster_list(list_of(items));
  REQUIRE(parsed.ok());
  return std::move(*parsed);
}

std::vector<std::string> names_of(const std::vector<kube::ClusterEndpoint>& members) {
  std::vector<std::string> out;
  for (const auto& m : members) out.push_back(m.name);
  return out;
}

}  // namespace

TEST_CASE("KarmadaClusterSource: a Ready Push cluster is reached directly with its Secret",
          "[clusterclient][karmada]") {
  auto clusters = parse({cluster("member1")});
  REQUIRE(clusters.size() == 1);
  REQUIRE(clusters[0].ok());
  CHECK(clusters[0]->is_ready());
  CHECK(secrets_to_read(clusters, MemberAccess::Direct) == std::vector<k8s::SecretReference>{ref("member1")});

  auto plan = plan_members(clusters, secrets_of({"member1"}), control_plane(), MemberAccess::Direct);
  REQUIRE(plan.members.size() == 1);
  const auto& m = plan.members[0];
  CHECK(m.name == "member1");
  CHECK(m.server == "https://10.0.0.7:6443");
  CHECK(m.token == "token-member1");
  CHECK(m.ca_pem == "CA-member1");
  CHECK_FALSE(m.insecure_skip_tls_verify);
  CHECK(m.client_cert_pem.empty());
  CHECK(plan.not_ready.empty());
  CHECK(plan.unusable.empty());
}

TEST_CASE("KarmadaClusterSource: only clusters whose Ready condition is True are members", "[clusterclient][karmada]") {
  auto no_conditions = cluster("member4");
  no_conditions["status"].erase("conditions");
  auto other_condition = cluster("member5");
  other_condition["status"]["conditions"][0]["type"] = "CompleteAPIEnablements";
  auto clusters = parse(
      {cluster("member1"), cluster("member2", "False"), cluster("member3", "Unknown"), no_conditions, other_condition});

  // Secrets are read only for the clusters that will be used.
  CHECK(secrets_to_read(clusters, MemberAccess::Direct) == std::vector<k8s::SecretReference>{ref("member1")});
  auto plan = plan_members(clusters, secrets_of({"member1"}), control_plane(), MemberAccess::Direct);
  CHECK(names_of(plan.members) == std::vector<std::string>{"member1"});
  CHECK(plan.not_ready ==
        std::map<std::string, std::string>{{"member2", "Ready=False (ClusterNotReachable: cluster is not reachable)"},
                                           {"member3", "Ready=Unknown (ClusterNotReachable: cluster is not reachable)"},
                                           {"member4", "no Ready condition yet"},
                                           {"member5", "no Ready condition yet"}});
  CHECK(plan.unusable.empty());
  // Left out, not dropped: each with its Ready condition's status and reason, for the answers' Warnings.
  CHECK(plan.left_out ==
        std::vector<aggregator::LeftOutMember>{{"member2", "Cluster NotReady (ClusterNotReachable)"},
                                               {"member3", "Cluster Ready=Unknown (ClusterNotReachable)"},
                                               {"member4", "Cluster has no Ready condition yet"},
                                               {"member5", "Cluster has no Ready condition yet"}});
}

TEST_CASE("KarmadaClusterSource: --member-access=proxy goes through the control plane's cluster proxy",
          "[clusterclient][karmada]") {
  auto clusters = parse({cluster("member1"), cluster("member2", "False")});
  CHECK(secrets_to_read(clusters, MemberAccess::Proxy).empty());  // the control plane's credentials only
  auto plan = plan_members(clusters, {}, control_plane(), MemberAccess::Proxy);
  REQUIRE(plan.members.size() == 1);  // Ready still decides
  const auto& m = plan.members[0];
  CHECK(m.name == "member1");
  CHECK(m.server == "https://127.0.0.1:5443/apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy");
  CHECK(m.token == "admin-token");
  CHECK(m.ca_pem == "CONTROL-PLANE-CA");
  CHECK(plan.not_ready.count("member2") == 1);

  // The control plane's own path prefix and trailing slash, and names that need escaping.
  CHECK(cluster_proxy_server("https://karmada.example:443/prefix/", "a b") ==
        "https://karmada.example:443/prefix/apis/cluster.karmada.io/v1alpha1/clusters/a%20b/proxy");
}

TEST_CASE("KarmadaClusterSource: a Pull cluster goes through the proxy even with direct access",
          "[clusterclient][karmada]") {
  auto pull = cluster("member3");
  pull["spec"]["syncMode"] = "Pull";
  pull["spec"].erase("secretRef");                         // a Pull cluster's Secret is not needed
  pull["spec"]["apiEndpoint"] = "https://10.99.0.1:6443";  // the control plane may have no route there
  auto clusters = parse({cluster("member1"), pull});
  CHECK(secrets_to_read(clusters, MemberAccess::Direct) == std::vector<k8s::SecretReference>{ref("member1")});
  auto plan = plan_members(clusters, secrets_of({"member1"}), control_plane(), MemberAccess::Direct);
  REQUIRE(plan.members.size() == 2);
  CHECK(plan.members[0].server == "https://10.0.0.7:6443");
  CHECK(plan.members[1].server == "https://127.0.0.1:5443/apis/cluster.karmada.io/v1alpha1/clusters/member3/proxy");
  CHECK(plan.members[1].token == "admin-token");
}

TEST_CASE("KarmadaClusterSource: spec.apiEndpoint forms and spec.insecureSkipTLSVerification",
          "[clusterclient][karmada]") {
  struct Row {
    const char* api_endpoint;
    const char* server;  // empty: unusable
  };
  const Row rows[] = {
      {"https://172.18.0.3:6443", "https://172.18.0.3:6443"},
      {"HTTPS://172.18.0.3:6443", "HTTPS://172.18.0.3:6443"},
      {"172.18.0.3:6443", "https://172.18.0.3:6443"},  // client-go defaults the scheme to https
      {"member.example", "https://member.example"},
      {"http://172.18.0.3:8080", ""},
      {"", ""},
  };
  for (const auto& row : rows) {
    CAPTURE(row.api_endpoint);
    auto c = cluster("member1");
    c["spec"]["apiEndpoint"] = row.api_endpoint;
    auto plan = plan_members(parse({c}), secrets_of({"member1"}), control_plane(), MemberAccess::Direct);
    if (*row.server) {
      REQUIRE(plan.members.size() == 1);
      CHECK(plan.members[0].server == row.server);
    } else {
      CHECK(plan.members.empty());
      REQUIRE(plan.unusable.size() == 1);
      CHECK_THAT(plan.unusable[0], Catch::StartsWith("cluster \"member1\": spec.apiEndpoint"));
    }
  }

  // Insecure: no CA needed, and the client is told not to verify.
  auto insecure = cluster("member1");
  insecure["spec"]["insecureSkipTLSVerification"] = true;
  SecretLookup no_ca;
  no_ca.emplace(ref("member1"), k8s::parse_secret(secret_json("member1", "t", "")));
  auto plan = plan_members(parse({insecure}), no_ca, control_plane(), MemberAccess::Direct);
  REQUIRE(plan.members.size() == 1);
  CHECK(plan.members[0].insecure_skip_tls_verify);
  CHECK(plan.members[0].ca_pem.empty());
}

TEST_CASE("KarmadaClusterSource: a cluster that cannot be used is named with the reason, the others stay",
          "[clusterclient][karmada]") {
  struct Row {
    const char* what;
    std::function<void(json&)> edit;          // applied to member2's Cluster
    std::function<void(SecretLookup&)> read;  // applied to the Secrets read
    const char* error;
  };
  const std::vector<Row> rows = {
      {"no secretRef", [](json& c) { c["spec"].erase("secretRef"); }, nullptr,
       "cluster \"member2\": no spec.secretRef to take its token and CA from"},
      {"Secret not found", nullptr,
       [](SecretLookup& s) {
         s.erase(ref("member2"));
         s.emplace(ref("member2"), k8s::Error{"HTTP 404: secrets \"member2\" not found"});
       },
       "cluster \"member2\": secret karmada-cluster/member2: HTTP 404: secrets \"member2\" not found"},
      {"Secret without a token", nullptr,
       [](SecretLookup& s) { s.insert_or_assign(ref("member2"), k8s::parse_secret(secret_json("member2", "", "CA"))); },
       "cluster \"member2\": secret karmada-cluster/member2 has no data.token"},
      {"Secret without a CA", nullptr,
       [](SecretLookup& s) { s.insert_or_assign(ref("member2"), k8s::parse_secret(secret_json("member2", "t", ""))); },
       "cluster \"member2\": secret karmada-cluster/member2 has no data.caBundle, and "
       "spec.insecureSkipTLSVerification is false"},
      {"Secret with bad base64", nullptr,
       [](SecretLookup& s) {
         s.insert_or_assign(ref("member2"),
                            k8s::parse_secret(R"({"kind":"Secret","data":{"token":"!!!","caBundle":"Q0E="}})"));
       },
       "cluster \"member2\": secret karmada-cluster/member2: data.token: not valid base64"},
      {"apiEndpoint not a string", [](json& c) { c["spec"]["apiEndpoint"] = 6443; }, nullptr,
       "cluster \"member2\": spec.apiEndpoint: expected a string, got number"},
      {"secretRef not an object", [](json& c) { c["spec"]["secretRef"] = "karmada-cluster/member2"; }, nullptr,
       "cluster \"member2\": spec.secretRef: expected an object, got string"},
      {"secretRef without a name", [](json& c) { c["spec"]["secretRef"].erase("name"); }, nullptr,
       "cluster \"member2\": spec.secretRef.name: required field is missing"},
      {"conditions not a list", [](json& c) { c["status"]["conditions"] = "Ready"; }, nullptr,
       "cluster \"member2\": status.conditions: expected an array, got string"},
      {"a condition's status not a string", [](json& c) { c["status"]["conditions"][0]["status"] = true; }, nullptr,
       "cluster \"member2\": status.conditions[0].status: expected a string, got boolean"},
      {"insecureSkipTLSVerification not a boolean", [](json& c) { c["spec"]["insecureSkipTLSVerification"] = "yes"; },
       nullptr, "cluster \"member2\": spec.insecureSkipTLSVerification: expected a boolean, got string"},
      {"no name", [](json& c) { c["metadata"].erase("name"); }, nullptr,
       "items[1]: metadata.name: required field is missing"},
      {"not an object",
       [](json& c) {
         c = json::array({1, 2});
       },
       nullptr, "items[1]: expected an object, got array"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    auto broken = cluster("member2");
    if (row.edit) row.edit(broken);
    ClusterObjects clusters;
    REQUIRE_NOTHROW(clusters = parse({cluster("member1"), broken, cluster("member3")}));
    auto secrets = secrets_of({"member1", "member2", "member3"});
    if (row.read) row.read(secrets);
    MemberPlan plan;
    REQUIRE_NOTHROW(plan = plan_members(clusters, secrets, control_plane(), MemberAccess::Direct));
    CHECK(names_of(plan.members) == std::vector<std::string>{"member1", "member3"});
    REQUIRE(plan.unusable.size() == 1);
    CHECK_THAT(plan.unusable[0], Catch::StartsWith(row.error));
    // A cluster with a name is left out under it, with the reason; one without a name cannot be.
    const std::string prefix = "cluster \"member2\": ";
    if (std::string(row.error).rfind(prefix, 0) == 0) {
      REQUIRE(plan.left_out.size() == 1);
      CHECK(plan.left_out[0].name == "member2");
      CHECK_THAT(plan.left_out[0].reason, Catch::StartsWith("Cluster cannot be"));
      CHECK_THAT(plan.left_out[0].reason, Catch::Contains(std::string(row.error).substr(prefix.size())));
    } else {
      CHECK(plan.left_out.empty());
    }
  }
}

TEST_CASE("KarmadaClusterSource: spec.proxyURL goes with the direct endpoint", "[clusterclient][karmada]") {
  auto proxied = cluster("member2");
  proxied["spec"]["proxyURL"] = "http://user:secret@proxy.example:3128";
  ClusterObjects clusters;
  REQUIRE_NOTHROW(clusters = parse({cluster("member1"), proxied}));
  MemberPlan plan;
  REQUIRE_NOTHROW(
      plan = plan_members(clusters, secrets_of({"member1", "member2"}), control_plane(), MemberAccess::Direct));
  REQUIRE(names_of(plan.members) == std::vector<std::string>{"member1", "member2"});
  CHECK(plan.members[0].proxy_url.empty());
  CHECK(plan.members[1].proxy_url == "http://user:secret@proxy.example:3128");
}

TEST_CASE("KarmadaClusterSource: a body that is not a ClusterList is an error, never a throw",
          "[clusterclient][karmada]") {
  struct Row {
    const char* body;
    const char* error;
  };
  const Row rows[] = {
      {"", "the ClusterList is not JSON"},
      {"{\"items\": [", "the ClusterList is not JSON"},
      {"[]", "expected an object, got array"},
      {R"({"kind":"Status","status":"Failure"})", "expected a ClusterList, got kind Status"},
      {R"({"kind":"ClusterList"})", "items: required field is missing"},
      {R"({"kind":"ClusterList","items":{}})", "items: expected an array, got object"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.body);
    auto parsed = k8s::parse_cluster_list(row.body);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.error().message == row.error);
  }
  auto empty = k8s::parse_cluster_list(R"({"kind":"ClusterList","items":null})");
  REQUIRE_FALSE(empty.ok());  // Go would read null as empty; a control plane never sends it, and an empty set would
                              // drop every member
  auto none = k8s::parse_cluster_list(R"({"kind":"ClusterList","items":[]})");
  REQUIRE(none.ok());
  CHECK(none->empty());
}

TEST_CASE("KarmadaClusterSource: Secret data is base64-decoded, and errors name the key", "[clusterclient][karmada]") {
  auto secret = k8s::parse_secret(secret_json("member1", "abc", "-----BEGIN CERTIFICATE-----\n"));
  REQUIRE(secret.ok());
  CHECK(secret->namespace_name == "karmada-cluster");
  CHECK(secret->name == "member1");
  CHECK(secret->data.at("token") == "abc");
  CHECK(secret->data.at("caBundle") == "-----BEGIN CERTIFICATE-----\n");
  struct Row {
    const char* body;
    const char* error;
  };
  const Row rows[] = {
      {"nope", "the Secret is not JSON"},
      {R"({"kind":"Status","message":"forbidden"})", "expected a Secret, got kind Status"},
      {R"({"kind":"Secret","data":["token"]})", "data: expected an object of strings, got array"},
      {R"({"kind":"Secret","data":{"token":5}})", "data.token: expected a string, got number"},
      {R"({"kind":"Secret","data":{"caBundle":"%%%"}})", "data.caBundle: not valid base64"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.body);
    auto parsed = k8s::parse_secret(row.body);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.error().message == row.error);
  }
}

TEST_CASE("resource_binding_name: Karmada's <name>-<kind>, lowercase", "[clusterclient][karmada]") {
  CHECK(fedmetrics::k8s::resource_binding_name("nginx", "Deployment") == "nginx-deployment");
  CHECK(fedmetrics::k8s::resource_binding_name("Web-API", "StatefulSet") == "web-api-statefulset");
}

TEST_CASE("KarmadaClusterSource: a Cluster's annotation names its Prometheus, with the companion Secret's CA and token",
          "[clusterclient][karmada][prometheus]") {
  auto annotated = cluster("member1");
  annotated["metadata"]["annotations"] = {{"metrics.fedmetrics.io/prometheus-url", "https://prometheus.example:9090"},
                                          {"metrics.fedmetrics.io/prometheus-secret", "monitoring/prom"}};
  auto plain = cluster("member2");
  plain["metadata"]["annotations"] = {{"metrics.fedmetrics.io/prometheus-url", "http://10.0.2.15:9090"}};
  auto bad_url = cluster("member3");
  bad_url["metadata"]["annotations"] = {{"metrics.fedmetrics.io/prometheus-url", "prometheus:9090"}};
  auto clusters = parse({annotated, plain, bad_url, cluster("member4")});

  // The companion Secret is read with the clusters' own, by reference.
  const k8s::SecretReference companion{"monitoring", "prom"};
  auto refs = secrets_to_read(clusters, MemberAccess::Direct);
  CHECK(std::count(refs.begin(), refs.end(), companion) == 1);
  CHECK(std::count(refs.begin(), refs.end(), ref("member4")) == 1);
  CHECK(secrets_to_read(clusters, MemberAccess::Proxy) == std::vector<k8s::SecretReference>{companion});

  auto secrets = secrets_of({"member1", "member2", "member3", "member4"});
  json companion_secret = {{"kind", "Secret"},
                           {"metadata", {{"name", "prom"}, {"namespace", "monitoring"}}},
                           {"data", {{"ca.crt", k8s::base64_encode("PROM-CA")}, {"token", k8s::base64_encode("t")}}}};
  secrets.emplace(companion, k8s::parse_secret(companion_secret.dump()));
  auto plan = plan_members(clusters, secrets, control_plane(), MemberAccess::Direct);
  CHECK(names_of(plan.members) == std::vector<std::string>{"member1", "member2", "member3", "member4"});
  REQUIRE(plan.prometheus.size() == 2);
  const auto& p1 = plan.prometheus.at("member1");
  CHECK(p1.server == "https://prometheus.example:9090");
  CHECK(p1.ca_pem == "PROM-CA");
  CHECK(p1.token == "t");
  const auto& p2 = plan.prometheus.at("member2");
  CHECK(p2.server == "http://10.0.2.15:9090");
  CHECK(p2.token.empty());
  // A URL that cannot be used is said, and the member is asked as if its Cluster named none.
  REQUIRE(plan.unusable.size() == 1);
  CHECK(plan.unusable[0].find("member3") != std::string::npos);
  CHECK(plan.unusable[0].find("is not an http:// or https:// URL") != std::string::npos);

  // A companion Secret that could not be read: the Prometheus is not used, and that is said.
  SecretLookup missing = secrets_of({"member1", "member2", "member3", "member4"});
  missing.emplace(companion, k8s::Error{"HTTP 404: secrets \"prom\" not found"});
  auto without = plan_members(clusters, missing, control_plane(), MemberAccess::Direct);
  CHECK_FALSE(without.prometheus.count("member1"));
  CHECK(std::any_of(without.unusable.begin(), without.unusable.end(),
                    [](const std::string& u) { return u.find("secret monitoring/prom") != std::string::npos; }));
}
