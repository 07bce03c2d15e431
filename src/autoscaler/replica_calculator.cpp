#include "fedmetrics/autoscaler/replica_calculator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace fedmetrics::autoscaler {

namespace {

using k8s::Error;
__extension__ typedef __int128 Int128;  // __extension__: no -Wpedantic warning

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kInt64Min = std::numeric_limits<std::int64_t>::min();

std::int64_t saturate64(Int128 v) {
  if (v > kInt64Max) return kInt64Max;
  if (v < kInt64Min) return kInt64Min;
  return static_cast<std::int64_t>(v);
}

const Error kNoPods{"no pods returned by selector while calculating replica count"};
const Error kNoTargetedMetrics{"did not receive metrics for targeted pods (pods might be unready)"};

Error no_resource_metrics(std::string_view resource) {
  return Error{"unable to get metrics for resource " + std::string(resource) +
               ": no metrics returned from resource metrics API"};
}

void remove_pods(PodMetricsInfo& metrics, const std::set<PodKey>& pods) {
  for (const auto& key : pods) metrics.erase(key);
}

// Per member (for `explain`): its pods, how group_pods sorted them, and its
// part of the values that counted (`counted`: the metric after the ignored
// and unready pods left it, before any assumed value).
std::vector<MemberPods> member_pods(const std::vector<Pod>& pods, const PodGroups& groups,
                                    const PodMetricsInfo& counted) {
  std::map<std::string, MemberPods> by_member;
  for (const auto& pod : pods) ++by_member[pod.key.cluster].pods;
  for (const auto& key : groups.missing) ++by_member[key.cluster].missing;
  for (const auto& key : groups.unready) ++by_member[key.cluster].unready;
  for (const auto& key : groups.ignored) ++by_member[key.cluster].ignored;
  std::map<std::string, Int128> sums;
  Int128 total = 0;
  for (const auto& [key, metric] : counted) {
    ++by_member[key.cluster].counted;
    sums[key.cluster] += metric.value;
    total += metric.value;
  }
  std::vector<MemberPods> out;
  for (auto& [member, row] : by_member) {
    row.member = member;
    row.share = total == 0 ? 0.0 : static_cast<double>(sums[member]) / static_cast<double>(total);
    out.push_back(std::move(row));
  }
  return out;
}

// Per member, for a metric without per-pod values (Object, External): its
// pods, and the ready ones, which a count derived from pods multiplies.
std::vector<MemberPods> member_ready_pods(const std::vector<Pod>& pods) {
  std::map<std::string, MemberPods> by_member;
  for (const auto& pod : pods) {
    auto& row = by_member[pod.key.cluster];
    ++row.pods;
    if (is_running_and_ready(pod)) ++row.counted;
  }
  std::vector<MemberPods> out;
  for (auto& [member, row] : by_member) {
    row.member = member;
    out.push_back(std::move(row));
  }
  return out;
}

// Upstream getReadyPodsCount, for Object and External metrics.
k8s::Expected<std::int64_t> ready_pods_count(const std::vector<Pod>& pods) {
  if (pods.empty()) return Error{"unable to calculate ready pods: " + kNoPods.message};
  std::int64_t ready = 0;
  for (const auto& pod : pods) {
    if (is_running_and_ready(pod)) ++ready;
  }
  return ready;
}

// Upstream getUsageRatioReplicaCount. With current_replicas 0 neither the
// tolerance nor the ready pods count: the target scales from zero to
// ceil(ratio) (or stays at zero).
k8s::Expected<std::int32_t> usage_ratio_replica_count(std::int32_t current_replicas, double usage_ratio,
                                                      const Tolerances& tolerances, const std::vector<Pod>& pods,
                                                      double calibration) {
  if (current_replicas == 0) return ceil_to_int32(usage_ratio);
  if (tolerances.is_within(usage_ratio)) return current_replicas;
  auto ready = ready_pods_count(pods);
  if (!ready) return ready.error();
  return ceil_to_int32(usage_ratio * static_cast<double>(*ready) / calibration);
}

// Upstream's first pass (GetResourceReplicas, calcPlainMetricReplicas): with
// no missing pods, and no unready pods that a scale-up would have to count,
// the ratio over the ready pods decides. nullopt when assumptions are needed.
std::optional<std::int32_t> replicas_without_assumptions(const PodGroups& groups, double usage_ratio,
                                                         std::int32_t current_replicas, const Tolerances& tolerances,
                                                         double calibration) {
  const bool scale_up_with_unready = !groups.unready.empty() && usage_ratio > 1.0;
  if (scale_up_with_unready || !groups.missing.empty()) return std::nullopt;
  if (tolerances.is_within(usage_ratio)) return current_replicas;
  return ceil_to_int32(usage_ratio * groups.ready_count / calibration);
}

// For a scale-up, missing and unready pods are assumed to use nothing, so
// that they dampen it. (What a missing pod is assumed to use in a scale-down
// differs between the calculators.)
void assume_idle_for_scale_up(PodMetricsInfo& metrics, const PodGroups& groups, double usage_ratio) {
  if (usage_ratio <= 1.0) return;
  for (const auto& key : groups.missing) metrics[key] = PodMetric{};
  for (const auto& key : groups.unready) metrics[key] = PodMetric{};
}

// The end of upstream's GetResourceReplicas and calcPlainMetricReplicas, once
// missing and unready pods were given assumed values: no change if the new
// ratio is within the tolerance, or if the assumptions flipped the direction
// of the ratio or of the change.
std::int32_t replicas_with_assumptions(std::int32_t current_replicas, double usage_ratio, double new_usage_ratio,
                                       std::size_t pod_count, const Tolerances& tolerances, double calibration) {
  if (tolerances.is_within(new_usage_ratio) || (usage_ratio < 1.0 && new_usage_ratio > 1.0) ||
      (usage_ratio > 1.0 && new_usage_ratio < 1.0)) {
    return current_replicas;
  }
  const std::int32_t new_replicas = ceil_to_int32(new_usage_ratio * static_cast<double>(pod_count) / calibration);
  if ((new_usage_ratio < 1.0 && new_replicas > current_replicas) ||
      (new_usage_ratio > 1.0 && new_replicas < current_replicas)) {
    return current_replicas;
  }
  return new_replicas;
}

std::int64_t sum_saturating(const std::vector<std::int64_t>& values) {
  Int128 sum = 0;
  for (auto v : values) sum += v;
  return saturate64(sum);
}

// The per-pod average reported for AverageValue targets of Object and
// External metrics: ceil(total / status replicas). Upstream divides by zero
// when the target has no replicas (scale from zero); we report the total.
std::int64_t per_pod_usage(std::int64_t usage, std::int32_t status_replicas) {
  if (status_replicas <= 0) return usage;
  if (usage == kInt64Max) return usage;
  return saturate64(static_cast<Int128>(std::ceil(static_cast<double>(usage) / status_replicas)));
}

// Upstream IsSupportedPodLevelResource
// (staging/src/k8s.io/component-helpers/resource/helpers.go): cpu, memory
// and huge pages can be requested for the pod as a whole.
bool is_supported_pod_level_resource(std::string_view resource) {
  return resource == "cpu" || resource == "memory" || resource.starts_with("hugepages-");
}

// Upstream IsPodLevelRequestsSet: the pod requests a supported resource at pod level.
bool has_pod_level_requests(const Pod& pod) {
  return std::any_of(pod.requests.begin(), pod.requests.end(),
                     [](const auto& entry) { return is_supported_pod_level_resource(entry.first); });
}

// Upstream calculatePodLevelRequests over resourcehelpers.PodRequests: the
// pod-level request of `resource` when the pod has one, else what its
// containers request of it (a container without it adds nothing here), plus
// the pod's overhead. Neither anywhere is an error. (PodRequests also takes
// the largest non-sidecar init container into account for a resource that is
// not set at pod level; init containers that are not sidecars are not kept.)
k8s::Expected<std::int64_t> pod_level_request(const Pod& pod, std::string_view resource) {
  bool found = false;
  Int128 request = 0;
  auto pod_level = pod.requests.find(resource);
  if (pod_level != pod.requests.end() && is_supported_pod_level_resource(resource)) {
    found = true;
    request = pod_level->second.milli_value();
  } else {
    for (const auto& c : pod.containers) {
      auto it = c.requests.find(resource);
      if (it == c.requests.end()) continue;
      found = true;
      request += it->second.milli_value();
    }
  }
  if (auto it = pod.overhead.find(resource); it != pod.overhead.end()) {
    found = true;
    request += it->second.milli_value();
  }
  if (!found) return Error{"missing pod-level request for " + std::string(resource) + " in Pod " + to_string(pod.key)};
  return saturate64(request);
}

// Upstream calculatePodRequestsFromContainers: the sum over the containers
// (and sidecars), or only `container` when given. A pod without the named
// container (one of an older template during a rollout) requests nothing of
// it: it has no value for the metric either, so it is a missing pod, not a
// failed metric (Karmada's calculatePodRequests; upstream fails the metric).
k8s::Expected<std::int64_t> containers_request(const Pod& pod, std::string_view container, std::string_view resource) {
  Int128 request = 0;
  for (const auto& c : pod.containers) {
    if (!container.empty() && c.name != container) continue;
    auto it = c.requests.find(resource);
    if (it == c.requests.end()) {
      return Error{"missing request for " + std::string(resource) + " in container " + c.name + " of Pod " +
                   to_string(pod.key)};
    }
    request += it->second.milli_value();
    if (!container.empty()) break;  // container names are unique inside the pod
  }
  return saturate64(request);
}

}  // namespace

