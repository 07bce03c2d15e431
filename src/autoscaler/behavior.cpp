#include "fedmetrics/autoscaler/behavior.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "json_reader.hpp"

namespace fedmetrics::autoscaler {

namespace {

constexpr std::int32_t kInt32Max = std::numeric_limits<std::int32_t>::max();
constexpr std::int32_t kInt32Min = std::numeric_limits<std::int32_t>::min();

std::int32_t clamp32(std::int64_t v) {
  return static_cast<std::int32_t>(std::clamp<std::int64_t>(v, kInt32Min, kInt32Max));
}

std::chrono::nanoseconds seconds(std::int64_t s) { return std::chrono::seconds(s); }

// Policies of a defaulted rule.
const std::vector<HPAScalingPolicy>& policies_of(const HPAScalingRules& rules) {
  static const std::vector<HPAScalingPolicy> none;
  return rules.policies ? *rules.policies : none;
}

ScalingPolicySelect select_of(const HPAScalingRules& rules) {
  return rules.select_policy.value_or(ScalingPolicySelect::Max);
}

std::int32_t longest_policy_period(const HPAScalingRules& rules) {
  std::int32_t longest = 0;
  for (const auto& p : policies_of(rules)) longest = std::max(longest, p.period_seconds);
  return longest;
}

void store_event(std::vector<TimestampedScaleEvent>& events, std::int32_t change, std::int32_t longest_period,
                 Timestamp now) {
  const Timestamp cutoff = now - seconds(longest_period);
  std::optional<std::size_t> old_index;
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (events[i].timestamp < cutoff) events[i].outdated = true;
    if (events[i].outdated) old_index = i;  // the last outdated one, as upstream
  }
  TimestampedScaleEvent event{change, now, false};
  if (old_index) {
    events[*old_index] = event;
  } else {
    events.push_back(event);
  }
}

// RFC 3339 with nanoseconds: format_time keeps seconds only, and the
// windows compare instants exactly.
std::string format_nanos(Timestamp t) {
  const auto since_epoch = t.time_since_epoch();
  auto secs = std::chrono::floor<std::chrono::seconds>(since_epoch);
  const auto nanos = (since_epoch - secs).count();
  std::string base = k8s::format_time(Timestamp(secs));  // "...:SSZ"
  char fraction[16];
  std::snprintf(fraction, sizeof fraction, ".%09lld", static_cast<long long>(nanos));
  base.insert(base.size() - 1, fraction);
  return base;
}

Timestamp read_time(const detail::Fields& f) {
  auto text = f.string("time");
  if (!text) {
    f.fail("time", "is required");
    return {};
  }
  auto t = k8s::parse_time(*text);
  if (!t) {
    f.fail("time", "not a time");
    return {};
  }
  return *t;
}

std::vector<TimestampedScaleEvent> read_events(const detail::Fields& top, std::string_view key) {
  std::vector<TimestampedScaleEvent> out;
  top.each_object(key, [&](const detail::Fields& e) {
    out.push_back({e.int32("replicaChange").value_or(0), read_time(e), e.boolean("outdated").value_or(false)});
  });
  return out;
}

}  // namespace

nlohmann::ordered_json to_json(const ScalingHistory& history) {
  using nlohmann::ordered_json;
  ordered_json out = ordered_json::object();
  out["recommendations"] = ordered_json::array();
  for (const auto& r : history.recommendations) {
    out["recommendations"].push_back({{"replicas", r.recommendation}, {"time", format_nanos(r.timestamp)}});
  }
  for (const auto& [key, events] : {std::pair{"scaleUpEvents", &history.scale_up_events},
                                    std::pair{"scaleDownEvents", &history.scale_down_events}}) {
    out[key] = ordered_json::array();
    for (const auto& e : *events) {
      out[key].push_back(
          {{"replicaChange", e.replica_change}, {"time", format_nanos(e.timestamp)}, {"outdated", e.outdated}});
    }
  }
  return out;
}

k8s::Expected<ScalingHistory> scaling_history_from_json(const nlohmann::json& json) {
  detail::FieldReader reader;
  const detail::Fields top(reader, json, "");
  ScalingHistory history;
  top.each_object("recommendations", [&](const detail::Fields& r) {
    history.recommendations.push_back({r.int32("replicas").value_or(0), read_time(r)});
  });
  history.scale_up_events = read_events(top, "scaleUpEvents");
  history.scale_down_events = read_events(top, "scaleDownEvents");
  return reader.finish(std::move(history));
}

