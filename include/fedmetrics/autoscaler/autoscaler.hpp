#pragma once
// One sync of a FederatedHPA, after the Kubernetes HPA controller's
// reconcileAutoscaler and computeReplicasForMetrics: metrics -> proposals ->
// the largest proposal -> normalized decision, with the status and the
// AbleToScale / ScalingActive / ScalingLimited conditions.
//
// Pure: the pods, the metric values, the scale and the time are inputs; the
// status and the ScalingHistory of the previous sync come in and the new ones
// go out. The live loop and `fedmetrics simulate` both call sync().
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/autoscaler/behavior.hpp"
#include "fedmetrics/autoscaler/decision.hpp"
#include "fedmetrics/autoscaler/hpa_spec.hpp"
#include "fedmetrics/autoscaler/member_placement.hpp"
#include "fedmetrics/autoscaler/pod_state.hpp"
#include "fedmetrics/autoscaler/replica_calculator.hpp"

namespace fedmetrics::autoscaler {

// The kube-controller-manager HPA settings, with their defaults.
struct ControllerConfig {
  double tolerance = 0.1;  // --horizontal-pod-autoscaler-tolerance
  CalculatorConfig calculator;
  // --horizontal-pod-autoscaler-downscale-stabilization (5 min)
  std::chrono::nanoseconds downscale_stabilization = std::chrono::minutes(5);
};

// autoscaling/v2 MetricValueStatus; values in milli-units.
struct MetricValueStatus {
  std::optional<std::int64_t> value;
  std::optional<std::int64_t> average_value;
  std::optional<std::int32_t> average_utilization;
};

// autoscaling/v2 MetricStatus for one spec entry.
struct MetricStatus {
  MetricSourceType type = MetricSourceType::Resource;
  std::string resource_name;                     // Resource, ContainerResource
  std::string container;                         // ContainerResource
  MetricIdentifier metric;                       // Pods, Object, External
  CrossVersionObjectReference described_object;  // Object
  MetricValueStatus current;
};
nlohmann::ordered_json to_json(const MetricStatus& status);
// Whether `status` reports the metric `spec` describes: the same source, and
// for Pods, Object and External the same metric name and selector (compared
// in canonical form). A status lists only the metrics that could be computed,
// so its entries are matched to the spec's by this, not by position.
bool same_metric(const MetricSpec& spec, const MetricStatus& status);

struct HorizontalPodAutoscalerCondition {
  std::string type;  // AbleToScale, ScalingActive, ScalingLimited
  ConditionStatus status = ConditionStatus::Unknown;
  std::string reason;
  std::string message;
  Timestamp last_transition_time{};
  friend bool operator==(const HorizontalPodAutoscalerCondition&, const HorizontalPodAutoscalerCondition&) = default;
};
nlohmann::ordered_json to_json(const HorizontalPodAutoscalerCondition& condition);

struct FederatedHPAStatus {
  std::optional<std::int64_t> observed_generation;
  std::optional<Timestamp> last_scale_time;
  std::int32_t current_replicas = 0;
  std::int32_t desired_replicas = 0;
  std::vector<MetricStatus> current_metrics;
  // In the order they were first set, as upstream's setCondition appends.
  std::vector<HorizontalPodAutoscalerCondition> conditions;
};

// The autoscaling/v2 status shape, as the live loop writes it back.
nlohmann::ordered_json to_json(const FederatedHPAStatus& status);

// Sets (or adds) a condition; the transition time moves only when the status changes.
void set_condition(std::vector<HorizontalPodAutoscalerCondition>& conditions, std::string_view type,
                   ConditionStatus status, std::string reason, std::string message, Timestamp now);
const HorizontalPodAutoscalerCondition* find_condition(const std::vector<HorizontalPodAutoscalerCondition>& conditions,
                                                       std::string_view type);

// The target's scale subresource, summed over the member clusters.
struct ScaleTarget {
  std::int32_t spec_replicas = 0;    // what the target asks for
  std::int32_t status_replicas = 0;  // what exists
};

struct SyncInput {
  ScaleTarget scale;
  std::vector<Pod> pods;  // every pod the target's selector matches, in every member
  MetricsSnapshot metrics;
  Timestamp now{};
  // Where the replicas are and which members could not be read; empty
  // outside a federation (docs/autoscaling.md, "Decisions on complete data only").
  MemberPlacement placement;
};

// One metric of the spec as a sync computed it; the live loop reports each
// (upstream's metric computation observations).
struct MetricComputation {
  MetricSourceType type = MetricSourceType::Resource;
  std::optional<std::int32_t> replicas;  // the proposal; nullopt: the metric failed
  bool invalid_spec = false;             // it failed on the spec itself (an unknown metric source type)
};

struct SyncResult {
  std::int32_t current_replicas = 0;
  std::int32_t desired_replicas = 0;  // the decision; current_replicas when nothing changes
  bool rescale = false;               // the caller must set the target to desired_replicas
  std::string rescale_reason;         // for the event, e.g. "cpu resource utilization (...) above target"
  std::optional<std::string> error;   // metric errors, also when scaling up on the valid metrics
  // The data this decision lacked, naming the members: unread members and
  // the metrics that miss a member ("incomplete data: external metric
  // queue_depth(queue=jobs) misses member2 (no scale-down on it)"). Also in
  // the ScalingActive message; the loop records an IncompleteMetrics Event.
  std::optional<std::string> incomplete;
  // One per metric of the spec, in order, when the metrics were computed
  // (not when the target is at 0 replicas or outside min/max).
  std::vector<MetricComputation> metric_computations;
  FederatedHPAStatus status;
  // How this sync decided, for `explain`: the metrics, the members' pods,
  // the calibration and the rule that bound desired_replicas.
  Decision decision;
  ScalingHistory history;  // to carry into the next sync
  // The history without this sync's scale event, for rescale_failed.
  ScalingHistory history_without_scale_event;
};

// The tolerances for this HPA: the controller's, overridden per direction by
// behavior.scaleUp/scaleDown.tolerance (upstream HPAConfigurableTolerance;
// the Karmada controller accepts the field and ignores it, F3).
Tolerances tolerances_for(const FederatedHPASpec& spec, const ControllerConfig& config);

// One sync. `hpa` is taken as written and defaulted here (with_defaults).
// The result assumes the caller applies the new scale; if that fails, use
// rescale_failed() to get the status and history the controller keeps then.
SyncResult sync(const FederatedHPA& hpa, const FederatedHPAStatus& previous, ScalingHistory history,
                const SyncInput& input, const ControllerConfig& config);

// The status and history after the scale update failed: AbleToScale False
// with FailedUpdateScale, the desired count not advanced, no scale event.
struct RescaleFailure {
  FederatedHPAStatus status;
  ScalingHistory history;
};
RescaleFailure rescale_failed(const SyncResult& result, const FederatedHPAStatus& previous, const std::string& error,
                              Timestamp now);

}  // namespace fedmetrics::autoscaler