std::int32_t ceil_to_int32(double x) {
  if (std::isnan(x)) return 0;
  double c = std::ceil(x);
  if (c >= static_cast<double>(std::numeric_limits<std::int32_t>::max()))
    return std::numeric_limits<std::int32_t>::max();
  if (c <= static_cast<double>(std::numeric_limits<std::int32_t>::min()))
    return std::numeric_limits<std::int32_t>::min();
  return static_cast<std::int32_t>(c);
}

PodGroups group_pods(const std::vector<Pod>& pods, const PodMetricsInfo& metrics, bool is_cpu, Timestamp now,
                     const CalculatorConfig& config) {
  PodGroups groups;
  for (const auto& pod : pods) {
    if (pod.deleting || pod.phase == PodPhase::Failed) {
      groups.ignored.insert(pod.key);
      continue;
    }
    if (pod.phase == PodPhase::Pending) {
      groups.unready.insert(pod.key);
      continue;
    }
    auto metric = metrics.find(pod.key);
    if (metric == metrics.end()) {
      groups.missing.insert(pod.key);
      continue;
    }
    if (is_cpu) {
      bool unready = false;
      if (!pod.ready || !pod.start_time) {
        unready = true;
      } else if (*pod.start_time + config.cpu_initialization_period > now) {
        // Still initializing: count only a Ready pod whose sample covers a
        // whole window after it became Ready (cpu spikes at start-up).
        unready = pod.ready->status == ConditionStatus::False ||
                  metric->second.timestamp < pod.ready->last_transition_time + metric->second.window;
      } else {
        // Leave out a not-Ready pod only if it has never been ready.
        unready = pod.ready->status == ConditionStatus::False &&
                  *pod.start_time + config.initial_readiness_delay > pod.ready->last_transition_time;
      }
      if (unready) {
        groups.unready.insert(pod.key);
        continue;
      }
    }
    ++groups.ready_count;
  }
  return groups;
}

