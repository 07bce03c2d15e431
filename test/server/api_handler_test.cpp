#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>

#include <optional>

#include <nlohmann/json.hpp>

#include "server/api_handler.hpp"
#include "fedmetrics/telemetry/prometheus_server_metrics.hpp"
#include "server/run_task.hpp"
#include "support/fake_metrics_service.hpp"

using namespace fedmetrics;
using namespace fedmetrics::server;
using nlohmann::json;

namespace {

using fedmetrics::testing::FakeMetricsService;

// The service as these tests ask it: nothing served yet, one custom metric.
std::shared_ptr<FakeMetricsService> make_service() {
  auto service = std::make_shared<FakeMetricsService>();
  service->served = false;
  service->custom_resources.resources = {{"pods/http_requests", "", true, "MetricValueList", {"get"}}};
  service->external_resources.group_version = "external.metrics.k8s.io/v1beta1";
  return service;
}

HttpResponse call(const ApiHandler& handler, std::string method, std::string target,
                  std::vector<std::pair<std::string, std::string>> headers = {}) {
  HttpRequest request;
  request.method = std::move(method);
  request.target = std::move(target);
  request.headers = std::move(headers);
  return server::testing::run(handler.handle(std::move(request)));
}

k8s::PodMetrics pod(const char* name) {
  k8s::PodMetrics p;
  p.metadata.name = name;
  p.metadata.namespace_name = "default";
  p.containers.push_back({"app", {{"cpu", *k8s::Quantity::parse("5m")}}});
  return p;
}

std::vector<std::string> warnings_of(const HttpResponse& r) {
  std::vector<std::string> out;
  for (const auto& [k, v] : r.headers)
    if (k == "Warning") out.push_back(v);
  return out;
}

}  // namespace

TEST_CASE("ApiHandler: a list answer is a PodMetricsList, partial failures become Warning headers",
          "[server][handler]") {
  auto service = make_service();
  service->pods = {std::vector<k8s::PodMetrics>{pod("a"), pod("b")},
                   {"member2: Timeout: no answer within 3s", "member3: said \"no\""}};
  ApiHandler handler(service, std::make_shared<telemetry::PrometheusServerMetrics>(), {});
  auto r = call(handler, "GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app%3Dweb");
  CHECK(r.status == 200);
  CHECK(r.content_type == "application/json");
  json body = json::parse(r.body_bytes());
  CHECK(body["kind"] == "PodMetricsList");
  CHECK(body["items"].size() == 2);
  CHECK(warnings_of(r) == std::vector<std::string>{"299 - \"member2: Timeout: no answer within 3s\"",
                                                   "299 - \"member3: said \\\"no\\\"\""});
  REQUIRE(service->pod_queries.size() == 1);
  CHECK(service->pod_queries[0].label_selector.to_string() == "app=web");
}

TEST_CASE("ApiHandler: a get by name is the bare object, a Status answer keeps its code", "[server][handler]") {
  auto service = make_service();
  service->pods = {std::vector<k8s::PodMetrics>{pod("a")}, {}};
  ApiHandler handler(service, nullptr, {});
  auto one = call(handler, "GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/a");
  CHECK(json::parse(one.body_bytes())["kind"] == "PodMetrics");

  service->pods = {k8s::Status::conflict({"metrics.k8s.io", "pods"}, "a", "found in member1, member2"), {}};
  auto conflict = call(handler, "GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/a");
  CHECK(conflict.status == 409);
  CHECK(json::parse(conflict.body_bytes())["reason"] == "Conflict");
}

TEST_CASE("ApiHandler: custom metrics are written in the version asked", "[server][handler]") {
  auto service = make_service();
  k8s::MetricValue v;
  v.described_object = {"Pod", "default", "a", "/v1", "", "", ""};
  v.metric_name = "http_requests";
  v.value = *k8s::Quantity::parse("700m");
  service->custom = {std::vector<k8s::MetricValue>{v}, {}};
  ApiHandler handler(service, nullptr, {});
  auto v1 = json::parse(
      call(handler, "GET", "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/*/http_requests").body_bytes());
  CHECK(v1["apiVersion"] == "custom.metrics.k8s.io/v1beta1");
  CHECK(v1["items"][0]["metricName"] == "http_requests");
  auto v2 = json::parse(
      call(handler, "GET", "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/http_requests").body_bytes());
  CHECK(v2["items"][0]["metric"]["name"] == "http_requests");
  CHECK(v2["items"][0]["value"] == "700m");
}

