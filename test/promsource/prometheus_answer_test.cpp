// Prometheus answers into the metrics APIs' values as prometheus-adapter
// writes them: NewMilliQuantity(int64(v*1000), DecimalSI) with NaN as 0,
// describedObject "/v1" for core kinds, external values with their labels
// and sample time; Prometheus' errors, garbage and huge answers as errors.
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "fedmetrics/k8s/time.hpp"
#include "fedmetrics/promsource/prometheus_answer.hpp"

using namespace fedmetrics;
using namespace fedmetrics::promsource;

namespace {

QueryResult parsed(const std::string& body) {
  auto r = parse_query_answer(body);
  if (!r) FAIL(r.error().message);
  return *r;
}

std::string error_of(const std::string& body, AnswerLimits limits = {}) {
  auto r = parse_query_answer(body, limits);
  return r ? "<no error>" : r.error().message;
}

}  // namespace

TEST_CASE("promsource: sample values become the adapter's quantities") {
  struct Case {
    double value;
    std::string quantity;
  };
  const std::vector<Case> cases{{0.5, "500m"}, {2, "2"},          {10.5, "10500m"},
                                {0.0004, "0"}, {-1.25, "-1250m"}, {1234567.891, "1234567891m"},
                                {NAN, "0"},    {1e-9, "0"}};
  for (const auto& c : cases) {
    INFO(c.value);
    auto q = sample_quantity(c.value);
    REQUIRE(q.ok());
    CHECK(q->to_string() == c.quantity);
  }
  CHECK_FALSE(sample_quantity(INFINITY).ok());
  CHECK_FALSE(sample_quantity(-INFINITY).ok());
  CHECK_FALSE(sample_quantity(1e300).ok());
  auto bytes = sample_quantity(1048576, k8s::QuantityFormat::BinarySI);
  REQUIRE(bytes.ok());
  CHECK(bytes->to_string() == "1Mi");
}

TEST_CASE("promsource: a vector answer gives one custom value per named object, in the names' order") {
  const QueryResult result = parsed(R"({"status":"success","data":{"resultType":"vector","result":[
    {"metric":{"pod":"b"},"value":[1724321730.781,"NaN"]},
    {"metric":{"pod":"a"},"value":[1724321730.781,"1.5"]},
    {"metric":{"pod":"stray"},"value":[1724321730.781,"7"]}]}})");
  const ResourceInfo* pods = ResourceCatalog::builtin().find({"", "pod"});
  REQUIRE(pods != nullptr);
  auto now = k8s::parse_time("2026-08-22T10:15:30Z");
  REQUIRE(now.ok());
  auto sel = k8s::LabelSelector::parse("verb=GET");
  REQUIRE(sel.ok());
  auto values = custom_metric_values(result, *pods, "pod", "default", {"a", "b", "c"}, "http_requests", *sel, *now);
  REQUIRE(values.ok());
  REQUIRE(values->size() == 2);
  const auto v1beta2 = k8s::metric_value_list_to_json(*values, k8s::CustomMetricsVersion::V1beta2);
  CHECK(v1beta2["items"][0].dump() ==
        R"({"describedObject":{"apiVersion":"/v1","kind":"Pod","name":"a","namespace":"default"},)"
        R"("metric":{"name":"http_requests","selector":{"matchLabels":{"verb":"GET"}}},)"
        R"("timestamp":"2026-08-22T10:15:30Z","value":"1500m"})");
  CHECK(v1beta2["items"][1]["describedObject"]["name"] == "b");
  CHECK(v1beta2["items"][1]["value"] == "0");
  struct SelectorCase {
    std::string selector, object;
  };
  // As metav1.ParseToLabelSelector writes them; != has no object form.
  for (const auto& c : std::vector<SelectorCase>{
           {"verb in (GET)", R"({"matchExpressions":[{"key":"verb","operator":"In","values":["GET"]}]})"},
           {"a=1,b notin (y,x),c,!d",
            R"({"matchExpressions":[{"key":"b","operator":"NotIn","values":["x","y"]},{"key":"c","operator":"Exists"},)"
            R"({"key":"d","operator":"DoesNotExist"}],"matchLabels":{"a":"1"}})"},
           {"verb!=GET", "<error> \"!=\" is not a valid label selector operator"}}) {
    INFO(c.selector);
    auto s = k8s::LabelSelector::parse(c.selector);
    REQUIRE(s.ok());
    auto v = custom_metric_values(result, *pods, "pod", "default", {"a"}, "m", *s, *now);
    CHECK((v ? (*v)[0].metric_selector.dump() : "<error> " + v.error().message) == c.object);
  }
  const ResourceInfo* deployments = ResourceCatalog::builtin().find({"", "deployments"});
  REQUIRE(deployments != nullptr);
  auto d = custom_metric_values(result, *deployments, "pod", "default", {"a"}, "m", {}, *now);
  REQUIRE(d.ok());
  CHECK((*d)[0].described_object.api_version == "apps/v1");
  CHECK((*d)[0].described_object.kind == "Deployment");
  CHECK((*d)[0].metric_selector.is_null());
}