k8s::Expected<std::map<PodKey, std::int64_t>> calculate_requests(const std::vector<Pod>& pods,
                                                                 std::string_view container,
                                                                 std::string_view resource) {
  std::map<PodKey, std::int64_t> requests;
  for (const auto& pod : pods) {
    // A named container takes precedence over the pod-level requests
    // (upstream calculateRequests, pkg/controller/podautoscaler/replica_calculator.go).
    auto request = container.empty() && has_pod_level_requests(pod) ? pod_level_request(pod, resource)
                                                                    : containers_request(pod, container, resource);
    if (!request) return request.error();
    requests[pod.key] = *request;
  }
  return requests;
}

PodMetricsInfo resource_metrics(const std::vector<PodResourceSample>& samples, std::string_view resource,
                                std::string_view container) {
  PodMetricsInfo metrics;
  for (const auto& sample : samples) {
    Int128 sum = 0;
    bool missing = sample.containers.empty();
    bool found_container = container.empty();
    for (const auto& c : sample.containers) {
      if (!container.empty() && c.name != container) continue;
      found_container = true;
      auto it = c.usage.find(resource);
      if (it == c.usage.end()) {
        missing = true;
        break;
      }
      sum += it->second.milli_value();
    }
    if (missing || !found_container) continue;
    metrics[sample.key] = PodMetric{saturate64(sum), sample.timestamp, sample.window};
  }
  return metrics;
}

