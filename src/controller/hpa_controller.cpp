#include "fedmetrics/controller/hpa_controller.hpp"

#include <deque>
#include <set>

#include <spdlog/spdlog.h>

#include "fedmetrics/controller/federated_hpa_status.hpp"
#include "fedmetrics/controller/metrics_gatherer.hpp"

namespace fedmetrics::controller {

namespace {

using autoscaler::ConditionStatus;
using Finished = std::function<void()>;

std::string key_of(const std::string& ns, const std::string& name) { return ns + "/" + name; }

}  // namespace

struct HpaController::State : std::enable_shared_from_this<HpaController::State> {
  std::shared_ptr<ControlPlane> control_plane;
  std::shared_ptr<aggregator::MetricsService> metrics;
  std::shared_ptr<aggregator::MemberSource> members;
  ControllerOptions options;

  // What the controller remembers between syncs of one FederatedHPA: its last
  // status and the recommendation and scale-event history (upstream keeps
  // the history in memory too). The status is remembered only within one
  // leadership term: the first sync of a term starts from the object's
  // .status, as upstream's reconcile always does, so that a restart or a
  // change of leader keeps lastScaleTime, the conditions' lastTransitionTime
  // and desiredReplicas.
  struct Memory {
    autoscaler::FederatedHPAStatus status;
    autoscaler::ScalingHistory history;
    bool status_known = false;  // `status` was read or written in the current term
    bool seed_desired = false;  // the object had no desiredReplicas: the target's scale stands for it
    std::uint64_t term = 0;     // the term the sync in flight began in
    bool busy = false;
    int missed_lists = 0;  // consecutive lists without it
  };
  mutable std::mutex mutex;
  std::condition_variable wake;
  bool sync_requested = false;  // guarded by mutex: sync_soon() was called
  std::map<std::string, Memory> memory;
  // Bumped when this replica stops leading: a sync begun in an older term
  // writes nothing more (client-go cancels the leader's context).
  std::uint64_t term = 0;
  std::deque<std::function<void(Finished)>> queue;
  std::size_t running = 0;
  bool stopping = false;
  ControllerStats stats;

  // Runs `task` now or when one of the concurrent_syncs slots frees up.
  void submit(std::function<void(Finished)> task) {
    {
      std::lock_guard lock(mutex);
      if (running >= std::max<std::size_t>(1, options.concurrent_syncs)) {
        queue.push_back(std::move(task));
        return;
      }
      ++running;
    }
    run(std::move(task));
  }

  void run(std::function<void(Finished)> task) {
    task([self = shared_from_this()] {
      std::function<void(Finished)> next;
      {
        std::lock_guard lock(self->mutex);
        if (self->queue.empty()) {
          --self->running;
          return;
        }
        next = std::move(self->queue.front());
        self->queue.pop_front();
      }
      self->run(std::move(next));
    });
  }

  void sync_all(std::function<void()> done) {
    auto self = shared_from_this();
    control_plane->list_federated_hpas(options.selector, [self, done](k8s::Expected<std::vector<nlohmann::json>> list) {
      if (!list) {
        spdlog::warn("autoscaler: cannot list FederatedHPAs: {}", list.error().message);
        if (done) done();
        return;
      }
      struct Pass {
        std::mutex mutex;
        std::size_t pending = 1;
        std::function<void()> done;
        void finish() {
          bool last = false;
          {
            std::lock_guard lock(mutex);
            last = --pending == 0;
          }
          if (last && done) done();
        }
      };
      auto pass = std::make_shared<Pass>();
      pass->done = done;
      std::set<std::string> listed;
      for (auto& object : *list) {
        std::string key = key_from(object);
        if (key.empty()) continue;
        listed.insert(key);
        {
          std::lock_guard lock(self->mutex);
          auto& m = self->memory[key];
          m.missed_lists = 0;
          if (m.busy || self->stopping) {
            ++self->stats.skipped_busy;
            continue;
          }
          m.busy = true;
          ++pass->pending;
        }
        self->submit_sync(std::move(object), key, [pass] { pass->finish(); });
      }
      self->forget_deleted(listed);
      pass->finish();
    });
  }

