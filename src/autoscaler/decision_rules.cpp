#include "decision_rules.hpp"

#include <utility>
#include <vector>

#include "fedmetrics/k8s/quantity.hpp"

namespace fedmetrics::autoscaler::detail {

namespace {

std::string quantity(std::int64_t milli) {
  return k8s::Quantity::from_milli(milli, k8s::QuantityFormat::DecimalSI).to_string();
}

std::string target_text(const MetricTarget& target) {
  switch (target.type) {
    case MetricTargetType::Utilization: return std::to_string(target.average_utilization.value_or(0)) + "%";
    case MetricTargetType::AverageValue:
      return target.average_value ? target.average_value->to_string() + " per pod" : "-";
    case MetricTargetType::Value: return target.value ? target.value->to_string() : "-";
  }
  return "-";
}

std::string number(std::int64_t n) { return std::to_string(n); }

std::string seconds(std::int32_t s) { return std::to_string(s) + " s"; }

std::string select_text(const HPAScalingRules& rules) {
  switch (rules.select_policy.value_or(ScalingPolicySelect::Max)) {
    case ScalingPolicySelect::Max: return "Max";
    case ScalingPolicySelect::Min: return "Min";
    case ScalingPolicySelect::Disabled: return "Disabled";
  }
  return "Max";
}

// Each policy's own limit, and the one selectPolicy kept: "selectPolicy Max
// of Pods 4 per 15 s (7), Percent 100 per 15 s (6)".
std::string policies_text(const HPAScalingRules& rules, const ScalingHistory& history, std::int32_t current, bool up,
                          Timestamp now) {
  if (rules.select_policy == ScalingPolicySelect::Disabled) return "selectPolicy Disabled: no change this way";
  std::string out = "selectPolicy " + select_text(rules) + " of";
  const auto& policies = rules.policies ? *rules.policies : std::vector<HPAScalingPolicy>{};
  for (std::size_t i = 0; i < policies.size(); ++i) {
    HPAScalingRules one = rules;
    one.policies = std::vector<HPAScalingPolicy>{policies[i]};
    one.select_policy = ScalingPolicySelect::Max;
    const std::int32_t limit = up ? calculate_scale_up_limit_with_scaling_rules(current, history.scale_up_events,
                                                                                history.scale_down_events, one, now)
                                  : calculate_scale_down_limit_with_behaviors(current, history.scale_up_events,
                                                                              history.scale_down_events, one, now);
    const auto& p = policies[i];
    out += (i == 0 ? " " : ", ") + std::string(p.type == ScalingPolicyType::Pods ? "Pods " : "Percent ") +
           number(p.value) + " per " + seconds(p.period_seconds) + " (" + number(limit) + ")";
  }
  return out;
}

std::string limit_detail(const Decision& d, const FederatedHPASpec& spec, const Normalization& n,
                         const ScalingHistory& history, Timestamp now) {
  const std::string from = " (the recommendation was " + number(n.stabilized_replicas) + ")";
  const auto& reason = n.scaling_limited_reason;
  if (reason == rule::kTooManyReplicas) return "maxReplicas " + number(d.max_replicas) + from;
  if (reason == rule::kTooFewReplicas) return "minReplicas " + number(d.min_replicas) + from;
  const bool up = reason == rule::kScaleUpLimit;
  if (!spec.behavior) {
    // Without behavior only the scale-up rate is limited.
    return "without behavior, at most twice the current replicas or 4, whichever is more: " +
           number(calculate_scale_up_limit(d.current_replicas)) + from;
  }
  const auto& rules = up ? spec.behavior->scale_up.value_or(default_scale_up_rules())
                         : spec.behavior->scale_down.value_or(default_scale_down_rules());
  return "at " + std::string(up ? "most " : "least ") + number(n.desired_replicas) + " by the " +
         (up ? "scaleUp" : "scaleDown") + " policies, " + policies_text(rules, history, d.current_replicas, up, now) +
         from;
}

}  // namespace

void start_decision(Decision& d, const SyncInput& input, const Tolerances& tolerances, double calibration,
                    std::int32_t min_replicas, std::int32_t max_replicas) {
  d.time = input.now;
  d.current_replicas = input.scale.spec_replicas;
  d.desired_replicas = d.current_replicas;
  d.min_replicas = min_replicas;
  d.max_replicas = max_replicas;
  d.tolerance_down = tolerances.scale_down;
  d.tolerance_up = tolerances.scale_up;
  d.calibration = calibration;
  d.placed.insert(input.placement.member_replicas.begin(), input.placement.member_replicas.end());
  d.unread.insert(input.placement.unread_members.begin(), input.placement.unread_members.end());
}

void explain_without_metrics(Decision& d, const char* which) {
  d.rule = which;
  if (d.rule == rule::kScalingDisabled) {
    d.detail = "the target is at 0 replicas, not by a scale to zero of the autoscaler's own: left alone";
  } else if (d.rule == rule::kAboveMaxReplicas) {
    d.detail =
        "the target's replicas are above maxReplicas " + number(d.max_replicas) + ": brought to it, no metric read";
  } else {
    d.detail =
        "the target's replicas are below minReplicas " + number(d.min_replicas) + ": brought to it, no metric read";
  }
}

MetricExplanation explain_metric(const MetricSpec& spec, const ReplicaCalculation& calc, std::string name) {
  MetricExplanation m;
  m.name = std::move(name);
  m.target = target_text(spec.target);
  m.current =
      calc.utilization ? std::to_string(*calc.utilization) + "% (" + quantity(calc.usage) + ")" : quantity(calc.usage);
  if (spec.target.type == MetricTargetType::AverageValue) m.current += " per pod";
  m.ratio = calc.usage_ratio;
  m.adjusted_ratio = calc.adjusted_ratio;
  m.within_tolerance = calc.within_tolerance;
  if (calc.adjusted_ratio && ((calc.usage_ratio < 1.0) != (*calc.adjusted_ratio < 1.0))) {
    // Upstream then keeps the current count (replica_calculator.go).
    m.note = "with assumed values for its missing and unready pods the ratio turns the other way: no change";
  }
  m.proposal = calc.replicas;
  m.members = calc.members;
  return m;
}

MetricExplanation explain_failed_metric(const MetricSpec& spec, std::string error) {
  MetricExplanation m;
  switch (spec.type) {
    case MetricSourceType::Resource: m.name = spec.resource_name + " resource"; break;
    case MetricSourceType::ContainerResource:
      m.name = spec.resource_name + " resource of container " + spec.container;
      break;
    case MetricSourceType::Pods: m.name = "pods metric " + spec.metric.name; break;
    case MetricSourceType::Object: m.name = spec.described_object.kind + " metric " + spec.metric.name; break;
    case MetricSourceType::External:
      m.name = "external metric " + spec.metric.name + "(" + spec.metric.selector.to_string() + ")";
      break;
  }
  m.target = target_text(spec.target);
  m.note = std::move(error);
  return m;
}

void explain_normalization(Decision& d, const FederatedHPASpec& spec, const Normalization& n,
                           const ScalingHistory& history, std::chrono::nanoseconds downscale_window, Timestamp now) {
  d.stabilized = n.stabilized_replicas;
  const std::int32_t proposal = d.proposal.value_or(d.current_replicas);
  if (n.scaling_limited) {
    d.rule = n.scaling_limited_reason;
    d.detail = limit_detail(d, spec, n, history, now);
    return;
  }
  if (n.stabilized_replicas != proposal) {
    const bool down = n.able_to_scale_reason == rule::kScaleDownStabilized;
    std::int32_t window = 0;
    if (down) {
      const auto configured = std::chrono::duration_cast<std::chrono::seconds>(downscale_window).count();
      window = spec.behavior && spec.behavior->scale_down && spec.behavior->scale_down->stabilization_window_seconds
                   ? *spec.behavior->scale_down->stabilization_window_seconds
                   : static_cast<std::int32_t>(configured);
    } else if (spec.behavior && spec.behavior->scale_up) {
      window = spec.behavior->scale_up->stabilization_window_seconds.value_or(0);
    }
    d.rule = down ? rule::kScaleDownStabilized : rule::kScaleUpStabilized;
    d.detail = std::string(down ? "the highest" : "the lowest") + " recommendation of the last " + seconds(window) +
               " " + (down ? "scale-down" : "scale-up") + " stabilization window is " + number(n.stabilized_replicas) +
               " (this sync proposed " + number(proposal) + ")";
    return;
  }
  for (const auto& m : d.metrics) {
    if (m.name == d.proposal_metric && m.within_tolerance && proposal == d.current_replicas) {
      d.rule = rule::kTolerance;
      d.detail = "the ratio of " + m.name + " is within the tolerance: " + number(proposal) + " replicas stay";
      return;
    }
  }
  d.rule = rule::kProposal;
  d.detail = d.proposal_metric + " proposes " + number(proposal);
}

}  // namespace fedmetrics::autoscaler::detail