void record_initial_recommendation(ScalingHistory& history, std::int32_t current_replicas, Timestamp now) {
  if (history.recommendations.empty()) history.recommendations.push_back({current_replicas, now});
}

std::int32_t stabilize_recommendation(ScalingHistory& history, std::int32_t prenormalized, Timestamp now,
                                      std::chrono::nanoseconds downscale_window) {
  std::int32_t max_recommendation = prenormalized;
  std::optional<std::size_t> old_index;
  const Timestamp cutoff = now - downscale_window;
  // A recommendation counts when it is newer than the cutoff, as in the
  // behavior path (upstream's wall clock never puts two at the same instant;
  // with a zero window the initial recommendation of this very sync must not
  // count, and upstream's does not, being a few microseconds older).
  for (std::size_t i = 0; i < history.recommendations.size(); ++i) {
    const auto& rec = history.recommendations[i];
    if (rec.timestamp < cutoff) {
      old_index = i;
    } else if (rec.timestamp > cutoff && rec.recommendation > max_recommendation) {
      max_recommendation = rec.recommendation;
    }
  }
  if (old_index) {
    history.recommendations[*old_index] = {prenormalized, now};
  } else {
    history.recommendations.push_back({prenormalized, now});
  }
  return max_recommendation;
}

std::int32_t calculate_scale_up_limit(std::int32_t current_replicas) {
  // Guards against a bogus usage report scaling a target up wildly
  // (kubernetes#32304): at most double, at least 4.
  return clamp32(std::max<std::int64_t>(2 * static_cast<std::int64_t>(current_replicas), 4));
}

Limited convert_desired_replicas_with_rules(std::int32_t current_replicas, std::int32_t desired_replicas,
                                            std::int32_t min_replicas, std::int32_t max_replicas) {
  std::int32_t maximum_allowed = 0;
  Limited limit;
  const std::int32_t scale_up_limit = calculate_scale_up_limit(current_replicas);
  if (max_replicas > scale_up_limit) {
    maximum_allowed = scale_up_limit;
    limit.reason = "ScaleUpLimit";
    limit.message = "the desired replica count is increasing faster than the maximum scale rate";
  } else {
    maximum_allowed = max_replicas;
    limit.reason = "TooManyReplicas";
    limit.message = "the desired replica count is more than the maximum replica count";
  }
  if (desired_replicas < min_replicas) {
    return {min_replicas, "TooFewReplicas", "the desired replica count is less than the minimum replica count"};
  }
  if (desired_replicas > maximum_allowed) {
    limit.replicas = maximum_allowed;
    return limit;
  }
  return {desired_replicas, "DesiredWithinRange", "the desired count is within the acceptable range"};
}

Normalization normalize_desired_replicas(ScalingHistory& history, std::int32_t current_replicas,
                                         std::int32_t prenormalized, std::int32_t min_replicas,
                                         std::int32_t max_replicas, Timestamp now,
                                         std::chrono::nanoseconds downscale_window) {
  Normalization out;
  const std::int32_t stabilized = stabilize_recommendation(history, prenormalized, now, downscale_window);
  if (stabilized != prenormalized) {
    out.able_to_scale_reason = "ScaleDownStabilized";
    out.able_to_scale_message =
        "recent recommendations were higher than current one, applying the highest recent recommendation";
  } else {
    out.able_to_scale_reason = "ReadyForNewScale";
    out.able_to_scale_message = "recommended size matches current size";
  }
  Limited limited = convert_desired_replicas_with_rules(current_replicas, stabilized, min_replicas, max_replicas);
  out.stabilized_replicas = stabilized;
  out.desired_replicas = limited.replicas;
  out.scaling_limited = limited.replicas != stabilized;
  out.scaling_limited_reason = std::move(limited.reason);
  out.scaling_limited_message = std::move(limited.message);
  return out;
}

std::int32_t get_replicas_change_per_period(std::int32_t period_seconds,
                                            const std::vector<TimestampedScaleEvent>& events, Timestamp now) {
  const Timestamp cutoff = now - seconds(period_seconds);
  std::int64_t replicas = 0;
  for (const auto& event : events) {
    if (event.timestamp > cutoff) replicas += event.replica_change;
  }
  return clamp32(replicas);
}

