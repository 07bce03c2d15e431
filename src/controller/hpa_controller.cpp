#include "fedmetrics/controller/hpa_controller.hpp"

#include "fedmetrics/transport/async.hpp"

#include <atomic>
#include <map>
#include <mutex>
#include <set>

#include <spdlog/spdlog.h>

#include "fedmetrics/autoscaler/distributor.hpp"
#include "fedmetrics/controller/federated_hpa_status.hpp"
#include "fedmetrics/controller/metrics_gatherer.hpp"
#include "controller/distributed_sync.hpp"
#include "controller/federated_hpa_key.hpp"
#include "controller/sleep_or_wake.hpp"
#include "controller/sync_period.hpp"

namespace fedmetrics::controller {

namespace {

namespace asio = boost::asio;
using async::Task;
using autoscaler::ConditionStatus;

// What one sync did, for its reconciliation observation: the scale it
// wrote, and the first error it met (upstream reports the first one).
struct Outcome {
  ScaleAction action = ScaleAction::None;
  SyncError error = SyncError::None;
  void failed(SyncError kind) {
    if (error == SyncError::None) error = kind;
  }
};

// The shortest period a FederatedHPA may have (sync_period.hpp): also how
// soon a list that failed is tried again.
constexpr Clock::Duration kSyncPeriodFloor = kMinSyncPeriod;

// The end of one pass, for sync_all() to wait on.
struct PassEnded {
  explicit PassEnded(const async::Strand& strand) : timer(strand, asio::steady_timer::time_point::max()) {}
  asio::steady_timer timer;
  bool ended = false;
};

}  // namespace

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
  };
  std::map<FederatedHPAKey, Memory> memory;
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
  Task<void> drain() {
    stopping = true;
    watch.reset();  // no watch event after this (stop() has reset it already)
    scope.cancel();
    term.cancel();
    co_await scope.join();
    co_await term.join();
  }

  // ---- the scheduler

  // Each FederatedHPA on its own cadence (kube-controller-manager's
  // horizontal.go requeues each key with AddAfter(key, resyncPeriod) after
  // its sync): a pass starts when one is due, lists them and syncs those
  // that are due; the wait is until the next one is due, or a list is.
  Task<void> schedule() {
    bool was_active = false;
    for (;;) {
      const bool active = !options.active || options.active();
      // Leadership lost without cancel_in_flight() (no callback wired): the
      // term ends here at the latest.
      if (was_active && !active) end_term();
      was_active = active;
      const auto now = options.monotonic->now();
      // Not leading: looked at again a period later (or when woken).
      Clock::Duration wait = options.sync_period;
      if (active && !stopping && !listing) {
        if (sync_requested) {
          sync_requested = false;
          spawn_pass(Which::All, nullptr);
        } else if (until_due(now) <= Clock::Duration::zero()) {
          spawn_pass(Which::Due, nullptr);
        } else {
          wait = until_due(now);
        }
      }
      co_await sleep_or_wake(strand, options.monotonic, wait, wake);
      co_await async::throw_if_cancelled();  // shutdown()
    }
  }

  // How long until a FederatedHPA is due, or the next list (zero: now).
  Clock::Duration until_due(Clock::TimePoint now) const {
    if (list_retry && *list_retry > now) return *list_retry - now;
    auto next = last_list ? *last_list + options.sync_period : now;
    for (const auto& [key, m] : memory) {
      if (m.due_while_busy) {
        if (!m.busy) return Clock::Duration::zero();  // late: its sync has just ended
        continue;                                     // late: when its sync ends
      }
      if (m.last_sync) next = std::min(next, *m.last_sync + m.period);
    }
    return std::max(next - now, Clock::Duration::zero());
  }

  // ---- passes

  enum class Which { Due, All };  // the FederatedHPAs a pass syncs

  void spawn_pass(Which which, std::function<void()> done) {
    // A replica that does not lead syncs nothing (the scheduler asks too; sync_all may not).
    if (stopping || (options.active && !options.active())) {
      if (done) done();
      return;
    }
    listing = true;
    term.spawn(pass(which, std::move(done)), "autoscaler: a pass");
  }

  // A pass of every FederatedHPA, awaited to its end (sync_all).
  Task<void> pass_and_wait() {
    auto ended = std::make_shared<PassEnded>(strand);
    spawn_pass(Which::All, [ended] {
      ended->ended = true;
      ended->timer.cancel();
    });
    while (!ended->ended) {
      auto [ec] = co_await ended->timer.async_wait(asio::as_tuple(asio::use_awaitable));
      (void)ec;
    }
  }

  // The scheduler may look again: this pass has started its syncs.
  void listed_all() {
    listing = false;
    wake.notify();
  }

  Task<void> pass(Which which, std::function<void()> done) {
    // `done` also when the pass is cancelled (a test waits for it).
    struct Done {
      State& state;
      std::function<void()> f;
      ~Done() {
        if (state.listing) state.listed_all();
        if (f) f();
      }
    } on_end{*this, std::move(done)};
    const auto listed_at = options.monotonic->now();
    last_list = listed_at;
    auto list = co_await control_plane.federated_hpas->list(options.selector);
    co_await async::throw_if_cancelled();  // before any child starts (TaskGroup::join)
    if (!list) {
      spdlog::warn("autoscaler: cannot list FederatedHPAs: {}", list.error().message);
      list_retry = listed_at + std::min<Clock::Duration>(options.sync_period, kSyncPeriodFloor);
      co_return;
    }
    list_retry.reset();
    async::TaskGroup syncs(strand);
    // Every target is known before any sync starts: two FederatedHPAs on
    // one workload are ambiguous from the first pass that lists them both.
    std::vector<std::pair<FederatedHPAKey, nlohmann::json>> keyed;
    std::set<FederatedHPAKey> listed;
    for (auto& object : *list) {
      auto key = key_from(object);
      if (!key) continue;
      listed.insert(*key);
      remember(*key, object).missed_lists = 0;
      keyed.emplace_back(std::move(*key), std::move(object));
    }
    forget_deleted(listed);
    const auto now = options.monotonic->now();
    for (auto& [key, object] : keyed) {
      auto& m = memory[key];
      if (which == Which::Due && !due(m, object, now)) continue;
      if (m.busy || stopping) {
        if (!m.due_while_busy) count([](ControllerStats& s) { ++s.skipped_busy; });
        m.due_while_busy = true;  // synced when the running one ends
        continue;
      }
      start_sync(syncs, key, std::move(object), now);
    }
    listed_all();
    co_await syncs.join();
    if (sweep_due()) co_await sweep();
  }

  // Whether `object`, remembered as `m`, is due at `now`: new to the loop,
  // changed (a new generation), or a period after its last sync.
  static bool due(const Memory& m, const nlohmann::json& object, Clock::TimePoint now) {
    if (!m.last_sync || m.due_while_busy) return true;
    if (generation_of(object) != m.generation) return true;
    return *m.last_sync + m.period <= now;
  }

  static std::int64_t generation_of(const nlohmann::json& object) {
    const auto meta = object.find("metadata");
    if (meta == object.end() || !meta->is_object()) return 0;
    const auto generation = meta->find("generation");
    return generation != meta->end() && generation->is_number_integer() ? generation->get<std::int64_t>() : 0;
  }

  // A sync of `key` now, in `group`; its period starts now.
  void start_sync(async::TaskGroup& group, const FederatedHPAKey& key, nlohmann::json object, Clock::TimePoint now) {
    auto& m = memory[key];
    m.busy = true;
    m.due_while_busy = false;
    m.last_sync = now;
    m.generation = generation_of(object);
    const auto period = sync_period_of(object, options.sync_period);
    m.period = period ? std::chrono::duration_cast<Clock::Duration>(*period) : Clock::Duration(options.sync_period);
    group.spawn(sync_guarded(std::move(object), key), "autoscaler: sync of " + key.str());
  }

  // ---- the orphan sweep (distributed mode)

  bool sweep_due() const {
    if (!options.member_hpas || sweeping || stopping) return false;
    return !last_sweep || options.monotonic->now() - *last_sweep >= options.orphan_sweep_period;
  }

  Task<void> sweep() {
    sweeping = true;
    struct Clear {
      bool& flag;
      ~Clear() { flag = false; }
    } clear{sweeping};
    last_sweep = options.monotonic->now();
    const DistributedContext context = distributed_context();
    try {
      const std::size_t deleted = co_await collect_orphan_member_hpas(context, options.selector);
      count([deleted](ControllerStats& s) {
        ++s.orphan_sweeps;
        s.orphan_member_hpas_deleted += deleted;
      });
    } catch (const std::exception& e) {
      if (async::is_cancellation(e)) throw;
      spdlog::warn("autoscaler: orphan sweep: {}", e.what());
    }
  }

  DistributedContext distributed_context() {
    DistributedContext context;
    context.control_plane = &control_plane;
    context.members = members.get();
    context.member_hpas = &options.member_hpas;
    context.rebalance_window = options.rebalance_window;
    context.now = options.clock();
    context.not_ready_since = &not_ready_since;
    context.monitor = monitor;
    return context;
  }

  static std::optional<FederatedHPAKey> key_from(const nlohmann::json& object) {
    auto key = federated_hpa_key(object);
    if (!key) spdlog::warn("autoscaler: a FederatedHPA without a name is left alone");
    return key;
  }

  // The memory of `key` with the target `object` names now. An object that
  // takes the name of another (deleted and created again) supersedes it:
  // the older one no longer claims its target, and what it remembered is
  // dropped once no sync of it runs.
  Memory& remember(const FederatedHPAKey& key, const nlohmann::json& object) {
    for (auto it = memory.begin(); it != memory.end();) {
      if (it->first != key && it->first.same_name(key)) {
        it->second.target.reset();
        if (!it->second.busy) {
          it = memory.erase(it);
          continue;
        }
      }
      ++it;
    }
    auto& m = memory[key];
    m.target = scale_target_key(object);
    return m;
  }

  // The FederatedHPAs the loop knows that scale `target` ("namespace/name", sorted).
  std::vector<std::string> controllers_of_target(const ScaleTargetKey& target) const {
    std::vector<std::pair<FederatedHPAKey, ScaleTargetKey>> known;
    for (const auto& [key, m] : memory)
      if (m.target) known.emplace_back(key, *m.target);
    return controllers_of(target, known);
  }

  // Every FederatedHPA that scales the same workload as `key`, itself
  // included; empty when it is the only one.
  std::vector<std::string> ambiguous(const FederatedHPAKey& key) const {
    const auto it = memory.find(key);
    if (it == memory.end() || !it->second.target) return {};
    auto controllers = controllers_of_target(*it->second.target);
    if (controllers.size() < 2) controllers.clear();
    return controllers;
  }

  // A FederatedHPA the watch reports, new or changed: one the loop does
  // not know yet is synced now, not up to a period later (Karmada's
  // controller reconciles a new object at once), and so is one whose spec
  // changed (a new metadata.generation); either then follows its own period.
  // New is a new uid: one created again under a known name is new.
  void sync_watched(nlohmann::json object) {
    if (options.active && !options.active()) return;
    auto key = key_from(object);
    if (!key || stopping) return;
    const auto known = memory.find(*key);
    const bool is_new = known == memory.end() || !known->second.last_sync;
    if (!is_new && generation_of(object) == known->second.generation) return;  // nothing new: its period holds
    auto& m = remember(*key, object);
    if (m.busy) {
      // Changed while its sync runs: again as soon as that one ends.
      if (!m.due_while_busy) count([](ControllerStats& s) { ++s.skipped_busy; });
      m.due_while_busy = true;
      m.generation = -1;  // whatever the next list says is a change
      return;
    }
    if (is_new) {
      count([](ControllerStats& s) { ++s.synced_on_create; });
      spdlog::info("autoscaler: {}: new FederatedHPA, synced at once", key->str());
    } else {
      spdlog::info("autoscaler: {}: spec changed (generation {}), synced at once", key->str(), generation_of(object));
    }
    start_sync(term, *key, std::move(object), options.monotonic->now());
    wake.notify();  // its next sync is a period from now
  }

  // Drops what is remembered of FederatedHPAs that two lists in a row did not
  // have (deleted): memory stays bounded under churn. Two, because an object
  // synced on creation may postdate the list a pass is working from. Until
  // then a deleted one still counts as scaling its target.
  void forget_deleted(const std::set<FederatedHPAKey>& listed) {
    for (auto it = memory.begin(); it != memory.end();) {
      if (!listed.count(it->first) && !it->second.busy && ++it->second.missed_lists >= 2) {
        const FederatedHPAKey gone = it->first;
        it = memory.erase(it);
        forget_gauges_unless_named(gone);
      } else {
        ++it;
      }
    }
  }

  // The replica gauges are per name: they stay while another object of that name is remembered.
  void forget_gauges_unless_named(const FederatedHPAKey& gone) {
    for (const auto& [key, m] : memory)
      if (key.same_name(gone)) return;
    monitor->forget(gone.namespace_name, gone.name);
  }

  // Ends the current term: every pass and sync in flight is cancelled, each
  // before its next write, and what was remembered of the statuses and
  // histories is dropped (another leader may write them meanwhile; the next
  // term reads the objects).
  void end_term() {
    term.cancel();
    for (auto& [key, m] : memory) {
      // Another replica leads now: its replicas are its to report.
      monitor->forget(key.namespace_name, key.name);
      m.status = {};
      m.history = {};
      m.status_known = false;
      m.seed_desired = false;
    }
  }

  // ---- one sync

  // One sync in a concurrency slot; the FederatedHPA is free for the next
  // pass however it ends. Objects come from the control plane: a malformed
  // one is a failed sync, never a stuck one.
  Task<void> sync_guarded(nlohmann::json object, FederatedHPAKey key) {
    struct Free {
      State* state;
      FederatedHPAKey key;
      ~Free() {
        auto& m = state->memory[key];
        m.busy = false;
        // Its next sync came due meanwhile (or it changed): the scheduler starts it now.
        if (m.due_while_busy) state->wake.notify();
        state->count([](ControllerStats& s) { ++s.syncs; });
      }
    } free{this, key};
    bool slot = false;
    bool cancelled = false;
    Outcome outcome;
    std::chrono::steady_clock::time_point started;
    try {
      co_await slots.acquire();
      slot = true;
      started = std::chrono::steady_clock::now();  // the reconcile, not the wait for a slot
      co_await sync(object, key, outcome);
    } catch (const std::exception& e) {
      if (async::is_cancellation(e)) {
        cancelled = true;
        count([](ControllerStats& s) { ++s.cancelled_syncs; });
        spdlog::debug("autoscaler: {}: sync cancelled (leadership ended or stopping)", key.str());
      } else {
        outcome.failed(SyncError::Internal);
        spdlog::warn("autoscaler: {}: {}", key.str(), e.what());
      }
    }
    if (slot) slots.release();
    // A sync cancelled with its leadership term is no reconciliation.
    if (slot && !cancelled)
      monitor->observe_reconciliation(outcome.action, outcome.error, std::chrono::steady_clock::now() - started);
  }

  // An Event. Its caller checked the cancellation just before (`co_await
  // async::throw_if_cancelled()`): a plain call, so that its string
  // temporaries are never part of a co_await expression (GCC 12 copies those
  // into the coroutine frame bitwise; transport/async.hpp).
  void record_event(const EventSubject& subject, const char* type, const std::string& reason,
                    const std::string& message) {
    control_plane.events->record({subject, type, reason, message});
  }

  // References to named objects: no temporary in the co_await expression (GCC 12).
  Task<void> write_status(const autoscaler::FederatedHPA& hpa, const FederatedHPAKey& key,
                          const autoscaler::FederatedHPAStatus& status, const autoscaler::ScalingHistory& history,
                          Outcome& outcome) {
    co_await async::throw_if_cancelled();
    auto& m = memory[key];
    m.status = status;
    m.history = history;
    m.seed_desired = false;
    auto document = nlohmann::json::parse(autoscaler::to_json(status).dump());
    auto written =
        co_await control_plane.federated_hpa_writer->update_status(hpa.namespace_name, hpa.name, std::move(document));
    if (!written) {
      outcome.failed(SyncError::Internal);
      spdlog::warn("autoscaler: {}: cannot update status: {}", key.str(), written.error().message);
      co_return;
    }
    // The write cannot be cancelled once sent: if the term ended meanwhile,
    // end_term() has already forgotten this object's gauges, and a follower
    // must not bring them back (two replicas would report the same series).
    co_await async::throw_if_cancelled();
    monitor->set_replicas(hpa.namespace_name, hpa.name, status.current_replicas, status.desired_replicas);
  }

  // A failure before the calculation: AbleToScale/ScalingActive False, an Event, the status written.
  // `condition` and `reason` are literals; `message` a named local (no
  // string temporary in a co_await expression: GCC 12, transport/async.hpp).
  Task<void> fail_early(const autoscaler::FederatedHPA& hpa, const EventSubject& subject, const FederatedHPAKey& key,
                        Outcome& outcome, SyncError error, const char* condition, const char* reason,
                        const std::string& message, std::optional<std::int32_t> scale_replicas = std::nullopt) {
    outcome.failed(error);
    auto status = memory[key].status;
    auto history = memory[key].history;
    if (memory[key].seed_desired && scale_replicas) status.desired_replicas = *scale_replicas;
    count([](ControllerStats& s) { ++s.errors; });
    autoscaler::set_condition(status.conditions, condition, ConditionStatus::False, reason, message, options.clock());
    co_await async::throw_if_cancelled();
    record_event(subject, "Warning", reason, message);
    spdlog::info("autoscaler: {}: {}: {}", key.str(), reason, message);
    co_await write_status(hpa, key, status, history, outcome);
  }

  Task<void> sync(const nlohmann::json& object, const FederatedHPAKey& key, Outcome& outcome) {
    const auto& meta = object.value("metadata", nlohmann::json::object());
    EventSubject subject{meta.value("namespace", ""), meta.value("name", ""), meta.value("uid", "")};
    if (auto& m = memory[key]; !m.status_known) {
      // The first sync of this term: the previous status is the object's.
      // The scale-event history is not on the object; upstream loses it
      // on a restart as well.
      auto observed = observed_status(object);
      m.status = std::move(observed.status);
      m.seed_desired = !observed.has_desired_replicas;
      m.history = {};
      m.status_known = true;
    }
    if (deleted_with_member_hpas(object)) {
      // Deleted while distributed: cleaned up as on the way back, then let go.
      const DistributedContext context = distributed_context();
      const bool finished = co_await finish_deletion(context, object, subject);
      if (!finished) outcome.failed(SyncError::Internal);
      co_return;
    }
    // A spec that cannot be decoded, or that the API server would have
    // refused (a control plane without Karmada's webhook stores it), is
    // never acted on, in either mode: ScalingActive False, reason
    // FailedConvertHPA (upstream's Event for an HPA it cannot use as
    // written), the message naming the field. The Event repeats at every
    // sync as one Event whose count grows (event_correlator.hpp).
    auto decoded = autoscaler::decode_federated_hpa(object);
    autoscaler::FederatedHPA hpa;
    if (decoded) hpa = std::move(*decoded);
    hpa.name = subject.name;
    hpa.namespace_name = subject.namespace_name;
    hpa.generation = meta.value("generation", std::int64_t{0});
    const std::optional<k8s::Error> unusable =
        decoded ? autoscaler::validate_federated_hpa_spec(hpa.spec) : std::optional<k8s::Error>(decoded.error());
    if (unusable) {
      const std::string message = unusable->message;
      co_await fail_early(hpa, subject, key, outcome, SyncError::Spec, "ScalingActive", "FailedConvertHPA", message);
      co_return;
    }
    const auto target = hpa.spec.scale_target_ref;

    // Its own period (autoscaling.fedmetrics.io/sync-period): when invalid,
    // the sync period stands (start_sync) and nothing is scaled until the
    // annotation is fixed.
    if (auto period = sync_period_of(object, options.sync_period); !period) {
      const std::string message = period.error().message;
      co_await fail_early(hpa, subject, key, outcome, SyncError::Spec, "ScalingActive", "InvalidSyncPeriod", message);
      co_return;
    }

    // The mode annotation (docs/distributed-mode.md). An invalid value is InvalidMode
    // (nothing scaled); distributed mode writes member HPAs instead of the
    // scale; a FederatedHPA back from distributed mode has its member HPAs
    // deleted before it is scaled centrally again.
    std::optional<std::string> mode_annotation;
    std::optional<std::string> distribution_annotation;
    if (const auto annotations = meta.value("annotations", nlohmann::json::object()); annotations.is_object()) {
      const auto it = annotations.find(std::string(autoscaler::kModeAnnotation));
      if (it != annotations.end() && it->is_string()) mode_annotation = it->get<std::string>();
      const auto shares = annotations.find(std::string(autoscaler::kDistributionAnnotation));
      if (shares != annotations.end()) distribution_annotation = shares->is_string() ? shares->get<std::string>() : "";
    }
    auto mode = autoscaler::parse_scaling_mode(mode_annotation);
    if (!mode) {
      const std::string message = mode.error().message;
      co_await fail_early(hpa, subject, key, outcome, SyncError::Spec, "ScalingActive", "InvalidMode", message);
      co_return;
    }
    const DistributedContext context = distributed_context();
    if (*mode == autoscaler::ScalingMode::Distributed) {
      if (!options.member_hpas) {
        const std::string message =
            "autoscaling.fedmetrics.io/mode is distributed, but this fedmetrics cannot write member HPAs; the "
            "FederatedHPA is not scaled centrally either. Remove the annotation, or set it to centralized, to "
            "scale it centrally";
        co_await fail_early(hpa, subject, key, outcome, SyncError::Internal, "ScalingActive",
                            "DistributedModeUnavailable", message);
        co_return;
      }
      if (const auto others = ambiguous(key); !others.empty()) {
        // No selector is read in this mode: the target names the pods.
        const std::string message = ambiguous_target_message(target.kind, target.name, others);
        co_await fail_early(hpa, subject, key, outcome, SyncError::Internal, "ScalingActive", "AmbiguousSelector",
                            message);
        co_return;
      }
      const bool synced = co_await sync_distributed(context, object, hpa, subject);
      if (!synced) outcome.failed(SyncError::Internal);
      memory[key].status_known = false;  // a later centralized sync starts from the object's status
      co_return;
    }
    if (distribution_annotation) {
      const bool left = co_await leave_distributed(context, object, hpa, *distribution_annotation);
      if (!left) {
        const std::string message =
            "leaving distributed mode: the member HPAs fedmetrics created could not all be deleted yet (a member "
            "is NotReady or unreachable); it is scaled centrally once they are";
        co_await fail_early(hpa, subject, key, outcome, SyncError::Internal, "ScalingActive", "LeavingDistributedMode",
                            message);
        co_return;
      }
      spdlog::info("autoscaler: {}: left distributed mode: scaled centrally again", key.str());
    }

    auto scale = co_await control_plane.scales->get_scale(hpa.namespace_name, target);
    if (!scale) {
      const std::string message =
          "the HPA controller was unable to get the target's current scale: " + scale.error().message;
      co_await fail_early(hpa, subject, key, outcome, SyncError::Internal, "AbleToScale", "FailedGetScale", message);
      co_return;
    }
    if (scale->selector.empty()) {
      const std::string message = "selector is required";
      co_await fail_early(hpa, subject, key, outcome, SyncError::Internal, "ScalingActive", "SelectorRequired", message,
                          scale->spec_replicas);
      co_return;
    }
    auto selector = k8s::LabelSelector::parse(scale->selector);
    if (!selector) {
      const std::string message =
          "couldn't convert selector into a corresponding internal selector object: " + selector.error().message;
      co_await fail_early(hpa, subject, key, outcome, SyncError::Internal, "ScalingActive", "InvalidSelector", message,
                          scale->spec_replicas);
      co_return;
    }
    // Upstream's AmbiguousSelector (horizontal.go, validateAndParseSelector):
    // while another FederatedHPA scales the same workload, neither scales it.
    if (const auto others = ambiguous(key); !others.empty()) {
      const std::string message = ambiguous_selector_message(scale->selector, others);
      co_await fail_early(hpa, subject, key, outcome, SyncError::Internal, "ScalingActive", "AmbiguousSelector",
                          message, scale->spec_replicas);
      co_return;
    }

    k8s::Expected<std::optional<std::vector<TargetCluster>>> hosts = std::optional<std::vector<TargetCluster>>();
    if (control_plane.placement) hosts = co_await control_plane.placement->target_clusters(hpa.namespace_name, target);
    if (!hosts) {
      // The binding could not be read this time: ask every member rather than fail the sync.
      spdlog::warn("autoscaler: {}: cannot read the target's ResourceBinding, asking every member: {}", key.str(),
                   hosts.error().message);
      hosts = std::optional<std::vector<TargetCluster>>();
    }

    // The pods and metrics of the members that host the target (all of them when that is not known).
    auto snapshot = members->snapshot();
    std::optional<std::set<std::string>> host_set;
    if (*hosts) {
      host_set.emplace();
      for (const auto& c : **hosts) host_set->insert(c.name);
    }
    aggregator::MemberList chosen;
    for (const auto& m : snapshot->members)
      if (!host_set || host_set->count(m->name())) chosen.push_back(m);
    auto deadline = std::chrono::steady_clock::now() + options.member_timeout;
    auto listing_pods = list_pods(chosen, hpa.namespace_name, *selector, deadline);
    auto listing = co_await std::move(listing_pods);
    add_members_not_asked(listing, *snapshot, host_set);
    for (const auto& f : listing.failed_members)
      spdlog::warn("autoscaler: {}: pods missing this sync (counted as missing pods): {}", key.str(), f);
    // Calibration and unread members (member_placement.hpp).
    auto placement = member_placement(*hosts, listing, scale->status_replicas);
    auto gathering = gather_metrics(*metrics, autoscaler::with_defaults(hpa.spec), hpa.namespace_name, *selector,
                                    listing.pods, host_set);
    auto gathered = co_await std::move(gathering);
    co_await decide(hpa, subject, key, *scale, listing.pods, gathered, placement, outcome);  // no temporaries (GCC 12)
  }

  // Upstream's metric computations: one per metric of the spec, its fetch
  // (the metrics are asked in parallel: each waited its own query) and its
  // share of the calculation; the proposal against the status's
  // currentReplicas, none when it failed.
  void observe_metric_computations(const autoscaler::SyncResult& result, const autoscaler::FederatedHPAStatus& previous,
                                   const std::vector<std::chrono::nanoseconds>& fetch_durations,
                                   std::chrono::steady_clock::duration calculation) {
    const auto& computed = result.metric_computations;
    if (computed.empty()) return;
    const auto share = calculation / static_cast<int>(computed.size());
    for (std::size_t i = 0; i < computed.size(); ++i) {
      const auto& c = computed[i];
      ScaleAction action = ScaleAction::None;
      SyncError error = SyncError::None;
      if (!c.replicas) error = c.invalid_spec ? SyncError::Spec : SyncError::Internal;
      else if (*c.replicas > previous.current_replicas) action = ScaleAction::ScaleUp;
      else if (*c.replicas < previous.current_replicas) action = ScaleAction::ScaleDown;
      const auto fetched = i < fetch_durations.size() ? fetch_durations[i] : std::chrono::nanoseconds(0);
      monitor->observe_metric_computation(action, error, c.type, fetched + share);
    }
  }

  Task<void> decide(const autoscaler::FederatedHPA& hpa, const EventSubject& subject, const FederatedHPAKey& key,
                    const Scale& scale, std::vector<autoscaler::Pod>& pods, GatheredMetrics& gathered,
                    const autoscaler::MemberPlacement& placement, Outcome& outcome) {
    co_await async::throw_if_cancelled();  // the remembered status belongs to the term; Events follow
    auto previous = memory[key].status;
    auto history = memory[key].history;
    // A FederatedHPA no controller has written a status for: it wants what
    // its target has until the calculation says otherwise, never 0.
    if (memory[key].seed_desired) previous.desired_replicas = scale.spec_replicas;
    autoscaler::SyncInput input;
    input.scale = {scale.spec_replicas, scale.status_replicas};
    input.pods = std::move(pods);
    input.metrics = std::move(gathered.snapshot);
    input.now = options.clock();
    input.placement = placement;
    const auto calculation_started = std::chrono::steady_clock::now();
    auto result = autoscaler::sync(hpa, previous, std::move(history), input, options.algorithm);
    observe_metric_computations(result, previous, gathered.fetch_durations,
                                std::chrono::steady_clock::now() - calculation_started);
    if (result.error) {
      outcome.failed(SyncError::Internal);  // upstream: metrics that failed, even when the valid ones scale
      const auto* active = autoscaler::find_condition(result.status.conditions, "ScalingActive");
      std::string reason = active != nullptr && active->status == ConditionStatus::False
                               ? active->reason
                               : "FailedComputeMetricsReplicas";
      count([](ControllerStats& s) { ++s.errors; });
      record_event(subject, "Warning", reason, *result.error);
    }
    // Members whose data was missing: the decision held any scale-down on it.
    if (result.incomplete) record_event(subject, "Warning", "IncompleteMetrics", *result.incomplete);
    if (!result.rescale) {
      co_await write_status(hpa, key, result.status, result.history, outcome);
      co_return;
    }

    auto updated = co_await control_plane.scales->update_scale(hpa.namespace_name, hpa.spec.scale_target_ref,
                                                               result.desired_replicas, scale.resource_version);
    if (!updated) {
      // A conflict or an outage: the status says so and the next sync tries again.
      auto failure = autoscaler::rescale_failed(result, previous, updated.error().message, options.clock());
      count([](ControllerStats& s) { ++s.errors; });
      outcome.failed(SyncError::Internal);
      co_await async::throw_if_cancelled();
      record_event(subject, "Warning", "FailedRescale",
                   "New size: " + std::to_string(result.desired_replicas) + "; reason: " + result.rescale_reason +
                       "; error: " + updated.error().message);
      co_await write_status(hpa, key, failure.status, failure.history, outcome);
      co_return;
    }
    // Upstream's action: the new scale was written.
    outcome.action = result.desired_replicas > result.current_replicas ? ScaleAction::ScaleUp : ScaleAction::ScaleDown;
    co_await async::throw_if_cancelled();
    record_event(subject, "Normal", "SuccessfulRescale",
                 "New size: " + std::to_string(result.desired_replicas) + "; reason: " + result.rescale_reason);
    spdlog::info("autoscaler: {}: {} -> {} replicas ({})", key.str(), result.current_replicas, result.desired_replicas,
                 result.rescale_reason);
    count([](ControllerStats& s) { ++s.rescales; });
    co_await write_status(hpa, key, result.status, result.history, outcome);
  }
};

