#include "fedmetrics/controller/leader_election.hpp"

#include "fedmetrics/transport/async.hpp"
#include "fedmetrics/transport/run_on.hpp"

#include <spdlog/spdlog.h>

namespace fedmetrics::controller {

using nlohmann::json;

namespace {

namespace asio = boost::asio;
using async::Task;

k8s::Timestamp system_now() {
  return std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now());
}

}  // namespace

LeaseStep next_lease_step(const std::optional<json>& current, const ElectionOptions& options, k8s::Timestamp now,
                          bool holder_expired) {
  const auto seconds =
      std::max<std::int64_t>(1, std::chrono::duration_cast<std::chrono::seconds>(options.lease_duration).count());
  const auto stamp = k8s::format_micro_time(now);
  LeaseStep step;
  if (!current) {
    step.action = LeaseStep::Action::Create;
    step.holder = options.identity;
    step.lease = {{"apiVersion", "coordination.k8s.io/v1"},
                  {"kind", "Lease"},
                  {"metadata", {{"name", options.name}, {"namespace", options.namespace_name}}},
                  {"spec",
                   {{"holderIdentity", options.identity},
                    {"leaseDurationSeconds", seconds},
                    {"acquireTime", stamp},
                    {"renewTime", stamp},
                    {"leaseTransitions", 0}}}};
    return step;
  }
  json lease = *current;
  json spec = lease.value("spec", json::object());
  if (!spec.is_object()) spec = json::object();
  const std::string holder = spec.value("holderIdentity", "");
  const bool expired = holder.empty() || holder_expired;
  if (holder != options.identity && !expired) {
    step.holder = holder;  // someone else leads: wait
    return step;
  }
  step.action = LeaseStep::Action::Update;
  step.holder = options.identity;
  if (holder != options.identity) {
    spec["acquireTime"] = stamp;
    spec["leaseTransitions"] = spec.value("leaseTransitions", 0) + 1;
  }
  spec["holderIdentity"] = options.identity;
  spec["leaseDurationSeconds"] = seconds;
  spec["renewTime"] = stamp;
  lease["spec"] = spec;
  step.lease = std::move(lease);  // keeps metadata.resourceVersion: the write is conditional
  return step;
}

std::optional<json> released_lease(const json& current, const std::string& identity) {
  if (current.value("spec", json::object()).value("holderIdentity", "") != identity) return std::nullopt;
  json lease = current;
  lease["spec"]["holderIdentity"] = "";
  lease["spec"]["leaseDurationSeconds"] = 1;
  return lease;
}

struct LeaderElector::State {
  State(async::Strand s, std::shared_ptr<LeaseClient> c, ElectionOptions o, std::function<k8s::Timestamp()> clk)
      : strand(std::move(s)), client(std::move(c)), options(std::move(o)), clock(std::move(clk)), scope(strand) {
    if (!options.monotonic) options.monotonic = steady_clock();
  }
  async::Strand strand;
  std::shared_ptr<LeaseClient> client;
  ElectionOptions options;
  std::function<k8s::Timestamp()> clock;
  std::atomic<bool> leading{false};
  // On the strand only:
  // When the attempt that last renewed began (before its GET): the Lease's
  // renewTime is no earlier, so other replicas count their lease duration
  // from no earlier than this.
  Clock::TimePoint last_renewal{};
  nlohmann::json observed_spec;      // the Lease spec as last seen
  Clock::TimePoint observed_at{};    // when it last changed, on our clock
  async::TaskGroup scope;            // the election, from start() to shutdown()
  bool stopping = false;             // on the strand
  std::atomic<bool> stopped{false};  // shutdown() or stop() ran (once)

  std::string where() const { return options.namespace_name + "/" + options.name; }

  void step_down(const std::string& why) {
    if (!leading.exchange(false)) return;
    spdlog::warn("leader election: {} stopped leading {}: {}", options.identity, where(), why);
    if (options.on_stopped_leading) options.on_stopped_leading();
  }

  // No co_await inside a condition or a cast here: GCC 12 then lays out the
  // coroutine frame differently in its ramp and its body (the body read its
  // resume index from uninitialised memory; found by the two-elector test).
  static Task<void> run(State& self) {
    for (;;) {
      if (self.leading) {
        const bool renewed = co_await renew(self);
        if (!renewed) self.step_down("did not renew within the renew deadline");
      } else {
        // Acquire: one try per retry period, bounded so that the first renewal
        // (a retry period after it, counted from when the attempt began) still
        // has time before the renew deadline: a slow acquisition must not be
        // followed by a step-down without a try, which would flap leadership.
        const auto deadline = self.options.monotonic->now() + self.options.renew_deadline - self.options.retry_period;
        const bool acquired = co_await attempt(self, deadline);
        if (acquired) spdlog::debug("leader election: {} holds {}", self.options.identity, self.where());
      }
      co_await self.options.monotonic->sleep_for(self.options.retry_period);
      co_await async::throw_if_cancelled();  // stop()
    }
  }