TEST_CASE("ApiHandler: discovery comes from the service's cache, readiness from its state", "[server][handler]") {
  auto service = make_service();
  ApiHandler handler(service, nullptr, {});
  auto list = json::parse(call(handler, "GET", "/apis/custom.metrics.k8s.io/v1beta1").body_bytes());
  CHECK(list["groupVersion"] == "custom.metrics.k8s.io/v1beta1");
  CHECK(list["resources"][0]["name"] == "pods/http_requests");

  CHECK(call(handler, "GET", "/readyz").status == 500);  // not configured
  handler.set_configured(true);
  CHECK(call(handler, "GET", "/readyz").status == 500);  // no member answered yet
  service->served = true;
  CHECK(call(handler, "GET", "/readyz").status == 200);
  CHECK(call(handler, "GET", "/healthz").body == "ok");
}

TEST_CASE("ApiHandler: /version says the build's version, its major and minor split from it", "[server][handler]") {
  BuildInfo build;
  build.git_version = "v2.13.4";
  build.git_commit = "0123abcd";
  ApiHandler handler(std::make_shared<FakeMetricsService>(), nullptr, build);
  auto version = json::parse(call(handler, "GET", "/version").body_bytes());
  CHECK(version["gitVersion"] == "v2.13.4");
  CHECK(version["major"] == "2");
  CHECK(version["minor"] == "13");
  CHECK(version["gitCommit"] == "0123abcd");

  ApiHandler unknown(std::make_shared<FakeMetricsService>(), nullptr, BuildInfo{});
  auto none = json::parse(call(unknown, "GET", "/version").body_bytes());
  CHECK(none["gitVersion"] == "unknown");
  CHECK(none["major"] == "");
  CHECK(none["minor"] == "");
}

TEST_CASE("ApiHandler: without members every metrics query is 503", "[server][handler]") {
  ApiHandler handler(nullptr, nullptr, {});
  for (const char* target : {"/apis/metrics.k8s.io/v1beta1/nodes", "/apis/custom.metrics.k8s.io/v1beta2/nodes/*/m",
                             "/apis/external.metrics.k8s.io/v1beta1/namespaces/d/q"}) {
    CAPTURE(target);
    auto r = call(handler, "GET", target);
    CHECK(r.status == 503);
    CHECK(json::parse(r.body_bytes())["reason"] == "ServiceUnavailable");
  }
}

TEST_CASE("ApiHandler: request metrics label values come from a closed set, never from the path", "[server][handler]") {
  auto service = make_service();
  service->custom = {std::vector<k8s::MetricValue>{}, {}};
  auto metrics = std::make_shared<telemetry::PrometheusServerMetrics>();
  ApiHandler handler(service, metrics, {});
  call(handler, "GET", "/apis/custom.metrics.k8s.io/v1beta2/namespaces/x/pods/*/random-name-123");
  call(handler, "GET", "/apis/custom.metrics.k8s.io/v1beta2/namespaces/x/random-resource-456/*/m");
  call(handler, "GET", "/apis/custom.metrics.k8s.io/v1beta2/namespaces/x/things.random-group-789/o/m");
  call(handler, "GET", "/apis/custom.metrics.k8s.io/v1beta2/namespaces/x/deployments.apps/web/m");
  call(handler, "GET", "/apis/external.metrics.k8s.io/v1beta1/namespaces/x/random-metric-000");
  const std::string text = metrics->serialize();
  for (const char* caller_chosen :
       {"random-name-123", "random-resource-456", "random-group-789", "random-metric-000"}) {
    INFO(caller_chosen);
    CHECK(text.find(caller_chosen) == std::string::npos);
  }
  CHECK(text.find("resource=\"other\"") != std::string::npos);
  CHECK(text.find("resource=\"pods\"") != std::string::npos);
  CHECK(text.find("resource=\"deployments.apps\"") != std::string::npos);
  CHECK(text.find("resource=\"external\"") != std::string::npos);
}

