#include <catch2/catch.hpp>

#include "server/api_request.hpp"

using namespace fedmetrics;
using namespace fedmetrics::server;
using aggregator::CustomMetricsQuery;
using aggregator::ExternalMetricsQuery;
using aggregator::ResourceMetricsQuery;

namespace {

template <class T>
T expect_kind(const ApiRequest& r) {
  const T* value = std::get_if<T>(&r);
  if (value == nullptr) {
    if (const auto* s = std::get_if<k8s::Status>(&r)) FAIL("got Status " << s->code << ": " << s->message);
    FAIL("request parsed to another kind");
  }
  return *value;
}

k8s::Status expect_status(const ApiRequest& r, int code) {
  const auto* s = std::get_if<k8s::Status>(&r);
  REQUIRE(s != nullptr);
  CHECK(s->code == code);
  return *s;
}

}  // namespace

TEST_CASE("ApiRequest: information endpoints", "[server][request]") {
  CHECK(expect_kind<InfoRequest>(parse_api_request("GET", "/healthz")).endpoint == Endpoint::Healthz);
  CHECK(expect_kind<InfoRequest>(parse_api_request("GET", "/livez")).endpoint == Endpoint::Livez);
  CHECK(expect_kind<InfoRequest>(parse_api_request("HEAD", "/readyz")).endpoint == Endpoint::Readyz);
  CHECK(expect_kind<InfoRequest>(parse_api_request("GET", "/version")).endpoint == Endpoint::Version);
  CHECK(expect_kind<InfoRequest>(parse_api_request("GET", "/metrics")).endpoint == Endpoint::SelfMetrics);
  CHECK(expect_kind<InfoRequest>(parse_api_request("GET", "/apis")).endpoint == Endpoint::ApiGroupList);
  auto group = expect_kind<InfoRequest>(parse_api_request("GET", "/apis/custom.metrics.k8s.io"));
  CHECK(group.endpoint == Endpoint::ApiGroup);
  CHECK(group.group == "custom.metrics.k8s.io");
  auto gv = expect_kind<InfoRequest>(parse_api_request("GET", "/apis/custom.metrics.k8s.io/v1beta1?timeout=32s"));
  CHECK(gv.endpoint == Endpoint::ApiResourceList);
  CHECK(gv.version == "v1beta1");
}

TEST_CASE("ApiRequest: unserved paths are 404 Status, /api and /openapi included", "[server][request]") {
  for (const char* path :
       {"/", "/api", "/api/v1", "/openapi/v2", "/openapi/v3", "/apis/apps", "/apis/metrics.k8s.io/v1",
        "/apis/external.metrics.k8s.io/v1beta2", "/apis/metrics.k8s.io/v1beta1/deployments",
        "/apis/metrics.k8s.io/v1beta1/namespaces/x", "/apis/metrics.k8s.io/v1beta1/namespaces/x/pods/y/z",
        "/apis/external.metrics.k8s.io/v1beta1/queue_depth"}) {
    CAPTURE(path);
    const auto& s = expect_status(parse_api_request("GET", path), 404);
    CHECK(s.reason == "NotFound");
    CHECK(s.message == "the server could not find the requested resource");
  }
}

TEST_CASE("ApiRequest: metrics.k8s.io path forms", "[server][request]") {
  auto all = expect_kind<ResourceMetricsQuery>(parse_api_request("GET", "/apis/metrics.k8s.io/v1beta1/pods"));
  CHECK(all.kind == ResourceMetricsQuery::Kind::Pods);
  CHECK(all.namespace_name.empty());
  CHECK(all.name.empty());

  auto ns = expect_kind<ResourceMetricsQuery>(parse_api_request(
      "GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app%3Dweb%2Ctier+in+%28a%2Cb%29"));
  CHECK(ns.namespace_name == "default");
  CHECK(ns.label_selector.to_string() == "app=web,tier in (a,b)");

  auto one = expect_kind<ResourceMetricsQuery>(
      parse_api_request("GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/web-1"));
  CHECK(one.name == "web-1");

  auto nodes = expect_kind<ResourceMetricsQuery>(
      parse_api_request("GET", "/apis/metrics.k8s.io/v1beta1/nodes?fieldSelector=metadata.name%3Dnode-1"));
  CHECK(nodes.kind == ResourceMetricsQuery::Kind::Nodes);
  CHECK(nodes.field_selector.matches("node-1", ""));
  CHECK_FALSE(nodes.field_selector.matches("node-2", ""));
  CHECK(expect_kind<ResourceMetricsQuery>(parse_api_request("GET", "/apis/metrics.k8s.io/v1beta1/nodes/node-1")).name ==
        "node-1");
}

