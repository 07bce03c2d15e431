#include "fedmetrics/controller/cron_controller.hpp"

#include "fedmetrics/transport/async.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>

#include <spdlog/spdlog.h>

#include "fedmetrics/autoscaler/cron_federated_hpa.hpp"
#include "fedmetrics/autoscaler/cron_plan.hpp"
#include "fedmetrics/autoscaler/distributor.hpp"
#include "controller/sleep_or_wake.hpp"

namespace fedmetrics::controller {

namespace {

namespace asio = boost::asio;
using async::Task;
using autoscaler::CronApplied;
using autoscaler::CronExecution;
using autoscaler::CronRule;
using autoscaler::CronRuleHistory;
using nlohmann::json;

constexpr int kAttempts = 3;  // a conflicting write is read again and retried this often

std::string meta_string(const json& object, const char* field) {
  const auto meta = object.value("metadata", json::object());
  if (!meta.is_object()) return {};
  const auto it = meta.find(field);
  return it != meta.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string describe(const CronApplied& applied) {
  std::string out;
  auto add = [&](const char* what, const std::optional<std::int32_t>& v) {
    if (v) out += (out.empty() ? "" : ", ") + std::string(what) + " " + std::to_string(*v);
  };
  add("minReplicas", applied.min_replicas);
  add("maxReplicas", applied.max_replicas);
  add("replicas", applied.replicas);
  return out;
}

}  // namespace

void DurationHistogram::observe(double seconds) {
  for (std::size_t i = 0; i < kBuckets; ++i) {
    if (seconds <= upper_bound(i)) {
      ++buckets[i];
      break;
    }
  }
  ++count;
  sum += seconds;
}

struct CronController::State {
  State(async::Strand s, ControlPlanePorts ports, CronControllerOptions o)
      : crons(std::move(ports.crons)),
        federated_hpas(std::move(ports.federated_hpas)),
        federated_hpa_writer(std::move(ports.federated_hpa_writer)),
        scales(std::move(ports.scales)),
        events(std::move(ports.events)),
        options(std::move(o)),
        strand(std::move(s)),
        scope(strand),
        term(strand),
        wakeup(strand) {}

  std::shared_ptr<CronStore> crons;
  std::shared_ptr<FederatedHPAStore> federated_hpas;
  std::shared_ptr<FederatedHPAWriter> federated_hpa_writer;
  std::shared_ptr<ScaleClient> scales;
  std::shared_ptr<EventSink> events;
  std::unique_ptr<Watch> watch;  // of the CronFederatedHPAs, from start() to stop()
  CronControllerOptions options;
  async::Strand strand;
  async::TaskGroup scope;  // the loop, from start() to shutdown()
  async::TaskGroup term;   // the pass in flight, cancelled when the lease is lost
  async::Wakeup wakeup;
  bool stopping = false;             // on the strand
  std::atomic<bool> stopped{false};  // shutdown() or stop() ran (once)

  // On the strand: the histories as this term last wrote them, per object
  // (namespace/name) and uid. Within a term the loop is the only writer, and
  // a status write that failed must not let a run repeat.
  struct Memory {
    std::string uid;
    std::vector<CronRuleHistory> histories;
  };
  std::map<std::string, Memory> memory;
  // Per object and rule, what was last reported of it (a miss's time, an
  // invalid rule's reason), so that a pass does not report it again.
  std::map<std::pair<std::string, std::string>, std::string> noted;
  // Each object's own cadence, as the FederatedHPA loop's: checked when it is
  // new (or a new uid) or changed (a new metadata.generation), just after its
  // earliest next firing, and at the latest a resync period after its last
  // check, rather than every object whenever one of them is due.
  struct Cadence {
    std::string uid;
    std::int64_t generation = 0;
    Clock::TimePoint next_check{};
  };
  std::map<std::string, Cadence> cadence;
  // A list at least every resync period finds the objects no watch reported.
  std::optional<Clock::TimePoint> last_list;

  mutable std::mutex stats_mutex;
  CronControllerStats stats;
  template <class Change>
  void count(Change change) {
    std::lock_guard lock(stats_mutex);
    change(stats);
  }

  bool active() const { return !options.active || options.active(); }

  // ---- the loop

  static Task<void> run(State& self) {
    for (;;) {
      if (self.active()) {
        self.term.spawn(pass(self, Which::Due), "cron: a pass");
        co_await self.term.join();
      }
      // Until the next object is due, or at once when a watch saw a change.
      const auto wait = self.until_next_pass();
      co_await sleep_or_wake(self.strand, self.options.monotonic, wait, self.wakeup);
      co_await async::throw_if_cancelled();  // stop()
    }
  }

