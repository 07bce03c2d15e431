#pragma once
// Turning a proposal into a decision: minReplicas/maxReplicas, stabilization
// windows and scaling rate limits, after the Kubernetes HPA controller
// (horizontal.go: normalizeDesiredReplicas[WithBehaviors],
// stabilizeRecommendation[WithBehaviors], convertDesiredReplicasWithRules,
// convertDesiredReplicasWithBehaviorRate, calculateScale{Up,Down}Limit...).
//
// Upstream keeps the recommendation and scale-event history in controller
// memory, so it is lost on restart and on a change of leader. Here it is a value,
// ScalingHistory, that the caller carries from one sync to the next (and may
// persist).
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/autoscaler/hpa_spec.hpp"
#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/k8s/time.hpp"

namespace fedmetrics::autoscaler {

using k8s::Timestamp;

struct TimestampedRecommendation {
  std::int32_t recommendation = 0;
  Timestamp timestamp{};
  friend bool operator==(const TimestampedRecommendation&, const TimestampedRecommendation&) = default;
};

struct TimestampedScaleEvent {
  std::int32_t replica_change = 0;  // absolute value
  Timestamp timestamp{};
  bool outdated = false;  // older than the longest policy period: reusable slot
  friend bool operator==(const TimestampedScaleEvent&, const TimestampedScaleEvent&) = default;
};

struct ScalingHistory {
  std::vector<TimestampedRecommendation> recommendations;  // unstabilized
  std::vector<TimestampedScaleEvent> scale_up_events;
  std::vector<TimestampedScaleEvent> scale_down_events;
  friend bool operator==(const ScalingHistory&, const ScalingHistory&) = default;
};

// The history as JSON, so that the live loop can keep it across restarts and
// leader changes (for example in an annotation): times in RFC 3339 with
// nanoseconds, {"recommendations": [{"replicas": 3, "time": "..."}],
// "scaleUpEvents": [{"replicaChange": 2, "time": "...", "outdated": false}],
// "scaleDownEvents": [...]}.
nlohmann::ordered_json to_json(const ScalingHistory& history);
k8s::Expected<ScalingHistory> scaling_history_from_json(const nlohmann::json& json);

// A limit's outcome: the replicas, and the reason/message for the condition.
struct Limited {
  std::int32_t replicas = 0;
  std::string reason;
  std::string message;
};

struct Normalization {
  std::int32_t desired_replicas = 0;
  std::int32_t stabilized_replicas = 0;  // the recommendation after the stabilization windows, before the limits
  // AbleToScale (status True): ReadyForNewScale, ScaleUpStabilized or ScaleDownStabilized.
  std::string able_to_scale_reason;
  std::string able_to_scale_message;
  // ScalingLimited: True when the rate or min/max changed the stabilized value.
  bool scaling_limited = false;
  std::string scaling_limited_reason;
  std::string scaling_limited_message;
};

// Records `current_replicas` as the first recommendation of an HPA that has none.
void record_initial_recommendation(ScalingHistory& history, std::int32_t current_replicas, Timestamp now);

// Without behavior: the highest recommendation within the downscale
// stabilization window (the new one included); the new one replaces one
// sample older than the window, or is appended.
std::int32_t stabilize_recommendation(ScalingHistory& history, std::int32_t prenormalized, Timestamp now,
                                      std::chrono::nanoseconds downscale_window);

// 2 x current, at least 4: the scale-up limit without behavior.
std::int32_t calculate_scale_up_limit(std::int32_t current_replicas);

// Without behavior: clamps to [min, max] and to the scale-up limit.
Limited convert_desired_replicas_with_rules(std::int32_t current_replicas, std::int32_t desired_replicas,
                                            std::int32_t min_replicas, std::int32_t max_replicas);

Normalization normalize_desired_replicas(ScalingHistory& history, std::int32_t current_replicas,
                                         std::int32_t prenormalized, std::int32_t min_replicas,
                                         std::int32_t max_replicas, Timestamp now,
                                         std::chrono::nanoseconds downscale_window);

// Sum of the replica changes of `events` within the last `period_seconds`.
std::int32_t get_replicas_change_per_period(std::int32_t period_seconds,
                                            const std::vector<TimestampedScaleEvent>& events, Timestamp now);

// The most replicas the rules allow now (rules must be defaulted).
std::int32_t calculate_scale_up_limit_with_scaling_rules(std::int32_t current_replicas,
                                                         const std::vector<TimestampedScaleEvent>& scale_up_events,
                                                         const std::vector<TimestampedScaleEvent>& scale_down_events,
                                                         const HPAScalingRules& rules, Timestamp now);

// The fewest replicas the rules allow now (rules must be defaulted).
std::int32_t calculate_scale_down_limit_with_behaviors(std::int32_t current_replicas,
                                                       const std::vector<TimestampedScaleEvent>& scale_up_events,
                                                       const std::vector<TimestampedScaleEvent>& scale_down_events,
                                                       const HPAScalingRules& rules, Timestamp now);

// The arguments of the behavior path. The rules are defaulted
// (with_defaults) and the scale-down window filled in.
struct NormalizationArg {
  HPAScalingRules scale_up;
  HPAScalingRules scale_down;
  std::int32_t min_replicas = 0;
  std::int32_t max_replicas = 0;
  std::int32_t current_replicas = 0;
  std::int32_t desired_replicas = 0;
};

// The up window allows no more than the lowest recent recommendation, the
// down window no less than the highest; records the new recommendation.
Limited stabilize_recommendation_with_behaviors(ScalingHistory& history, const NormalizationArg& args, Timestamp now);

// Applies min/max and the scaling policies.
Limited convert_desired_replicas_with_behavior_rate(const ScalingHistory& history, const NormalizationArg& args,
                                                    Timestamp now);

// With behavior (defaulted by with_defaults). A scale-down rule without
// stabilizationWindowSeconds takes `downscale_window`.
Normalization normalize_desired_replicas_with_behaviors(ScalingHistory& history,
                                                        const HorizontalPodAutoscalerBehavior& behavior,
                                                        std::int32_t current_replicas, std::int32_t prenormalized,
                                                        std::int32_t min_replicas, std::int32_t max_replicas,
                                                        Timestamp now, std::chrono::nanoseconds downscale_window);

// Records a scale from prev to next (only with behavior: without it the
// events are never read), reusing a slot older than the longest policy period.
void store_scale_event(ScalingHistory& history, const std::optional<HorizontalPodAutoscalerBehavior>& behavior,
                       std::int32_t prev_replicas, std::int32_t new_replicas, Timestamp now);

}  // namespace fedmetrics::autoscaler
