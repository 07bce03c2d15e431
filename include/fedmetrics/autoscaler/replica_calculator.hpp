#pragma once
// The replica calculation for one metric, after the Kubernetes HPA's
// ReplicaCalculator (pkg/controller/podautoscaler/replica_calculator.go and
// metrics/utilization.go): pure functions of the pods, their metric values,
// the target, the tolerances and the time. All metric values are milli-units
// (Quantity::milli_value()), as upstream.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "fedmetrics/autoscaler/pod_state.hpp"
#include "fedmetrics/k8s/expected.hpp"

namespace fedmetrics::autoscaler {

// The band around a usage ratio of 1.0 inside which nothing changes:
// [1 - scale_down, 1 + scale_up], bounds included (upstream Tolerances).
struct Tolerances {
  double scale_down = 0.1;
  double scale_up = 0.1;
  [[nodiscard]] bool is_within(double usage_ratio) const {
    return (1.0 - scale_down) <= usage_ratio && usage_ratio <= (1.0 + scale_up);
  }
};

// The kube-controller-manager settings the calculation depends on.
struct CalculatorConfig {
  // --horizontal-pod-autoscaler-cpu-initialization-period (5 min)
  std::chrono::nanoseconds cpu_initialization_period = std::chrono::minutes(5);
  // --horizontal-pod-autoscaler-initial-readiness-delay (30 s)
  std::chrono::nanoseconds initial_readiness_delay = std::chrono::seconds(30);
};

// One pod's value of the metric being calculated.
struct PodMetric {
  std::int64_t value = 0;  // milli-units
  Timestamp timestamp{};
  std::chrono::nanoseconds window{0};
};
using PodMetricsInfo = std::map<PodKey, PodMetric>;

struct PodGroups {
  int ready_count = 0;
  std::set<PodKey> unready;  // pending, or (cpu only) not ready / too fresh
  std::set<PodKey> missing;  // no metric value
  std::set<PodKey> ignored;  // being deleted, or failed
};

// Upstream groupPods. The readiness rules apply to cpu only: during the cpu
// initialization period after start a pod counts when it is Ready and its
// sample covers a full window after the Ready transition; later, a pod that
// is not Ready is left out only if it has never been ready (its Ready
// transition lies within the initial readiness delay after start).
PodGroups group_pods(const std::vector<Pod>& pods, const PodMetricsInfo& metrics, bool is_cpu, Timestamp now,
                     const CalculatorConfig& config);

// Per-pod requests of `resource` in milli-units. Without `container`, a pod
// with pod-level requests (Pod::requests) counts those, plus its overhead;
// a resource it requests neither at pod level nor in any container is an
// error ("missing pod-level request for cpu in Pod member1/default/web-1").
// Otherwise the sum over the containers (and sidecar init containers), or
// only `container` when given: a container without the request is an error
// ("missing request for cpu in container app of Pod member1/default/web-1");
// a pod without `container` requests 0 of it.
k8s::Expected<std::map<PodKey, std::int64_t>> calculate_requests(const std::vector<Pod>& pods,
                                                                 std::string_view container, std::string_view resource);

// Per-pod usage of `resource` from metrics.k8s.io samples: the sum over the
// containers, or only `container` when given. A pod whose sample lacks the
// resource (or the container) has no value.
PodMetricsInfo resource_metrics(const std::vector<PodResourceSample>& samples, std::string_view resource,
                                std::string_view container);

struct UtilizationRatio {
  double ratio = 0;
  std::int32_t utilization = 0;  // percent, truncated as upstream
  std::int64_t raw_average = 0;  // milli-units per pod
};
// Upstream GetResourceUtilizationRatio: only pods with both a value and a
// request count; utilization = trunc(100 * sum(usage) / sum(requests)) and the
// ratio is utilization / target, so the ratio carries the truncation.
k8s::Expected<UtilizationRatio> resource_utilization_ratio(const PodMetricsInfo& metrics,
                                                           const std::map<PodKey, std::int64_t>& requests,
                                                           std::int32_t target_utilization);

struct UsageRatio {
  double ratio = 0;
  std::int64_t usage = 0;  // milli-units, the truncated average
};
// Upstream GetMetricUsageRatio: average (truncated) over every value, / target.
UsageRatio metric_usage_ratio(const PodMetricsInfo& metrics, std::int64_t target_usage);

// One member's pods as one metric's calculation saw them (for `explain`).
struct MemberPods {
  std::string member;
  std::int32_t pods = 0;     // the pods of the calculation in it (an unread member's placed replicas too)
  std::int32_t counted = 0;  // those whose value (or, for Object and External metrics, readiness) counted
  std::int32_t missing = 0;  // no metric value
  std::int32_t unready = 0;  // pending, or (cpu only) not ready / too fresh
  std::int32_t ignored = 0;  // being deleted, or failed
  // Its part of the total of the counted values, 0..1; nullopt for a metric
  // without per-pod values (Object, External).
  std::optional<double> share;
  friend bool operator==(const MemberPods&, const MemberPods&) = default;
};

// A proposal from one metric.
struct ReplicaCalculation {
  std::int32_t replicas = 0;
  std::int64_t usage = 0;                   // milli-units, what MetricStatus reports
  std::optional<std::int32_t> utilization;  // percent, Utilization targets only
  Timestamp timestamp{};
  // How it was reached (for `explain`): the usage ratio (current / target),
  // the ratio again once missing and unready pods were given assumed values
  // (when they had to be), whether the ratio that decided lay within the
  // tolerance (the proposal is then the current count), and per member the pods.
  double usage_ratio = 0;
  std::optional<double> adjusted_ratio;
  bool within_tolerance = false;
  std::vector<MemberPods> members;
};

// Resource / ContainerResource with a Utilization target (GetResourceReplicas).
// `container` empty means the whole pod.
k8s::Expected<ReplicaCalculation> resource_replicas(std::int32_t current_replicas, std::int32_t target_utilization,
                                                    std::string_view resource, std::string_view container,
                                                    const Tolerances& tolerances, const std::vector<Pod>& pods,
                                                    const std::vector<PodResourceSample>& samples, Timestamp now,
                                                    const CalculatorConfig& config, double calibration = 1.0);

// Resource / ContainerResource with an AverageValue target (GetRawResourceReplicas).
k8s::Expected<ReplicaCalculation> raw_resource_replicas(std::int32_t current_replicas, std::int64_t target_usage,
                                                        std::string_view resource, std::string_view container,
                                                        const Tolerances& tolerances, const std::vector<Pod>& pods,
                                                        const std::vector<PodResourceSample>& samples, Timestamp now,
                                                        const CalculatorConfig& config, double calibration = 1.0);

// Pods metric with an AverageValue target (GetMetricReplicas).
k8s::Expected<ReplicaCalculation> pods_metric_replicas(std::int32_t current_replicas, std::int64_t target_usage,
                                                       std::string_view metric_name, const Tolerances& tolerances,
                                                       const std::vector<Pod>& pods,
                                                       const std::vector<PodMetricSample>& samples, Timestamp now,
                                                       const CalculatorConfig& config, double calibration = 1.0);

// The plain-metric core shared by the two above (calcPlainMetricReplicas).
k8s::Expected<ReplicaCalculation> plain_metric_replicas(PodMetricsInfo metrics, std::int32_t current_replicas,
                                                        std::int64_t target_usage, bool is_cpu,
                                                        const Tolerances& tolerances, const std::vector<Pod>& pods,
                                                        Timestamp now, const CalculatorConfig& config,
                                                        double calibration = 1.0);

// Object metric with a Value target (GetObjectMetricReplicas): ratio =
// value / target; with current_replicas 0 (scale to zero) the result is
// ceil(ratio), otherwise ceil(ratio * ready pods) outside the tolerance.
k8s::Expected<ReplicaCalculation> object_metric_replicas(std::int32_t current_replicas, std::int64_t target_usage,
                                                         std::int64_t usage, const Tolerances& tolerances,
                                                         const std::vector<Pod>& pods, double calibration = 1.0);

// Object metric with an AverageValue target (GetObjectPerPodMetricReplicas):
// ceil(value / target) when value / (target * status replicas) is outside
// the tolerance. Reports the value per current pod.
k8s::Expected<ReplicaCalculation> object_per_pod_metric_replicas(std::int32_t status_replicas,
                                                                 std::int64_t target_average_usage, std::int64_t usage,
                                                                 const Tolerances& tolerances);

// External metric with a Value target (GetExternalMetricReplicas): the sum of
// all matching series against the target, as for Object/Value.
k8s::Expected<ReplicaCalculation> external_metric_replicas(std::int32_t current_replicas, std::int64_t target_usage,
                                                           const std::vector<std::int64_t>& values,
                                                           const Tolerances& tolerances, const std::vector<Pod>& pods,
                                                           double calibration = 1.0);

// External metric with an AverageValue target (GetExternalPerPodMetricReplicas).
k8s::Expected<ReplicaCalculation> external_per_pod_metric_replicas(std::int32_t status_replicas,
                                                                   std::int64_t target_usage_per_pod,
                                                                   const std::vector<std::int64_t>& values,
                                                                   const Tolerances& tolerances);

// `calibration` (every function that derives a count from a count of pods):
// Karmada's FederatedHPA factor, sum(member replicas) / template replicas
// (member_placement.hpp). The pod-derived count is divided by it before it
// is rounded up: ceil(ratio * pods / calibration). 1 outside a federation.

// ceil(x) as an int32, saturating (upstream clamps at MaxInt32).
std::int32_t ceil_to_int32(double x);

}  // namespace fedmetrics::autoscaler