  // Until the next object's check, or the next list (at most the resync period).
  Clock::Duration until_next_pass() const {
    const auto now = options.monotonic->now();
    auto next = (last_list ? *last_list : now) + options.resync_period;
    for (const auto& [key, c] : cadence) next = std::min(next, c.next_check);
    return std::max(next - now, Clock::Duration::zero());
  }

  static std::int64_t generation_of(const json& object) {
    const auto meta = object.value("metadata", json::object());
    const auto it = meta.is_object() ? meta.find("generation") : meta.end();
    return it != meta.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
  }

  bool check_due(const std::string& key, const json& object, Clock::TimePoint now) const {
    const auto it = cadence.find(key);
    if (it == cadence.end() || it->second.uid != meta_string(object, "uid")) return true;
    return it->second.generation != generation_of(object) || it->second.next_check <= now;
  }

  // `object` was checked at `now`: next a resync period later, or a little
  // after its earliest next firing (previous(now) must include it) when that is sooner.
  void checked(const std::string& key, const json& object, Clock::TimePoint now) {
    Cadence c{meta_string(object, "uid"), generation_of(object), now + options.resync_period};
    if (auto m = memory.find(key); m != memory.end() && m->second.uid == c.uid) {
      const auto wall = options.clock();
      for (const auto& h : m->second.histories) {
        if (!h.next_execution_time) continue;
        const auto to_firing =
            std::chrono::duration_cast<Clock::Duration>(*h.next_execution_time - wall) + std::chrono::milliseconds(5);
        c.next_check = std::min(c.next_check, now + std::max(to_firing, Clock::Duration::zero()));
      }
    }
    cadence[key] = std::move(c);
  }

  enum class Which { Due, All };  // the objects a pass checks

  static Task<void> pass(State& self, Which which) {
    self.last_list = self.options.monotonic->now();
    auto listed = co_await self.crons->list(self.options.selector);
    co_await async::throw_if_cancelled();
    if (!listed) {
      spdlog::warn("cron: cannot list CronFederatedHPAs: {}", listed.error().message);
      co_return;
    }
    std::set<std::string> seen;
    for (const auto& object : *listed) {
      const std::string key = meta_string(object, "namespace") + "/" + meta_string(object, "name");
      seen.insert(key);
      const auto now = self.options.monotonic->now();
      if (which == Which::Due && !self.check_due(key, object, now)) continue;
      co_await reconcile(self, object);  // one co_await a turn (GCC 12)
      self.checked(key, object, now);
    }
    std::erase_if(self.memory, [&](const auto& entry) { return !seen.count(entry.first); });
    std::erase_if(self.noted, [&](const auto& entry) { return !seen.count(entry.first.first); });
    std::erase_if(self.cadence, [&](const auto& entry) { return !seen.count(entry.first); });
    self.count([](CronControllerStats& s) { ++s.passes; });
  }

  // ---- one object

  enum class RuleOutcome { None, Success, Error };  // a rule that ran (or was found invalid), or nothing to do

  void observe(DurationHistogram CronControllerStats::*histogram, std::chrono::steady_clock::time_point started) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    count([&](CronControllerStats& s) { (s.*histogram).observe(seconds); });
  }

  static Task<void> reconcile(State& self, const json& object) {
    const auto started = std::chrono::steady_clock::now();
    bool failed = false;
    co_await reconcile_object(self, object, failed);
    self.observe(failed ? &CronControllerStats::process_error : &CronControllerStats::process_success, started);
  }