  static std::string key_from(const nlohmann::json& object) {
    try {
      const auto& meta = object.value("metadata", nlohmann::json::object());
      return key_of(meta.value("namespace", ""), meta.value("name", ""));
    } catch (const std::exception& e) {
      spdlog::warn("autoscaler: a FederatedHPA without a usable name: {}", e.what());
      return {};
    }
  }

  // Syncs `object`, already marked busy in memory, when a concurrency slot is free.
  void submit_sync(nlohmann::json object, const std::string& key, std::function<void()> after) {
    auto self = shared_from_this();
    submit([self, object = std::move(object), key, after = std::move(after)](Finished finished) {
      self->sync_one(object, key, [self, key, after, finished] {
        {
          std::lock_guard lock(self->mutex);
          self->memory[key].busy = false;
          ++self->stats.syncs;
        }
        finished();
        if (after) after();
      });
    });
  }

  // A FederatedHPA the watch reports as new: when the loop does not know it
  // yet, synced now, not up to a period later (Karmada's controller
  // reconciles a new object at once). Then it follows the ticks like every other.
  void sync_new(nlohmann::json object) {
    if (options.active && !options.active()) return;
    std::string key = key_from(object);
    if (key.empty()) return;
    {
      std::lock_guard lock(mutex);
      if (stopping || memory.count(key)) return;  // already known: the ticks have it
      memory[key].busy = true;
      ++stats.synced_on_create;
    }
    spdlog::info("autoscaler: {}: new FederatedHPA, synced at once", key);
    submit_sync(std::move(object), key, nullptr);
  }

  // Drops what is remembered of FederatedHPAs that two lists in a row did not
  // have (deleted): memory stays bounded under churn. Two, because an object
  // synced on creation may postdate the list a pass is working from.
  void forget_deleted(const std::set<std::string>& listed) {
    std::lock_guard lock(mutex);
    for (auto it = memory.begin(); it != memory.end();) {
      if (!listed.count(it->first) && !it->second.busy && ++it->second.missed_lists >= 2) it = memory.erase(it);
      else ++it;
    }
  }

  // Whether the sync of `key` in flight may still write: its term is the
  // current one and this replica still leads. Checked before every write
  // (scale, status, Event), so that losing the lease cancels a sync before
  // its next write rather than after it.
  bool may_write(const std::string& key) {
    std::lock_guard lock(mutex);
    auto it = memory.find(key);
    const bool ok = it != memory.end() && it->second.term == term && (!options.active || options.active());
    if (!ok) ++stats.cancelled_writes;
    return ok;
  }

  // Ends the current term: every sync in flight stops before its next
  // write, and what was remembered of the statuses and histories is dropped
  // (another leader may write them meanwhile; the next term reads the objects).
  void cancel_in_flight() {
    std::lock_guard lock(mutex);
    ++term;
    for (auto& [key, m] : memory) {
      m.status = {};
      m.history = {};
      m.status_known = false;
      m.seed_desired = false;
    }
  }

  void record_event(const std::string& key, const EventSubject& subject, const std::string& type,
                    const std::string& reason, const std::string& message) {
    if (may_write(key)) control_plane->record_event(subject, type, reason, message);
  }

  void write_status(const autoscaler::FederatedHPA& hpa, const std::string& key, autoscaler::FederatedHPAStatus status,
                    autoscaler::ScalingHistory history, Finished finished) {
    if (!may_write(key)) return finished();
    {
      std::lock_guard lock(mutex);
      auto& m = memory[key];
      m.status = status;
      m.history = std::move(history);
      m.seed_desired = false;
    }
    control_plane->update_status(hpa.namespace_name, hpa.name, nlohmann::json::parse(autoscaler::to_json(status).dump()),
                                 [key, finished](k8s::Expected<bool> ok) {
                                   if (!ok) spdlog::warn("autoscaler: {}: cannot update status: {}", key, ok.error().message);
                                   finished();
                                 });
  }

