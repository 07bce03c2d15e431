#include <algorithm>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "fedmetrics/transport/gzip.hpp"
#include "sim/sim_test_support.hpp"

using namespace fedmetrics::sim;
using nlohmann::json;
using sim_test::call;

namespace {
constexpr std::size_t kMember1 = 0, kMember2 = 1, kMember3 = 2;

std::vector<std::string> names(const json& list) {
  std::vector<std::string> out;
  for (const auto& item : list["items"]) out.push_back(item["metadata"]["name"]);
  return out;
}
}  // namespace

TEST_CASE("MemberApi: bearer tokens, 401 Status otherwise, health is open", "[sim][member]") {
  auto f = sim_test::federation();
  CHECK(call(f, kMember1, "/api/v1/pods").status == 200);
  for (const char* token : {"", "wrong", "member2-token"}) {
    INFO(token);
    auto a = call(f, kMember1, sim_test::get("/api/v1/pods", token));
    CHECK(a.status == 401);
    CHECK(a.body == json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
                                    "message":"Unauthorized","reason":"Unauthorized","code":401})"));
  }
  CHECK(call(f, kMember2, sim_test::get("/api/v1/pods", "member2-token")).status == 200);
  auto lower = sim_test::get("/version", "");
  lower.headers.emplace_back("authorization", "bearer good-token");
  CHECK(call(f, kMember1, lower).status == 200);
  auto health = call(f, kMember1, sim_test::get("/healthz", ""));
  CHECK(health.status == 200);
  CHECK(health.raw == "ok");
  CHECK(health.content_type == "text/plain; charset=utf-8");
}

