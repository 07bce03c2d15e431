#include <catch2/catch.hpp>

#include "fedmetrics/k8s/metrics_types.hpp"

using namespace fedmetrics::k8s;
using nlohmann::json;

namespace {
Quantity q(const char* text) { return *Quantity::parse(text); }
}  // namespace

TEST_CASE("PodMetricsList: metrics-server's document round-trips byte-for-byte in meaning", "[k8s][types]") {
  // A PodMetricsList as metrics-server answers it.
  const json document =
      json::parse(R"({"kind":"PodMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[
    {"metadata":{"name":"web-7d9c","namespace":"default","labels":{"app":"web"},"creationTimestamp":"2026-08-22T10:15:31Z"},
     "timestamp":"2026-08-22T10:15:20Z","window":"15.021s",
     "containers":[{"name":"nginx","usage":{"cpu":"2318451n","memory":"14536Ki"}},
                   {"name":"sidecar","usage":{"cpu":"0","memory":"6288Ki"}}]}]})");
  auto items = pod_metrics_list_from_json(document);
  REQUIRE(items.ok());
  REQUIRE(items->size() == 1);
  const PodMetrics& pod = items->front();
  CHECK(pod.metadata.name == "web-7d9c");
  CHECK(pod.metadata.labels.at("app") == "web");
  CHECK(pod.window == std::chrono::milliseconds(15021));
  CHECK(pod.containers[0].usage.at("cpu").nanos() == 2318451);
  CHECK(pod.containers[0].usage.at("memory").value() == 14536 * 1024);
  CHECK(pod_metrics_list_to_json(*items) == document);

  json single = to_json(pod);
  CHECK(single["kind"] == "PodMetrics");
  CHECK(single["apiVersion"] == "metrics.k8s.io/v1beta1");
}

TEST_CASE("NodeMetricsList: usage on the item, no namespace", "[k8s][types]") {
  const json document =
      json::parse(R"({"kind":"NodeMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[
    {"metadata":{"name":"node-1","labels":{"kubernetes.io/hostname":"node-1"},"creationTimestamp":"2026-08-22T10:15:31Z"},
     "timestamp":"2026-08-22T10:15:18Z","window":"20.034s","usage":{"cpu":"187563109n","memory":"1720364Ki"}}]})");
  auto items = node_metrics_list_from_json(document);
  REQUIRE(items.ok());
  CHECK(items->front().usage.at("cpu").milli_value() == 188);
  CHECK(node_metrics_list_to_json(*items) == document);
  CHECK(node_metrics_list_to_json({}) ==
        json::parse(R"({"kind":"NodeMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[]})"));
}

TEST_CASE("MetricValueList: v1beta1 and v1beta2 keys, and conversion between them", "[k8s][types]") {
  const json v1beta1 =
      json::parse(R"({"kind":"MetricValueList","apiVersion":"custom.metrics.k8s.io/v1beta1","metadata":{},"items":[
    {"describedObject":{"kind":"Pod","namespace":"default","name":"web-7d9c","apiVersion":"/v1"},
     "metricName":"http_requests","timestamp":"2026-08-22T10:15:30Z","window":60,"value":"1500m","selector":null}]})");
  const json v1beta2 =
      json::parse(R"({"kind":"MetricValueList","apiVersion":"custom.metrics.k8s.io/v1beta2","metadata":{},"items":[
    {"describedObject":{"kind":"Pod","namespace":"default","name":"web-7d9c","apiVersion":"/v1"},
     "metric":{"name":"http_requests","selector":null},"timestamp":"2026-08-22T10:15:30Z","windowSeconds":60,"value":"1500m"}]})");
  auto from_v1 = metric_value_list_from_json(v1beta1);
  auto from_v2 = metric_value_list_from_json(v1beta2);
  REQUIRE(from_v1.ok());
  REQUIRE(from_v2.ok());
  CHECK(*from_v1 == *from_v2);
  CHECK(from_v1->front().window_seconds == 60);
  CHECK(from_v1->front().value.milli_value() == 1500);
  CHECK(metric_value_list_to_json(*from_v1, CustomMetricsVersion::V1beta2) == v1beta2);
  CHECK(metric_value_list_to_json(*from_v2, CustomMetricsVersion::V1beta1) == v1beta1);

  // A metric selector is kept as sent, and validated.
  json with_selector = v1beta2;
  with_selector["items"][0]["metric"]["selector"] = json::parse(R"({"matchLabels":{"verb":"GET"}})");
  auto selected = metric_value_list_from_json(with_selector);
  REQUIRE(selected.ok());
  CHECK(metric_value_list_to_json(*selected, CustomMetricsVersion::V1beta1)["items"][0]["selector"] ==
        json::parse(R"({"matchLabels":{"verb":"GET"}})"));

  // No window: the key is absent (omitempty), never 0.
  json no_window = v1beta2;
  no_window["items"][0].erase("windowSeconds");
  auto decoded = metric_value_list_from_json(no_window);
  REQUIRE(decoded.ok());
  CHECK_FALSE(decoded->front().window_seconds.has_value());
  CHECK_FALSE(metric_value_list_to_json(*decoded, CustomMetricsVersion::V1beta2)["items"][0].contains("windowSeconds"));
}

