// Normalization of a proposal: min/max, the default scale-up limit,
// stabilization windows and scaling policies. Expectations hand-computed
// from the rules in kubernetes/kubernetes pkg/controller/podautoscaler/horizontal.go.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "fedmetrics/autoscaler/behavior.hpp"
#include "test_support.hpp"

namespace fedmetrics::autoscaler {
namespace {

using namespace testing;
using namespace std::chrono_literals;

HPAScalingRules rules(ScalingPolicySelect select, std::vector<HPAScalingPolicy> policies, std::int32_t window = 0) {
  HPAScalingRules r{};
  r.select_policy = select;
  r.policies = std::move(policies);
  r.stabilization_window_seconds = window;
  return r;
}

constexpr auto Pods = ScalingPolicyType::Pods;
constexpr auto Percent = ScalingPolicyType::Percent;

TEST_CASE("behavior: without behavior, min/max and the default scale-up limit", "[autoscaler][behavior]") {
  struct Case {
    std::string name{};
    std::int32_t current{}, desired{}, min{}, max{};
    std::int32_t expected{};
    std::string reason{};
  };
  const std::vector<Case> cases = {
      {"at most double the current count", 3, 10, 1, 20, 6, "ScaleUpLimit"},
      {"at least 4 replicas of scale-up room", 1, 10, 1, 20, 4, "ScaleUpLimit"},
      {"maxReplicas below the scale-up limit", 5, 12, 1, 8, 8, "TooManyReplicas"},
      {"below minReplicas", 5, 0, 2, 10, 2, "TooFewReplicas"},
      {"within range", 5, 7, 1, 10, 7, "DesiredWithinRange"},
      {"from zero the limit is 4", 0, 9, 0, 10, 4, "ScaleUpLimit"},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      Limited l = convert_desired_replicas_with_rules(c.current, c.desired, c.min, c.max);
      CHECK(l.replicas == c.expected);
      CHECK(l.reason == c.reason);
    }
  }
  CHECK(calculate_scale_up_limit(3) == 6);
  CHECK(calculate_scale_up_limit(1) == 4);
}

TEST_CASE("behavior: without behavior, scale-down stabilization keeps the highest recent recommendation",
          "[autoscaler][behavior]") {
  const Timestamp now = t0();
  SECTION("a higher recommendation within the window holds") {
    ScalingHistory h{{{3, now - 30s}, {4, now - 45s}}, {}, {}};
    CHECK(stabilize_recommendation(h, 2, now, 60s) == 4);
    CHECK(h.recommendations.size() == 3);
  }
  SECTION("a recommendation older than the window is replaced, not counted") {
    ScalingHistory h{{{7, now - 2min}, {4, now - 45s}}, {}, {}};
    CHECK(stabilize_recommendation(h, 5, now, 60s) == 5);
    REQUIRE(h.recommendations.size() == 2);
    CHECK(h.recommendations[0] == TimestampedRecommendation{5, now});
  }
  SECTION("normalization reports ScaleDownStabilized and the limits") {
    ScalingHistory h{{{8, now - 100s}}, {}, {}};
    Normalization n = normalize_desired_replicas(h, 8, 2, 1, 10, now, 300s);
    CHECK(n.desired_replicas == 8);
    CHECK(n.able_to_scale_reason == "ScaleDownStabilized");
    CHECK(n.able_to_scale_message ==
          "recent recommendations were higher than current one, applying the highest recent recommendation");
    CHECK_FALSE(n.scaling_limited);
    CHECK(n.scaling_limited_reason == "DesiredWithinRange");
    // After the window the recommendation goes through.
    Normalization later = normalize_desired_replicas(h, 8, 2, 1, 10, now + 301s, 300s);
    CHECK(later.desired_replicas == 2);
    CHECK(later.able_to_scale_reason == "ReadyForNewScale");
  }
  SECTION("a limited scale-up sets ScalingLimited") {
    ScalingHistory h;
    Normalization n = normalize_desired_replicas(h, 2, 40, 1, 10, now, 300s);
    CHECK(n.desired_replicas == 4);
    CHECK(n.scaling_limited);
    CHECK(n.scaling_limited_reason == "ScaleUpLimit");
    CHECK(n.scaling_limited_message == "the desired replica count is increasing faster than the maximum scale rate");
  }
}

TEST_CASE("behavior: scale-up limit with policies", "[autoscaler][behavior]") {
  const Timestamp now = t0();
  const auto defaults = default_scale_up_rules();
  struct Case {
    std::string name{};
    std::int32_t current{};
    std::vector<TimestampedScaleEvent> up{}, down{};
    HPAScalingRules rules{};
    std::int32_t expected{};
  };
  const std::vector<Case> cases = {
      {"default rules: +4 pods beats +100 % of 1", 1, {}, {}, defaults, 5},
      {"default rules: +100 % beats +4 pods of 10", 10, {}, {}, defaults, 20},
      {"selectPolicy Min takes the smaller change",
       10,
       {},
       {},
       rules(ScalingPolicySelect::Min, {{Pods, 4, 15}, {Percent, 100, 15}}),
       14},
      {"selectPolicy Disabled forbids scaling up",
       10,
       {},
       {},
       rules(ScalingPolicySelect::Disabled, {{Pods, 4, 15}}),
       10},
      // +2 at now-30s lies in the 60 s period: the period started at 8 -> 8 + 2 = 10
      {"replicas added within the period count against it",
       10,
       {{2, now - 30s, false}},
       {},
       rules(ScalingPolicySelect::Max, {{Pods, 2, 60}}),
       10},
      // an event exactly one period old is outside it
      {"an event exactly one period old has left the period",
       10,
       {{2, now - 60s, false}},
       {},
       rules(ScalingPolicySelect::Max, {{Pods, 2, 60}}),
       12},
      // rounded up: ceil(3 * 1.5) = 5
      {"Percent rounds up", 3, {}, {}, rules(ScalingPolicySelect::Max, {{Percent, 50, 60}}), 5},
      // 2 removed in the period: the period started at 10 -> 10 + 4 = 14
      {"replicas removed within the period raise the base",
       8,
       {},
       {{2, now - 10s, false}},
       rules(ScalingPolicySelect::Max, {{Pods, 4, 60}}),
       14},
      // each policy looks at its own period: Pods 1/15s -> 10 + 1 = 11 (event out of 15 s);
      // Percent 10 %/120s -> base 10 - 5 = 5 -> ceil(5.5) = 6; Max -> 11
      {"each policy uses its own period",
       10,
       {{5, now - 60s, false}},
       {},
       rules(ScalingPolicySelect::Max, {{Pods, 1, 15}, {Percent, 10, 120}}),
       11},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      CHECK(calculate_scale_up_limit_with_scaling_rules(c.current, c.up, c.down, c.rules, now) == c.expected);
    }
  }
}

