#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "fedmetrics/sim/member_hpa_controller.hpp"
#include "sim/sim_test_support.hpp"

using namespace fedmetrics::sim;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

json hpa_list(std::int32_t min, std::int32_t max) {
  json hpa = json::parse(R"({"metadata":{"name":"web","namespace":"shop","uid":"u1","generation":1},
    "spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},
            "metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":50}}}]}})");
  hpa["spec"]["minReplicas"] = min;
  hpa["spec"]["maxReplicas"] = max;
  return json{{"items", json::array({hpa})}};
}

const json* condition(const json& status, const std::string& type) {
  for (const auto& c : status["conditions"])
    if (c["type"] == type) return &c;
  return nullptr;
}

}  // namespace

TEST_CASE("Member HPA controller: a hot member scales its own pods up to max", "[sim][member-hpa]") {
  auto f = sim_test::federation();  // web: 2 pods in member1 and 2 in member2, 1 core over the 4, 100m requests
  auto now = sim_test::t0() + 10min;
  MemberHpaController controller;
  auto actions = controller.sync(f, 0, hpa_list(1, 3), now);
  REQUIRE(actions.size() == 1);
  const auto& a = actions[0];
  CHECK(a.namespace_name == "shop");
  CHECK(a.name == "web");
  // 251m of 100m requested: 251%, against 50% wants ceil(2 * 5.02) = 11, limited to 3.
  REQUIRE(a.scale);
  CHECK(a.scale->first == 0);
  CHECK(a.scale->second == 3);
  CHECK(a.status["currentReplicas"] == 2);
  CHECK(a.status["desiredReplicas"] == 3);
  CHECK(a.status.contains("lastScaleTime"));
  CHECK(a.status["currentMetrics"][0]["resource"]["current"]["averageUtilization"] == 251);
  REQUIRE(condition(a.status, "ScalingLimited") != nullptr);
  CHECK((*condition(a.status, "ScalingLimited"))["status"] == "True");
  CHECK((*condition(a.status, "ScalingLimited"))["reason"] == "TooManyReplicas");
  CHECK((*condition(a.status, "AbleToScale"))["reason"] == "SucceededRescale");
  CHECK((*condition(a.status, "ScalingActive"))["reason"] == "ValidMetricFound");

  // The shell applies the scale: member1 alone runs 3 pods; member2 and the template keep theirs.
  auto scaled = f.with_member_replicas(a.scale->first, 0, a.scale->second, now);
  CHECK(scaled.workloads[0].placement[0].replicas == 3);
  CHECK(scaled.workloads[0].placement[1].replicas == 2);
  CHECK(scaled.workloads[0].replicas == 4);
  std::size_t member1_pods = 0;
  for (const auto& p : scaled.members[0].pods)
    if (p.workload == 0 && !p.deleted) ++member1_pods;
  CHECK(member1_pods == 3);
}

TEST_CASE("Member HPA controller: an idle member within bounds does not scale", "[sim][member-hpa]") {
  auto f = sim_test::federation();
  // member2's own load is 0: its pods use the 1m baseline, 1% of the request.
  f = f.with_member_load(0, 1, Load{});
  MemberHpaController controller;
  auto now = sim_test::t0() + 10min;
  auto actions = controller.sync(f, 1, hpa_list(2, 5), now);
  REQUIRE(actions.size() == 1);
  CHECK_FALSE(actions[0].scale);  // it would go to 1, but minReplicas is 2
  CHECK(actions[0].status["currentReplicas"] == 2);
  CHECK(actions[0].status["desiredReplicas"] == 2);
  CHECK(actions[0].status["currentMetrics"][0]["resource"]["current"]["averageUtilization"] == 1);
}

TEST_CASE("Member HPA controller: a target that does not exist is FailedGetScale", "[sim][member-hpa]") {
  auto f = sim_test::federation();
  auto list = hpa_list(1, 3);
  list["items"][0]["spec"]["scaleTargetRef"]["name"] = "nope";
  MemberHpaController controller;
  auto actions = controller.sync(f, 0, list, sim_test::t0());
  REQUIRE(actions.size() == 1);
  CHECK_FALSE(actions[0].scale);
  CHECK((*condition(actions[0].status, "AbleToScale"))["status"] == "False");
  CHECK((*condition(actions[0].status, "AbleToScale"))["reason"] == "FailedGetScale");
}

TEST_CASE("Member HPA controller: pod-level requests are the utilization's denominator", "[sim][member-hpa]") {
  // web's pods request 100m in their container and 1 cpu for the pod: the
  // 251m each uses is 25 % of the pod-level request (251 % of the container's).
  auto world = sim_test::world();
  world.workloads[0].pod_requests["cpu"] = *fedmetrics::k8s::Quantity::parse("1");
  auto f = Federation::create(world, sim_test::t0());
  MemberHpaController controller;
  auto actions = controller.sync(f, 0, hpa_list(1, 3), sim_test::t0() + 10min);
  REQUIRE(actions.size() == 1);
  CHECK(actions[0].status["currentMetrics"][0]["resource"]["current"]["averageUtilization"] == 25);
}
