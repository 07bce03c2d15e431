// Decoding FederatedHPA specs: the fields, how the controller reads targets,
// the defaults, and errors that name the field.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/autoscaler/hpa_spec.hpp"

namespace fedmetrics::autoscaler {
namespace {

using nlohmann::json;

TEST_CASE("hpa spec: decodes a whole FederatedHPA with every metric type", "[autoscaler][hpa_spec]") {
  const json object = json::parse(R"({
    "apiVersion": "autoscaling.karmada.io/v1alpha1", "kind": "FederatedHPA",
    "metadata": {"name": "web", "namespace": "shop", "generation": 3},
    "spec": {
      "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
      "minReplicas": 2, "maxReplicas": 12,
      "metrics": [
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}},
        {"type": "ContainerResource", "containerResource": {"name": "memory", "container": "app",
          "target": {"type": "AverageValue", "averageValue": "256Mi"}}},
        {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "1k"}}},
        {"type": "Object", "object": {"describedObject": {"apiVersion": "v1", "kind": "Service", "name": "web"},
          "metric": {"name": "rps"}, "target": {"type": "Value", "value": "100"}}},
        {"type": "External", "external": {"metric": {"name": "queue", "selector": {"matchLabels": {"q": "jobs"}}},
          "target": {"type": "AverageValue", "averageValue": "30"}}}
      ],
      "behavior": {
        "scaleUp": {"stabilizationWindowSeconds": 10, "selectPolicy": "Min",
                    "policies": [{"type": "Pods", "value": 2, "periodSeconds": 30}], "tolerance": "0.05"},
        "scaleDown": {"selectPolicy": "Disabled"}
      }
    }})");
  auto hpa = decode_federated_hpa(object);
  REQUIRE(hpa.ok());
  CHECK(hpa->name == "web");
  CHECK(hpa->namespace_name == "shop");
  CHECK(hpa->generation == 3);
  const auto& spec = hpa->spec;
  CHECK(spec.scale_target_ref.kind == "Deployment");
  CHECK(spec.min_replicas == 2);
  CHECK(spec.max_replicas == 12);
  REQUIRE(spec.metrics.size() == 5);
  CHECK(spec.metrics[0].type == MetricSourceType::Resource);
  CHECK(spec.metrics[0].target.average_utilization == 60);
  CHECK(spec.metrics[1].type == MetricSourceType::ContainerResource);
  CHECK(spec.metrics[1].container == "app");
  CHECK(spec.metrics[1].target.type == MetricTargetType::AverageValue);
  CHECK(spec.metrics[2].target.average_value->milli_value() == 1000000);
  CHECK(spec.metrics[3].described_object.name == "web");
  CHECK(spec.metrics[3].target.type == MetricTargetType::Value);
  CHECK(spec.metrics[4].metric.selector.to_string() == "q=jobs");
  REQUIRE(spec.behavior);
  CHECK(spec.behavior->scale_up->select_policy == ScalingPolicySelect::Min);
  CHECK(spec.behavior->scale_up->tolerance->milli_value() == 50);
  CHECK(spec.behavior->scale_down->select_policy == ScalingPolicySelect::Disabled);
  CHECK_FALSE(spec.behavior->scale_down->policies);
}

TEST_CASE("hpa spec: targets are read the way the controller reads them", "[autoscaler][hpa_spec]") {
  struct Case {
    std::string name;
    std::string metric;
    MetricTargetType expected;
  };
  const std::vector<Case> cases = {
      // The Karmada walkthrough: type Value with averageValue on a Pods metric.
      {"Pods metric with type Value reads averageValue",
       R"({"type":"Pods","pods":{"metric":{"name":"http_requests"},"target":{"averageValue":"700m","type":"Value"}}})",
       MetricTargetType::AverageValue},
      {"Resource metric with averageValue uses it whatever the type",
       R"({"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageValue":"100m"}}})",
       MetricTargetType::AverageValue},
      {"External metric with averageValue uses it",
       R"({"type":"External","external":{"metric":{"name":"q"},"target":{"type":"Value","value":"1","averageValue":"2"}}})",
       MetricTargetType::AverageValue},
      {"Object metric goes by its type",
       R"({"type":"Object","object":{"describedObject":{"kind":"Service","name":"s"},"metric":{"name":"m"},"target":{"type":"AverageValue","value":"1","averageValue":"2"}}})",
       MetricTargetType::AverageValue},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      json spec = {{"scaleTargetRef", {{"kind", "Deployment"}, {"name", "x"}}}, {"maxReplicas", 3}};
      spec["metrics"] = json::array({json::parse(c.metric)});
      auto decoded = decode_federated_hpa_spec(spec);
      REQUIRE(decoded.ok());
      CHECK(decoded->metrics[0].target.type == c.expected);
    }
  }
}