std::int32_t calculate_scale_up_limit_with_scaling_rules(std::int32_t current_replicas,
                                                         const std::vector<TimestampedScaleEvent>& scale_up_events,
                                                         const std::vector<TimestampedScaleEvent>& scale_down_events,
                                                         const HPAScalingRules& rules, Timestamp now) {
  const ScalingPolicySelect select = select_of(rules);
  if (select == ScalingPolicySelect::Disabled) return current_replicas;
  // For scaling up, the smallest change ('Min') is the lowest limit.
  std::int64_t result = select == ScalingPolicySelect::Min ? kInt32Max : kInt32Min;
  for (const auto& policy : policies_of(rules)) {
    const std::int64_t added = get_replicas_change_per_period(policy.period_seconds, scale_up_events, now);
    const std::int64_t deleted = get_replicas_change_per_period(policy.period_seconds, scale_down_events, now);
    const std::int64_t period_start = current_replicas - added + deleted;
    std::int64_t proposed = 0;
    if (policy.type == ScalingPolicyType::Pods) {
      proposed = period_start + policy.value;
    } else {
      // Rounded up, or a small target could never grow.
      proposed = clamp32(static_cast<std::int64_t>(
          std::ceil(static_cast<double>(period_start) * (1.0 + static_cast<double>(policy.value) / 100.0))));
    }
    result = select == ScalingPolicySelect::Min ? std::min(result, proposed) : std::max(result, proposed);
  }
  return clamp32(result);
}

std::int32_t calculate_scale_down_limit_with_behaviors(std::int32_t current_replicas,
                                                       const std::vector<TimestampedScaleEvent>& scale_up_events,
                                                       const std::vector<TimestampedScaleEvent>& scale_down_events,
                                                       const HPAScalingRules& rules, Timestamp now) {
  const ScalingPolicySelect select = select_of(rules);
  if (select == ScalingPolicySelect::Disabled) return current_replicas;
  // For scaling down, the smallest change ('Min') is the highest limit.
  std::int64_t result = select == ScalingPolicySelect::Min ? kInt32Min : kInt32Max;
  for (const auto& policy : policies_of(rules)) {
    const std::int64_t added = get_replicas_change_per_period(policy.period_seconds, scale_up_events, now);
    const std::int64_t deleted = get_replicas_change_per_period(policy.period_seconds, scale_down_events, now);
    const std::int64_t period_start = current_replicas - added + deleted;
    std::int64_t proposed = 0;
    if (policy.type == ScalingPolicyType::Pods) {
      proposed = period_start - policy.value;
    } else {
      // Truncated toward zero, as Go's int32(float64) conversion.
      proposed = clamp32(static_cast<std::int64_t>(static_cast<double>(period_start) *
                                                   (1.0 - static_cast<double>(policy.value) / 100.0)));
    }
    result = select == ScalingPolicySelect::Min ? std::max(result, proposed) : std::min(result, proposed);
  }
  return clamp32(result);
}

Limited stabilize_recommendation_with_behaviors(ScalingHistory& history, const NormalizationArg& args, Timestamp now) {
  std::int32_t up_recommendation = args.desired_replicas;
  const Timestamp up_cutoff = now - seconds(args.scale_up.stabilization_window_seconds.value_or(0));
  std::int32_t down_recommendation = args.desired_replicas;
  const Timestamp down_cutoff = now - seconds(args.scale_down.stabilization_window_seconds.value_or(0));

  std::optional<std::size_t> old_index;
  for (std::size_t i = 0; i < history.recommendations.size(); ++i) {
    const auto& rec = history.recommendations[i];
    if (rec.timestamp > up_cutoff) up_recommendation = std::min(rec.recommendation, up_recommendation);
    if (rec.timestamp > down_cutoff) down_recommendation = std::max(rec.recommendation, down_recommendation);
    if (rec.timestamp < up_cutoff && rec.timestamp < down_cutoff) old_index = i;
  }

  // Bring the current count within [lowest of the up window, highest of the down window].
  std::int32_t recommendation = args.current_replicas;
  if (recommendation < up_recommendation) recommendation = up_recommendation;
  if (recommendation > down_recommendation) recommendation = down_recommendation;

  if (old_index) {
    history.recommendations[*old_index] = {args.desired_replicas, now};
  } else {
    history.recommendations.push_back({args.desired_replicas, now});
  }

  if (args.desired_replicas >= args.current_replicas) {
    return {recommendation, "ScaleUpStabilized",
            "recent recommendations were lower than current one, applying the lowest recent recommendation"};
  }
  return {recommendation, "ScaleDownStabilized",
          "recent recommendations were higher than current one, applying the highest recent recommendation"};
}