  // A failure before the calculation: AbleToScale/ScalingActive False, an Event, the status written.
  void fail_early(const autoscaler::FederatedHPA& hpa, const EventSubject& subject, const std::string& key,
                  const std::string& condition, const std::string& reason, const std::string& message,
                  Finished finished, std::optional<std::int32_t> scale_replicas = std::nullopt) {
    autoscaler::FederatedHPAStatus status;
    autoscaler::ScalingHistory history;
    {
      std::lock_guard lock(mutex);
      status = memory[key].status;
      history = memory[key].history;
      if (memory[key].seed_desired && scale_replicas) status.desired_replicas = *scale_replicas;
      ++stats.errors;
    }
    autoscaler::set_condition(status.conditions, condition, ConditionStatus::False, reason, message, options.clock());
    record_event(key, subject, "Warning", reason, message);
    spdlog::info("autoscaler: {}: {}: {}", key, reason, message);
    write_status(hpa, key, std::move(status), std::move(history), std::move(finished));
  }

  // Objects come from the control plane: a malformed one is a failed sync, never a stuck one.
  void sync_one(const nlohmann::json& object, const std::string& key, Finished finished) {
    try {
      sync_one_unguarded(object, key, finished);
    } catch (const std::exception& e) {
      spdlog::warn("autoscaler: {}: {}", key, e.what());
      finished();
    }
  }

  void sync_one_unguarded(const nlohmann::json& object, const std::string& key, Finished finished) {
    auto self = shared_from_this();
    const auto& meta = object.value("metadata", nlohmann::json::object());
    EventSubject subject{meta.value("namespace", ""), meta.value("name", ""), meta.value("uid", "")};
    {
      std::lock_guard lock(mutex);
      auto& m = memory[key];
      m.term = term;
      if (!m.status_known) {
        // The first sync of this term: the previous status is the object's.
        // The scale-event history is not on the object; upstream loses it
        // on a restart as well.
        auto observed = observed_status(object);
        m.status = std::move(observed.status);
        m.seed_desired = !observed.has_desired_replicas;
        m.history = {};
        m.status_known = true;
      }
    }
    auto decoded = autoscaler::decode_federated_hpa(object);
    if (!decoded) {
      record_event(key, subject, "Warning", "FailedConvertHPA", decoded.error().message);
      spdlog::warn("autoscaler: {}: {}", key, decoded.error().message);
      return finished();
    }
    auto hpa = std::make_shared<autoscaler::FederatedHPA>(std::move(*decoded));
    hpa->name = subject.name;
    hpa->namespace_name = subject.namespace_name;
    hpa->generation = meta.value("generation", std::int64_t{0});
    const auto target = hpa->spec.scale_target_ref;
    control_plane->get_scale(hpa->namespace_name, target, [self, hpa, subject, key, finished](k8s::Expected<Scale> scale) {
      if (!scale)
        return self->fail_early(*hpa, subject, key, "AbleToScale", "FailedGetScale",
                                "the HPA controller was unable to get the target's current scale: " + scale.error().message,
                                finished);
      if (scale->selector.empty())
        return self->fail_early(*hpa, subject, key, "ScalingActive", "SelectorRequired",
                                "selector is required", finished, scale->spec_replicas);
      auto selector = k8s::LabelSelector::parse(scale->selector);
      if (!selector)
        return self->fail_early(*hpa, subject, key, "ScalingActive", "InvalidSelector",
                                "couldn't convert selector into a corresponding internal selector object: " +
                                    selector.error().message,
                                finished, scale->spec_replicas);
      self->control_plane->get_target_clusters(
          hpa->namespace_name, hpa->spec.scale_target_ref,
          [self, hpa, subject, key, finished, scale = *scale, selector = *selector](
              k8s::Expected<std::optional<std::vector<TargetCluster>>> hosts) {
            if (!hosts) {
              // The binding could not be read this time: ask every member rather than fail the sync.
              spdlog::warn("autoscaler: {}: cannot read the target's ResourceBinding, asking every member: {}", key,
                           hosts.error().message);
              hosts = std::optional<std::vector<TargetCluster>>();
            }
            self->sync_on_members(hpa, subject, key, scale, selector, std::move(*hosts), finished);
          });
    });
  }