TEST_CASE("MemberApi: core pods list, get, selectors", "[sim][member]") {
  auto f = sim_test::federation();
  auto all = call(f, kMember1, "/api/v1/pods");
  REQUIRE(all.status == 200);
  CHECK(all.content_type == "application/json");
  CHECK(all.body["kind"] == "PodList");
  CHECK(all.body["apiVersion"] == "v1");
  CHECK(all.body["metadata"].contains("resourceVersion"));
  REQUIRE(all.body["items"].size() == 2);
  const auto& pod = all.body["items"][0];
  CHECK_FALSE(pod.contains("kind"));  // list items carry no kind, as Go servers write them
  CHECK(pod["metadata"]["namespace"] == "shop");
  CHECK(pod["metadata"]["labels"]["app"] == "web");
  CHECK(pod["metadata"]["labels"].contains("pod-template-hash"));
  CHECK(pod["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet");
  CHECK_FALSE(pod["metadata"].contains("deletionTimestamp"));
  CHECK(pod["spec"]["containers"][0]["resources"] ==
        json::parse(R"({"requests":{"cpu":"100m","memory":"64Mi"},"limits":{"cpu":"500m","memory":"64Mi"}})"));
  // One pod on each of member1's nodes (the list is sorted by name, not by creation).
  CHECK(std::set<std::string>{all.body["items"][0]["spec"]["nodeName"], all.body["items"][1]["spec"]["nodeName"]} ==
        std::set<std::string>{"m1-node-a", "m1-node-b"});
  CHECK(pod["status"]["phase"] == "Running");
  CHECK(pod["status"]["startTime"] == "2026-08-22T10:00:00Z");
  CHECK(pod["status"]["qosClass"] == "Burstable");
  json ready;
  for (const auto& c : pod["status"]["conditions"])
    if (c["type"] == "Ready") ready = c;
  CHECK(ready["status"] == "True");
  CHECK(ready["lastTransitionTime"] == "2026-08-22T10:00:00Z");
  CHECK(ready.contains("lastProbeTime"));

  auto sorted = names(all.body);
  CHECK(std::is_sorted(sorted.begin(), sorted.end()));
  CHECK(names(call(f, kMember1, "/api/v1/namespaces/shop/pods").body) == sorted);
  CHECK(call(f, kMember1, "/api/v1/namespaces/default/pods").body["items"].empty());
  CHECK(names(call(f, kMember1, "/api/v1/namespaces/shop/pods?labelSelector=app%3Dweb").body) == sorted);
  CHECK(call(f, kMember1, "/api/v1/pods?labelSelector=app+in+(db)").body["items"].empty());
  CHECK(names(call(f, kMember1, "/api/v1/pods?fieldSelector=metadata.name%3D" + sorted[1]).body) ==
        std::vector<std::string>{sorted[1]});

  auto one = call(f, kMember1, "/api/v1/namespaces/shop/pods/" + sorted[0]);
  CHECK(one.status == 200);
  CHECK(one.body["kind"] == "Pod");
  CHECK(one.body["apiVersion"] == "v1");
  CHECK(one.body["metadata"]["name"] == sorted[0]);
  auto missing = call(f, kMember1, "/api/v1/namespaces/shop/pods/nope");
  CHECK(missing.status == 404);
  CHECK(missing.body["message"] == "pods \"nope\" not found");
  CHECK(missing.body["details"] == json::parse(R"({"name":"nope","kind":"pods"})"));
}

TEST_CASE("MemberApi: pods being deleted carry deletionTimestamp, unready pods say so", "[sim][member]") {
  using namespace std::chrono_literals;
  auto w = sim_test::world();
  w.workloads[0].termination_grace = 30s;
  w.workloads[0].readiness_delay = 20s;
  auto f = Federation::create(w, sim_test::t0()).with_replicas(0, 2, sim_test::t0() + 5s);
  auto g = f.with_replicas(0, 4, sim_test::t0() + 10s);
  auto list = call(g, kMember1, sim_test::get("/api/v1/namespaces/shop/pods"), sim_test::t0() + 10s);
  REQUIRE(list.body["items"].size() == 3);  // one running, one terminating, one new
  int terminating = 0, unready = 0;
  for (const auto& pod : list.body["items"]) {
    if (pod["metadata"].contains("deletionTimestamp")) {
      ++terminating;
      CHECK(pod["metadata"]["deletionTimestamp"] == "2026-08-22T10:00:35Z");  // deleted at +5s, 30s grace
    }
    for (const auto& c : pod["status"]["conditions"])
      if (c["type"] == "Ready" && c["status"] == "False") {
        ++unready;
        CHECK(c["lastTransitionTime"] == "2026-08-22T10:00:10Z");
      }
  }
  CHECK(terminating == 1);
  CHECK(unready == 1);
}

TEST_CASE("MemberApi: a workload's pod-level resources are in its template and its pods", "[sim][member]") {
  std::string text = sim_test::kWorld;
  const std::string batch = "        requests: {cpu: 25m}\n";
  auto at = text.find(batch);
  REQUIRE(at != std::string::npos);
  text.insert(at + batch.size(),
              "    resources:\n      requests: {cpu: 200m, memory: 128Mi}\n      limits: {cpu: \"1\"}\n");
  auto world = fedmetrics::sim::parse_world(text);
  REQUIRE(world.ok());
  auto f = fedmetrics::sim::Federation::create(*world, sim_test::t0());
  const auto expected = json::parse(R"({"requests":{"cpu":"200m","memory":"128Mi"},"limits":{"cpu":"1"}})");
  auto pods = call(f, kMember3, "/api/v1/namespaces/default/pods");
  REQUIRE(pods.status == 200);
  REQUIRE(pods.body["items"].size() == 1);
  CHECK(pods.body["items"][0]["spec"]["resources"] == expected);
  CHECK(pods.body["items"][0]["spec"]["containers"][0]["resources"]["requests"] == json{{"cpu", "25m"}});
  auto deployment = call(f, kMember3, "/apis/apps/v1/namespaces/default/deployments/batch");
  REQUIRE(deployment.status == 200);
  CHECK(deployment.body["spec"]["template"]["spec"]["resources"] == expected);
  // Without them a pod has no spec.resources.
  CHECK_FALSE(call(sim_test::federation(), kMember3, "/api/v1/namespaces/default/pods")
                  .body["items"][0]["spec"]
                  .contains("resources"));
  // A misspelt field is an error naming it.
  text.replace(text.find("requests: {cpu: 200m"), 8, "request");
  auto bad = fedmetrics::sim::parse_world(text);
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error().message, Catch::Contains("resources"));
}

TEST_CASE("MemberApi: nodes and namespaces", "[sim][member]") {
  auto f = sim_test::federation();
  auto nodes = call(f, kMember1, "/api/v1/nodes");
  CHECK(nodes.body["kind"] == "NodeList");
  CHECK(names(nodes.body) == std::vector<std::string>{"m1-node-a", "m1-node-b"});
  const auto& node = nodes.body["items"][0];
  CHECK(node["status"]["allocatable"]["cpu"] == "4");
  CHECK(node["status"]["allocatable"]["memory"] == "16Gi");
  CHECK(node["status"]["capacity"]["cpu"] == "4");
  CHECK(node["metadata"]["labels"]["zone"] == "a");
  CHECK(names(call(f, kMember1, "/api/v1/nodes?labelSelector=zone%3Db").body) == std::vector<std::string>{"m1-node-b"});
  CHECK(names(call(f, kMember1, "/api/v1/nodes?fieldSelector=metadata.name%3Dm1-node-a").body) ==
        std::vector<std::string>{"m1-node-a"});
  CHECK(call(f, kMember1, "/api/v1/nodes/m1-node-b").body["kind"] == "Node");
  CHECK(call(f, kMember1, "/api/v1/nodes/nope").status == 404);
  auto ns = call(f, kMember1, "/api/v1/namespaces");
  CHECK(ns.body["kind"] == "NamespaceList");
  CHECK(names(ns.body) == std::vector<std::string>{"default", "kube-system", "shop"});
  CHECK(call(f, kMember1, "/api/v1/namespaces/kube-system").body["status"]["phase"] == "Active");
  CHECK(call(f, kMember1, "/api/v1/namespaces/nope").status == 404);
}

