// Leader election on a Lease: the pure step for every case, and two electors
// contending over one in-memory Lease with optimistic concurrency.
#include <catch2/catch.hpp>

#include <atomic>

#include <mutex>
#include <thread>

#include "fedmetrics/kube/https_client.hpp"
#include "fedmetrics/controller/leader_election.hpp"
#include "support/eventually.hpp"
#include "support/fake_clock.hpp"
#include "support/fake_leases.hpp"

namespace fedmetrics::controller {
namespace {

using nlohmann::json;
using Action = LeaseStep::Action;

k8s::Timestamp at(double second) {
  return k8s::Timestamp(std::chrono::nanoseconds(static_cast<std::int64_t>((1'787'000'000 + second) * 1e9)));
}

ElectionOptions as(std::string identity) {
  ElectionOptions o;
  o.identity = std::move(identity);
  o.lease_duration = std::chrono::seconds(15);
  return o;
}

json lease(std::string holder, double renewed, int transitions = 0, std::string rv = "7") {
  return {{"metadata", {{"name", "fedmetrics-autoscaler"}, {"namespace", "kube-system"}, {"resourceVersion", rv}}},
          {"spec",
           {{"holderIdentity", holder},
            {"leaseDurationSeconds", 15},
            {"acquireTime", k8s::format_micro_time(at(0))},
            {"renewTime", k8s::format_micro_time(at(renewed))},
            {"leaseTransitions", transitions}}}};
}

TEST_CASE("LeaderElection: no Lease: create it, holding it") {
  auto step = next_lease_step(std::nullopt, as("a"), at(1.5), false);
  CHECK(step.action == Action::Create);
  CHECK(step.holder == "a");
  CHECK(step.lease["spec"]["holderIdentity"] == "a");
  CHECK(step.lease["spec"]["leaseDurationSeconds"] == 15);
  CHECK(step.lease["spec"]["renewTime"] == "2026-08-17T20:53:21.500000Z");
  CHECK(step.lease["metadata"]["namespace"] == "kube-system");
}

TEST_CASE("LeaderElection: another holder within its lease: wait, after it: take over, counting the transition") {
  // Expiry is the caller's observation on its own clock: b's renewTime far in the past does not matter.
  auto held = next_lease_step(lease("b", 10), as("a"), at(1000), false);
  CHECK(held.action == Action::Wait);
  CHECK(held.holder == "b");
  auto expired = next_lease_step(lease("b", 10, 2), as("a"), at(25.1), true);
  CHECK(expired.action == Action::Update);
  CHECK(expired.lease["spec"]["holderIdentity"] == "a");
  CHECK(expired.lease["spec"]["leaseTransitions"] == 3);
  CHECK(expired.lease["spec"]["acquireTime"] == k8s::format_micro_time(at(25.1)));
  CHECK(expired.lease["metadata"]["resourceVersion"] == "7");  // the write is conditional
}

TEST_CASE("LeaderElection: the holder renews without a transition, a released Lease is free") {
  auto renew = next_lease_step(lease("a", 10, 4), as("a"), at(12), false);
  CHECK(renew.action == Action::Update);
  CHECK(renew.lease["spec"]["leaseTransitions"] == 4);
  CHECK(renew.lease["spec"]["acquireTime"] == k8s::format_micro_time(at(0)));
  CHECK(renew.lease["spec"]["renewTime"] == k8s::format_micro_time(at(12)));
  auto released = released_lease(lease("a", 10), "a");
  REQUIRE(released);
  CHECK(next_lease_step(*released, as("b"), at(11), false).action == Action::Update);  // no holder
  CHECK_FALSE(released_lease(lease("a", 10), "b"));
}

TEST_CASE("LeaderElection: two electors, one leader, the other takes over when it stops") {
  kube::ClientRuntime runtime(1);
  auto leases = std::make_shared<testing::FakeLeases>();
  std::atomic<int> started_a{0}, started_b{0};
  auto options = [&](std::string id) {
    ElectionOptions o;
    o.on_started_leading = [&counter = id == "a" ? started_a : started_b] { ++counter; };
    o.identity = std::move(id);
    o.lease_duration = std::chrono::seconds(30);  // only the release can hand it over within the test
    o.renew_deadline = std::chrono::milliseconds(600);
    o.retry_period = std::chrono::milliseconds(20);
    return o;
  };
  LeaderElector a(runtime.executor(), leases, options("a"));
  LeaderElector b(runtime.executor(), leases, options("b"));
  a.start();
  b.start();
  auto until = [](auto predicate) {
    for (int i = 0; i < 300 && !predicate(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return predicate();
  };
  REQUIRE(until([&] { return a.leading() || b.leading(); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(a.leading() != b.leading());
  LeaderElector& leader = a.leading() ? a : b;
  LeaderElector& other = a.leading() ? b : a;
  leader.stop();  // releases: the other takes over without waiting for the lease duration
  CHECK(until([&] { return other.leading(); }));
  CHECK_FALSE(leader.leading());
  CHECK(leases->holder() == (&other == &a ? "a" : "b"));
  // Each became the leader once and was told so once (renewals are not news).
  CHECK(started_a.load() == 1);
  CHECK(started_b.load() == 1);
}

// On the fake clock: the renewals, the stalled calls and the step-down
// happen at the times the elector computes, not when a scheduler gets to them.
TEST_CASE(
    "LeaderElection: a slow control plane: the leader steps down within the renew deadline, before the lease expires") {
  using namespace std::chrono_literals;
  kube::ClientRuntime runtime(1);
  auto clock = std::make_shared<testing::FakeClock>();
  auto leases = std::make_shared<testing::FakeLeases>();
  leases->clock = clock;
  std::atomic<int> stopped{0};
  std::atomic<Clock::Duration::rep> stopped_at{0};
  ElectionOptions o;
  o.identity = "a";
  o.lease_duration = 2s;  // what another replica waits after it last saw a renewal
  o.renew_deadline = 800ms;
  o.retry_period = 100ms;
  o.monotonic = clock;
  o.on_stopped_leading = [&] {
    ++stopped;
    stopped_at = clock->now().time_since_epoch().count();
  };
  LeaderElector a(runtime.executor(), leases, o);
  a.start();
  // One sleep at a time: the elector's retry, or a Lease call stalled until its deadline.
  auto next_sleep = [&] {
    REQUIRE(testing::eventually([&] { return clock->sleepers() == 1; }));
    clock->advance_to_next();
  };
  REQUIRE(testing::eventually([&] { return a.leading(); }));  // created at once
  for (int renewal = 0; renewal < 3; ++renewal) next_sleep();
  REQUIRE(a.leading());
  leases->slow = true;
  while (stopped.load() == 0) next_sleep();
  CHECK_FALSE(a.leading());
  CHECK(stopped.load() == 1);
  Clock::TimePoint last_write;
  {
    std::lock_guard lock(leases->mutex);
    last_write = leases->last_write;
    // One overall deadline: no call was given more than the renew deadline
    // (today's GET and PUT had the client's 10 s each).
    REQUIRE_FALSE(leases->budgets.empty());
    for (auto budget : leases->budgets) CHECK(budget <= o.renew_deadline);
  }
  const auto stepped_down = Clock::TimePoint(Clock::Duration(stopped_at.load()));
  // Exactly the renew deadline after the last renewal, so well before
  // another replica could take the Lease.
  CHECK(stepped_down - last_write == o.renew_deadline);
  CHECK(stepped_down - last_write < o.lease_duration);
  a.stop();
  CHECK(stopped.load() == 1);  // stop() after stepping down is no second OnStoppedLeading
}

TEST_CASE("LeaderElection: the Lease seen held by another replica: stop leading at once") {
  using namespace std::chrono_literals;
  kube::ClientRuntime runtime(1);
  auto leases = std::make_shared<testing::FakeLeases>();
  std::atomic<int> stopped{0};
  ElectionOptions o;
  o.identity = "a";
  o.lease_duration = 30s;
  o.renew_deadline = 20s;
  o.retry_period = 20ms;
  o.on_stopped_leading = [&] { ++stopped; };
  LeaderElector a(runtime.executor(), leases, o);
  a.start();
  for (int i = 0; i < 300 && !a.leading(); ++i) std::this_thread::sleep_for(10ms);
  REQUIRE(a.leading());
  json taken;
  {
    std::lock_guard lock(leases->mutex);
    taken = *leases->stored;
  }
  taken["spec"]["holderIdentity"] = "b";  // b took it (a's view of the Lease had expired elsewhere)
  leases->write(taken);
  // (The callback comes just after leading() turns false, on the elector's strand.)
  for (int i = 0; i < 300 && (a.leading() || stopped.load() == 0); ++i) std::this_thread::sleep_for(10ms);
  CHECK_FALSE(a.leading());
  CHECK(stopped.load() == 1);
  a.stop();
}

}  // namespace
}  // namespace fedmetrics::controller