  // The pods and metrics of the members that host the target (all of them when that is not known).
  void sync_on_members(std::shared_ptr<autoscaler::FederatedHPA> hpa, const EventSubject& subject, const std::string& key,
                       const Scale& scale, const k8s::LabelSelector& selector,
                       std::optional<std::vector<TargetCluster>> hosts, Finished finished) {
    auto self = shared_from_this();
    auto snapshot = members->snapshot();
    const auto* all = &snapshot->members;
    aggregator::MemberList chosen;
    std::optional<std::set<std::string>> host_set;
    if (hosts) {
      host_set.emplace();
      for (const auto& c : *hosts) host_set->insert(c.name);
    }
    for (const auto& m : *all)
      if (!host_set || host_set->count(m->name())) chosen.push_back(m);
    auto deadline = std::chrono::steady_clock::now() + options.member_timeout;
    list_pods(chosen, hpa->namespace_name, selector, deadline,
              [self, hpa, subject, key, finished, scale, selector, host_set, hosts, snapshot](PodListing listing) {
                add_members_not_asked(listing, *snapshot, host_set);
                for (const auto& f : listing.failed_members)
                  spdlog::warn("autoscaler: {}: pods missing this sync (counted as missing pods): {}", key, f);
                // Calibration and unread members (member_placement.hpp).
                auto placement = member_placement(hosts, listing, scale.status_replicas);
                auto pods = std::make_shared<std::vector<autoscaler::Pod>>(std::move(listing.pods));
                gather_metrics(*self->metrics, autoscaler::with_defaults(hpa->spec), hpa->namespace_name, selector,
                               *pods, host_set,
                               [self, hpa, subject, key, finished, scale, pods,
                                placement = std::move(placement)](autoscaler::MetricsSnapshot snapshot) {
                                 self->decide(*hpa, subject, key, scale, std::move(*pods), std::move(snapshot),
                                              placement, finished);
                               });
              });
  }