TEST_CASE("behavior: scale-down limit with policies", "[autoscaler][behavior]") {
  const Timestamp now = t0();
  struct Case {
    std::string name{};
    std::int32_t current{};
    std::vector<TimestampedScaleEvent> up{}, down{};
    HPAScalingRules rules{};
    std::int32_t expected{};
  };
  const std::vector<Case> cases = {
      {"default rule: down to zero in one period", 10, {}, {}, default_scale_down_rules(), 0},
      // truncated: int(7 * 0.5) = 3
      {"Percent truncates", 7, {}, {}, rules(ScalingPolicySelect::Max, {{Percent, 50, 60}}), 3},
      {"selectPolicy Max takes the bigger change",
       10,
       {},
       {},
       rules(ScalingPolicySelect::Max, {{Pods, 1, 60}, {Percent, 50, 60}}),
       5},
      {"selectPolicy Min takes the smaller change",
       10,
       {},
       {},
       rules(ScalingPolicySelect::Min, {{Pods, 1, 60}, {Percent, 50, 60}}),
       9},
      {"selectPolicy Disabled forbids scaling down",
       10,
       {},
       {},
       rules(ScalingPolicySelect::Disabled, {{Pods, 1, 60}}),
       10},
      // 3 removed 20 s ago: period started at 10 -> 10 - 4 = 6
      {"replicas removed within the period count against it",
       7,
       {},
       {{3, now - 20s, false}},
       rules(ScalingPolicySelect::Max, {{Pods, 4, 60}}),
       6},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      CHECK(calculate_scale_down_limit_with_behaviors(c.current, c.up, c.down, c.rules, now) == c.expected);
    }
  }
}