  static Task<void> reconcile_object(State& self, const json& object, bool& failed) {
    const std::string ns = meta_string(object, "namespace");
    const std::string name = meta_string(object, "name");
    const std::string key = ns + "/" + name;
    EventSubject subject{ns, name, meta_string(object, "uid"), "CronFederatedHPA"};
    auto cron = autoscaler::decode_cron_federated_hpa(object);
    if (!cron) {
      failed = true;
      spdlog::warn("cron: {}: {}", key, cron.error().message);
      co_await async::throw_if_cancelled();
      self.events->record({subject, "Warning", "InvalidCronFederatedHPA", cron.error().message});
      co_return;
    }
    const auto stored = autoscaler::decode_execution_histories(object);
    // What this term wrote wins over the listed status (a write that failed
    // must not let a run repeat); a new object or a new term starts from the status.
    std::vector<CronRuleHistory> base = stored;
    if (auto it = self.memory.find(key); it != self.memory.end() && it->second.uid == subject.uid)
      base = it->second.histories;
    auto histories = autoscaler::histories_for(*cron, std::move(base));
    for (std::size_t i = 0; i < cron->rules.size(); ++i) {
      const auto rule_started = std::chrono::steady_clock::now();
      const RuleOutcome outcome =
          co_await reconcile_rule(self, *cron, i, histories, subject);  // one co_await a turn (GCC 12)
      if (outcome == RuleOutcome::Error) failed = true;
      if (outcome != RuleOutcome::None)
        self.observe(
            outcome == RuleOutcome::Error ? &CronControllerStats::rule_error : &CronControllerStats::rule_success,
            rule_started);
    }
    co_await async::throw_if_cancelled();  // the term ended: its memory is gone, the next term reads the status
    self.memory[key] = Memory{subject.uid, histories};
    const json status = autoscaler::cron_status_json(histories);
    if (status == autoscaler::cron_status_json(stored)) co_return;
    const bool written = co_await write_status(self, subject, histories);
    if (!written) failed = true;
  }

  // The object's status from `histories`; false (logged) when it could not be written.
  static Task<bool> write_status(State& self, const EventSubject& subject,
                                 const std::vector<CronRuleHistory>& histories) {
    const json status = autoscaler::cron_status_json(histories);
    co_await async::throw_if_cancelled();
    auto written = co_await self.crons->update_status(subject.namespace_name, subject.name, status);
    if (!written)
      spdlog::warn("cron: {}/{}: cannot update status: {}", subject.namespace_name, subject.name,
                   written.error().message);
    co_return static_cast<bool>(written);
  }

  // Rule `index` of `cron`; `histories` are the object's (the claim before a
  // run writes them all).
  static Task<RuleOutcome> reconcile_rule(State& self, const autoscaler::CronFederatedHPA& cron, std::size_t index,
                                          std::vector<CronRuleHistory>& histories, const EventSubject& subject) {
    const CronRule& rule = cron.rules[index];
    CronRuleHistory& history = histories[index];
    const auto now = self.options.clock();
    const auto plan = autoscaler::plan_cron_rule(rule, history, now, self.options.missed_run_deadline,
                                                 self.options.default_time_zone);
    const std::string key = subject.namespace_name + "/" + subject.name;
    const auto watermark = history.next_execution_time;
    history.next_execution_time = plan.next;
    const std::string noted = self.noted[{key, rule.name}];
    if (plan.invalid) {
      // Recorded and reported once per reason, not at every pass (also with
      // failedHistoryLimit 0, which keeps no failure to compare with).
      const bool recorded = !history.failed.empty() && history.failed.front().message == *plan.invalid;
      if (recorded || noted == *plan.invalid) co_return RuleOutcome::None;
      autoscaler::record_failure(history, rule, CronExecution{now, now, {}, *plan.invalid});
      co_await async::throw_if_cancelled();
      self.noted[{key, rule.name}] = *plan.invalid;  // after the last point this pass could end
      spdlog::warn("cron: {}: rule {}: {}", key, rule.name, *plan.invalid);
      self.events->record({subject, "Warning", "InvalidRule", "rule " + rule.name + ": " + *plan.invalid});
      co_return RuleOutcome::Error;
    }
    if (plan.missed) {
      const std::string missed = k8s::format_time(*plan.missed);
      if (noted != missed) {
        self.noted[{key, rule.name}] = missed;
        spdlog::warn("cron: {}: rule {}: the run of {} was missed by more than --cron-missed-run-deadline; skipped",
                     key, rule.name, k8s::format_time(*plan.missed));
        self.count([](CronControllerStats& s) { ++s.missed_runs; });
      }
      co_return RuleOutcome::None;
    }
    if (!plan.run) co_return RuleOutcome::None;
    const k8s::Timestamp schedule_time = *plan.run;
    // The claim: nextExecutionTime moved past this firing is written before
    // the run, so that no replica runs it again whatever happens next (this
    // one losing the lease mid-run, a status write failing after it). Not
    // written: not run; the next pass tries again within the deadline.
    const bool claimed = co_await write_status(self, subject, histories);
    if (!claimed) {
      history.next_execution_time = watermark;  // still due at the next pass
      co_return RuleOutcome::None;
    }
    self.memory[key] = Memory{subject.uid, histories};
    auto applied = co_await execute(self, cron, rule);
    const auto finished = self.options.clock();
    // Recorded before anything else can stop this coroutine: written or not, the run happened.
    if (applied) autoscaler::record_success(history, rule, CronExecution{schedule_time, finished, *applied, {}});
    else autoscaler::record_failure(history, rule, CronExecution{schedule_time, finished, {}, applied.error().message});
    co_await async::throw_if_cancelled();
    if (applied) {
      const std::string message = "rule " + rule.name + " (" + k8s::format_time(schedule_time) +
                                  "): " + cron.scale_target_ref.kind + " " + cron.scale_target_ref.name + " set to " +
                                  describe(*applied);
      spdlog::info("cron: {}: {}", key, message);
      self.events->record({subject, "Normal", "ScaleSucceeded", message});
      self.count([](CronControllerStats& s) { ++s.runs; });
      co_return RuleOutcome::Success;
    } else {
      const std::string message =
          "rule " + rule.name + " (" + k8s::format_time(schedule_time) + "): " + applied.error().message;
      spdlog::warn("cron: {}: {}", key, message);
      self.events->record({subject, "Warning", "ScaleFailed", message});
      self.count([](CronControllerStats& s) { ++s.failed_runs; });
      co_return RuleOutcome::Error;
    }
  }

