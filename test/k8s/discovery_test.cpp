#include <catch2/catch.hpp>

#include "fedmetrics/k8s/discovery.hpp"

using namespace fedmetrics::k8s;
using nlohmann::json;

TEST_CASE("Discovery: APIGroupList and APIGroup shapes", "[k8s][discovery]") {
  auto custom =
      make_api_group("custom.metrics.k8s.io", {"custom.metrics.k8s.io/v1beta2", "custom.metrics.k8s.io/v1beta1"});
  CHECK(custom.preferred_version.version == "v1beta2");
  json list = api_group_list_to_json({custom});
  CHECK(list == json::parse(R"({"kind":"APIGroupList","apiVersion":"v1","groups":[{"name":"custom.metrics.k8s.io",
      "versions":[{"groupVersion":"custom.metrics.k8s.io/v1beta2","version":"v1beta2"},
                  {"groupVersion":"custom.metrics.k8s.io/v1beta1","version":"v1beta1"}],
      "preferredVersion":{"groupVersion":"custom.metrics.k8s.io/v1beta2","version":"v1beta2"}}]})"));
  json single = to_json(custom);
  CHECK(single["kind"] == "APIGroup");
  CHECK(single["apiVersion"] == "v1");
  auto back = api_group_list_from_json(list);
  REQUIRE(back.ok());
  CHECK(back->front() == custom);
}

TEST_CASE("Discovery: APIResourceList round trip and errors", "[k8s][discovery]") {
  APIResourceList list{"custom.metrics.k8s.io/v1beta2",
                       {{"pods/http_requests", "", true, "MetricValueList", {"get"}},
                        {"namespaces/http_requests", "", false, "MetricValueList", {"get"}}}};
  json document = to_json(list);
  CHECK(
      document["resources"][0] ==
      json::parse(
          R"({"name":"pods/http_requests","singularName":"","namespaced":true,"kind":"MetricValueList","verbs":["get"]})"));
  auto back = api_resource_list_from_json(document);
  REQUIRE(back.ok());
  CHECK(*back == list);
  CHECK(api_resource_list_from_json(json::parse(R"({"resources":[]})")).error().message ==
        "groupVersion: required field is missing");
  CHECK(api_resource_list_from_json(json::parse(R"({"groupVersion":"x/v1","resources":[{"name":"a","verbs":[1]}]})"))
            .error()
            .message == "resources[0].verbs[0]: expected a string");
  CHECK_FALSE(api_group_list_from_json(json::parse(R"({"groups":[{"name":"g","versions":[{}]}]})")).ok());
}