TEST_CASE("MemberApi: selectors that do not parse are 400 BadRequest", "[sim][member]") {
  auto f = sim_test::federation();
  for (const char* target :
       {"/api/v1/pods?labelSelector=a%20b", "/api/v1/nodes?labelSelector=x%3D%3Da%3D%3Db",
        "/apis/metrics.k8s.io/v1beta1/pods?labelSelector=!x%3Da",
        "/apis/metrics.k8s.io/v1beta1/nodes?fieldSelector=spec.nodeName%3Dx",
        "/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/pods/*/http_requests?labelSelector=a%20b",
        "/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/pods/*/http_requests?metricLabelSelector=(",
        "/apis/external.metrics.k8s.io/v1beta1/namespaces/shop/queue_messages_ready?labelSelector=a%20b"}) {
    INFO(target);
    auto a = call(f, kMember1, target);
    CHECK(a.status == 400);
    CHECK(a.body["reason"] == "BadRequest");
  }
  CHECK(call(f, kMember1, "/api/v1/pods?labelSelector=a%20b").body["message"] ==
        "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt");
  CHECK(call(f, kMember1, "/apis/metrics.k8s.io/v1beta1/nodes?fieldSelector=spec.nodeName%3Dx").body["message"] ==
        "\"spec.nodeName\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"");
}

TEST_CASE("MemberApi: a bad escape in the path is 400 BadRequest", "[sim][member]") {
  auto f = sim_test::federation();
  auto a = call(f, kMember1, "/api/v1/pods%zz");
  CHECK(a.status == 400);
  CHECK(a.body["message"] == "invalid URL escape in the request path");
}

TEST_CASE("MemberApi: metrics.k8s.io as metrics-server answers", "[sim][member]") {
  auto f = sim_test::federation();
  auto list = call(f, kMember1, "/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods");
  REQUIRE(list.status == 200);
  CHECK(list.body["kind"] == "PodMetricsList");
  CHECK(list.body["apiVersion"] == "metrics.k8s.io/v1beta1");
  CHECK(list.body["metadata"] == json::object());
  REQUIRE(list.body["items"].size() == 2);
  const auto& item = list.body["items"][0];
  CHECK(item["timestamp"] == "2026-08-22T10:00:00Z");
  CHECK(item["window"] == "15s");
  CHECK(item["metadata"]["labels"]["app"] == "web");
  // 1 core over 4 serving pods + 1m baseline, in nanocores as metrics-server writes it; memory in Ki.
  CHECK(item["containers"] == json::parse(R"([{"name":"web","usage":{"cpu":"251m","memory":"16Mi"}}])"));
  CHECK(names(call(f, kMember1, "/apis/metrics.k8s.io/v1beta1/pods").body) == names(list.body));
  CHECK(call(f, kMember1, "/apis/metrics.k8s.io/v1beta1/pods?labelSelector=app%3Dother").body["items"].empty());

  auto name = names(list.body)[1];
  auto one = call(f, kMember1, "/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods/" + name);
  CHECK(one.body["kind"] == "PodMetrics");
  CHECK(one.body["apiVersion"] == "metrics.k8s.io/v1beta1");
  CHECK(call(f, kMember1, "/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods/nope").body["message"] ==
        "pods \"nope\" not found");

  auto nodes = call(f, kMember1, "/apis/metrics.k8s.io/v1beta1/nodes");
  CHECK(nodes.body["kind"] == "NodeMetricsList");
  REQUIRE(nodes.body["items"].size() == 2);
  // 100m system + one pod of 251m; 768Mi system + 16Mi.
  CHECK(nodes.body["items"][0]["usage"] == json::parse(R"({"cpu":"351m","memory":"784Mi"})"));
  CHECK(nodes.body["items"][0]["window"] == "15s");
  CHECK(call(f, kMember1, "/apis/metrics.k8s.io/v1beta1/nodes/m1-node-b").body["kind"] == "NodeMetrics");
  auto no_node = call(f, kMember1, "/apis/metrics.k8s.io/v1beta1/nodes/nope");
  CHECK(no_node.status == 404);
  CHECK(no_node.body["message"] == "node \"nope\" not found");

  // Odd nanocores print with the n suffix.
  auto g = f.with_load(0, Load{fedmetrics::k8s::Quantity::parse("1001m").value(), {}});
  auto odd = call(g, kMember1, "/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods");
  CHECK(odd.body["items"][0]["containers"][0]["usage"]["cpu"] == "251250u");
}

TEST_CASE("MemberApi: custom metrics v1beta2 and v1beta1 as prometheus-adapter answers", "[sim][member]") {
  auto f = sim_test::federation();
  auto v2 = call(f, kMember1,
                 "/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/pods/%2A/http_requests?labelSelector=app%3Dweb");
  REQUIRE(v2.status == 200);
  CHECK(v2.body["kind"] == "MetricValueList");
  CHECK(v2.body["apiVersion"] == "custom.metrics.k8s.io/v1beta2");
  REQUIRE(v2.body["items"].size() == 2);
  auto item = v2.body["items"][0];
  auto pod = item["describedObject"]["name"].get<std::string>();
  CHECK(item ==
        json{{"describedObject", {{"kind", "Pod"}, {"namespace", "shop"}, {"name", pod}, {"apiVersion", "/v1"}}},
             {"metric", {{"name", "http_requests"}, {"selector", nullptr}}},
             {"timestamp", "2026-08-22T10:00:00Z"},
             {"windowSeconds", 60},
             {"value", "2"}});  // 8 rps over 4 pods

  auto v1 = call(f, kMember1, "/apis/custom.metrics.k8s.io/v1beta1/namespaces/shop/pods/*/http_requests");
  CHECK(v1.body["apiVersion"] == "custom.metrics.k8s.io/v1beta1");
  CHECK(v1.body["items"][0]["metricName"] == "http_requests");
  CHECK(v1.body["items"][0]["window"] == 60);
  CHECK(v1.body["items"][0].contains("selector"));

  // Single object: a list with exactly one item.
  auto single = call(f, kMember1, "/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/pods/" + pod + "/http_requests");
  REQUIRE(single.body["items"].size() == 1);
  CHECK(single.body["items"][0]["describedObject"]["name"] == pod);
  // Python-client quoting: name and metric in one escaped segment.
  CHECK(call(f, kMember1, "/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/pods/%2A%2Fhttp_requests")
            .body["items"]
            .size() == 2);

  // Namespace metric: the sum over the namespace's pods in this member.
  auto ns = call(f, kMember1, "/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/metrics/http_requests");
  REQUIRE(ns.body["items"].size() == 1);
  CHECK(ns.body["items"][0]["describedObject"] ==
        json::parse(R"({"kind":"Namespace","name":"shop","apiVersion":"/v1"})"));
  CHECK(ns.body["items"][0]["value"] == "4");
  CHECK(call(f, kMember1, "/apis/custom.metrics.k8s.io/v1beta2/namespaces/*/metrics/http_requests")
            .body["items"]
            .size() == 1);

  auto deploy =
      call(f, kMember1, "/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/deployments.apps/web/http_requests");
  REQUIRE(deploy.body["items"].size() == 1);
  CHECK(deploy.body["items"][0]["describedObject"]["kind"] == "Deployment");
  CHECK(deploy.body["items"][0]["value"] == "4");

  // metricLabelSelector filters series and is echoed as the item's selector.
  auto msel =
      call(f, kMember1,
           "/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/pods/*/http_requests?metricLabelSelector=pod%3D" + pod);
  REQUIRE(msel.body["items"].size() == 1);
  CHECK(msel.body["items"][0]["metric"]["selector"] == json::parse(R"({"matchLabels":{"pod":")" + pod + R"("}})"));
  auto none = call(f, kMember1,
                   "/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/pods/" + pod +
                       "/http_requests?metricLabelSelector=pod%3Dother");
  CHECK(none.status == 404);
  CHECK(none.body["message"] ==
        "the server could not find the metric http_requests for pods " + pod + " with selector pod=other");

  // Unknown metric, unknown resource, malformed path.
  auto unknown = call(f, kMember1, "/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/pods/*/latency");
  CHECK(unknown.status == 404);
  CHECK(unknown.body["message"] == "the server could not find the metric latency for pods");
  CHECK(call(f, kMember1, "/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/services/web/http_requests")
            .body["message"] == "the server could not find the metric http_requests for services web");
  auto bad = call(f, kMember1, "/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/http_requests");
  CHECK(bad.status == 400);
  CHECK(bad.body["message"] == "invalid request path");
  // member3 has no workload exposing http_requests (and no custom API at all).
  CHECK(call(f, kMember3, "/apis/custom.metrics.k8s.io/v1beta1/namespaces/shop/pods/*/http_requests").status == 404);
}

TEST_CASE("MemberApi: external metrics", "[sim][member]") {
  auto f = sim_test::federation();
  auto list = call(f, kMember1, "/apis/external.metrics.k8s.io/v1beta1/namespaces/shop/queue_messages_ready");
  REQUIRE(list.status == 200);
  CHECK(list.body["kind"] == "ExternalMetricValueList");
  CHECK(list.body["apiVersion"] == "external.metrics.k8s.io/v1beta1");
  REQUIRE(list.body["items"].size() == 2);
  CHECK(list.body["items"][0] == json::parse(R"({"metricName":"queue_messages_ready","metricLabels":{"queue":"orders"},
      "timestamp":"2026-08-22T10:00:00Z","window":60,"value":"42"})"));
  auto selected =
      call(f, kMember1,
           "/apis/external.metrics.k8s.io/v1beta1/namespaces/shop/queue_messages_ready?labelSelector=queue%3Dreturns");
  REQUIRE(selected.body["items"].size() == 1);
  CHECK(selected.body["items"][0]["value"] == "7");
  // The orders series lives in namespace shop only.
  CHECK(call(f, kMember1, "/apis/external.metrics.k8s.io/v1beta1/namespaces/default/queue_messages_ready")
            .body["items"]
            .size() == 1);
  CHECK(call(f, kMember1, "/apis/external.metrics.k8s.io/v1beta1/namespaces/shop/nope").status == 404);
  auto changed = f.with_external_value("queue_messages_ready", fedmetrics::k8s::Quantity::parse("5").value());
  CHECK(call(changed, kMember1, "/apis/external.metrics.k8s.io/v1beta1/namespaces/shop/queue_messages_ready")
            .body["items"][0]["value"] == "5");
}

TEST_CASE("MemberApi: the Deployments propagated to a member, read-only", "[sim][member]") {
  auto f = sim_test::federation();
  auto web = call(f, kMember1, "/apis/apps/v1/namespaces/shop/deployments/web");
  REQUIRE(web.status == 200);
  CHECK(web.body["kind"] == "Deployment");
  CHECK(web.body["metadata"]["namespace"] == "shop");
  CHECK(web.body["spec"]["replicas"] == 2);  // 4 over member1 and member2, 1:1
  CHECK(web.body["spec"]["selector"]["matchLabels"] == json{{"app", "web"}});
  CHECK(web.body["status"]["replicas"] == 2);
  // Not propagated to member3; no such workload; the wrong namespace.
  auto absent = call(f, kMember3, "/apis/apps/v1/namespaces/shop/deployments/web");
  CHECK(absent.status == 404);
  CHECK(absent.body["message"] == "deployments.apps \"web\" not found");
  CHECK(call(f, kMember1, "/apis/apps/v1/namespaces/shop/deployments/nope").status == 404);
  CHECK(call(f, kMember1, "/apis/apps/v1/namespaces/default/deployments/web").status == 404);
  auto list = call(f, kMember3, "/apis/apps/v1/deployments");
  REQUIRE(list.status == 200);
  CHECK(list.body["kind"] == "DeploymentList");
  REQUIRE(list.body["items"].size() == 1);
  CHECK(list.body["items"][0]["metadata"]["name"] == "batch");
  CHECK(call(f, kMember1, "/apis/apps/v1").body["resources"][0]["shortNames"] == json::array({"deploy"}));
}

TEST_CASE("MemberApi: discovery follows the member's configured APIs", "[sim][member]") {
  auto f = sim_test::federation();
  auto apis = call(f, kMember1, "/apis");
  CHECK(apis.body == json::parse(R"({"kind":"APIGroupList","apiVersion":"v1","groups":[
   {"name":"metrics.k8s.io","versions":[{"groupVersion":"metrics.k8s.io/v1beta1","version":"v1beta1"}],
    "preferredVersion":{"groupVersion":"metrics.k8s.io/v1beta1","version":"v1beta1"}},
   {"name":"custom.metrics.k8s.io",
    "versions":[{"groupVersion":"custom.metrics.k8s.io/v1beta2","version":"v1beta2"},
                {"groupVersion":"custom.metrics.k8s.io/v1beta1","version":"v1beta1"}],
    "preferredVersion":{"groupVersion":"custom.metrics.k8s.io/v1beta2","version":"v1beta2"}},
   {"name":"external.metrics.k8s.io",
    "versions":[{"groupVersion":"external.metrics.k8s.io/v1beta1","version":"v1beta1"}],
    "preferredVersion":{"groupVersion":"external.metrics.k8s.io/v1beta1","version":"v1beta1"}},
   {"name":"autoscaling",
    "versions":[{"groupVersion":"autoscaling/v2","version":"v2"}],
    "preferredVersion":{"groupVersion":"autoscaling/v2","version":"v2"}},
   {"name":"apps",
    "versions":[{"groupVersion":"apps/v1","version":"v1"}],
    "preferredVersion":{"groupVersion":"apps/v1","version":"v1"}}]})"));
  // The stored HorizontalPodAutoscalers (MemberObjects), for kubectl get hpa.
  auto autoscaling = call(f, kMember1, "/apis/autoscaling/v2");
  CHECK(autoscaling.body["resources"][0]["name"] == "horizontalpodautoscalers");
  CHECK(autoscaling.body["resources"][0]["shortNames"] == json::array({"hpa"}));
  CHECK(autoscaling.body["resources"][1]["name"] == "horizontalpodautoscalers/status");
  CHECK(call(f, kMember1, "/apis/metrics.k8s.io/v1beta1").body ==
        json::parse(R"({"kind":"APIResourceList","apiVersion":"v1","groupVersion":"metrics.k8s.io/v1beta1","resources":[
   {"name":"nodes","singularName":"","namespaced":false,"kind":"NodeMetrics","verbs":["get","list"]},
   {"name":"pods","singularName":"","namespaced":true,"kind":"PodMetrics","verbs":["get","list"]}]})"));
  auto custom = call(f, kMember1, "/apis/custom.metrics.k8s.io/v1beta2");
  CHECK(custom.body["groupVersion"] == "custom.metrics.k8s.io/v1beta2");
  CHECK(custom.body["resources"] == json::parse(R"([
   {"name":"deployments.apps/http_requests","singularName":"","namespaced":true,"kind":"MetricValueList","verbs":["get"]},
   {"name":"namespaces/http_requests","singularName":"","namespaced":false,"kind":"MetricValueList","verbs":["get"]},
   {"name":"pods/http_requests","singularName":"","namespaced":true,"kind":"MetricValueList","verbs":["get"]}])"));
  CHECK(call(f, kMember1, "/apis/external.metrics.k8s.io/v1beta1").body["resources"] == json::parse(R"([
   {"name":"queue_messages_ready","singularName":"","namespaced":true,"kind":"ExternalMetricValueList","verbs":["get"]}])"));
  CHECK(call(f, kMember1, "/apis/custom.metrics.k8s.io").body["kind"] == "APIGroup");

  // member2: custom metrics v1beta1 only, no external.
  auto m2 = call(f, kMember2, "/apis");
  REQUIRE(m2.body["groups"].size() == 4);  // with autoscaling and apps
  CHECK(m2.body["groups"][1]["versions"] ==
        json::parse(R"([{"groupVersion":"custom.metrics.k8s.io/v1beta1","version":"v1beta1"}])"));
  CHECK(m2.body["groups"][1]["preferredVersion"]["version"] == "v1beta1");
  CHECK(call(f, kMember2, "/apis/custom.metrics.k8s.io/v1beta2").status == 404);
  CHECK(call(f, kMember2, "/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/pods/*/http_requests").status == 404);
  CHECK(call(f, kMember2, "/apis/custom.metrics.k8s.io/v1beta1/namespaces/shop/pods/*/http_requests").status == 200);
  CHECK(call(f, kMember2, "/apis/external.metrics.k8s.io/v1beta1/namespaces/shop/queue_messages_ready").status == 404);

  // member3: no custom metrics at all.
  auto m3 = call(f, kMember3, "/apis");
  REQUIRE(m3.body["groups"].size() == 3);  // metrics.k8s.io, autoscaling and apps
  CHECK(m3.body["groups"][0]["name"] == "metrics.k8s.io");
  auto gone = call(f, kMember3, "/apis/custom.metrics.k8s.io/v1beta1/namespaces/shop/pods/*/http_requests");
  CHECK(gone.status == 404);
  CHECK(gone.body["message"] == "the server could not find the requested resource");
  CHECK(call(f, kMember3, "/apis/custom.metrics.k8s.io").status == 404);

  // The core group, for kubectl.
  CHECK(call(f, kMember1, "/api").body == json::parse(R"({"kind":"APIVersions","versions":["v1"]})"));
  auto core = call(f, kMember1, "/api/v1");
  CHECK(core.body["groupVersion"] == "v1");
  CHECK(core.body["resources"].size() == 3);
  auto version = call(f, kMember1, "/version");
  CHECK(version.body["gitVersion"] == "v1.31.0");
  CHECK(version.body["major"] == "1");
  CHECK(version.body["minor"] == "31");
  CHECK(call(f, kMember1, "/nope").status == 404);
}

