#pragma once
// What the FederatedHPA loop reports about itself, through a port it owns:
// the composition root implements it with Prometheus (src/main), tests with
// a recorder; the controller holds no metric types.
//
// The observations are kube-controller-manager's HPA controller's
// (pkg/controller/podautoscaler/monitor), so that its dashboards and alerts
// carry over: one reconciliation per sync of a FederatedHPA, labelled with
// the scale it made (scale_up or scale_down only when the new scale was
// written) and the first error it met; one metric computation per metric of
// the spec whenever the sync computed them (not when the target's replicas
// are 0 or outside min/max), its action the proposal against the status's
// currentReplicas, none on error. A sync cancelled because the leadership
// ended is no reconciliation.
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "fedmetrics/autoscaler/hpa_spec.hpp"
#include "fedmetrics/controller/member_hpa.hpp"

namespace fedmetrics::controller {

// Upstream monitor.ActionLabel.
enum class ScaleAction { ScaleUp, ScaleDown, None };
// Upstream monitor.ErrorLabel: spec, the FederatedHPA's spec cannot be used
// as written (it cannot be decoded, an invalid mode annotation, an unknown
// metric type); internal, every other failure (a read or write that failed,
// metrics that could not be computed); none.
enum class SyncError { Spec, Internal, None };
std::string_view to_string(ScaleAction action);  // "scale_up", "scale_down", "none"
std::string_view to_string(SyncError error);     // "spec", "internal", "none"

class AutoscalerMetrics {
 public:
  using Seconds = std::chrono::duration<double>;
  virtual ~AutoscalerMetrics() = default;

  // One sync of a FederatedHPA, start to end (upstream ObserveReconciliationResult).
  virtual void observe_reconciliation(ScaleAction action, SyncError error, Seconds duration) = 0;
  // One metric of the spec: its values fetched and its proposal computed
  // (upstream ObserveMetricComputationResult; `type` is spec.metrics[*].type).
  virtual void observe_metric_computation(ScaleAction action, SyncError error, autoscaler::MetricSourceType type,
                                          Seconds duration) = 0;
  // The status a sync wrote: the target's replicas and the ones wanted.
  virtual void set_replicas(const std::string& namespace_name, const std::string& name, std::int32_t current,
                            std::int32_t desired) = 0;
  // A FederatedHPA deleted, or this replica stopped leading: its replicas are no longer reported.
  virtual void forget(const std::string& namespace_name, const std::string& name) = 0;

  // Distributed mode: a member HPA created, updated or deleted (by a sync,
  // on the way back to centralized, or by the orphan sweep), and whether it
  // succeeded.
  virtual void observe_member_hpa_write(MemberHPAOp op, bool succeeded) = 0;
  // Distributed mode: maxReplicas moved from one member to another (a Rebalanced Event).
  virtual void observe_rebalance() = 0;
};

// Observes nothing: the loop's default when no metrics are wired.
class NoAutoscalerMetrics final : public AutoscalerMetrics {
 public:
  void observe_reconciliation(ScaleAction, SyncError, Seconds) override {}
  void observe_metric_computation(ScaleAction, SyncError, autoscaler::MetricSourceType, Seconds) override {}
  void set_replicas(const std::string&, const std::string&, std::int32_t, std::int32_t) override {}
  void forget(const std::string&, const std::string&) override {}
  void observe_member_hpa_write(MemberHPAOp, bool) override {}
  void observe_rebalance() override {}
};

}  // namespace fedmetrics::controller