TEST_CASE("ApiHandler: a selector over the limits is a 400 and the service is never asked", "[server][handler]") {
  auto service = make_service();
  ApiHandler handler(service, nullptr, {});
  std::string selector;
  for (int i = 0; i <= 1000; ++i) selector += (i ? "%2Ck" : "k") + std::to_string(i) + "%3Dv";
  auto r = call(handler, "GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=" + selector);
  CHECK(r.status == 400);
  CHECK(json::parse(r.body_bytes())["message"] == "too many requirements in the selector: the limit is 1000");
  auto dots = call(handler, "GET", "/apis/metrics.k8s.io/v1beta1/namespaces/../pods");
  CHECK(dots.status == 400);
  CHECK(service->pod_queries.empty());
}

TEST_CASE("ApiHandler: 405 answers carry Allow, writes to health and metrics endpoints are 405", "[server][handler]") {
  ApiHandler handler(nullptr, nullptr, {});
  for (const char* target : {"/healthz", "/livez", "/readyz", "/metrics", "/version", "/apis", "/apis/metrics.k8s.io",
                             "/apis/metrics.k8s.io/v1beta1", "/apis/metrics.k8s.io/v1beta1/pods"}) {
    INFO(target);
    auto r = call(handler, "POST", target);
    CHECK(r.status == 405);
    auto allow = std::find_if(r.headers.begin(), r.headers.end(), [](const auto& h) { return h.first == "Allow"; });
    REQUIRE(allow != r.headers.end());
    CHECK(allow->second == "GET, HEAD");
  }
  // The group's discovery document is named by its kind, not ".metrics.k8s.io".
  auto group = json::parse(call(handler, "POST", "/apis/metrics.k8s.io").body_bytes());
  CHECK(group["message"] == "create is not supported on resources of kind \"APIGroup\"");
  auto health = json::parse(call(handler, "DELETE", "/healthz").body_bytes());
  CHECK(health["message"] == "delete is not supported on resources of kind \"healthz\"");
}

TEST_CASE("ApiHandler: /readyz and /livez list their checks as kube-apiserver does", "[server][handler]") {
  auto service = make_service();
  ApiHandler handler(service, nullptr, {});
  auto failed = call(handler, "GET", "/readyz");
  CHECK(failed.status == 500);
  CHECK(failed.body ==
        "[+]ping ok\n[-]configuration-loaded failed: reason withheld\n"
        "[-]member-answered failed: reason withheld\n[+]shutdown ok\nreadyz check failed\n");
  handler.set_configured(true);
  service->served = true;
  CHECK(call(handler, "GET", "/readyz").body == "ok");
  auto verbose = call(handler, "GET", "/readyz?verbose");
  CHECK(verbose.status == 200);
  CHECK(verbose.body ==
        "[+]ping ok\n[+]configuration-loaded ok\n[+]member-answered ok\n[+]shutdown ok\nreadyz check passed\n");
  CHECK(call(handler, "GET", "/livez?verbose=1").body == "[+]ping ok\nlivez check passed\n");
  CHECK(call(handler, "GET", "/healthz?verbose").body == "[+]ping ok\nhealthz check passed\n");
  CHECK(call(handler, "GET", "/livez").body == "ok");

  // SIGTERM: not ready at once (kube-apiserver's "shutdown" check), still live.
  handler.set_shutting_down();
  auto terminating = call(handler, "GET", "/readyz?verbose");
  CHECK(terminating.status == 500);
  CHECK(terminating.body ==
        "[+]ping ok\n[+]configuration-loaded ok\n[+]member-answered ok\n"
        "[-]shutdown failed: reason withheld\nreadyz check failed\n");
  CHECK(call(handler, "GET", "/livez").status == 200);
  CHECK(call(handler, "GET", "/healthz").status == 200);
}

namespace {
constexpr const char* kKubectlGetAccept =
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

k8s::PodMetrics pod_from(const char* name, const char* member) {
  k8s::PodMetrics p = pod(name);
  p.metadata.annotations = {{std::string(aggregator::kQueryFromClusterAnnotation), member}};
  p.window = std::chrono::seconds(30);
  return p;
}
}  // namespace