TEST_CASE("MemberApi: only reads, watch is not supported", "[sim][member]") {
  auto f = sim_test::federation();
  auto post = sim_test::get("/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods");
  post.method = "POST";
  auto a = call(f, kMember1, post);
  CHECK(a.status == 405);
  CHECK(a.body["message"] == "create is not supported on resources of kind \"pods.metrics.k8s.io\"");
  auto watch = call(f, kMember1, "/apis/metrics.k8s.io/v1beta1/pods?watch=true");
  CHECK(watch.status == 405);
  CHECK(watch.body["message"] == "watch is not supported on resources of kind \"pods.metrics.k8s.io\"");
}

TEST_CASE("MemberApi: faults that are answers", "[sim][member]") {
  auto f = sim_test::federation();
  Faults errors;
  errors.error_rate = 0.25;
  auto g = f.with_faults(kMember1, errors);
  auto failed = call(g, kMember1, sim_test::get("/api/v1/pods"), sim_test::t0(), 0.2);
  CHECK(failed.status == 500);
  CHECK(failed.body["reason"] == "InternalError");
  CHECK(call(g, kMember1, sim_test::get("/api/v1/pods"), sim_test::t0(), 0.3).status == 200);
  CHECK(call(g, kMember2, sim_test::get("/api/v1/pods"), sim_test::t0(), 0.2).status == 200);  // per member

  Faults malformed;
  malformed.malformed_json = true;
  auto m = call(f.with_faults(kMember1, malformed), kMember1, "/apis/metrics.k8s.io/v1beta1/pods");
  CHECK(m.status == 200);
  CHECK(m.content_type == "application/json");
  CHECK(m.body.is_discarded());
  CHECK_FALSE(m.raw.empty());

  Faults expired;
  expired.expired_token = true;
  auto e = f.with_faults(kMember1, expired);
  CHECK(call(e, kMember1, "/api/v1/pods").status == 401);
  CHECK(call(e, kMember1, sim_test::get("/healthz", "")).status == 200);
}