HpaController::HpaController(async::Executor executor, ControlPlanePorts control_plane,
                             std::shared_ptr<aggregator::MetricsService> metrics,
                             std::shared_ptr<aggregator::MemberSource> members, ControllerOptions options)
    : state_(std::make_shared<State>(async::make_strand(executor), options.concurrent_syncs)) {
  state_->control_plane = std::move(control_plane);
  state_->metrics = std::move(metrics);
  state_->members = std::move(members);
  state_->options = std::move(options);
  if (!state_->options.monitor) state_->options.monitor = std::make_shared<NoAutoscalerMetrics>();
  state_->monitor = state_->options.monitor.get();
  if (!state_->options.monotonic) state_->options.monotonic = steady_clock();
  if (!state_->options.clock)
    state_->options.clock = [] {
      return std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now());
    };
}

HpaController::~HpaController() { stop(); }

void HpaController::start() {
  std::weak_ptr<State> weak = state_;
  state_->watch = state_->control_plane.federated_hpas->watch(state_->options.selector, [weak](nlohmann::json object) {
    auto state = weak.lock();
    if (!state) return;
    asio::post(state->strand, [weak, object = std::move(object)]() mutable {
      if (auto state = weak.lock()) state->sync_watched(std::move(object));
    });
  });
  asio::post(state_->strand, [weak] {
    auto state = weak.lock();
    if (state && !state->stopping) state->scope.spawn(state->schedule(), "autoscaler: the scheduler");
  });
}