TEST_CASE("promsource: external values keep each sample's labels and time") {
  const QueryResult result = parsed(R"({"status":"success","data":{"resultType":"vector","result":[
    {"metric":{"name":"orders"},"value":[1724321730.781,"42"]},
    {"metric":{"__name__":"queue_depth","name":"billing"},"value":[1724321731,"0.25"]}]}})");
  auto values = external_metric_values(result, "queue_depth");
  REQUIRE(values.ok());
  const auto list = k8s::external_metric_value_list_to_json(*values);
  CHECK(
      list["items"][0].dump() ==
      R"({"metricLabels":{"name":"orders"},"metricName":"queue_depth","timestamp":"2024-08-22T10:15:30Z","value":"42"})");
  CHECK(list["items"][1]["metricLabels"]["__name__"] == "queue_depth");
  CHECK(list["items"][1]["value"] == "250m");
  const QueryResult scalar = parsed(R"({"status":"success","data":{"resultType":"scalar","result":[1724321730,"3"]}})");
  auto one = external_metric_values(scalar, "s");
  REQUIRE(one.ok());
  REQUIRE(one->size() == 1);
  CHECK((*one)[0].metric_labels.empty());
  CHECK((*one)[0].value.to_string() == "3");
}

TEST_CASE("promsource: resource rules' answers become PodMetrics and NodeMetrics") {
  const QueryResult cpu = parsed(R"({"status":"success","data":{"resultType":"vector","result":[
    {"metric":{"pod":"web","container":"b"},"value":[1724321730,"0.0125"]},
    {"metric":{"pod":"web","container":"a"},"value":[1724321729,"1"]},
    {"metric":{"pod":"web","container":"cpu-only"},"value":[1724321730,"-2"]},
    {"metric":{"pod":"no-memory","container":"a"},"value":[1724321730,"1"]}]}})");
  const QueryResult memory = parsed(R"({"status":"success","data":{"resultType":"vector","result":[
    {"metric":{"pod":"web","container":"a"},"value":[1724321730,"1048576"]},
    {"metric":{"pod":"web","container":"b"},"value":[1724321730,"1000"]},
    {"metric":{"pod":"web","container":"memory-only"},"value":[1724321731,"NaN"]}]}})");
  auto now = k8s::parse_time("2026-08-22T10:15:30Z");
  REQUIRE(now.ok());
  auto pods = pod_metrics(cpu, memory, "default", {"no-memory", "web", "absent"}, "pod", "container", "container",
                          std::chrono::minutes(5), *now);
  REQUIRE(pods.ok());
  REQUIRE(pods->size() == 1);  // a pod needs both answers
  const auto& pod = (*pods)[0];
  CHECK(pod.metadata.namespace_name == "default");
  CHECK(pod.metadata.name == "web");
  CHECK(pod.metadata.creation_timestamp == *now);
  CHECK(k8s::format_time(pod.timestamp) == "2024-08-22T10:15:29Z");  // the oldest sample
  CHECK(pod.window == std::chrono::minutes(5));
  std::vector<std::string> usage;
  for (const auto& c : pod.containers) {
    usage.push_back(c.name + " cpu=" + c.usage.at("cpu").to_string() + " memory=" + c.usage.at("memory").to_string());
  }
  // 0.0125 cores: int64(12.5) milli-cores truncates to 12m, as Go's
  // conversion does; a negative or NaN sample is 0; a container with one
  // resource gets 0 for the other.
  CHECK(usage == std::vector<std::string>{"a cpu=1 memory=1Mi", "b cpu=12m memory=1k", "cpu-only cpu=0 memory=0",
                                          "memory-only cpu=0 memory=0"});
  const QueryResult node_cpu = parsed(R"({"status":"success","data":{"resultType":"vector","result":[
    {"metric":{"node":"n2"},"value":[1724321730,"2.5"]},{"metric":{"node":"n1"},"value":[1724321730,"0.5"]}]}})");
  const QueryResult node_memory = parsed(R"({"status":"success","data":{"resultType":"vector","result":[
    {"metric":{"node":"n2"},"value":[1724321725,"2147483648"]}]}})");
  auto nodes = node_metrics(node_cpu, node_memory, {"n1", "n2"}, "node", std::chrono::minutes(1), *now);
  REQUIRE(nodes.ok());
  REQUIRE(nodes->size() == 1);  // n1 has no memory sample
  CHECK((*nodes)[0].metadata.name == "n2");
  CHECK((*nodes)[0].usage.at("cpu").to_string() == "2500m");
  CHECK((*nodes)[0].usage.at("memory").to_string() == "2Gi");
  CHECK(k8s::format_time((*nodes)[0].timestamp) == "2024-08-22T10:15:25Z");
  const QueryResult matrix{"matrix", {}};
  auto bad = node_metrics(matrix, node_memory, {"n2"}, "node", std::chrono::minutes(1), *now);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message == "cpu: invalid or empty value of non-vector type (matrix) returned");
}