TEST_CASE("hpa spec: defaults are the Kubernetes ones", "[autoscaler][hpa_spec]") {
  auto decoded = decode_federated_hpa_spec(json::parse(
      R"({"scaleTargetRef":{"kind":"Deployment","name":"x"},"maxReplicas":5,"behavior":{"scaleUp":{"stabilizationWindowSeconds":30}}})"));
  REQUIRE(decoded.ok());
  CHECK_FALSE(decoded->min_replicas);
  const FederatedHPASpec spec = with_defaults(*decoded);
  CHECK(spec.min_replicas == 1);
  // no metrics: cpu at 80 %
  REQUIRE(spec.metrics.size() == 1);
  CHECK(spec.metrics[0].resource_name == "cpu");
  CHECK(spec.metrics[0].target.average_utilization == 80);
  // a given field stays, the others take the defaults
  CHECK(spec.behavior->scale_up->stabilization_window_seconds == 30);
  CHECK(spec.behavior->scale_up->select_policy == ScalingPolicySelect::Max);
  CHECK(spec.behavior->scale_up->policies->size() == 2);
  CHECK(spec.behavior->scale_down->policies->size() == 1);
  CHECK_FALSE(spec.behavior->scale_down->stabilization_window_seconds);  // the controller's setting fills it
  // without behavior there is none after defaulting (the no-behavior rules apply)
  auto plain =
      decode_federated_hpa_spec(json::parse(R"({"scaleTargetRef":{"kind":"Deployment","name":"x"},"maxReplicas":5})"));
  REQUIRE(plain.ok());
  CHECK_FALSE(with_defaults(*plain).behavior);
}

TEST_CASE("hpa spec: scale to zero needs every metric to be Object or External", "[autoscaler][hpa_spec]") {
  FederatedHPASpec spec;
  MetricSpec external;
  external.type = MetricSourceType::External;
  MetricSpec object;
  object.type = MetricSourceType::Object;
  MetricSpec cpu;
  cpu.type = MetricSourceType::Resource;
  spec.metrics = {external, object};
  CHECK(allows_scale_to_zero(spec));
  spec.metrics.push_back(cpu);
  CHECK_FALSE(allows_scale_to_zero(spec));
}

TEST_CASE("hpa spec: malformed specs are rejected with the field named", "[autoscaler][hpa_spec]") {
  struct Case {
    std::string name;
    std::string spec;
    std::string error;
  };
  const std::string ref = R"("scaleTargetRef":{"kind":"Deployment","name":"x"})";
  const std::vector<Case> cases = {
      {"missing maxReplicas", "{" + ref + "}", "maxReplicas: is required"},
      {"maxReplicas not an integer", "{" + ref + R"(,"maxReplicas":"ten"})", "maxReplicas: not an integer"},
      {"missing scaleTargetRef", R"({"maxReplicas":3})", "scaleTargetRef: is required"},
      {"unknown metric type", "{" + ref + R"(,"maxReplicas":3,"metrics":[{"type":"Magic"}]})",
       "metrics[0].type: must be Resource"},
      {"Utilization without averageUtilization",
       "{" + ref +
           R"(,"maxReplicas":3,"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization"}}}]})",
       "metrics[0].resource.target.averageUtilization: is required"},
      {"unparsable quantity",
       "{" + ref +
           R"(,"maxReplicas":3,"metrics":[{"type":"Pods","pods":{"metric":{"name":"q"},"target":{"type":"AverageValue","averageValue":"1x"}}}]})",
       "metrics[0].pods.target.averageValue: "},
      {"bad selector",
       "{" + ref +
           R"(,"maxReplicas":3,"metrics":[{"type":"External","external":{"metric":{"name":"q","selector":{"matchExpressions":[{"key":"a","operator":"Near"}]}},"target":{"type":"Value","value":"1"}}}]})",
       "metrics[0].external.metric.selector"},
      {"bad selectPolicy", "{" + ref + R"(,"maxReplicas":3,"behavior":{"scaleUp":{"selectPolicy":"Most"}}})",
       "behavior.scaleUp.selectPolicy: must be Max, Min or Disabled"},
      {"policy without periodSeconds",
       "{" + ref + R"(,"maxReplicas":3,"behavior":{"scaleDown":{"policies":[{"type":"Pods","value":1}]}}})",
       "behavior.scaleDown.policies[0].periodSeconds: is required"},
      {"zero target",
       "{" + ref +
           R"(,"maxReplicas":3,"metrics":[{"type":"Object","object":{"describedObject":{"kind":"S","name":"s"},"metric":{"name":"m"},"target":{"type":"Value","value":"0"}}}]})",
       "metrics[0].object.target.value: must be positive"},
      {"spec not an object", R"("spec")", "not an object"},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      auto decoded = decode_federated_hpa_spec(json::parse(c.spec));
      REQUIRE_FALSE(decoded.ok());
      CHECK_THAT(decoded.error().message, Catch::Contains(c.error));
    }
  }
  SECTION("inside a whole object the path starts at spec") {
    auto decoded = decode_federated_hpa(json::parse(R"({"metadata":{"name":"x"},"spec":{"maxReplicas":3}})"));
    REQUIRE_FALSE(decoded.ok());
    CHECK(decoded.error().message == "spec.scaleTargetRef: is required");
  }
}