void HpaController::sync_soon() {
  asio::post(state_->strand, [weak = std::weak_ptr<State>(state_)] {
    if (auto state = weak.lock()) {
      state->sync_requested = true;
      state->wake.notify();
    }
  });
}

async::Task<void> HpaController::shutdown() {
  if (state_->stopped.exchange(true)) co_return;
  // On the loop's strand; the caller resumes on its own executor.
  // Built first: no temporary in the co_await expression (GCC 12).
  auto op = asio::co_spawn(state_->strand, state_->drain(), asio::use_awaitable);
  co_await std::move(op);
}

void HpaController::stop() {
  if (state_->stopped.exchange(true)) return;
  state_->watch.reset();  // no sync_watched after this, and the watch ends off the runtime's threads
  // Every pass and sync ends before this returns: none touches what the owner is about to destroy.
  async::run_and_wait(state_->strand, [state = state_.get()] { return state->drain(); });
}

async::Task<void> HpaController::sync_all() {
  // Built first: no temporary in the co_await expression (GCC 12).
  auto op = asio::co_spawn(state_->strand, state_->pass_and_wait(), asio::use_awaitable);
  co_await std::move(op);
}

void HpaController::cancel_in_flight() {
  asio::post(state_->strand, [weak = std::weak_ptr<State>(state_)] {
    if (auto state = weak.lock()) state->end_term();
  });
}

ControllerStats HpaController::stats() const {
  std::lock_guard lock(state_->stats_mutex);
  return state_->stats;
}

}  // namespace fedmetrics::controller