  // client-go: wait.PollImmediateUntil(RetryPeriod, tryAcquireOrRenew, ctx
  // with RenewDeadline). Counted from the last renewal rather than from the
  // round's start (a retry period later), so that the leader stops before
  // lease duration after its last renewTime for any flags that pass
  // lease duration > renew deadline, not only for the defaults.
  static Task<bool> renew(State& self) {
    const auto deadline = self.last_renewal + self.options.renew_deadline;
    while (self.options.monotonic->now() < deadline) {
      const bool held = co_await attempt(self, deadline);
      if (held) co_return true;
      if (!self.leading) co_return true;  // someone else holds it: already stepped down
      auto left = deadline - self.options.monotonic->now();
      if (left <= Clock::Duration::zero()) break;
      co_await self.options.monotonic->sleep_for(std::min<Clock::Duration>(self.options.retry_period, left));
      co_await async::throw_if_cancelled();
    }
    co_return false;
  }

  // One GET and, when it is ours to take or renew, one write, both by
  // `deadline`. True when this replica holds the Lease after it. A
  // malformed Lease from the control plane is a failed attempt.
  static Task<bool> attempt(State& self, Clock::TimePoint deadline) {
    bool held = false;
    try {
      held = co_await attempt_unguarded(self, deadline);
    } catch (const std::exception& e) {
      if (async::is_cancellation(e)) throw;
      spdlog::warn("leader election: {}", e.what());
    }
    co_return held;
  }

  static Task<bool> attempt_unguarded(State& self, Clock::TimePoint deadline) {
    const auto began = self.options.monotonic->now();
    auto fail = [&](const std::string& what) {
      spdlog::debug("leader election: {}: {}", self.where(), what);
      return false;
    };
    auto current = co_await self.client->get(self.options.namespace_name, self.options.name, deadline);
    if (!current) co_return fail(current.error().message);
    // A client that answered late is as good as one that did not answer.
    if (self.options.monotonic->now() >= deadline) co_return fail("no answer before the renew deadline");
    // client-go's observedTime: the holder's term runs from when we saw the record change.
    auto steady_now = self.options.monotonic->now();
    bool expired = false;
    if (*current) {
      const auto& spec = (**current).value("spec", json::object());
      if (spec != self.observed_spec) {
        self.observed_spec = spec;
        self.observed_at = steady_now;
      }
      auto duration = std::chrono::seconds(spec.value("leaseDurationSeconds", std::int64_t{15}));
      expired = steady_now > self.observed_at + duration;
    }
    auto step = next_lease_step(*current, self.options, self.clock(), expired);
    if (step.action == LeaseStep::Action::Wait) {
      self.step_down(self.where() + " is now held by " + step.holder);
      co_return false;
    }
    k8s::Expected<json> written = k8s::Error{""};
    if (step.action == LeaseStep::Action::Create)
      written = co_await self.client->create(self.options.namespace_name, step.lease, deadline);
    else written = co_await self.client->update(self.options.namespace_name, self.options.name, step.lease, deadline);
    if (!written) co_return fail(written.error().message);
    if (self.options.monotonic->now() >= deadline) co_return fail("the write was answered after the renew deadline");
    self.last_renewal = began;
    if (!self.leading.exchange(true)) {
      spdlog::info("leader election: {} acquired the lease {}", self.options.identity, self.where());
      if (self.options.on_started_leading) self.options.on_started_leading();
    }
    co_return true;
  }

  // The election ends; a leader stops leading (OnStoppedLeading) and releases the Lease.
  static Task<void> resign(State& self) {
    self.stopping = true;
    self.scope.cancel();
    co_await self.scope.join();
    if (!self.leading) co_return;
    self.step_down("stopping");
    co_await release(self);
  }

  // Release, so that another replica takes over at once rather than after the lease duration.
  static Task<void> release(State& self) {
    const auto deadline = self.options.monotonic->now() + self.options.renew_deadline;
    auto current = co_await self.client->get(self.options.namespace_name, self.options.name, deadline);
    if (!current || !*current) co_return;
    auto released = released_lease(**current, self.options.identity);
    if (!released) co_return;
    auto written = co_await self.client->update(self.options.namespace_name, self.options.name, *released, deadline);
    if (!written) spdlog::warn("leader election: could not release {}: {}", self.where(), written.error().message);
  }
};

LeaderElector::LeaderElector(async::Executor executor, std::shared_ptr<LeaseClient> client, ElectionOptions options,
                             std::function<k8s::Timestamp()> clock)
    : state_(std::make_shared<State>(async::make_strand(executor), std::move(client), std::move(options),
                                     clock ? std::move(clock) : system_now)) {}

LeaderElector::~LeaderElector() { stop(); }

void LeaderElector::start() {
  asio::post(state_->strand, [weak = std::weak_ptr<State>(state_)] {
    auto state = weak.lock();
    if (state && !state->stopping) state->scope.spawn(State::run(*state), "leader election");
  });
}

bool LeaderElector::leading() const { return state_->leading.load(); }

async::Task<void> LeaderElector::shutdown() {
  if (state_->stopped.exchange(true)) co_return;
  // On the elector's strand, the caller's cancellation forwarded there
  // (transport/run_on.hpp). Built first: no temporary in the co_await
  // expression (GCC 12).
  auto op = async::run_on(state_->strand, State::resign(*state_));
  co_await std::move(op);
}

void LeaderElector::stop() {
  if (state_->stopped.exchange(true)) return;
  async::run_and_wait(state_->strand, [state = state_.get()] { return State::resign(*state); });
}

}  // namespace fedmetrics::controller