TEST_CASE("behavior: rate limits and their condition reasons", "[autoscaler][behavior]") {
  const Timestamp now = t0();
  struct Case {
    std::string name{};
    std::int32_t current{}, desired{}, min{}, max{};
    HPAScalingRules up{}, down{};
    std::vector<TimestampedScaleEvent> up_events{}, down_events{};
    std::int32_t expected{};
    std::string reason{};
  };
  const auto up_default = default_scale_up_rules();
  const auto down_default = default_scale_down_rules();
  const std::vector<Case> cases = {
      {"scale-up limited by the policy", 1, 40, 1, 10, up_default, down_default, {}, {}, 5, "ScaleUpLimit"},
      {"scale-up limited by maxReplicas", 5, 40, 1, 10, up_default, down_default, {}, {}, 10, "TooManyReplicas"},
      {"scale-down limited by the policy",
       10,
       1,
       1,
       10,
       up_default,
       rules(ScalingPolicySelect::Max, {{Pods, 2, 60}}),
       {},
       {},
       8,
       "ScaleDownLimit"},
      {"scale-down limited by minReplicas", 10, 0, 1, 10, up_default, down_default, {}, {}, 1, "TooFewReplicas"},
      {"within range", 4, 6, 1, 10, up_default, down_default, {}, {}, 6, "DesiredWithinRange"},
      // the period already used its +4: no further scale-up until it ages out
      {"an exhausted period holds the current count",
       5,
       9,
       1,
       10,
       rules(ScalingPolicySelect::Max, {{Pods, 4, 60}}),
       down_default,
       {{4, now - 10s, false}},
       {},
       5,
       "ScaleUpLimit"},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      ScalingHistory h{{}, c.up_events, c.down_events};
      NormalizationArg args{c.up, c.down, c.min, c.max, c.current, c.desired};
      Limited l = convert_desired_replicas_with_behavior_rate(h, args, now);
      CHECK(l.replicas == c.expected);
      CHECK(l.reason == c.reason);
    }
  }
}

TEST_CASE("behavior: stabilization windows with the recommendation history", "[autoscaler][behavior]") {
  const Timestamp now = t0();
  auto args = [](std::int32_t up_window, std::int32_t down_window, std::int32_t current, std::int32_t desired) {
    NormalizationArg a;
    a.scale_up = default_scale_up_rules();
    a.scale_up.stabilization_window_seconds = up_window;
    a.scale_down = default_scale_down_rules();
    a.scale_down.stabilization_window_seconds = down_window;
    a.min_replicas = 1;
    a.max_replicas = 100;
    a.current_replicas = current;
    a.desired_replicas = desired;
    return a;
  };
  SECTION("scale-up window: no more than the lowest recent recommendation") {
    ScalingHistory h{{{5, now - 30s}}, {}, {}};
    Limited l = stabilize_recommendation_with_behaviors(h, args(60, 0, 4, 8), now);
    CHECK(l.replicas == 5);
    CHECK(l.reason == "ScaleUpStabilized");
    CHECK(l.message == "recent recommendations were lower than current one, applying the lowest recent recommendation");
    CHECK(h.recommendations.back() == TimestampedRecommendation{8, now});
  }
  SECTION("scale-down window: no less than the highest recent recommendation") {
    ScalingHistory h{{{8, now - 30s}}, {}, {}};
    Limited l = stabilize_recommendation_with_behaviors(h, args(0, 60, 10, 4), now);
    CHECK(l.replicas == 8);
    CHECK(l.reason == "ScaleDownStabilized");
  }
  SECTION("recommendations older than both windows do not count and their slot is reused") {
    ScalingHistory h{{{8, now - 90s}, {2, now - 120s}}, {}, {}};
    Limited l = stabilize_recommendation_with_behaviors(h, args(60, 60, 10, 4), now);
    CHECK(l.replicas == 4);
    REQUIRE(h.recommendations.size() == 2);
    CHECK(h.recommendations[1] == TimestampedRecommendation{4, now});
  }
  SECTION("the current count is kept when it lies between the two limits") {
    // up window: min(3, 9) = 3; down window: max(3, 9) = 9; current 6 lies in [3, 9]
    ScalingHistory h{{{3, now - 10s}}, {}, {}};
    CHECK(stabilize_recommendation_with_behaviors(h, args(60, 60, 6, 9), now).replicas == 6);
  }
}

