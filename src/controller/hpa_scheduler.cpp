// HpaController: each FederatedHPA on its own cadence; the passes that
// list them, the watch that reports new and changed ones, what is
// remembered of them, and the orphan sweep of distributed mode.

#include "controller/hpa_controller_state.hpp"

#include <spdlog/spdlog.h>

#include "controller/sleep_or_wake.hpp"

namespace fedmetrics::controller {

namespace {

namespace asio = boost::asio;
using async::Task;

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

Task<void> HpaController::State::schedule() {
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

Clock::Duration HpaController::State::until_due(Clock::TimePoint now) const {
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

void HpaController::State::spawn_pass(Which which, std::function<void()> done) {
  // A replica that does not lead syncs nothing (the scheduler asks too; sync_all may not).
  if (stopping || (options.active && !options.active())) {
    if (done) done();
    return;
  }
  listing = true;
  term.spawn(pass(which, std::move(done)), "autoscaler: a pass");
}

Task<void> HpaController::State::pass_and_wait() {
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

void HpaController::State::listed_all() {
  listing = false;
  wake.notify();
}

Task<void> HpaController::State::pass(Which which, std::function<void()> done) {
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

bool HpaController::State::due(const Memory& m, const nlohmann::json& object, Clock::TimePoint now) {
  if (!m.last_sync || m.due_while_busy) return true;
  if (generation_of(object) != m.generation) return true;
  return *m.last_sync + m.period <= now;
}

std::int64_t HpaController::State::generation_of(const nlohmann::json& object) {
  const auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return 0;
  const auto generation = meta->find("generation");
  return generation != meta->end() && generation->is_number_integer() ? generation->get<std::int64_t>() : 0;
}

void HpaController::State::start_sync(async::TaskGroup& group, const FederatedHPAKey& key, nlohmann::json object,
                                      Clock::TimePoint now) {
  auto& m = memory[key];
  m.busy = true;
  m.due_while_busy = false;
  m.last_sync = now;
  m.generation = generation_of(object);
  const auto period = sync_period_of(object, options.sync_period);
  m.period = period ? std::chrono::duration_cast<Clock::Duration>(*period) : Clock::Duration(options.sync_period);
  group.spawn(sync_guarded(std::move(object), key), "autoscaler: sync of " + key.str());
}

void HpaController::State::sync_watched(nlohmann::json object) {
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

void HpaController::State::forget_deleted(const std::set<FederatedHPAKey>& listed) {
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

void HpaController::State::forget_gauges_unless_named(const FederatedHPAKey& gone) {
  for (const auto& [key, m] : memory)
    if (key.same_name(gone)) return;
  monitor->forget(gone.namespace_name, gone.name);
}

void HpaController::State::end_term() {
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

std::optional<FederatedHPAKey> HpaController::State::key_from(const nlohmann::json& object) {
  auto key = federated_hpa_key(object);
  if (!key) spdlog::warn("autoscaler: a FederatedHPA without a name is left alone");
  return key;
}

HpaController::State::Memory& HpaController::State::remember(const FederatedHPAKey& key, const nlohmann::json& object) {
  // Only the objects of this name, which the map keeps together (ordered by
  // namespace, name, then uid): a pass remembers every FederatedHPA it
  // lists, and a walk over the whole memory for each one held the runtime's
  // thread for seconds at 10,000 of them, the Lease's renewals included.
  const FederatedHPAKey first_of_name{key.namespace_name, key.name, ""};
  for (auto it = memory.lower_bound(first_of_name); it != memory.end() && it->first.same_name(key);) {
    if (it->first != key) {
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

std::vector<std::string> HpaController::State::controllers_of_target(const ScaleTargetKey& target) const {
  std::vector<std::pair<FederatedHPAKey, ScaleTargetKey>> known;
  for (const auto& [key, m] : memory)
    if (m.target) known.emplace_back(key, *m.target);
  return controllers_of(target, known);
}

std::vector<std::string> HpaController::State::ambiguous(const FederatedHPAKey& key) const {
  const auto it = memory.find(key);
  if (it == memory.end() || !it->second.target) return {};
  auto controllers = controllers_of_target(*it->second.target);
  if (controllers.size() < 2) controllers.clear();
  return controllers;
}

bool HpaController::State::sweep_due() const {
  if (!options.member_hpas || sweeping || stopping) return false;
  return !last_sweep || options.monotonic->now() - *last_sweep >= options.orphan_sweep_period;
}

Task<void> HpaController::State::sweep() {
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

DistributedContext HpaController::State::distributed_context() {
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

}  // namespace fedmetrics::controller