TEST_CASE("MemberApi: kubectl get receives a Table when it asks for one", "[sim][member]") {
  auto f = sim_test::federation();
  auto r = sim_test::get("/api/v1/namespaces/shop/pods");
  r.headers.emplace_back("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json");
  auto t = call(f, kMember1, r, sim_test::t0() + std::chrono::seconds(150));
  REQUIRE(t.status == 200);
  CHECK(t.body["kind"] == "Table");
  CHECK(t.body["apiVersion"] == "meta.k8s.io/v1");
  CHECK(t.body["columnDefinitions"][1]["name"] == "Ready");
  REQUIRE(t.body["rows"].size() == 2);
  const auto& cells = t.body["rows"][0]["cells"];
  CHECK(cells[1] == "1/1");
  CHECK(cells[2] == "Running");
  CHECK(cells[4] == "2m30s");
  CHECK(t.body["rows"][0]["object"]["metadata"]["namespace"] == "shop");
  auto nodes = sim_test::get("/api/v1/nodes");
  nodes.headers.emplace_back("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io");
  CHECK(call(f, kMember1, nodes).body["rows"][0]["cells"][4] == "v1.31.0");
  // Without the Accept header: the plain list.
  CHECK(call(f, kMember1, "/api/v1/namespaces/shop/pods").body["kind"] == "PodList");
}