  // ---- one run

  static Task<k8s::Expected<CronApplied>> execute(State& self, const autoscaler::CronFederatedHPA& cron,
                                                  const CronRule& rule) {
    k8s::Error last{"not attempted"};
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
      auto result = co_await attempt_once(self, cron, rule);  // one co_await a turn (GCC 12)
      if (result.applied) co_return *result.applied;
      last = result.error;
      if (!result.retry) break;
    }
    co_return last;
  }

  struct Attempt {
    std::optional<CronApplied> applied;
    k8s::Error error;
    bool retry = false;  // a read or a write that failed (a conflict, an outage): read again
  };

  static std::string retained_message(const autoscaler::CrossVersionObjectReference& target) {
    return target.kind + " " + target.name + " keeps the replica counts of its member clusters (label " +
           std::string(autoscaler::kRetainReplicasLabel) +
           ": \"true\", set while a FederatedHPA scales it in distributed mode): a replica count written to it "
           "does not take effect. Scale the FederatedHPA instead (a rule with targetMinReplicas/targetMaxReplicas "
           "and scaleTargetRef kind FederatedHPA)";
  }

  static Task<Attempt> attempt_once(State& self, const autoscaler::CronFederatedHPA& cron, const CronRule& rule) {
    const auto& target = cron.scale_target_ref;
    const std::string& ns = cron.namespace_name;
    if (autoscaler::targets_federated_hpa(target)) {
      auto object = co_await self.federated_hpas->get(ns, target.name);
      if (!object)
        co_return Attempt{std::nullopt,
                          k8s::Error{"cannot read FederatedHPA " + target.name + ": " + object.error().message}, true};
      auto fhpa = autoscaler::decode_federated_hpa(*object);
      if (!fhpa)
        co_return Attempt{std::nullopt, k8s::Error{"FederatedHPA " + target.name + ": " + fhpa.error().message}, false};
      auto applied = autoscaler::apply_to_federated_hpa(rule, fhpa->spec);
      if (!applied) co_return Attempt{std::nullopt, applied.error(), false};
      const std::string resource_version = meta_string(*object, "resourceVersion");
      const std::int32_t min = *applied->min_replicas;
      const std::int32_t max = *applied->max_replicas;
      co_await async::throw_if_cancelled();
      auto written = co_await self.federated_hpa_writer->update_replicas(ns, target.name, min, max, resource_version);
      if (!written)
        co_return Attempt{std::nullopt,
                          k8s::Error{"cannot update FederatedHPA " + target.name + ": " + written.error().message},
                          true};
      co_return Attempt{*applied, k8s::Error{""}, false};
    }
    auto scale = co_await self.scales->get_scale(ns, target);
    if (!scale)
      co_return Attempt{
          std::nullopt,
          k8s::Error{"cannot read the scale of " + target.kind + " " + target.name + ": " + scale.error().message},
          true};
    const std::int32_t replicas = *rule.target_replicas;
    const std::string resource_version = scale->resource_version;
    // A template whose replicas the members keep (a FederatedHPA in
    // distributed mode labelled it): a count written to it would be accepted
    // and then replaced by the members' sum, so the run would report a scale
    // that never happened. It fails, saying where the replicas are decided.
    auto retained = co_await self.scales->get_retain_replicas(ns, target);
    if (!retained)
      co_return Attempt{std::nullopt,
                        k8s::Error{"cannot read " + target.kind + " " + target.name + ": " + retained.error().message},
                        true};
    if (*retained) co_return Attempt{std::nullopt, k8s::Error{retained_message(target)}, false};
    co_await async::throw_if_cancelled();
    // Written also when it is already the value (from 0 too): the rule's run is the write.
    auto updated = co_await self.scales->update_scale(ns, target, replicas, resource_version);
    if (!updated)
      co_return Attempt{
          std::nullopt,
          k8s::Error{"cannot update the scale of " + target.kind + " " + target.name + ": " + updated.error().message},
          true};
    // The scale answered is what was stored: anything else did not take effect.
    if (updated->spec_replicas != replicas)
      co_return Attempt{std::nullopt,
                        k8s::Error{target.kind + " " + target.name + " was set to replicas " +
                                   std::to_string(replicas) + " but keeps " + std::to_string(updated->spec_replicas)},
                        false};
    CronApplied applied;
    applied.replicas = replicas;
    co_return Attempt{applied, k8s::Error{""}, false};
  }