TEST_CASE("ExternalMetricValueList: metricLabels always present", "[k8s][types]") {
  const json document = json::parse(
      R"({"kind":"ExternalMetricValueList","apiVersion":"external.metrics.k8s.io/v1beta1","metadata":{},"items":[
    {"metricName":"queue_messages_ready","metricLabels":{"queue":"orders"},"timestamp":"2026-08-22T10:15:30Z","window":60,"value":"42"}]})");
  auto items = external_metric_value_list_from_json(document);
  REQUIRE(items.ok());
  CHECK(items->front().metric_labels.at("queue") == "orders");
  CHECK(external_metric_value_list_to_json(*items) == document);
  ExternalMetricValue bare{"m", {}, Timestamp{}, std::nullopt, q("1")};
  CHECK(to_json(bare)["metricLabels"] == json::object());
}

TEST_CASE("Metrics decoders: garbage is an error naming the field, never a throw", "[k8s][types]") {
  struct Row {
    const char* document;
    const char* error;
  };
  const Row pod_rows[] = {
      {R"([])", "expected an object, got array"},
      {R"({"kind":"NodeMetricsList"})", "kind: expected \"PodMetricsList\", got \"NodeMetricsList\""},
      {R"({"apiVersion":"metrics.k8s.io/v1"})",
       "apiVersion: expected \"metrics.k8s.io/v1beta1\", got \"metrics.k8s.io/v1\""},
      {R"({"items":{}})", "items: expected an array, got object"},
      {R"({"items":[1]})", "items[0]: expected an object, got number"},
      {R"({"items":[{}]})", "items[0].metadata: required field is missing"},
      {R"({"items":[{"metadata":{"name":7}}]})", "items[0].metadata.name: expected a string, got number"},
      {R"({"items":[{"metadata":{"labels":{"a":1}}}]})", "items[0].metadata.labels.a: expected a string, got number"},
      {R"({"items":[{"metadata":{},"timestamp":"now"}]})",
       "items[0].timestamp: parsing time \"now\" as RFC 3339: not a time"},
      {R"({"items":[{"metadata":{},"window":"15"}]})", "items[0].window: time: missing unit in duration \"15\""},
      {R"({"items":[{"metadata":{},"containers":[{"usage":{"cpu":"1K"}}]}]})",
       "items[0].containers[0].usage.cpu: unable to parse quantity's suffix"},
      {R"({"items":[{"metadata":{},"containers":[{"usage":{"cpu":true}}]}]})", "items[0].containers[0].usage.cpu"},
  };
  for (const auto& row : pod_rows) {
    CAPTURE(row.document);
    auto decoded = pod_metrics_list_from_json(json::parse(row.document));
    REQUIRE_FALSE(decoded.ok());
    CHECK_THAT(decoded.error().message, Catch::StartsWith(row.error));
  }
  CHECK_FALSE(metric_value_list_from_json(json::parse(R"({"apiVersion":"custom.metrics.k8s.io/v2"})")).ok());
  CHECK_FALSE(
      metric_value_list_from_json(
          json::parse(
              R"({"apiVersion":"custom.metrics.k8s.io/v1beta2","items":[{"describedObject":{},"metric":{"name":"m"}}]})"))
          .ok());  // value missing
  CHECK_FALSE(
      metric_value_list_from_json(
          json::parse(
              R"({"apiVersion":"custom.metrics.k8s.io/v1beta2","items":[{"describedObject":{},"metric":{"name":"m","selector":{"matchExpressions":[{"key":"a","operator":"Bogus"}]}},"value":"1"}]})"))
          .ok());
  CHECK_FALSE(parse_document("{\"items\": [").ok());
  CHECK_FALSE(parse_document("").ok());
  CHECK(parse_document(std::string(100000, '[')).ok() == false);  // deep nesting, no crash
}