k8s::Expected<UtilizationRatio> resource_utilization_ratio(const PodMetricsInfo& metrics,
                                                           const std::map<PodKey, std::int64_t>& requests,
                                                           std::int32_t target_utilization) {
  Int128 metrics_total = 0;
  Int128 requests_total = 0;
  std::int64_t entries = 0;
  for (const auto& [key, metric] : metrics) {
    auto request = requests.find(key);
    if (request == requests.end()) continue;  // a value for a pod we do not know
    metrics_total += metric.value;
    requests_total += request->second;
    ++entries;
  }
  // When the pods with values and the pods with requests are disjoint.
  if (requests_total == 0) return Error{"no metrics returned matched known pods"};

  Int128 percentage = metrics_total * 100 / requests_total;
  std::int32_t utilization =
      percentage > std::numeric_limits<std::int32_t>::max()
          ? std::numeric_limits<std::int32_t>::max()
          : (percentage < std::numeric_limits<std::int32_t>::min() ? std::numeric_limits<std::int32_t>::min()
                                                                   : static_cast<std::int32_t>(percentage));
  UtilizationRatio out;
  out.utilization = utilization;
  out.ratio = static_cast<double>(utilization) / static_cast<double>(target_utilization);
  out.raw_average = saturate64(metrics_total / entries);
  return out;
}

UsageRatio metric_usage_ratio(const PodMetricsInfo& metrics, std::int64_t target_usage) {
  Int128 total = 0;
  for (const auto& [key, metric] : metrics) total += metric.value;
  UsageRatio out;
  out.usage = metrics.empty() ? 0 : saturate64(total / static_cast<Int128>(metrics.size()));
  out.ratio = static_cast<double>(out.usage) / static_cast<double>(target_usage);
  return out;
}

