#pragma once
// How sync() fills in its Decision (decision.hpp): a metric's line, and the
// rule that bound the count once the proposal met the behavior.
#include <chrono>
#include <cstdint>
#include <string>

#include "fedmetrics/autoscaler/autoscaler.hpp"
#include "fedmetrics/autoscaler/behavior.hpp"
#include "fedmetrics/autoscaler/decision.hpp"
#include "fedmetrics/autoscaler/hpa_spec.hpp"
#include "fedmetrics/autoscaler/replica_calculator.hpp"

namespace fedmetrics::autoscaler::detail {

// What a decision says before any metric is read.
void start_decision(Decision& decision, const SyncInput& input, const Tolerances& tolerances, double calibration,
                    std::int32_t min_replicas, std::int32_t max_replicas);

// A decision made without reading a metric (rule::kScalingDisabled,
// kAboveMaxReplicas or kBelowMinReplicas).
void explain_without_metrics(Decision& decision, const char* rule);

// A metric that gave a proposal: its value against its target, the ratio and the members' pods.
MetricExplanation explain_metric(const MetricSpec& spec, const ReplicaCalculation& calc, std::string name);

// A metric that failed: `error` says why.
MetricExplanation explain_failed_metric(const MetricSpec& spec, std::string error);

// What the stabilization windows and the limits did to `proposal`
// (`normalization`): the decision's stabilized count, rule and detail.
// `spec` is defaulted; `history` has the scale events the limits read (this
// sync's not yet stored).
void explain_normalization(Decision& decision, const FederatedHPASpec& spec, const Normalization& normalization,
                           const ScalingHistory& history, std::chrono::nanoseconds downscale_window, Timestamp now);

}  // namespace fedmetrics::autoscaler::detail