TEST_CASE("MemberApi: a new pod is Pending, then Running, then Ready, metrics only once it runs", "[sim][member]") {
  using namespace std::chrono_literals;
  auto w = sim_test::world();
  w.workloads[0].startup_delay = 10s;
  w.workloads[0].readiness_delay = 5s;
  auto f = Federation::create(w, sim_test::t0()).with_replicas(0, 6, sim_test::t0() + 100s);  // one new pod per member
  auto phase_of_new = [&](fedmetrics::k8s::Timestamp now) {
    auto list = call(f, kMember1, sim_test::get("/api/v1/namespaces/shop/pods"), now);
    std::string phase, ready, state;
    for (const auto& pod : list.body["items"]) {
      if (pod["metadata"]["creationTimestamp"] != "2026-08-22T10:01:40Z") continue;
      phase = pod["status"]["phase"];
      for (const auto& c : pod["status"]["conditions"])
        if (c["type"] == "Ready") ready = c["status"];
      state = pod["status"]["containerStatuses"][0]["state"].begin().key();
    }
    return phase + "/" + ready + "/" + state;
  };
  CHECK(phase_of_new(sim_test::t0() + 105s) == "Pending/False/waiting");
  CHECK(phase_of_new(sim_test::t0() + 111s) == "Running/False/running");
  CHECK(phase_of_new(sim_test::t0() + 116s) == "Running/True/running");
  auto metrics_count = [&](fedmetrics::k8s::Timestamp now) {
    return call(f, kMember1, sim_test::get("/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods"), now)
        .body["items"]
        .size();
  };
  CHECK(metrics_count(sim_test::t0() + 105s) == 2);  // the two pods from the start
  CHECK(metrics_count(sim_test::t0() + 111s) == 3);
}