TEST_CASE("promsource: errors, garbage and huge answers are error values") {
  struct Case {
    std::string body, error;
  };
  const std::vector<Case> cases{
      {R"({"status":"error","errorType":"bad_data","error":"invalid parameter \"query\": 1:5: parse error"})",
       R"(Prometheus answered "error" (bad_data): invalid parameter "query": 1:5: parse error)"},
      {R"({"status":"error","errorType":"execution","error":"query processing would load too many samples"})",
       R"(Prometheus answered "error" (execution): query processing would load too many samples)"},
      {"<html>502 Bad Gateway</html>", "answer is not JSON"},
      {"[1,2]", "answer is not a JSON object"},
      {R"({"data":{}})", "answer has no status"},
      {R"({"status":"success"})", "answer has no data"},
      {R"({"status":"success","data":{"resultType":"matrix","result":[]}})",
       "unexpected results from prometheus: expected vector, got matrix"},
      {R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,2]}]}})",
       "data.result[0].value: sample value is not a number"},
      {R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":1},"value":[1,"2"]}]}})",
       "data.result[0].metric.a: expected a string"},
      {R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1e300,"2"]}]}})",
       "data.result[0].value: timestamp out of range"},
      {R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{}}]}})",
       "data.result[0]: expected metric and value"},
  };
  for (const auto& c : cases) {
    INFO(c.body);
    CHECK(error_of(c.body) == c.error);
  }
  const std::string two = R"({"status":"success","data":{"resultType":"vector","result":[
    {"metric":{},"value":[1,"1"]},{"metric":{},"value":[1,"2"]}]}})";
  CHECK(error_of(two, {1u << 20, 1}) == "answer of 2 samples is above the limit of 1");
  CHECK(error_of(two, {16, 100}) == "answer of " + std::to_string(two.size()) + " bytes is above the limit of 16");
  CHECK(error_of(std::string(100000, '['), {1u << 20, 100}) == "answer is not JSON");
}

TEST_CASE("promsource: a series answer lists names and labels") {
  auto series = parse_series_answer(R"({"status":"success","data":[
    {"__name__":"http_requests_total","namespace":"default","pod":"a"},{"__name__":"up","job":"x"}]})");
  REQUIRE(series.ok());
  REQUIRE(series->size() == 2);
  CHECK((*series)[0].name == "http_requests_total");
  CHECK((*series)[0].labels == k8s::Labels{{"namespace", "default"}, {"pod", "a"}});
  auto bad = parse_series_answer(R"({"status":"success","data":{"a":1}})");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message == "data: expected a list of series");
}