  // The loop and a pass in flight (also one of pass_now()) cancelled and waited for.
  static Task<void> drain(State& self) {
    self.stopping = true;
    self.watch.reset();  // no wakeup after this (stop() has reset it already)
    self.scope.cancel();
    self.term.cancel();
    co_await self.scope.join();
    co_await self.term.join();
  }

  void end_term() {
    term.cancel();
    memory.clear();  // the next term reads the statuses
    noted.clear();
    cadence.clear();  // and checks every object at its first pass
  }

  // A pass for pass_now(), a child of the term, awaited to its end.
  struct PassEnded {
    explicit PassEnded(const async::Strand& strand) : timer(strand, asio::steady_timer::time_point::max()) {}
    asio::steady_timer timer;
    bool ended = false;
  };
  static Task<void> pass_then(State& self, std::shared_ptr<PassEnded> ended) {
    struct End {
      std::shared_ptr<PassEnded> ended;
      ~End() {
        ended->ended = true;
        ended->timer.cancel();
      }
    } end{std::move(ended)};
    co_await pass(self, Which::All);
  }
  static Task<void> pass_and_wait(State& self) {
    if (self.stopping) co_return;  // no pass after shutdown()
    auto ended = std::make_shared<PassEnded>(self.strand);
    self.term.spawn(pass_then(self, ended), "cron: a pass");  // of every object
    while (!ended->ended) {
      auto [ec] = co_await ended->timer.async_wait(asio::as_tuple(asio::use_awaitable));
      (void)ec;
    }
  }
};

CronController::CronController(async::Executor executor, ControlPlanePorts control_plane, CronControllerOptions options)
    : state_(std::make_shared<State>(async::make_strand(executor), std::move(control_plane), std::move(options))) {
  if (!state_->options.monotonic) state_->options.monotonic = steady_clock();
  if (!state_->options.clock)
    state_->options.clock = [] {
      return std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now());
    };
}

CronController::~CronController() { stop(); }

void CronController::start() {
  // Changes seen at once: a pass right after a CronFederatedHPA is created or edited.
  state_->watch = state_->crons->watch(state_->options.selector, [weak = std::weak_ptr<State>(state_)] {
    if (auto state = weak.lock()) state->wakeup.notify();
  });
  asio::post(state_->strand, [weak = std::weak_ptr<State>(state_)] {
    auto state = weak.lock();
    if (state && !state->stopping) state->scope.spawn(State::run(*state), "cron: the loop");
  });
}

async::Task<void> CronController::shutdown() {
  if (state_->stopped.exchange(true)) co_return;
  // Built first: no temporary in the co_await expression (GCC 12).
  auto op = asio::co_spawn(state_->strand, State::drain(*state_), asio::use_awaitable);
  co_await std::move(op);
}

void CronController::stop() {
  if (state_->stopped.exchange(true)) return;
  state_->watch.reset();  // no wakeup after this, and the watch ends off the runtime's threads
  async::run_and_wait(state_->strand, [state = state_.get()] { return State::drain(*state); });
}

void CronController::sync_soon() { state_->wakeup.notify(); }

void CronController::cancel_in_flight() {
  asio::post(state_->strand, [weak = std::weak_ptr<State>(state_)] {
    if (auto state = weak.lock()) state->end_term();
  });
}

async::Task<void> CronController::pass_now() {
  // Built first: no temporary in the co_await expression (GCC 12).
  auto op = asio::co_spawn(state_->strand, State::pass_and_wait(*state_), asio::use_awaitable);
  co_await std::move(op);
}

CronControllerStats CronController::stats() const {
  std::lock_guard lock(state_->stats_mutex);
  return state_->stats;
}

}  // namespace fedmetrics::controller