TEST_CASE("MemberApi: core field selectors as kube-apiserver's (pods, nodes, namespaces)", "[sim][member]") {
  using namespace std::chrono_literals;
  auto w = sim_test::world();
  w.workloads[0].startup_delay = 10s;
  auto f = Federation::create(w, sim_test::t0()).with_replicas(0, 6, sim_test::t0() + 100s);
  auto now = sim_test::t0() + 105s;  // member1: two Running pods, one Pending
  auto names = [&](const std::string& target) {
    auto a = call(f, kMember1, sim_test::get(target), now);
    REQUIRE(a.status == 200);
    return a.body["items"].size();
  };
  CHECK(names("/api/v1/namespaces/shop/pods") == 3);
  CHECK(names("/api/v1/namespaces/shop/pods?fieldSelector=status.phase%3DRunning") == 2);
  CHECK(names("/api/v1/namespaces/shop/pods?fieldSelector=status.phase%21%3DRunning") == 1);
  CHECK(names("/api/v1/namespaces/shop/pods?fieldSelector=spec.nodeName%3Dm1-node-a") +
            names("/api/v1/namespaces/shop/pods?fieldSelector=spec.nodeName%3Dm1-node-b") ==
        3);
  CHECK(names("/api/v1/pods?fieldSelector=spec.hostNetwork%3Dfalse,spec.restartPolicy%3DAlways") == 3);
  CHECK(names("/api/v1/nodes?fieldSelector=spec.unschedulable%3Dfalse") == 2);
  CHECK(names("/api/v1/namespaces?fieldSelector=metadata.name%3Dshop") == 1);
  auto unknown = call(f, kMember1, sim_test::get("/api/v1/pods?fieldSelector=spec.containers%3Dx"), now);
  CHECK(unknown.status == 400);
  CHECK(unknown.body["message"] == "field label not supported: spec.containers");
  // metrics.k8s.io keeps metrics-server's metadata.* only.
  auto metrics =
      call(f, kMember1, sim_test::get("/apis/metrics.k8s.io/v1beta1/pods?fieldSelector=status.phase%3DRunning"), now);
  CHECK(metrics.status == 400);
}

