// The state of HpaController, shared by the files of its parts:
// hpa_controller.cpp (the public API), hpa_scheduler.cpp (the per-object
// cadence, passes, the watch and the orphan sweep), hpa_sync.cpp (one sync of
// a FederatedHPA up to the calculation: its spec, mode, scale, pods and
// metrics) and hpa_decide.cpp (the calculation's result: the scale, the
// status and the Events written).
#pragma once

#include "fedmetrics/controller/hpa_controller.hpp"

#include "fedmetrics/transport/async.hpp"

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fedmetrics/autoscaler/distributor.hpp"
#include "fedmetrics/controller/federated_hpa_status.hpp"
#include "fedmetrics/controller/metrics_gatherer.hpp"
#include "controller/distributed_sync.hpp"
#include "controller/federated_hpa_key.hpp"
#include "controller/sync_period.hpp"

namespace fedmetrics::controller {

// What one sync did, for its reconciliation observation: the scale it
// wrote, and the first error it met (upstream reports the first one).
struct Outcome {
  ScaleAction action = ScaleAction::None;
  SyncError error = SyncError::None;
  void failed(SyncError kind) {
    if (error == SyncError::None) error = kind;
  }
};

struct HpaController::State {
  State(async::Strand s, std::size_t concurrent_syncs)
      : strand(std::move(s)), scope(strand), term(strand), slots(concurrent_syncs), wake(strand) {}

  ControlPlanePorts control_plane;
  std::unique_ptr<Watch> watch;  // of the FederatedHPAs, from start() to stop()
  std::shared_ptr<aggregator::MetricsService> metrics;
  std::shared_ptr<aggregator::MemberSource> members;
  ControllerOptions options;
  AutoscalerMetrics* monitor = nullptr;  // options.monitor, or one that observes nothing

  // Everything below but `stats` and `stopped` is touched on `strand` only.
  async::Strand strand;
  async::TaskGroup scope;  // the scheduler, from start() to shutdown()
  // The current leadership term: every pass and sync is its child, so that
  // losing the lease cancels them all (cancel_in_flight) and shutdown() waits for them.
  async::TaskGroup term;
  async::Semaphore slots;  // --concurrent-horizontal-pod-autoscaler-syncs
  async::Wakeup wake;      // ends the scheduler's wait early: sync_soon(), a pass listed, a late sync ended
  bool sync_requested = false;
  bool stopping = false;
  std::atomic<bool> stopped{false};  // shutdown() or stop() ran (once)
  bool listing = false;              // a pass is between its list and the start of its syncs
  // When the last list was asked for: a list at least every sync period
  // finds the FederatedHPAs no watch reported (and those deleted).
  std::optional<Clock::TimePoint> last_list;
  // After a list failed, none before this: a control plane that is down is
  // asked again every few seconds, not in a loop.
  std::optional<Clock::TimePoint> list_retry;

  // What the controller remembers between syncs of one FederatedHPA: its last
  // status and the recommendation and scale-event history (upstream keeps
  // the history in memory too). The status is remembered only within one
  // leadership term: the first sync of a term starts from the object's
  // .status, as upstream's reconcile always does, so that a restart or a
  // change of leader keeps lastScaleTime, the conditions' lastTransitionTime
  // and desiredReplicas. Keyed by the object (its uid, federated_hpa_key.hpp):
  // one created again under the same name starts afresh.
  struct Memory {
    autoscaler::FederatedHPAStatus status;
    autoscaler::ScalingHistory history;
    bool status_known = false;  // `status` was read or written in the current term
    bool seed_desired = false;  // the object had no desiredReplicas: the target's scale stands for it
    bool busy = false;
    int missed_lists = 0;  // consecutive lists without it
    // The workload it scales, as last listed or watched; nullopt when its
    // scaleTargetRef cannot be read, or once another object took its name.
    std::optional<ScaleTargetKey> target;
    // Its cadence: when its last sync started, the metadata.generation that
    // sync saw, its period (its annotation's, or the sync period), and
    // whether its next sync came due while that one still ran.
    std::optional<Clock::TimePoint> last_sync;
    std::int64_t generation = 0;
    Clock::Duration period{};
    bool due_while_busy = false;
    // The last decision this term wrote to the object's
    // autoscaling.fedmetrics.io/last-decision annotation, without its time:
    // a decision that only moved in time is not written again.
    std::string decision_written;
    // The members whose pods its last sync read (shared reads): with its
    // namespace, the watches and shared fetches it needs.
    std::vector<std::string> read_members;
  };
  std::map<FederatedHPAKey, Memory> memory;
  // The FederatedHPAs by the workload each scales (Memory::target, kept by
  // set_target): ambiguous() looks one workload up instead of comparing
  // every FederatedHPA's at every sync (10,000 at 10,000 FederatedHPAs).
  std::map<ScaleTargetKey, std::set<FederatedHPAKey>> by_target;
  void set_target(const FederatedHPAKey& key, Memory& m, std::optional<ScaleTargetKey> target);
  // Shared reads (ControllerOptions::member_pods, shared_reads.cpp): each
  // member's pod metrics of a namespace, as last fetched, and whether the
  // members some FederatedHPA reads changed since the watches were last told.
  struct SharedPodMetrics {
    Clock::TimePoint asked{};  // when the fetch of `answer` started: its age
    aggregator::SharedAnswer<aggregator::PodMetricsAnswer> answer;
    std::optional<async::OneShot<aggregator::SharedAnswer<aggregator::PodMetricsAnswer>>> in_flight;
  };
  std::map<MemberNamespace, SharedPodMetrics> shared_pod_metrics;
  bool reads_changed = false;
  // Distributed mode: members seen NotReady and since when (one member set for every FederatedHPA).
  std::map<std::string, k8s::Timestamp> not_ready_since;
  // The orphan sweep: when the last one started; one at a time.
  std::optional<std::chrono::steady_clock::time_point> last_sweep;
  bool sweeping = false;