TEST_CASE("behavior: normalization with behaviors fills the scale-down window from the controller",
          "[autoscaler][behavior]") {
  const Timestamp now = t0();
  HorizontalPodAutoscalerBehavior behavior;
  behavior.scale_up = default_scale_up_rules();
  behavior.scale_down = default_scale_down_rules();  // no stabilizationWindowSeconds
  ScalingHistory h{{{10, now - 100s}}, {}, {}};
  // With the controller's 300 s window the recommendation of 10 holds.
  Normalization held = normalize_desired_replicas_with_behaviors(h, behavior, 10, 2, 1, 20, now, 300s);
  CHECK(held.desired_replicas == 10);
  CHECK(held.able_to_scale_reason == "ScaleDownStabilized");
  // With a 60 s window it is too old: 10 -> 2 (the default policy allows -100 %).
  ScalingHistory h2{{{10, now - 100s}}, {}, {}};
  Normalization free = normalize_desired_replicas_with_behaviors(h2, behavior, 10, 2, 1, 20, now, 60s);
  CHECK(free.desired_replicas == 2);
  CHECK(free.able_to_scale_reason == "ReadyForNewScale");
  CHECK_FALSE(free.scaling_limited);
}

TEST_CASE("behavior: scale events are stored only with behavior and reuse outdated slots", "[autoscaler][behavior]") {
  const Timestamp now = t0();
  HorizontalPodAutoscalerBehavior behavior;
  behavior.scale_up = rules(ScalingPolicySelect::Max, {{Pods, 4, 60}});
  behavior.scale_down = rules(ScalingPolicySelect::Max, {{Pods, 4, 30}});

  ScalingHistory none;
  store_scale_event(none, std::nullopt, 1, 5, now);
  CHECK(none.scale_up_events.empty());

  ScalingHistory h;
  store_scale_event(h, behavior, 1, 5, now - 100s);  // outdated by now (period 60 s)
  store_scale_event(h, behavior, 5, 7, now);
  REQUIRE(h.scale_up_events.size() == 1);
  CHECK(h.scale_up_events[0] == TimestampedScaleEvent{2, now, false});
  store_scale_event(h, behavior, 7, 3, now);
  REQUIRE(h.scale_down_events.size() == 1);
  CHECK(h.scale_down_events[0].replica_change == 4);
  store_scale_event(h, behavior, 3, 4, now + 10s);  // the event at `now` is still in the period
  CHECK(h.scale_up_events.size() == 2);
}

TEST_CASE("behavior: the history survives a round trip through JSON", "[autoscaler][behavior]") {
  // What the live loop persists so that a restart keeps the windows (F8).
  const Timestamp now = t0() + 123456789ns;
  ScalingHistory h{{{3, now}, {5, now - 30s}}, {{2, now - 10s, false}}, {{1, now - 100s, true}}};
  const auto json = to_json(h);
  CHECK(json.at("recommendations")[0].at("time") == "2024-01-01T00:10:00.123456789Z");
  auto back = scaling_history_from_json(nlohmann::json::parse(json.dump()));
  REQUIRE(back.ok());
  CHECK(*back == h);
  auto bad = scaling_history_from_json(nlohmann::json::parse(R"({"recommendations": [{"replicas": 1, "time": "x"}]})"));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message == "recommendations[0].time: not a time");
}

TEST_CASE("behavior: the default behaviors are the Kubernetes ones", "[autoscaler][behavior]") {
  const auto up = default_scale_up_rules();
  CHECK(up.stabilization_window_seconds == 0);
  CHECK(up.select_policy == ScalingPolicySelect::Max);
  REQUIRE(up.policies->size() == 2);
  CHECK((*up.policies)[0].type == Pods);
  CHECK((*up.policies)[0].value == 4);
  CHECK((*up.policies)[0].period_seconds == 15);
  CHECK((*up.policies)[1].type == Percent);
  CHECK((*up.policies)[1].value == 100);
  CHECK((*up.policies)[1].period_seconds == 15);
  const auto down = default_scale_down_rules();
  CHECK_FALSE(down.stabilization_window_seconds.has_value());
  CHECK(down.select_policy == ScalingPolicySelect::Max);
  REQUIRE(down.policies->size() == 1);
  CHECK((*down.policies)[0].type == Percent);
  CHECK((*down.policies)[0].value == 100);
  CHECK((*down.policies)[0].period_seconds == 15);
}

}  // namespace
}  // namespace fedmetrics::autoscaler