TEST_CASE("MemberApi: the malformedGzip fault answers gzip with a bad CRC-32 to clients that accept gzip",
          "[sim][member]") {
  auto f = sim_test::federation();
  Faults faults;
  faults.malformed_gzip = true;
  auto g = f.with_faults(kMember1, faults);
  auto plain = sim_test::get("/apis/metrics.k8s.io/v1beta1/pods");
  auto gzip = plain;
  gzip.headers.emplace_back("Accept-Encoding", "gzip, deflate");
  const std::string expected = MemberApi(f, kMember1).handle(plain, sim_test::t0(), 1.0).body;

  auto broken = MemberApi(g, kMember1).handle(gzip, sim_test::t0(), 1.0);
  CHECK(broken.status == 200);
  CHECK(broken.content_type == "application/json");
  using Header = std::pair<std::string, std::string>;
  CHECK(std::count(broken.headers.begin(), broken.headers.end(), Header{"Content-Encoding", "gzip"}) == 1);
  auto inflated = fedmetrics::transport::gzip_decompress(broken.body, 1 << 20);
  REQUIRE_FALSE(inflated.ok());
  CHECK(inflated.failure() == fedmetrics::transport::GzipFailure::malformed);
  CHECK(inflated.error().message == "malformed gzip body: incorrect data check");
  // Only the CRC is wrong: mend it and the answer is the right one.
  std::string mended = broken.body;
  mended[mended.size() - 8] = static_cast<char>(mended[mended.size() - 8] ^ 0xff);
  auto good = fedmetrics::transport::gzip_decompress(mended, 1 << 20);
  REQUIRE(good.ok());
  CHECK(*good == expected);

  // A client that does not accept gzip, and answers other than 200, are left alone.
  auto identity = MemberApi(g, kMember1).handle(plain, sim_test::t0(), 1.0);
  CHECK(identity.body == expected);
  CHECK(identity.headers.empty());
  auto missing = MemberApi(g, kMember1).handle(sim_test::get("/api/v1/namespaces/shop/pods/nope"), sim_test::t0(), 1.0);
  CHECK(missing.status == 404);
  CHECK(nlohmann::json::parse(missing.body, nullptr, false)["reason"] == "NotFound");

  // As a world file and control-endpoint field.
  auto parsed = faults_from_json(json::parse(R"({"malformedGzip":true})"));
  REQUIRE(parsed.ok());
  CHECK(parsed->malformed_gzip);
  CHECK(to_json(*parsed)["malformedGzip"] == true);
  auto world = parse_world("members: [{name: m1, faults: {malformedGzip: true}}]\n");
  REQUIRE(world.ok());
  CHECK(world->members[0].faults.malformed_gzip);
}