TEST_CASE("ApiHandler: kubectl get's Accept gets a Table with the member of each row", "[server][handler][table]") {
  auto service = make_service();
  service->pods = {std::vector<k8s::PodMetrics>{pod_from("a", "member1"), pod_from("b", "member2")},
                   {"member3: Timeout: no answer within 3s"}};
  ApiHandler handler(service, nullptr, {});
  auto r =
      call(handler, "GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods", {{"accept", kKubectlGetAccept}});
  CHECK(r.status == 200);
  CHECK(r.content_type == "application/json");
  json body = json::parse(r.body_bytes());
  CHECK(body["kind"] == "Table");
  CHECK(body["apiVersion"] == "meta.k8s.io/v1");
  std::vector<std::string> columns;
  for (const auto& c : body["columnDefinitions"]) columns.push_back(c["name"]);
  CHECK(columns == std::vector<std::string>{"Name", "cpu", "Window", "Cluster"});
  CHECK(body["rows"][0]["cells"] == json::array({"a", "5m", "30s", "member1"}));
  CHECK(body["rows"][1]["cells"] == json::array({"b", "5m", "30s", "member2"}));
  CHECK(body["rows"][0]["object"]["kind"] == "PartialObjectMetadata");
  // The warnings come with the Table as with the list.
  CHECK(warnings_of(r).size() == 1);
  // The same answer, asked as JSON, is still the list.
  auto plain =
      call(handler, "GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods", {{"Accept", "application/json"}});
  CHECK(json::parse(plain.body_bytes())["kind"] == "PodMetricsList");

  SECTION("a get by name is a Table of one row; includeObject=Object carries the object") {
    service->pods = {std::vector<k8s::PodMetrics>{pod_from("a", "member2")}, {}};
    auto one = call(handler, "GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/a?includeObject=Object",
                    {{"Accept", "application/json;as=Table;v=v1beta1;g=meta.k8s.io"}});
    json table = json::parse(one.body_bytes());
    CHECK(table["apiVersion"] == "meta.k8s.io/v1beta1");
    REQUIRE(table["rows"].size() == 1);
    CHECK(table["rows"][0]["cells"][3] == "member2");
    CHECK(table["rows"][0]["object"]["kind"] == "PodMetrics");
  }
  SECTION("includeObject=None leaves the objects out; a value apimachinery refuses is a 400, no member asked") {
    auto none =
        call(handler, "GET", "/apis/metrics.k8s.io/v1beta1/pods?includeObject=None", {{"Accept", kKubectlGetAccept}});
    CHECK(json::parse(none.body_bytes())["rows"][0]["object"].is_null());
    const auto asked = service->pod_queries.size();
    auto bad =
        call(handler, "GET", "/apis/metrics.k8s.io/v1beta1/pods?includeObject=All", {{"Accept", kKubectlGetAccept}});
    CHECK(bad.status == 400);
    CHECK(json::parse(bad.body_bytes())["message"] ==
          "Unable to convert to Table as requested: includeObject: Unsupported value: \"All\": supported values: "
          "\"Metadata\", \"None\", \"Object\"");
    CHECK(service->pod_queries.size() == asked);
    // Without a Table, includeObject means nothing (kube-apiserver reads it only for Tables).
    CHECK(call(handler, "GET", "/apis/metrics.k8s.io/v1beta1/pods?includeObject=All").status == 200);
  }
}