k8s::Expected<ReplicaCalculation> resource_replicas(std::int32_t current_replicas, std::int32_t target_utilization,
                                                    std::string_view resource, std::string_view container,
                                                    const Tolerances& tolerances, const std::vector<Pod>& pods,
                                                    const std::vector<PodResourceSample>& samples, Timestamp now,
                                                    const CalculatorConfig& config, double calibration) {
  if (samples.empty()) return no_resource_metrics(resource);
  PodMetricsInfo metrics = resource_metrics(samples, resource, container);
  if (pods.empty()) return kNoPods;

  PodGroups groups = group_pods(pods, metrics, resource == "cpu", now, config);
  remove_pods(metrics, groups.ignored);
  remove_pods(metrics, groups.unready);
  if (metrics.empty()) return kNoTargetedMetrics;

  auto requests = calculate_requests(pods, container, resource);
  if (!requests) return requests.error();

  auto first = resource_utilization_ratio(metrics, *requests, target_utilization);
  if (!first) return first.error();
  const double usage_ratio = first->ratio;

  ReplicaCalculation result;
  result.usage = first->raw_average;
  result.utilization = first->utilization;
  result.timestamp = samples.front().timestamp;
  result.usage_ratio = usage_ratio;
  result.members = member_pods(pods, groups, metrics);

  if (auto replicas = replicas_without_assumptions(groups, usage_ratio, current_replicas, tolerances, calibration)) {
    result.replicas = *replicas;
    result.within_tolerance = tolerances.is_within(usage_ratio);
    return result;
  }

  if (usage_ratio < 1.0) {
    // Scale-down: a missing pod is assumed to use all of its request, or the
    // target when that is above 100 %.
    const std::int64_t fallback = std::max<std::int64_t>(100, target_utilization);
    for (const auto& key : groups.missing) {
      metrics[key] = PodMetric{saturate64(static_cast<Int128>(requests->at(key)) * fallback / 100), {}, {}};
    }
  }
  assume_idle_for_scale_up(metrics, groups, usage_ratio);

  auto second = resource_utilization_ratio(metrics, *requests, target_utilization);
  if (!second) return second.error();
  const double new_usage_ratio = second->ratio;
  result.adjusted_ratio = new_usage_ratio;
  result.within_tolerance = tolerances.is_within(new_usage_ratio);

  result.replicas = replicas_with_assumptions(current_replicas, usage_ratio, new_usage_ratio, metrics.size(),
                                              tolerances, calibration);
  return result;
}

k8s::Expected<ReplicaCalculation> plain_metric_replicas(PodMetricsInfo metrics, std::int32_t current_replicas,
                                                        std::int64_t target_usage, bool is_cpu,
                                                        const Tolerances& tolerances, const std::vector<Pod>& pods,
                                                        Timestamp now, const CalculatorConfig& config,
                                                        double calibration) {
  if (pods.empty()) return kNoPods;

  PodGroups groups = group_pods(pods, metrics, is_cpu, now, config);
  remove_pods(metrics, groups.ignored);
  remove_pods(metrics, groups.unready);
  if (metrics.empty()) return kNoTargetedMetrics;

  const UsageRatio first = metric_usage_ratio(metrics, target_usage);
  const double usage_ratio = first.ratio;

  ReplicaCalculation result;
  result.usage = first.usage;
  result.usage_ratio = usage_ratio;
  result.members = member_pods(pods, groups, metrics);

  if (auto replicas = replicas_without_assumptions(groups, usage_ratio, current_replicas, tolerances, calibration)) {
    result.replicas = *replicas;
    result.within_tolerance = tolerances.is_within(usage_ratio);
    return result;
  }

  if (usage_ratio < 1.0) {
    // Scale-down: a missing pod is assumed to be exactly at the target.
    for (const auto& key : groups.missing) metrics[key] = PodMetric{target_usage, {}, {}};
  }
  assume_idle_for_scale_up(metrics, groups, usage_ratio);

  const double new_usage_ratio = metric_usage_ratio(metrics, target_usage).ratio;
  result.adjusted_ratio = new_usage_ratio;
  result.within_tolerance = tolerances.is_within(new_usage_ratio);
  result.replicas = replicas_with_assumptions(current_replicas, usage_ratio, new_usage_ratio, metrics.size(),
                                              tolerances, calibration);
  return result;
}