TEST_CASE("hpa spec: what the API server refuses is named as its field error", "[autoscaler][hpa_spec]") {
  struct Case {
    std::string name;
    std::string fields;  // beside scaleTargetRef
    std::string error;   // empty: valid
  };
  const std::string cpu =
      R"("metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":50}}}])";
  const std::string external =
      R"("metrics":[{"type":"External","external":{"metric":{"name":"q"},"target":{"type":"Value","value":"1"}}}])";
  auto rules = [](std::string up) { return R"("behavior":{"scaleUp":)" + up + "}"; };
  const std::vector<Case> cases = {
      {"min 1 max 1", R"("minReplicas":1,"maxReplicas":1)", ""},
      {"no minReplicas", R"("maxReplicas":3)", ""},
      {"minReplicas above maxReplicas", R"("minReplicas":7,"maxReplicas":3)",
       "spec.maxReplicas: Invalid value: 3: must be greater than or equal to `minReplicas`"},
      {"maxReplicas 0", R"("maxReplicas":0)", "spec.maxReplicas: Invalid value: 0: must be greater than 0"},
      {"negative maxReplicas", R"("minReplicas":1,"maxReplicas":-2)",
       "spec.maxReplicas: Invalid value: -2: must be greater than 0"},
      {"minReplicas 0 with a cpu metric", R"("minReplicas":0,"maxReplicas":3,)" + cpu,
       "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1"},
      {"minReplicas 0 with the default metric", R"("minReplicas":0,"maxReplicas":3)",
       "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1"},
      {"minReplicas 0 with External metrics only", R"("minReplicas":0,"maxReplicas":3,)" + external, ""},
      {"negative minReplicas with External metrics only", R"("minReplicas":-1,"maxReplicas":3,)" + external,
       "spec.minReplicas: Invalid value: -1: must be greater than or equal to 0"},
      {"window 3600", R"("maxReplicas":3,)" + rules(R"({"stabilizationWindowSeconds":3600})"), ""},
      {"window above an hour", R"("maxReplicas":3,)" + rules(R"({"stabilizationWindowSeconds":3601})"),
       "spec.behavior.scaleUp.stabilizationWindowSeconds: Invalid value: 3601: must be less than or equal to 3600"},
      {"negative window", R"("maxReplicas":3,"behavior":{"scaleDown":{"stabilizationWindowSeconds":-1}})",
       "spec.behavior.scaleDown.stabilizationWindowSeconds: Invalid value: -1: must be greater than or equal to zero"},
      {"no policies given: the defaults", R"("maxReplicas":3,)" + rules(R"({"selectPolicy":"Min"})"), ""},
      {"an empty policy list", R"("maxReplicas":3,)" + rules(R"({"policies":[]})"),
       "spec.behavior.scaleUp.policies: Required value: must specify at least one Policy"},
      {"a policy of 0 pods",
       R"("maxReplicas":3,)" +
           rules(
               R"({"policies":[{"type":"Pods","value":4,"periodSeconds":15},{"type":"Pods","value":0,"periodSeconds":15}]})"),
       "spec.behavior.scaleUp.policies[1].value: Invalid value: 0: must be greater than zero"},
      {"a period of 0",
       R"("maxReplicas":3,)" + rules(R"({"policies":[{"type":"Percent","value":100,"periodSeconds":0}]})"),
       "spec.behavior.scaleUp.policies[0].periodSeconds: Invalid value: 0: must be greater than zero"},
      {"a period above 30 minutes",
       R"("maxReplicas":3,)" + rules(R"({"policies":[{"type":"Percent","value":100,"periodSeconds":1801}]})"),
       "spec.behavior.scaleUp.policies[0].periodSeconds: Invalid value: 1801: must be less than or equal to 1800"},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      auto spec = decode_federated_hpa_spec(
          json::parse(R"({"scaleTargetRef":{"kind":"Deployment","name":"x"},)" + c.fields + "}"));
      REQUIRE(spec.ok());
      const auto error = validate_federated_hpa_spec(*spec);
      if (c.error.empty()) {
        CHECK_FALSE(error.has_value());
      } else {
        REQUIRE(error.has_value());
        CHECK(error->message == c.error);
      }
    }
  }
}

}  // namespace
}  // namespace fedmetrics::autoscaler