  void decide(const autoscaler::FederatedHPA& hpa, const EventSubject& subject, const std::string& key,
              const Scale& scale, std::vector<autoscaler::Pod> pods, autoscaler::MetricsSnapshot snapshot,
              const autoscaler::MemberPlacement& placement, Finished finished) {
    autoscaler::FederatedHPAStatus previous;
    autoscaler::ScalingHistory history;
    {
      std::lock_guard lock(mutex);
      previous = memory[key].status;
      history = memory[key].history;
      // A FederatedHPA no controller has written a status for: it wants what
      // its target has until the calculation says otherwise, never 0.
      if (memory[key].seed_desired) previous.desired_replicas = scale.spec_replicas;
    }
    autoscaler::SyncInput input;
    input.scale = {scale.spec_replicas, scale.status_replicas};
    input.pods = std::move(pods);
    input.metrics = std::move(snapshot);
    input.now = options.clock();
    input.placement = placement;
    auto result = std::make_shared<autoscaler::SyncResult>(
        autoscaler::sync(hpa, previous, std::move(history), input, options.algorithm));
    if (result->error) {
      const auto* active = autoscaler::find_condition(result->status.conditions, "ScalingActive");
      std::string reason = active != nullptr && active->status == ConditionStatus::False ? active->reason
                                                                                          : "FailedComputeMetricsReplicas";
      record_event(key, subject, "Warning", reason, *result->error);
      std::lock_guard lock(mutex);
      ++stats.errors;
    }
    // Members whose data was missing: the decision held any scale-down on it.
    if (result->incomplete) record_event(key, subject, "Warning", "IncompleteMetrics", *result->incomplete);
    if (!result->rescale) return write_status(hpa, key, result->status, result->history, finished);
    if (!may_write(key)) return finished();

    auto self = shared_from_this();
    auto hpa_copy = std::make_shared<autoscaler::FederatedHPA>(hpa);
    control_plane->update_scale(
        hpa.namespace_name, hpa.spec.scale_target_ref, result->desired_replicas, scale.resource_version,
        [self, hpa_copy, subject, key, finished, result, previous](k8s::Expected<Scale> updated) {
          if (!updated) {
            // A conflict or an outage: the status says so and the next sync tries again.
            auto failure = autoscaler::rescale_failed(*result, previous, updated.error().message, self->options.clock());
            self->record_event(key, subject, "Warning", "FailedRescale",
                                              "New size: " + std::to_string(result->desired_replicas) +
                                                  "; reason: " + result->rescale_reason +
                                                  "; error: " + updated.error().message);
            {
              std::lock_guard lock(self->mutex);
              ++self->stats.errors;
            }
            return self->write_status(*hpa_copy, key, std::move(failure.status), std::move(failure.history), finished);
          }
          self->record_event(key, subject, "Normal", "SuccessfulRescale",
                                            "New size: " + std::to_string(result->desired_replicas) +
                                                "; reason: " + result->rescale_reason);
          spdlog::info("autoscaler: {}: {} -> {} replicas ({})", key, result->current_replicas,
                       result->desired_replicas, result->rescale_reason);
          {
            std::lock_guard lock(self->mutex);
            ++self->stats.rescales;
          }
          self->write_status(*hpa_copy, key, result->status, result->history, finished);
        });
  }
};

HpaController::HpaController(std::shared_ptr<ControlPlane> control_plane,
                             std::shared_ptr<aggregator::MetricsService> metrics,
                             std::shared_ptr<aggregator::MemberSource> members, ControllerOptions options)
    : state_(std::make_shared<State>()) {
  state_->control_plane = std::move(control_plane);
  state_->metrics = std::move(metrics);
  state_->members = std::move(members);
  state_->options = std::move(options);
  if (!state_->options.clock)
    state_->options.clock = [] {
      return std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now());
    };
}

HpaController::~HpaController() { stop(); }

void HpaController::start() {
  std::weak_ptr<State> weak = state_;
  state_->control_plane->watch_federated_hpas(state_->options.selector, [weak](nlohmann::json object) {
    if (auto state = weak.lock()) state->sync_new(std::move(object));
  });
  thread_ = std::thread([state = state_] {
    // A fixed cadence: ticks are sync_period apart whatever a pass costs.
    auto next = std::chrono::steady_clock::now();
    bool was_active = false;
    std::unique_lock lock(state->mutex);
    while (!state->stopping) {
      lock.unlock();
      const bool active = !state->options.active || state->options.active();
      // Leadership lost between two ticks without cancel_in_flight() (no
      // callback wired): the term ends here at the latest.
      if (was_active && !active) state->cancel_in_flight();
      was_active = active;
      if (active) state->sync_all(nullptr);
      lock.lock();
      next += state->options.sync_period;
      state->wake.wait_until(lock, next, [&] { return state->stopping || state->sync_requested; });
      if (state->sync_requested) {
        state->sync_requested = false;
        next = std::chrono::steady_clock::now();
      }
    }
  });
}

void HpaController::sync_soon() {
  {
    std::lock_guard lock(state_->mutex);
    state_->sync_requested = true;
  }
  state_->wake.notify_all();
}

void HpaController::stop() {
  {
    std::lock_guard lock(state_->mutex);
    state_->stopping = true;
  }
  state_->wake.notify_all();
  if (thread_.joinable()) thread_.join();
  state_->control_plane->stop_watching();
}

void HpaController::sync_all(std::function<void()> done) { state_->sync_all(std::move(done)); }

void HpaController::cancel_in_flight() { state_->cancel_in_flight(); }

ControllerStats HpaController::stats() const {
  std::lock_guard lock(state_->mutex);
  return state_->stats;
}

}  // namespace fedmetrics::controller