  mutable std::mutex stats_mutex;
  ControllerStats stats;
  template <class Change>
  void count(Change change) {
    std::lock_guard lock(stats_mutex);
    change(stats);
  }

  // Nothing new starts; the scheduler and every pass and sync in flight are cancelled and waited for.
  async::Task<void> drain();

  // ---- the scheduler

  // Each FederatedHPA on its own cadence (kube-controller-manager's
  // horizontal.go requeues each key with AddAfter(key, resyncPeriod) after
  // its sync): a pass starts when one is due, lists them and syncs those
  // that are due; the wait is until the next one is due, or a list is.
  async::Task<void> schedule();

  // How long until a FederatedHPA is due, or the next list (zero: now).
  Clock::Duration until_due(Clock::TimePoint now) const;

  // ---- passes

  enum class Which { Due, All };  // the FederatedHPAs a pass syncs

  void spawn_pass(Which which, std::function<void()> done);

  // A pass of every FederatedHPA, awaited to its end (sync_all).
  async::Task<void> pass_and_wait();

  // The scheduler may look again: this pass has started its syncs.
  void listed_all();

  async::Task<void> pass(Which which, std::function<void()> done);

  // Whether `object`, remembered as `m`, is due at `now`: new to the loop,
  // changed (a new generation), or a period after its last sync.
  static bool due(const Memory& m, const nlohmann::json& object, Clock::TimePoint now);

  static std::int64_t generation_of(const nlohmann::json& object);

  // A sync of `key` now, in `group`; its period starts now.
  void start_sync(async::TaskGroup& group, const FederatedHPAKey& key, nlohmann::json object, Clock::TimePoint now);

  // ---- the orphan sweep (distributed mode)

  bool sweep_due() const;

  async::Task<void> sweep();

  DistributedContext distributed_context();

  static std::optional<FederatedHPAKey> key_from(const nlohmann::json& object);

  // The memory of `key` with the target `object` names now. An object that
  // takes the name of another (deleted and created again) supersedes it:
  // the older one no longer claims its target, and what it remembered is
  // dropped once no sync of it runs.
  Memory& remember(const FederatedHPAKey& key, const nlohmann::json& object);

  // The FederatedHPAs the loop knows that scale `target` ("namespace/name", sorted).
  std::vector<std::string> controllers_of_target(const ScaleTargetKey& target) const;

  // Every FederatedHPA that scales the same workload as `key`, itself
  // included; empty when it is the only one.
  std::vector<std::string> ambiguous(const FederatedHPAKey& key) const;

  // A FederatedHPA the watch reports, new or changed: one the loop does
  // not know yet is synced now, not up to a period later (Karmada's
  // controller reconciles a new object at once), and so is one whose spec
  // changed (a new metadata.generation); either then follows its own period.
  // New is a new uid: one created again under a known name is new.
  void sync_watched(nlohmann::json object);

  // Drops what is remembered of FederatedHPAs that two lists in a row did not
  // have (deleted): memory stays bounded under churn. Two, because an object
  // synced on creation may postdate the list a pass is working from. Until
  // then a deleted one still counts as scaling its target.
  void forget_deleted(const std::set<FederatedHPAKey>& listed);

