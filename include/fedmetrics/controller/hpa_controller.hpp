#pragma once
// The live FederatedHPA loop (Karmada's FederatedHPA controller, the
// Kubernetes HPA algorithm). Each FederatedHPA is synced on its own cadence,
// as kube-controller-manager requeues each HPA a sync period after its last
// sync: once when the loop first sees it (a watch event or a list), then one
// period after each sync (the sync period, or its own
// autoscaling.fedmetrics.io/sync-period); a change of its spec (a new
// metadata.generation) syncs it at once and starts its period again.
// A sync, concurrently with others up to a bound, reads the target's scale
// subresource, lists the target's pods in the members, gets the metrics from
// the in-process aggregator, runs autoscaler::sync, updates the scale when
// the decision changes it (a conflict is retried at the next sync), writes
// the status subresource and records Events with the upstream reasons.
// A FederatedHPA whose previous sync has not finished when the next is due
// is synced as soon as it has, so a slow member never stretches the cadence
// of the others. A FederatedHPA whose spec the API server would refuse, or
// that names the same workload as another, is never acted on: its status
// says why (ScalingActive False, FailedConvertHPA or AmbiguousSelector).
// What the loop remembers of a FederatedHPA belongs to the object (its uid):
// one deleted and created again is new.
//
// Every coroutine of the loop runs on its strand (transport/async.hpp) and
// belongs to a scope the controller owns: the scheduler to the controller's
// own task group, every pass and sync to the current leadership term. When
// this replica stops leading, cancel_in_flight() cancels the term, and each
// sync in flight stops before its next write (scale, status, Event).
// shutdown() cancels both and completes once nothing of the loop runs.
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "fedmetrics/aggregator/member_cluster.hpp"
#include "fedmetrics/aggregator/metrics_service.hpp"
#include "fedmetrics/autoscaler/autoscaler.hpp"
#include "fedmetrics/controller/autoscaler_metrics.hpp"
#include "fedmetrics/controller/clock.hpp"
#include "fedmetrics/controller/control_plane.hpp"
#include "fedmetrics/controller/member_hpas.hpp"
#include "fedmetrics/controller/member_pods.hpp"
#include "fedmetrics/transport/executor.hpp"
#include "fedmetrics/transport/task.hpp"

namespace fedmetrics::controller {

// Distributed mode: the HPA client of a member (how it is reached is the
// composition root's: its credentials or the cluster proxy). Null: that
// member's HPAs cannot be written.
using MemberHPAsFactory = std::function<std::shared_ptr<MemberHPAs>(const aggregator::MemberCluster& member)>;

struct ControllerOptions {
  // --horizontal-pod-autoscaler-sync-period: each FederatedHPA's, unless its
  // autoscaling.fedmetrics.io/sync-period annotation sets its own.
  std::chrono::milliseconds sync_period{15'000};
  std::size_t concurrent_syncs = 5;                 // --concurrent-horizontal-pod-autoscaler-syncs
  k8s::LabelSelector selector;                      // --autoscaler-label-selector
  std::chrono::milliseconds member_timeout{3'000};  // pod lists
  autoscaler::ControllerConfig algorithm;
  std::function<k8s::Timestamp()> clock;  // wall clock (status times, readiness)
  std::shared_ptr<Clock> monotonic;       // the cadence and the sweep period; unset: steady_clock()
  // Distributed mode (docs/distributed-mode.md): the member HPA clients (unset: a
  // distributed FederatedHPA is refused, DistributedModeUnavailable) and
  // --distributed-rebalance-window.
  MemberHPAsFactory member_hpas;
  std::chrono::nanoseconds rebalance_window = std::chrono::minutes(2);
  // --distributed-orphan-sweep-period: how often, at most, a pass ends with
  // the orphan sweep (member HPAs fedmetrics created whose FederatedHPA is
  // gone or gives their member no share are deleted; one list per Ready
  // member and one of the FederatedHPAs). Only with member_hpas.
  std::chrono::milliseconds orphan_sweep_period = std::chrono::minutes(1);
  // When set, the loop syncs only while this says so (the leader election);
  // losing the lease also calls cancel_in_flight(), which fences the writes.
  std::function<bool()> active;
  // The loop's own metrics (autoscaler_metrics.hpp); unset: none.
  std::shared_ptr<AutoscalerMetrics> monitor;
  // Reads shared by every FederatedHPA (docs/autoscaling.md, "What a sync
  // reads"): the target's pods come from these watches of the members, and
  // a member's pod metrics of a namespace are asked once a sync period and
  // shared by every FederatedHPA of that namespace (a FederatedHPA never
  // uses a fetch older than its own period: it asks again). Unset: each sync
  // lists its target's pods and asks for their metrics itself.
  std::shared_ptr<MemberPods> member_pods;
};

struct ControllerStats {
  std::uint64_t syncs = 0;
  std::uint64_t rescales = 0;
  std::uint64_t errors = 0;
  std::uint64_t skipped_busy = 0;      // previous sync still running when the next was due
  std::uint64_t synced_on_create = 0;  // new FederatedHPAs synced when their watch event came
  std::uint64_t cancelled_syncs = 0;   // syncs stopped before their next write: their leadership term ended
  std::uint64_t orphan_sweeps = 0;     // distributed mode: orphan sweeps run to the end
  std::uint64_t orphan_member_hpas_deleted = 0;
};

class HpaController {
 public:
  // Its coroutines run on a strand of `executor` (the member clients' runtime).
  // Uses every port of `control_plane` but the cron store (placement may be
  // null: every member is then asked).
  HpaController(async::Executor executor, ControlPlanePorts control_plane,
                std::shared_ptr<aggregator::MetricsService> metrics, std::shared_ptr<aggregator::MemberSource> members,
                ControllerOptions options);
  ~HpaController();
  HpaController(const HpaController&) = delete;
  HpaController& operator=(const HpaController&) = delete;

  // Starts the loop (a first pass at once). Thread-safe.
  void start();
  // Cancels the loop and every sync in flight; completes once none runs.
  // A coroutine on any executor: nothing blocks. Once only (stop() after it
  // returns at once).
  async::Task<void> shutdown();
  // shutdown() for an owner on another thread than the runtime's: blocks
  // until it has completed. The runtime under `executor` must still run.
  void stop();
  // Every FederatedHPA now rather than when each is due (this replica just
  // became the leader); each one's period then starts again. Thread-safe.
  void sync_soon();
  // One pass over every FederatedHPA, due or not; completes when each has
  // finished (tests). A pass is a child of the leadership term.
  async::Task<void> sync_all();
  // This replica stopped leading (client-go's OnStoppedLeading): the term's
  // syncs are cancelled, each before its next write (scale, status, Event),
  // and the next sync of each FederatedHPA starts again from the object's
  // status. Thread-safe; returns at once (the cancellation runs on the strand).
  void cancel_in_flight();

  [[nodiscard]] ControllerStats stats() const;

 private:
  struct State;
  // Owned here; the posts of the thread-safe calls hold it weakly, the
  // coroutines by reference (they end in shutdown(), before it goes).
  std::shared_ptr<State> state_;
};

}  // namespace fedmetrics::controller