TEST_CASE("ApiHandler: an Accept that admits nothing we write is a 406, before any member is asked",
          "[server][handler][table]") {
  auto service = make_service();
  service->pods = {std::vector<k8s::PodMetrics>{pod("a")}, {}};
  ApiHandler handler(service, std::make_shared<telemetry::PrometheusServerMetrics>(), {});
  auto r = call(handler, "GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods",
                {{"Accept", "application/vnd.kubernetes.protobuf"}});
  CHECK(r.status == 406);
  json status = json::parse(r.body_bytes());
  CHECK(status["kind"] == "Status");
  CHECK(status["reason"] == "NotAcceptable");
  CHECK(status["message"] == "only the following media types are accepted: application/json");
  CHECK(service->pod_queries.empty());
  // kubectl top and the HPA controller prefer protobuf but admit JSON.
  for (const char* accept :
       {"application/vnd.kubernetes.protobuf, */*", "application/vnd.kubernetes.protobuf,application/json"}) {
    auto ok = call(handler, "GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods", {{"Accept", accept}});
    CHECK(ok.status == 200);
    CHECK(json::parse(ok.body_bytes())["kind"] == "PodMetricsList");
  }
  // Custom metrics have no Table: kubectl get's list falls back to JSON, a Table alone is a 406.
  const char* custom = "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/http_requests";
  CHECK(json::parse(call(handler, "GET", custom, {{"Accept", kKubectlGetAccept}}).body_bytes())["kind"] ==
        "MetricValueList");
  CHECK(call(handler, "GET", custom, {{"Accept", "application/json;as=Table;v=v1;g=meta.k8s.io"}}).status == 406);
  // Discovery and health do not negotiate.
  CHECK(call(handler, "GET", "/apis/metrics.k8s.io/v1beta1", {{"Accept", "application/vnd.kubernetes.protobuf"}})
            .status == 200);
  CHECK(call(handler, "GET", "/healthz", {{"Accept", "text/html"}}).status == 200);
}

TEST_CASE(
    "ApiHandler: cancelled while the aggregator has not answered, a query ends at once, the late answer is dropped",
    "[server][handler]") {
  auto service = make_service();
  service->hold = true;
  auto metrics = std::make_shared<telemetry::PrometheusServerMetrics>();
  ApiHandler handler(service, metrics, {});
  auto in_flight = [&] {
    const auto text = metrics->serialize();
    const auto at = text.find("\nfedmetrics_apiserver_requests_in_flight ");
    return at == std::string::npos ? std::string("absent") : text.substr(at + 1, text.find('\n', at + 1) - at - 1);
  };
  HttpRequest request;
  request.method = "GET";
  request.target = "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods";
  server::testing::Stepped<HttpResponse> query(handler.handle(std::move(request)));
  query.step();  // until the handler waits for the aggregator
  REQUIRE(service->held() == 1);
  CHECK_FALSE(query.ended());
  CHECK(in_flight() == "fedmetrics_apiserver_requests_in_flight 1");

  query.cancel();
  query.step();
  CHECK(query.ended_by_cancellation());
  CHECK(in_flight() == "fedmetrics_apiserver_requests_in_flight 0");
  // The aggregator answers at last: nothing is resumed, nothing is counted twice.
  service->release();
  CHECK(query.step() == 0);
  CHECK(in_flight() == "fedmetrics_apiserver_requests_in_flight 0");
}

TEST_CASE("ApiHandler: a list merged as JSON pieces is written from them, with its warnings", "[server][handler]") {
  auto service = std::make_shared<FakeMetricsService>();
  auto list = std::make_shared<aggregator::JsonList>();
  list->frame = k8s::pod_metrics_list_frame();
  const std::string a = k8s::encode_pod_metrics_item(pod("a")) + ",", b = k8s::encode_pod_metrics_item(pod("b"));
  list->pieces = {list->frame.first, a, b, list->frame.second};
  for (const std::string_view piece : list->pieces) list->bytes += piece.size();
  service->pods = {std::vector<k8s::PodMetrics>{}, {"member2: timeout: no answer within 3s"}};
  service->pods.json_list = list;
  ApiHandler handler(service, std::make_shared<telemetry::PrometheusServerMetrics>(), {});
  auto r = call(handler, "GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods");
  CHECK(r.status == 200);
  REQUIRE(r.body_pieces);
  CHECK(r.body_size() == list->bytes);
  CHECK(r.body_text() == k8s::encode_pod_metrics_list({pod("a"), pod("b")}));
  CHECK(warnings_of(r) == std::vector<std::string>{"299 - \"member2: timeout: no answer within 3s\""});
  // The handler asked for a JSON list.
  REQUIRE(service->pod_queries.size() == 1);
  CHECK(service->pod_queries[0].encode_list);
}
