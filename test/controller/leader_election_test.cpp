// Leader election on a Lease: the pure step for every case, and two electors
// contending over one in-memory Lease with optimistic concurrency, on the
// test's own thread and a fake clock (support/run_loop.hpp).
#include <catch2/catch.hpp>

#include <atomic>
#include <mutex>

#include "fedmetrics/controller/leader_election.hpp"
#include "support/fake_leases.hpp"
#include "support/run_loop.hpp"

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

// The electors' election ended before they go, also when a check failed.
struct ShutDown {
  testing::RunLoop& loop;
  std::vector<LeaderElector*> electors;
  ~ShutDown() {
    for (auto* e : electors) loop.run(e->shutdown());
  }
};

TEST_CASE("LeaderElection: two electors, one leader, the other takes over when it stops") {
  using namespace std::chrono_literals;
  testing::RunLoop loop;
  auto leases = std::make_shared<testing::FakeLeases>();
  leases->clock = loop.clock;
  std::atomic<int> started_a{0}, started_b{0};
  auto options = [&](std::string id) {
    ElectionOptions o;
    o.on_started_leading = [&counter = id == "a" ? started_a : started_b] { ++counter; };
    o.identity = std::move(id);
    o.lease_duration = std::chrono::seconds(30);  // only the release can hand it over within the test
    o.renew_deadline = std::chrono::milliseconds(600);
    o.retry_period = std::chrono::milliseconds(20);
    o.monotonic = loop.clock;
    return o;
  };
  LeaderElector a(loop.executor(), leases, options("a"));
  LeaderElector b(loop.executor(), leases, options("b"));
  ShutDown shut_down{loop, {&a, &b}};
  a.start();
  b.start();
  loop.poll();
  REQUIRE((a.leading() || b.leading()));
  loop.advance(100ms);  // five renewals and five tries
  CHECK(a.leading() != b.leading());
  LeaderElector& leader = a.leading() ? a : b;
  LeaderElector& other = a.leading() ? b : a;
  loop.run(leader.shutdown());  // releases: the other takes over without waiting for the lease duration
  CHECK_FALSE(leader.leading());
  loop.advance(20ms);  // the other's next try
  CHECK(other.leading());
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
  testing::RunLoop loop;
  auto clock = loop.clock;
  auto leases = std::make_shared<testing::FakeLeases>();
  leases->clock = clock;
  int stopped = 0;
  Clock::TimePoint stepped_down;
  ElectionOptions o;
  o.identity = "a";
  o.lease_duration = 2s;  // what another replica waits after it last saw a renewal
  o.renew_deadline = 800ms;
  o.retry_period = 100ms;
  o.monotonic = clock;
  o.on_stopped_leading = [&] {
    ++stopped;
    stepped_down = clock->now();
  };
  LeaderElector a(loop.executor(), leases, o);
  ShutDown shut_down{loop, {&a}};
  a.start();
  loop.poll();
  REQUIRE(a.leading());              // created at once
  loop.advance(3 * o.retry_period);  // three renewals
  REQUIRE(a.leading());
  leases->slow = true;
  // One sleep at a time: the elector's retry, or a Lease call stalled until its deadline.
  for (int step = 0; step < 100 && stopped == 0; ++step) {
    REQUIRE(clock->next_deadline());
    loop.advance(*clock->next_deadline() - clock->now());
  }
  CHECK_FALSE(a.leading());
  CHECK(stopped == 1);
  // One overall deadline: no call was given more than the renew deadline
  // (today's GET and PUT had the client's 10 s each).
  REQUIRE_FALSE(leases->budgets.empty());
  for (auto budget : leases->budgets) CHECK(budget <= o.renew_deadline);
  // Exactly the renew deadline after the last renewal, so well before
  // another replica could take the Lease.
  CHECK(stepped_down - leases->last_write == o.renew_deadline);
  CHECK(stepped_down - leases->last_write < o.lease_duration);
  loop.run(a.shutdown());
  CHECK(stopped == 1);  // stop after stepping down is no second OnStoppedLeading
}

TEST_CASE("LeaderElection: the Lease seen held by another replica: stop leading at once") {
  using namespace std::chrono_literals;
  testing::RunLoop loop;
  auto leases = std::make_shared<testing::FakeLeases>();
  leases->clock = loop.clock;
  int stopped = 0;
  ElectionOptions o;
  o.identity = "a";
  o.lease_duration = 30s;
  o.renew_deadline = 20s;
  o.retry_period = 20ms;
  o.monotonic = loop.clock;
  o.on_stopped_leading = [&] { ++stopped; };
  LeaderElector a(loop.executor(), leases, o);
  ShutDown shut_down{loop, {&a}};
  a.start();
  loop.poll();
  REQUIRE(a.leading());
  json taken = *leases->stored;
  taken["spec"]["holderIdentity"] = "b";  // b took it (a's view of the Lease had expired elsewhere)
  leases->write(taken);
  loop.advance(o.retry_period);  // a's next renewal reads it
  CHECK_FALSE(a.leading());
  CHECK(stopped == 1);
}

}  // namespace
}  // namespace fedmetrics::controller
