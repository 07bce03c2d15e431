// core/v1 Pod as the autoscaler reads it: the init containers with their
// restartPolicy, so that native sidecars count in the requests.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/pod.hpp"

namespace fedmetrics::k8s {
namespace {

TEST_CASE("pod_from_json: init containers and their restartPolicy are read", "[k8s][pod]") {
  auto pod = pod_from_json(nlohmann::json::parse(R"({"metadata":{"name":"p","namespace":"n"},"spec":{
      "initContainers":[{"name":"migrate","resources":{"requests":{"cpu":"1"}}},
                        {"name":"proxy","restartPolicy":"Always","resources":{"requests":{"cpu":"50m"}}}],
      "containers":[{"name":"app","resources":{"requests":{"cpu":"200m"}}}]}})"));
  REQUIRE(pod.ok());
  REQUIRE(pod->containers.size() == 1);
  CHECK(pod->containers[0].restart_policy.empty());
  REQUIRE(pod->init_containers.size() == 2);
  CHECK(pod->init_containers[0].name == "migrate");
  CHECK(pod->init_containers[0].restart_policy.empty());
  CHECK(pod->init_containers[1].name == "proxy");
  CHECK(pod->init_containers[1].restart_policy == "Always");
  CHECK(pod->init_containers[1].requests.at("cpu") == *Quantity::parse("50m"));
}

TEST_CASE("pod_from_json: a malformed init container is an error naming it", "[k8s][pod]") {
  auto pod = pod_from_json(nlohmann::json::parse(
      R"({"metadata":{"name":"p"},"spec":{"initContainers":[{"name":"proxy","restartPolicy":7}]}})"));
  REQUIRE_FALSE(pod.ok());
  CHECK_THAT(pod.error().message, Catch::Contains("spec.initContainers[0].restartPolicy"));
}

TEST_CASE("pod_from_json: pod-level requests and the overhead are read", "[k8s][pod]") {
  auto pod = pod_from_json(nlohmann::json::parse(R"({"metadata":{"name":"p"},"spec":{
      "resources":{"requests":{"cpu":"1","memory":"1Gi"},"limits":{"cpu":"2"}},"overhead":{"cpu":"250m"},
      "containers":[{"name":"app"}]}})"));
  REQUIRE(pod.ok());
  CHECK(pod->requests.at("cpu") == *Quantity::parse("1"));
  CHECK(pod->requests.at("memory") == *Quantity::parse("1Gi"));
  CHECK(pod->overhead.at("cpu") == *Quantity::parse("250m"));
  auto bad = pod_from_json(
      nlohmann::json::parse(R"({"metadata":{"name":"p"},"spec":{"resources":{"requests":{"cpu":"x"}}}})"));
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error().message, Catch::Contains("spec.resources.requests"));
}

}  // namespace
}  // namespace fedmetrics::k8s
