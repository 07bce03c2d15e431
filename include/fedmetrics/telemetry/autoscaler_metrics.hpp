#pragma once
// The autoscaler's own metrics for /metrics: the controller's port
// (controller/autoscaler_metrics.hpp) on prometheus-cpp, and the leader
// election's status.
//
// kube-controller-manager's names under our prefix, so that its HPA
// dashboards and alerts carry over (pkg/controller/podautoscaler/monitor):
//   fedmetrics_horizontal_pod_autoscaler_controller_reconciliations_total{action,error}
//   fedmetrics_horizontal_pod_autoscaler_controller_reconciliation_duration_seconds{action,error}
//   fedmetrics_horizontal_pod_autoscaler_controller_metric_computation_total{action,error,metric_type}
//   fedmetrics_horizontal_pod_autoscaler_controller_metric_computation_duration_seconds{action,error,metric_type}
//   fedmetrics_horizontal_pod_autoscaler_controller_desired_replicas{namespace,hpa_name}
//   fedmetrics_horizontal_pod_autoscaler_controller_num_horizontal_pod_autoscalers
// with current_replicas{namespace,hpa_name} beside desired_replicas;
// client-go's leader_election_master_status{name}; and distributed mode's
// fedmetrics_federatedhpa_distributed_member_hpa_writes_total{operation,result}
// and _rebalances_total (result success/error as the cron loop's metrics).
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "fedmetrics/controller/autoscaler_metrics.hpp"

namespace fedmetrics::telemetry {

class PrometheusAutoscalerMetrics final : public controller::AutoscalerMetrics {
 public:
  explicit PrometheusAutoscalerMetrics(prometheus::Registry& registry);

  void observe_reconciliation(controller::ScaleAction action, controller::SyncError error, Seconds duration) override;
  void observe_metric_computation(controller::ScaleAction action, controller::SyncError error,
                                  autoscaler::MetricSourceType type, Seconds duration) override;
  void set_replicas(const std::string& namespace_name, const std::string& name, std::int32_t current,
                    std::int32_t desired) override;
  void forget(const std::string& namespace_name, const std::string& name) override;
  void observe_member_hpa_write(controller::MemberHPAOp op, bool succeeded) override;
  void observe_rebalance() override;

 private:
  prometheus::Family<prometheus::Counter>& reconciliations_;
  prometheus::Family<prometheus::Histogram>& reconciliation_duration_;
  prometheus::Family<prometheus::Counter>& metric_computations_;
  prometheus::Family<prometheus::Histogram>& metric_computation_duration_;
  prometheus::Family<prometheus::Gauge>& current_replicas_;
  prometheus::Family<prometheus::Gauge>& desired_replicas_;
  prometheus::Gauge& federated_hpas_;
  prometheus::Family<prometheus::Counter>& member_hpa_writes_;
  prometheus::Counter& rebalances_;

  struct Replicas {
    prometheus::Gauge* current;
    prometheus::Gauge* desired;
  };
  std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, Replicas> replicas_;  // by (namespace, name)
};

// client-go's leader_election_master_status{name}: 1 while this replica
// holds the Lease `name`, else 0; read from the elector at scrape time.
class LeaderElectionMetrics final : public prometheus::Collectable {
 public:
  LeaderElectionMetrics(std::string lease_name, std::function<bool()> leading)
      : lease_name_(std::move(lease_name)), leading_(std::move(leading)) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  std::string lease_name_;
  std::function<bool()> leading_;
};

}  // namespace fedmetrics::telemetry
