#include "fedmetrics/telemetry/autoscaler_metrics.hpp"

#include <prometheus/metric_family.h>

namespace fedmetrics::telemetry {

namespace {

using controller::ScaleAction;
using controller::SyncError;

// Upstream's buckets: ExponentialBuckets(0.001, 2, 15), 1 ms to 16.384 s. Seconds.
prometheus::Histogram::BucketBoundaries duration_buckets() {
  prometheus::Histogram::BucketBoundaries out;
  double bound = 0.001;
  for (int i = 0; i < 15; ++i, bound *= 2) out.push_back(bound);
  return out;
}

const std::string kSubsystem = "fedmetrics_horizontal_pod_autoscaler_controller_";

// Upstream's help texts say which values the labels take; ours say the same.
const std::string kLabelsHelp =
    " The label 'action' should be either 'scale_down', 'scale_up', or 'none'. Also, the label 'error' should be "
    "either 'spec', 'internal', or 'none'. Note that if both spec and internal errors happen during a "
    "reconciliation, the first one to occur is reported in `error` label.";
const std::string kMetricLabelsHelp =
    " The label 'action' should be either 'scale_down', 'scale_up', or 'none'. The label 'error' should be either "
    "'spec', 'internal', or 'none'. The label 'metric_type' corresponds to FederatedHPA.spec.metrics[*].type.";

}  // namespace

PrometheusAutoscalerMetrics::PrometheusAutoscalerMetrics(prometheus::Registry& registry)
    : reconciliations_(prometheus::BuildCounter()
                           .Name(kSubsystem + "reconciliations_total")
                           .Help("Number of reconciliations of FederatedHPAs by the autoscaling loop." + kLabelsHelp)
                           .Register(registry)),
      reconciliation_duration_(prometheus::BuildHistogram()
                                   .Name(kSubsystem + "reconciliation_duration_seconds")
                                   .Help("The time (seconds) that the autoscaling loop takes to reconcile a "
                                         "FederatedHPA once." +
                                         kLabelsHelp)
                                   .Register(registry)),
      metric_computations_(prometheus::BuildCounter()
                               .Name(kSubsystem + "metric_computation_total")
                               .Help("Number of metric computations." + kMetricLabelsHelp)
                               .Register(registry)),
      metric_computation_duration_(prometheus::BuildHistogram()
                                       .Name(kSubsystem + "metric_computation_duration_seconds")
                                       .Help("The time (seconds) that the autoscaling loop takes to fetch and "
                                             "calculate one metric." +
                                             kMetricLabelsHelp)
                                       .Register(registry)),
      current_replicas_(prometheus::BuildGauge()
                            .Name(kSubsystem + "current_replicas")
                            .Help("Current replica count of the targets of FederatedHPAs, as the last status this "
                                  "replica wrote (while it leads).")
                            .Register(registry)),
      desired_replicas_(prometheus::BuildGauge()
                            .Name(kSubsystem + "desired_replicas")
                            .Help("Current desired replica count for FederatedHPA objects, as the last status this "
                                  "replica wrote (while it leads).")
                            .Register(registry)),
      federated_hpas_(prometheus::BuildGauge()
                          .Name(kSubsystem + "num_horizontal_pod_autoscalers")
                          .Help("Current number of controlled FederatedHPA objects (a status written while leading).")
                          .Register(registry)
                          .Add({})),
      member_hpa_writes_(prometheus::BuildCounter()
                             .Name("fedmetrics_federatedhpa_distributed_member_hpa_writes_total")
                             .Help("Member HPAs created, updated or deleted in distributed mode (by a sync, on the "
                                   "way back to centralized, or by the orphan sweep), by operation and result "
                                   "(success or error).")
                             .Register(registry)),
      rebalances_(prometheus::BuildCounter()
                      .Name("fedmetrics_federatedhpa_distributed_rebalances_total")
                      .Help("Distributed mode: maxReplicas moved from a member to another (Rebalanced Events).")
                      .Register(registry)
                      .Add({})) {}

void PrometheusAutoscalerMetrics::observe_reconciliation(ScaleAction action, SyncError error, Seconds duration) {
  const prometheus::Labels labels{{"action", std::string(to_string(action))}, {"error", std::string(to_string(error))}};
  reconciliations_.Add(labels).Increment();
  reconciliation_duration_.Add(labels, duration_buckets()).Observe(duration.count());
}

void PrometheusAutoscalerMetrics::observe_metric_computation(ScaleAction action, SyncError error,
                                                             autoscaler::MetricSourceType type, Seconds duration) {
  const prometheus::Labels labels{{"action", std::string(to_string(action))},
                                  {"error", std::string(to_string(error))},
                                  {"metric_type", std::string(autoscaler::to_string(type))}};
  metric_computations_.Add(labels).Increment();
  metric_computation_duration_.Add(labels, duration_buckets()).Observe(duration.count());
}

void PrometheusAutoscalerMetrics::set_replicas(const std::string& namespace_name, const std::string& name,
                                               std::int32_t current, std::int32_t desired) {
  std::lock_guard lock(mutex_);
  auto [it, added] = replicas_.try_emplace({namespace_name, name}, Replicas{nullptr, nullptr});
  if (added) {
    const prometheus::Labels labels{{"namespace", namespace_name}, {"hpa_name", name}};
    it->second = {&current_replicas_.Add(labels), &desired_replicas_.Add(labels)};
    federated_hpas_.Set(static_cast<double>(replicas_.size()));
  }
  it->second.current->Set(current);
  it->second.desired->Set(desired);
}

void PrometheusAutoscalerMetrics::forget(const std::string& namespace_name, const std::string& name) {
  std::lock_guard lock(mutex_);
  auto it = replicas_.find({namespace_name, name});
  if (it == replicas_.end()) return;
  current_replicas_.Remove(it->second.current);
  desired_replicas_.Remove(it->second.desired);
  replicas_.erase(it);
  federated_hpas_.Set(static_cast<double>(replicas_.size()));
}

void PrometheusAutoscalerMetrics::observe_member_hpa_write(controller::MemberHPAOp op, bool succeeded) {
  member_hpa_writes_
      .Add({{"operation", std::string(controller::to_string(op))}, {"result", succeeded ? "success" : "error"}})
      .Increment();
}

void PrometheusAutoscalerMetrics::observe_rebalance() { rebalances_.Increment(); }

std::vector<prometheus::MetricFamily> LeaderElectionMetrics::Collect() const {
  prometheus::ClientMetric m;
  m.label = {prometheus::ClientMetric::Label{"name", lease_name_}};
  m.gauge.value = leading_() ? 1 : 0;
  return {{"fedmetrics_leader_election_master_status",
           "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates "
           "master. 'name' is the string used to identify the lease.",
           prometheus::MetricType::Gauge,
           {m}}};
}

}  // namespace fedmetrics::telemetry
