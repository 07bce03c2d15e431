// The decision of one sync as a value (what `explain` prints): the metrics,
// the members' pods, the calibration and the rule that bound the count with
// its numbers; its JSON and its table.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "fedmetrics/autoscaler/autoscaler.hpp"
#include "fedmetrics/autoscaler/decision.hpp"
#include "test_support.hpp"

namespace fedmetrics::autoscaler {
namespace {

using namespace testing;
using namespace std::chrono_literals;

FederatedHPA cpu_hpa(std::int32_t min, std::int32_t max) {
  MetricSpec m;
  m.type = MetricSourceType::Resource;
  m.resource_name = "cpu";
  m.target.type = MetricTargetType::Utilization;
  m.target.average_utilization = 50;
  return hpa_of({m}, min, max);
}

TEST_CASE("decision: a scale-down held by the stabilization window names the window and its numbers",
          "[autoscaler][decision]") {
  const FederatedHPA hpa = cpu_hpa(1, 10);
  // 6 pods at 75 % -> 9; a minute later 5 pods at 10 % propose 1, the 9 is still in the 300 s window.
  SyncResult first = sync(hpa, {}, {}, cpu_pods(6, {"member1"}, 6, "75m"), ControllerConfig{});
  REQUIRE(first.decision.rule == rule::kProposal);
  CHECK(first.decision.proposal == 9);
  SyncInput low = cpu_pods(5, {"member1"}, 5, "10m");
  low.now = t0() + 60s;
  SyncResult held = sync(hpa, first.status, first.history, low, ControllerConfig{});
  const Decision& d = held.decision;
  CHECK(d.current_replicas == 5);
  CHECK(d.desired_replicas == 9);
  CHECK(d.proposal == 1);
  CHECK(d.stabilized == 9);
  CHECK(d.rule == rule::kScaleDownStabilized);
  CHECK(d.detail ==
        "the highest recommendation of the last 300 s scale-down stabilization window is 9 (this sync proposed 1)");
  REQUIRE(d.metrics.size() == 1);
  CHECK(d.metrics[0].current == "10% (10m)");
  CHECK(d.metrics[0].target == "50%");
  CHECK(d.metrics[0].ratio == Approx(0.2));
  CHECK(d.metrics[0].proposal == 1);
}

TEST_CASE("decision: a member that could not be read shows as missing pods, with the calibration",
          "[autoscaler][decision]") {
  const FederatedHPA hpa = cpu_hpa(1, 10);
  // 4 replicas placed 2 + 2; member2's pods could not be read. member1's
  // two pods at 20 % ask for a scale-down, which member2's 2 replicas, as
  // missing pods at 100 % of their request, turn into no change.
  SyncInput in = cpu_pods(4, {"member1"}, 2, "20m");
  in.placement.member_replicas = {{"member1", 2}, {"member2", 2}};
  in.placement.unread_members = {{"member2", 2}};
  SyncResult r = sync(hpa, {}, {}, in, ControllerConfig{});
  const Decision& d = r.decision;
  CHECK(d.calibration == Approx(1.0));
  CHECK(d.placed == std::map<std::string, std::int32_t>{{"member1", 2}, {"member2", 2}});
  CHECK(d.unread == std::map<std::string, std::int32_t>{{"member2", 2}});
  REQUIRE(d.metrics.size() == 1);
  const auto& m = d.metrics[0];
  REQUIRE(m.members.size() == 2);
  CHECK(m.members[0] == MemberPods{"member1", 2, 2, 0, 0, 0, 1.0});
  CHECK(m.members[1] == MemberPods{"member2", 2, 0, 2, 0, 0, 0.0});
  CHECK(m.ratio == Approx(0.4));
  REQUIRE(m.adjusted_ratio);
  CHECK(*m.adjusted_ratio == Approx(1.2));  // (20 + 20 + 100 + 100) / 400 = 60 %, / 50
  CHECK(m.note == "with assumed values for its missing and unready pods the ratio turns the other way: no change");
  CHECK(d.desired_replicas == 4);

  const std::string table = format_decision(d);
  CHECK_THAT(table, Catch::Contains("Unread:       member2: its pods could not be read; its 2 placed replicas count "
                                    "as missing pods"));
  CHECK_THAT(table, Catch::Contains("member2  2       2     0        2        0        0        0.0%    pods could not "
                                    "be read: its placed replicas are missing pods"));
}

TEST_CASE("decision: the rules that bind the count", "[autoscaler][decision]") {
  SECTION("within the tolerance") {
    SyncResult r = sync(cpu_hpa(1, 10), {}, {}, cpu_pods(4, {"member1"}, 4, "52m"), ControllerConfig{});
    CHECK(r.decision.rule == rule::kTolerance);
    CHECK(r.decision.metrics[0].within_tolerance);
    CHECK(r.decision.detail ==
          "the ratio of cpu resource utilization (percentage of request) is within the tolerance: 4 replicas stay");
  }
  SECTION("maxReplicas") {
    SyncResult r = sync(cpu_hpa(1, 5), {}, {}, cpu_pods(4, {"member1"}, 4, "100m"), ControllerConfig{});
    CHECK(r.decision.desired_replicas == 5);
    CHECK(r.decision.rule == rule::kTooManyReplicas);
    CHECK(r.decision.detail == "maxReplicas 5 (the recommendation was 8)");
  }
  SECTION("the scale-up limit without behavior") {
    SyncResult r = sync(cpu_hpa(1, 100), {}, {}, cpu_pods(2, {"member1"}, 2, "200m"), ControllerConfig{});
    CHECK(r.decision.desired_replicas == 4);
    CHECK(r.decision.rule == rule::kScaleUpLimit);
    CHECK(r.decision.detail ==
          "without behavior, at most twice the current replicas or 4, whichever is more: 4 (the recommendation was 8)");
  }
  SECTION("a scale-down policy") {
    FederatedHPA hpa = cpu_hpa(1, 100);
    hpa.spec.behavior = HorizontalPodAutoscalerBehavior{};
    HPAScalingRules down;
    down.stabilization_window_seconds = 0;
    down.policies =
        std::vector<HPAScalingPolicy>{{ScalingPolicyType::Pods, 1, 60}, {ScalingPolicyType::Percent, 10, 60}};
    hpa.spec.behavior->scale_down = down;
    SyncResult r = sync(hpa, {}, {}, cpu_pods(10, {"member1"}, 10, "10m"), ControllerConfig{});
    CHECK(r.decision.desired_replicas == 9);
    CHECK(r.decision.rule == rule::kScaleDownLimit);
    CHECK(r.decision.detail ==
          "at least 9 by the scaleDown policies, selectPolicy Max of Pods 1 per 60 s (9), Percent 10 per 60 s (9) "
          "(the recommendation was 2)");
  }
  SECTION("metrics that failed") {
    SyncInput in = cpu_pods(3, {"member1"}, 3, "10m");
    in.metrics.resource = k8s::Error{"the members did not answer"};
    SyncResult r = sync(cpu_hpa(1, 10), {}, {}, in, ControllerConfig{});
    CHECK(r.decision.rule == rule::kMetricsFailed);
    CHECK(r.decision.desired_replicas == 3);
    REQUIRE(r.decision.metrics.size() == 1);
    CHECK_FALSE(r.decision.metrics[0].proposal);
    CHECK_THAT(r.decision.metrics[0].note, Catch::Contains("the members did not answer"));
  }
  SECTION("a target outside min and max is brought back without metrics") {
    SyncResult r = sync(cpu_hpa(2, 10), {}, {}, cpu_pods(12, {"member1"}, 1, "10m"), ControllerConfig{});
    CHECK(r.decision.rule == rule::kAboveMaxReplicas);
    CHECK(r.decision.desired_replicas == 10);
    CHECK(r.decision.metrics.empty());
  }
}

TEST_CASE("decision: the JSON reads back to the same value, and a broken one names its field",
          "[autoscaler][decision]") {
  SyncInput in = cpu_pods(4, {"member1", "member2"}, 2, "90m");
  in.placement.member_replicas = {{"member1", 2}, {"member2", 2}};
  const Decision d = sync(cpu_hpa(1, 10), {}, {}, in, ControllerConfig{}).decision;
  REQUIRE(d.metrics.size() == 1);
  REQUIRE(d.metrics[0].members.size() == 2);
  auto back = decision_from_json(nlohmann::json::parse(to_json(d).dump()));
  REQUIRE(back);
  CHECK(*back == d);

  auto broken = nlohmann::json::parse(to_json(d).dump());
  broken["metrics"][0]["members"][1]["missing"] = "two";
  auto refused = decision_from_json(broken);
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().message, Catch::Contains("metrics[0].members[1].missing"));
  CHECK_FALSE(decision_from_json(nlohmann::json::array()));
  CHECK_FALSE(decision_from_json(nlohmann::json::object()));  // no rule: not a decision
}

TEST_CASE("decision: the table", "[autoscaler][decision]") {
  Decision d;
  d.time = t0();
  d.current_replicas = 4;
  d.desired_replicas = 6;
  d.min_replicas = 1;
  d.max_replicas = 10;
  d.calibration = 2.0;
  d.placed = {{"member1", 4}, {"member2", 4}};
  d.proposal = 6;
  d.proposal_metric = "cpu resource utilization (percentage of request)";
  d.stabilized = 6;
  d.rule = rule::kProposal;
  d.detail = "cpu resource utilization (percentage of request) proposes 6";
  MetricExplanation m;
  m.name = d.proposal_metric;
  m.current = "75% (75m)";
  m.target = "50%";
  m.ratio = 1.5;
  m.proposal = 6;
  m.members = {{"member1", 4, 4, 0, 0, 0, 0.75}, {"member2", 4, 3, 0, 1, 0, 0.25}};
  d.metrics = {m};
  CHECK(format_decision(d) ==
        "Decided at:   2024-01-01T00:10:00Z\n"
        "Replicas:     4 -> 6 (min 1, max 10)\n"
        "Bound by:     Proposal: cpu resource utilization (percentage of request) proposes 6\n"
        "Proposal:     6 from cpu resource utilization (percentage of request); 6 after the stabilization windows\n"
        "Calibration:  2.000 (8 replicas placed in the members for 4 of the target)\n"
        "Tolerance:    a ratio within [0.900, 1.100] changes nothing\n"
        "\n"
        "METRIC                                            CURRENT    TARGET  RATIO  PROPOSAL  NOTE\n"
        "cpu resource utilization (percentage of request)  75% (75m)  50%     1.500  6         -\n"
        "\n"
        "MEMBER   PLACED  PODS  COUNTED  MISSING  UNREADY  IGNORED  SHARE\n"
        "member1  4       4     4        0        0        0        75.0%\n"
        "member2  4       4     3        0        1        0        25.0%\n");
}

}  // namespace
}  // namespace fedmetrics::autoscaler
