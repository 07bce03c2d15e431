#pragma once
// One sync's decision as a value, for `kubectl fedmetrics explain fhpa` and
// `fedmetrics simulate --explain` (docs/explain.md): per metric its value
// against its target and its proposal, per member the pods the calculation
// counted, missed or left out and the member's part of the metric, the
// calibration, and the rule that bound the final count, with its numbers.
// sync() fills it in; the live loop keeps it on the FederatedHPA as JSON.
// Pure values, their JSON and their table.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/autoscaler/replica_calculator.hpp"
#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/k8s/time.hpp"

namespace fedmetrics::autoscaler {

// One metric of the spec as the sync computed it.
struct MetricExplanation {
  std::string name;                      // "cpu resource utilization (percentage of request)", as the Events name it
  std::string current;                   // "80%", "400m"; empty when the metric failed
  std::string target;                    // "50%", "500m"
  std::optional<double> ratio;           // current / target
  std::optional<double> adjusted_ratio;  // with assumed values for missing and unready pods
  bool within_tolerance = false;         // the ratio that decided lay within the tolerance
  std::optional<std::int32_t> proposal;  // nullopt: the metric failed
  std::string note;                      // why it failed, or the member its value misses
  std::vector<MemberPods> members;       // per member, for metrics computed from pods
  friend bool operator==(const MetricExplanation&, const MetricExplanation&) = default;
};

// The rules that can bind the final count, with the reasons the status uses
// where there is one.
namespace rule {
inline constexpr const char* kScalingDisabled = "ScalingDisabled";      // target at 0 replicas, left alone
inline constexpr const char* kAboveMaxReplicas = "AboveMaxReplicas";    // current > max: brought to max
inline constexpr const char* kBelowMinReplicas = "BelowMinReplicas";    // current < min: brought to min
inline constexpr const char* kMetricsFailed = "MetricsFailed";          // no usable proposal: unchanged
inline constexpr const char* kTolerance = "Tolerance";                  // the deciding metric within tolerance
inline constexpr const char* kProposal = "Proposal";                    // the largest proposal stands
inline constexpr const char* kScaleUpStabilized = "ScaleUpStabilized";  // the scale-up window
inline constexpr const char* kScaleDownStabilized = "ScaleDownStabilized";
inline constexpr const char* kScaleUpLimit = "ScaleUpLimit";  // a scale-up rate (policy, or 2x / +4)
inline constexpr const char* kScaleDownLimit = "ScaleDownLimit";
inline constexpr const char* kTooManyReplicas = "TooManyReplicas";  // maxReplicas
inline constexpr const char* kTooFewReplicas = "TooFewReplicas";    // minReplicas
inline constexpr const char* kScaledToZero = "ScaledToZero";
inline constexpr const char* kScaledFromZero = "ScaledFromZero";  // from its own zero, to at least minReplicas
}  // namespace rule

struct Decision {
  k8s::Timestamp time{};
  std::int32_t current_replicas = 0;
  std::int32_t desired_replicas = 0;
  std::int32_t min_replicas = 1;
  std::int32_t max_replicas = 0;
  double tolerance_down = 0.1;  // the band [1 - down, 1 + up] of the usage ratio
  double tolerance_up = 0.1;
  // Karmada's calibration: the replicas placed in the members over the
  // target's replicas (member_placement.hpp); 1 outside a federation.
  double calibration = 1.0;
  std::map<std::string, std::int32_t> placed;  // replicas placed per member; empty: not known
  std::map<std::string, std::int32_t> unread;  // members whose pods could not be read, with their placed replicas
  std::vector<MetricExplanation> metrics;      // in spec order; empty when no metric was computed
  std::optional<std::int32_t> proposal;        // the largest proposal
  std::string proposal_metric;                 // the metric that made it
  std::optional<std::int32_t> stabilized;      // the recommendation after the stabilization windows
  std::string rule;                            // rule::k*: what bound desired_replicas
  std::string detail;                          // that rule's numbers, in words
  friend bool operator==(const Decision&, const Decision&) = default;
};

// The JSON the live loop writes (annotation kDecisionAnnotation) and the
// plugin reads back; times in RFC 3339.
nlohmann::ordered_json to_json(const Decision& decision);
// Reads it back; a document that is not one names the field.
k8s::Expected<Decision> decision_from_json(const nlohmann::json& json);

// Where the live loop keeps the last decision of a FederatedHPA.
inline constexpr std::string_view kDecisionAnnotation = "autoscaling.fedmetrics.io/last-decision";

// The decision as the readable table both commands print, ending in a newline.
std::string format_decision(const Decision& decision);

}  // namespace fedmetrics::autoscaler