Limited convert_desired_replicas_with_behavior_rate(const ScalingHistory& history, const NormalizationArg& args,
                                                    Timestamp now) {
  if (args.desired_replicas > args.current_replicas) {
    std::int32_t scale_up_limit = calculate_scale_up_limit_with_scaling_rules(
        args.current_replicas, history.scale_up_events, history.scale_down_events, args.scale_up, now);
    // Not below the current count: wait until the events age out.
    if (scale_up_limit < args.current_replicas) scale_up_limit = args.current_replicas;
    Limited limit;
    std::int32_t maximum_allowed = args.max_replicas;
    if (maximum_allowed > scale_up_limit) {
      maximum_allowed = scale_up_limit;
      limit.reason = "ScaleUpLimit";
      limit.message = "the desired replica count is increasing faster than the maximum scale rate";
    } else {
      limit.reason = "TooManyReplicas";
      limit.message = "the desired replica count is more than the maximum replica count";
    }
    if (args.desired_replicas > maximum_allowed) {
      limit.replicas = maximum_allowed;
      return limit;
    }
  } else if (args.desired_replicas < args.current_replicas) {
    std::int32_t scale_down_limit = calculate_scale_down_limit_with_behaviors(
        args.current_replicas, history.scale_up_events, history.scale_down_events, args.scale_down, now);
    if (scale_down_limit > args.current_replicas) scale_down_limit = args.current_replicas;
    Limited limit;
    std::int32_t minimum_allowed = args.min_replicas;
    if (minimum_allowed < scale_down_limit) {
      minimum_allowed = scale_down_limit;
      limit.reason = "ScaleDownLimit";
      limit.message = "the desired replica count is decreasing faster than the maximum scale rate";
    } else {
      limit.reason = "TooFewReplicas";
      limit.message = "the desired replica count is less than the minimum replica count";
    }
    if (args.desired_replicas < minimum_allowed) {
      limit.replicas = minimum_allowed;
      return limit;
    }
  }
  return {args.desired_replicas, "DesiredWithinRange", "the desired count is within the acceptable range"};
}

Normalization normalize_desired_replicas_with_behaviors(ScalingHistory& history,
                                                        const HorizontalPodAutoscalerBehavior& behavior,
                                                        std::int32_t current_replicas, std::int32_t prenormalized,
                                                        std::int32_t min_replicas, std::int32_t max_replicas,
                                                        Timestamp now, std::chrono::nanoseconds downscale_window) {
  NormalizationArg args;
  args.scale_up = behavior.scale_up.value_or(default_scale_up_rules());
  args.scale_down = behavior.scale_down.value_or(default_scale_down_rules());
  if (!args.scale_down.stabilization_window_seconds) {
    // Upstream maybeInitScaleDownStabilizationWindow.
    args.scale_down.stabilization_window_seconds =
        static_cast<std::int32_t>(std::chrono::duration_cast<std::chrono::seconds>(downscale_window).count());
  }
  args.min_replicas = min_replicas;
  args.max_replicas = max_replicas;
  args.current_replicas = current_replicas;
  args.desired_replicas = prenormalized;

  Normalization out;
  Limited stabilized = stabilize_recommendation_with_behaviors(history, args, now);
  if (stabilized.replicas != prenormalized) {
    out.able_to_scale_reason = std::move(stabilized.reason);
    out.able_to_scale_message = std::move(stabilized.message);
  } else {
    out.able_to_scale_reason = "ReadyForNewScale";
    out.able_to_scale_message = "recommended size matches current size";
  }
  args.desired_replicas = stabilized.replicas;
  Limited limited = convert_desired_replicas_with_behavior_rate(history, args, now);
  out.stabilized_replicas = stabilized.replicas;
  out.desired_replicas = limited.replicas;
  out.scaling_limited = limited.replicas != stabilized.replicas;
  out.scaling_limited_reason = std::move(limited.reason);
  out.scaling_limited_message = std::move(limited.message);
  return out;
}

void store_scale_event(ScalingHistory& history, const std::optional<HorizontalPodAutoscalerBehavior>& behavior,
                       std::int32_t prev_replicas, std::int32_t new_replicas, Timestamp now) {
  if (!behavior) return;
  if (new_replicas > prev_replicas) {
    const auto rules = behavior->scale_up.value_or(default_scale_up_rules());
    store_event(history.scale_up_events, new_replicas - prev_replicas, longest_policy_period(rules), now);
  } else {
    const auto rules = behavior->scale_down.value_or(default_scale_down_rules());
    store_event(history.scale_down_events, prev_replicas - new_replicas, longest_policy_period(rules), now);
  }
}

}  // namespace fedmetrics::autoscaler