TEST_CASE("ApiRequest: bad selectors are 400 with the parser's text", "[server][request]") {
  const auto& bad_label =
      expect_status(parse_api_request("GET", "/apis/metrics.k8s.io/v1beta1/pods?labelSelector=a+b"), 400);
  CHECK(bad_label.reason == "BadRequest");
  CHECK(bad_label.message == "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt");
  const auto& bad_field =
      expect_status(parse_api_request("GET", "/apis/metrics.k8s.io/v1beta1/pods?fieldSelector=spec.nodeName%3Dx"), 400);
  CHECK(bad_field.message ==
        "\"spec.nodeName\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"");
  expect_status(parse_api_request("GET", "/apis/custom.metrics.k8s.io/v1beta2/namespaces/d/pods/*/m?labelSelector=!!"),
                400);
  expect_status(
      parse_api_request("GET", "/apis/custom.metrics.k8s.io/v1beta2/namespaces/d/pods/*/m?metricLabelSelector=a+b"),
      400);
  expect_status(
      parse_api_request("GET", "/apis/external.metrics.k8s.io/v1beta1/namespaces/d/q?labelSelector=x%3D%3D%3Dy"), 400);
}

TEST_CASE("ApiRequest: writes and watches are 405 naming the resource", "[server][request]") {
  const auto& post = expect_status(parse_api_request("POST", "/apis/metrics.k8s.io/v1beta1/pods"), 405);
  CHECK(post.reason == "MethodNotAllowed");
  CHECK(post.message == "create is not supported on resources of kind \"pods.metrics.k8s.io\"");
  CHECK(expect_status(parse_api_request("DELETE", "/apis/metrics.k8s.io/v1beta1/namespaces/a/pods/b"), 405).message ==
        "delete is not supported on resources of kind \"pods.metrics.k8s.io\"");
  const auto& watch = expect_status(parse_api_request("GET", "/apis/metrics.k8s.io/v1beta1/pods?watch=true"), 405);
  CHECK(watch.message == "watch is not supported on resources of kind \"pods.metrics.k8s.io\"");
  CHECK(expect_status(parse_api_request("PUT", "/apis/custom.metrics.k8s.io/v1beta2/namespaces/d/pods/*/m"), 405)
            .message == "update is not supported on resources of kind \"pods.custom.metrics.k8s.io\"");
  expect_status(parse_api_request("PATCH", "/apis/external.metrics.k8s.io/v1beta1/namespaces/d/q"), 405);
  // Unknown query parameters are ignored, not rejected.
  expect_kind<ResourceMetricsQuery>(parse_api_request(
      "GET", "/apis/metrics.k8s.io/v1beta1/pods?watch=false&limit=500&pretty=true&resourceVersion=0"));
}

TEST_CASE("ApiRequest: custom.metrics.k8s.io path forms", "[server][request]") {
  struct Row {
    const char* target;
    k8s::CustomMetricsVersion version;
    const char* group;
    const char* resource;
    const char* ns;
    const char* name;
    const char* metric;
  };
  using V = k8s::CustomMetricsVersion;
  const Row rows[] = {
      {"/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/http_requests", V::V1beta2, "", "pods", "default",
       "*", "http_requests"},
      // client-go escapes '*' as %2A; the Python client escapes '/' too.
      {"/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/%2A/http_requests", V::V1beta2, "", "pods",
       "default", "*", "http_requests"},
      {"/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/%2A%2Fhttp_requests", V::V1beta1, "", "pods",
       "default", "*", "http_requests"},
      {"/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/deployments.apps/web/rps", V::V1beta2, "apps",
       "deployments", "default", "web", "rps"},
      {"/apis/custom.metrics.k8s.io/v1beta2/nodes/node-1/cpu_temp", V::V1beta2, "", "nodes", "", "node-1", "cpu_temp"},
      {"/apis/custom.metrics.k8s.io/v1beta2/nodes/*/cpu_temp", V::V1beta2, "", "nodes", "", "*", "cpu_temp"},
      {"/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/metrics/queue_length", V::V1beta2, "", "namespaces", "",
       "default", "queue_length"},
      {"/apis/custom.metrics.k8s.io/v1beta2/namespaces/*/metrics/queue_length", V::V1beta2, "", "namespaces", "", "*",
       "queue_length"},
      {"/apis/custom.metrics.k8s.io/v1beta2/namespaces/d/ingresses.networking.k8s.io/i/hits", V::V1beta2,
       "networking.k8s.io", "ingresses", "d", "i", "hits"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.target);
    auto q = expect_kind<CustomMetricsQuery>(parse_api_request("GET", row.target));
    CHECK(q.version == row.version);
    CHECK(q.resource.group == row.group);
    CHECK(q.resource.resource == row.resource);
    CHECK(q.namespace_name == row.ns);
    CHECK(q.name == row.name);
    CHECK(q.metric == row.metric);
  }
  auto selected = expect_kind<CustomMetricsQuery>(
      parse_api_request("GET",
                        "/apis/custom.metrics.k8s.io/v1beta2/namespaces/d/pods/*/"
                        "m?labelSelector=app%3Dweb&metricLabelSelector=verb+in+%28GET%29"));
  CHECK(selected.label_selector.to_string() == "app=web");
  CHECK(selected.metric_selector.to_string() == "verb in (GET)");
  // labelSelector is ignored for a single object, as upstream does.
  auto single = expect_kind<CustomMetricsQuery>(
      parse_api_request("GET", "/apis/custom.metrics.k8s.io/v1beta2/namespaces/d/pods/p/m?labelSelector=app%3Dweb"));
  CHECK(single.label_selector.empty());
}

TEST_CASE("ApiRequest: malformed custom metrics paths are 400 invalid request path", "[server][request]") {
  for (const char* path :
       {"/apis/custom.metrics.k8s.io/v1beta2/pods", "/apis/custom.metrics.k8s.io/v1beta2/pods/*",
        "/apis/custom.metrics.k8s.io/v1beta2/namespaces/d/m", "/apis/custom.metrics.k8s.io/v1beta2/namespaces/d/pods/m",
        "/apis/custom.metrics.k8s.io/v1beta2/a/b/c/d/e/f"}) {
    CAPTURE(path);
    CHECK(expect_status(parse_api_request("GET", path), 400).message == "invalid request path");
  }
  CHECK(expect_status(parse_api_request("GET",
                                        "/apis/custom.metrics.k8s.io/v1beta2/namespaces/d/pods/p/m?fieldSelector="
                                        "metadata.name%3Dq"),
                      400)
            .message == "fieldSelector metadata.name doesn't match requested name");
}

TEST_CASE("ApiRequest: external.metrics.k8s.io", "[server][request]") {
  auto q = expect_kind<ExternalMetricsQuery>(parse_api_request(
      "GET",
      "/apis/external.metrics.k8s.io/v1beta1/namespaces/default/queue_messages_ready?labelSelector=queue%3Dorders"));
  CHECK(q.namespace_name == "default");
  CHECK(q.metric == "queue_messages_ready");
  CHECK(q.metric_selector.to_string() == "queue=orders");
}

TEST_CASE("ApiRequest: a bad escape in the path is a 400", "[server][request]") {
  // The decoding itself is tested in test/k8s/url_test.cpp.
  expect_status(parse_api_request("GET", "/apis/metrics.k8s.io/v1beta1/pods%zz"), 400);
}

namespace {

// "k0=v,k1=v,...": `count` requirements, URL-encoded as a query value.
std::string many_requirements(std::size_t count) {
  std::string out;
  for (std::size_t i = 0; i < count; ++i) {
    if (i > 0) out += "%2C";
    out += "k" + std::to_string(i) + "%3Dv";
  }
  return out;
}

}  // namespace

TEST_CASE("ApiRequest: selectors over the byte or requirement limit are 400 naming the limit", "[server][request]") {
  const std::string pods = "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods";
  const std::string custom = "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/rps";
  const std::string external = "/apis/external.metrics.k8s.io/v1beta1/namespaces/default/queue";

  // At the limits: accepted.
  auto at_limit = expect_kind<ResourceMetricsQuery>(
      parse_api_request("GET", pods + "?labelSelector=" + many_requirements(kMaxSelectorRequirements)));
  CHECK(at_limit.label_selector.requirements().size() == kMaxSelectorRequirements);
  // "a in (v0,v1,...)" of exactly kMaxSelectorBytes decoded bytes.
  std::string set = "a in (v0";
  for (std::size_t i = 1; set.size() + 1 < kMaxSelectorBytes - 8; ++i) set += ",v" + std::to_string(i);
  set += "," + std::string(kMaxSelectorBytes - set.size() - 2, 'x') + ")";
  REQUIRE(set.size() == kMaxSelectorBytes);
  std::string encoded = "a%20in%20" + set.substr(5);
  auto at_bytes = expect_kind<ResourceMetricsQuery>(parse_api_request("GET", pods + "?labelSelector=" + encoded));
  CHECK(at_bytes.label_selector.requirements().size() == 1);

  // One requirement more, in every label selector parameter.
  const std::string too_many = many_requirements(kMaxSelectorRequirements + 1);
  for (const std::string& target :
       {pods + "?labelSelector=" + too_many, custom + "?labelSelector=" + too_many,
        custom + "?metricLabelSelector=" + too_many, external + "?labelSelector=" + too_many}) {
    INFO(target.substr(0, 80));
    auto status = expect_status(parse_api_request("GET", target), 400);
    CHECK(status.reason == "BadRequest");
    CHECK(status.message == "too many requirements in the selector: the limit is 1000");
  }

  // One byte more than 64 KiB, refused before it is parsed.
  const std::string too_long(kMaxSelectorBytes + 1, 'a');
  for (const auto& [target, parameter] : std::vector<std::pair<std::string, std::string>>{
           {pods + "?labelSelector=" + too_long, "labelSelector"},
           {pods + "?fieldSelector=" + too_long, "fieldSelector"},
           {custom + "?metricLabelSelector=" + too_long, "metricLabelSelector"},
           {"/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/web/rps?fieldSelector=" + too_long,
            "fieldSelector"},
           {external + "?labelSelector=" + too_long, "labelSelector"}}) {
    INFO(parameter);
    auto status = expect_status(parse_api_request("GET", target), 400);
    CHECK(status.message == parameter + " is too long: 65537 bytes, the limit is 65536");
  }
}

TEST_CASE("ApiRequest: '.' and '..' (and '%' once decoded) are refused as namespace or object names",
          "[server][request]") {
  struct Row {
    const char* target;
    const char* message;
  };
  const Row rows[] = {
      {"/apis/metrics.k8s.io/v1beta1/namespaces/../pods", "namespace name may not be '..'"},
      {"/apis/metrics.k8s.io/v1beta1/namespaces/./pods", "namespace name may not be '.'"},
      {"/apis/metrics.k8s.io/v1beta1/namespaces/%2E%2E/pods", "namespace name may not be '..'"},
      {"/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/..", "resource name may not be '..'"},
      {"/apis/metrics.k8s.io/v1beta1/nodes/.", "resource name may not be '.'"},
      {"/apis/metrics.k8s.io/v1beta1/nodes/%25", "resource name may not contain '%'"},
      {"/apis/custom.metrics.k8s.io/v1beta2/namespaces/../pods/*/rps", "namespace name may not be '..'"},
      {"/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/../rps", "resource name may not be '..'"},
      {"/apis/custom.metrics.k8s.io/v1beta2/nodes/../cpu", "resource name may not be '..'"},
      {"/apis/custom.metrics.k8s.io/v1beta2/namespaces/../metrics/queue", "resource name may not be '..'"},
      {"/apis/external.metrics.k8s.io/v1beta1/namespaces/../queue", "namespace name may not be '..'"},
      {"/apis/external.metrics.k8s.io/v1beta1/namespaces/default/..", "metric name may not be '..'"},
      {"/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/.", "metric name may not be '.'"},
  };
  for (const auto& row : rows) {
    INFO(row.target);
    auto status = expect_status(parse_api_request("GET", row.target), 400);
    CHECK(status.reason == "BadRequest");
    CHECK(status.message == row.message);
  }
  // Names that merely contain dots are names.
  CHECK(expect_kind<ResourceMetricsQuery>(
            parse_api_request("GET", "/apis/metrics.k8s.io/v1beta1/namespaces/a..b/pods/..x"))
            .name == "..x");
}