  // The replica gauges are per name: they stay while another object of that name is remembered.
  void forget_gauges_unless_named(const FederatedHPAKey& gone);

  // Ends the current term: every pass and sync in flight is cancelled, each
  // before its next write, and what was remembered of the statuses and
  // histories is dropped (another leader may write them meanwhile; the next
  // term reads the objects).
  void end_term();

  // ---- one sync

  // One sync in a concurrency slot; the FederatedHPA is free for the next
  // pass however it ends. Objects come from the control plane: a malformed
  // one is a failed sync, never a stuck one.
  async::Task<void> sync_guarded(nlohmann::json object, FederatedHPAKey key);

  // An Event. Its caller checked the cancellation just before (`co_await
  // async::throw_if_cancelled()`): a plain call, so that its string
  // temporaries are never part of a co_await expression (GCC 12 copies those
  // into the coroutine frame bitwise; transport/async.hpp).
  void record_event(const EventSubject& subject, const char* type, const std::string& reason,
                    const std::string& message);

  // References to named objects: no temporary in the co_await expression (GCC 12).
  async::Task<void> write_status(const autoscaler::FederatedHPA& hpa, const FederatedHPAKey& key,
                                 const autoscaler::FederatedHPAStatus& status,
                                 const autoscaler::ScalingHistory& history, Outcome& outcome);

  // The sync's decision on the object, for `kubectl fedmetrics explain`
  // (docs/explain.md), unless only its time changed since the last one
  // written. A failed write is logged, never a failed sync.
  async::Task<void> write_decision(const autoscaler::FederatedHPA& hpa, const FederatedHPAKey& key,
                                   const autoscaler::Decision& decision);

  // A failure before the calculation: AbleToScale/ScalingActive False, an Event, the status written.
  // `condition` and `reason` are literals; `message` a named local (no
  // string temporary in a co_await expression: GCC 12, transport/async.hpp).
  async::Task<void> fail_early(const autoscaler::FederatedHPA& hpa, const EventSubject& subject,
                               const FederatedHPAKey& key, Outcome& outcome, SyncError error, const char* condition,
                               const char* reason, const std::string& message,
                               std::optional<std::int32_t> scale_replicas = std::nullopt);

  async::Task<void> sync(const nlohmann::json& object, const FederatedHPAKey& key, Outcome& outcome);

  // ---- shared reads (ControllerOptions::member_pods, shared_reads.cpp)

  // `key`'s sync read the pods of `members` (from their watches).
  void note_reads(const FederatedHPAKey& key, const aggregator::MemberList& members);

  // The resource samples of the target's pods (`selector`, `listed`) from
  // each member's shared pod metrics of `namespace_name`, each fetched less
  // than `max_age` before (asked again otherwise), ordered as the
  // aggregator orders a merged answer; the error of the members when none
  // of them answered.
  async::Task<ResourceSamples> shared_resource_samples(std::vector<std::string> members, std::string namespace_name,
                                                       k8s::LabelSelector selector, std::set<autoscaler::PodKey> listed,
                                                       Clock::Duration max_age);

  // One member's pod metrics of a namespace, into `out`: the shared fetch when younger
  // than `max_age`, the fetch in flight, or a new one (only an answer is
  // shared: a failure is asked again by the next sync).
  async::Task<void> shared_pod_metrics_of(MemberNamespace which, Clock::Duration max_age,
                                          aggregator::SharedAnswer<aggregator::PodMetricsAnswer>& out);

  // Tells the watches which members and namespaces are still read, and
  // drops the shared fetches of the others; after a pass, when that changed.
  void keep_shared_reads();

  // Upstream's metric computations: one per metric of the spec, its fetch
  // (the metrics are asked in parallel: each waited its own query) and its
  // share of the calculation; the proposal against the status's
  // currentReplicas, none when it failed.
  void observe_metric_computations(const autoscaler::SyncResult& result, const autoscaler::FederatedHPAStatus& previous,
                                   const std::vector<std::chrono::nanoseconds>& fetch_durations,
                                   std::chrono::steady_clock::duration calculation);

  async::Task<void> decide(const autoscaler::FederatedHPA& hpa, const EventSubject& subject, const FederatedHPAKey& key,
                           const Scale& scale, std::vector<autoscaler::Pod>& pods, GatheredMetrics& gathered,
                           const autoscaler::MemberPlacement& placement, Outcome& outcome);
};

}  // namespace fedmetrics::controller