k8s::Expected<ReplicaCalculation> raw_resource_replicas(std::int32_t current_replicas, std::int64_t target_usage,
                                                        std::string_view resource, std::string_view container,
                                                        const Tolerances& tolerances, const std::vector<Pod>& pods,
                                                        const std::vector<PodResourceSample>& samples, Timestamp now,
                                                        const CalculatorConfig& config, double calibration) {
  if (samples.empty()) return no_resource_metrics(resource);
  auto result = plain_metric_replicas(resource_metrics(samples, resource, container), current_replicas, target_usage,
                                      resource == "cpu", tolerances, pods, now, config, calibration);
  if (result) result->timestamp = samples.front().timestamp;
  return result;
}

k8s::Expected<ReplicaCalculation> pods_metric_replicas(std::int32_t current_replicas, std::int64_t target_usage,
                                                       std::string_view metric_name, const Tolerances& tolerances,
                                                       const std::vector<Pod>& pods,
                                                       const std::vector<PodMetricSample>& samples, Timestamp now,
                                                       const CalculatorConfig& config, double calibration) {
  if (samples.empty()) {
    return Error{"unable to get metric " + std::string(metric_name) + ": no metrics returned from custom metrics API"};
  }
  PodMetricsInfo metrics;
  for (const auto& s : samples) metrics[s.key] = PodMetric{s.value.milli_value(), s.timestamp, {}};
  auto result = plain_metric_replicas(std::move(metrics), current_replicas, target_usage, false, tolerances, pods, now,
                                      config, calibration);
  if (result) result->timestamp = samples.front().timestamp;
  return result;
}

k8s::Expected<ReplicaCalculation> object_metric_replicas(std::int32_t current_replicas, std::int64_t target_usage,
                                                         std::int64_t usage, const Tolerances& tolerances,
                                                         const std::vector<Pod>& pods, double calibration) {
  const double usage_ratio = static_cast<double>(usage) / static_cast<double>(target_usage);
  auto replicas = usage_ratio_replica_count(current_replicas, usage_ratio, tolerances, pods, calibration);
  if (!replicas) return replicas.error();
  ReplicaCalculation result;
  result.replicas = *replicas;
  result.usage = usage;
  result.usage_ratio = usage_ratio;
  result.within_tolerance = current_replicas != 0 && tolerances.is_within(usage_ratio);
  result.members = member_ready_pods(pods);
  return result;
}

k8s::Expected<ReplicaCalculation> object_per_pod_metric_replicas(std::int32_t status_replicas,
                                                                 std::int64_t target_average_usage, std::int64_t usage,
                                                                 const Tolerances& tolerances) {
  // With status_replicas 0 the ratio is +inf (or NaN for zero usage): never
  // within the tolerance, so the target goes to ceil(usage / target).
  ReplicaCalculation result;
  result.replicas = status_replicas;
  const double usage_ratio =
      static_cast<double>(usage) / (static_cast<double>(target_average_usage) * static_cast<double>(status_replicas));
  result.usage_ratio = usage_ratio;
  result.within_tolerance = tolerances.is_within(usage_ratio);
  if (!result.within_tolerance) {
    result.replicas = ceil_to_int32(static_cast<double>(usage) / static_cast<double>(target_average_usage));
  }
  result.usage = per_pod_usage(usage, status_replicas);
  return result;
}

k8s::Expected<ReplicaCalculation> external_metric_replicas(std::int32_t current_replicas, std::int64_t target_usage,
                                                           const std::vector<std::int64_t>& values,
                                                           const Tolerances& tolerances, const std::vector<Pod>& pods,
                                                           double calibration) {
  return object_metric_replicas(current_replicas, target_usage, sum_saturating(values), tolerances, pods, calibration);
}

k8s::Expected<ReplicaCalculation> external_per_pod_metric_replicas(std::int32_t status_replicas,
                                                                   std::int64_t target_usage_per_pod,
                                                                   const std::vector<std::int64_t>& values,
                                                                   const Tolerances& tolerances) {
  return object_per_pod_metric_replicas(status_replicas, target_usage_per_pod, sum_saturating(values), tolerances);
}

}  // namespace fedmetrics::autoscaler
