// Leader election on a Lease: the pure step for every case, and two electors
// contending over one in-memory Lease with optimistic concurrency.
#include <catch2/catch.hpp>

#include <atomic>

#include <mutex>
#include <thread>

#include "fedmetrics/controller/leader_election.hpp"

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

TEST_CASE("LeaderElection: another holder within its lease: wait; after it: take over, counting the transition") {
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

TEST_CASE("LeaderElection: the holder renews without a transition; a released Lease is free") {
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

// One Lease with a resourceVersion, as the control plane keeps it.
struct MemoryLeases : LeaseClient {
  std::mutex mutex;
  std::optional<json> stored;
  int version = 1;
  k8s::Expected<std::optional<json>> get(const std::string&, const std::string&) override {
    std::lock_guard lock(mutex);
    return stored;
  }
  k8s::Expected<json> create(const std::string&, const json& l) override {
    std::lock_guard lock(mutex);
    if (stored) return k8s::Error{"AlreadyExists"};
    return write(l);
  }
  k8s::Expected<json> update(const std::string&, const std::string&, const json& l) override {
    std::lock_guard lock(mutex);
    if (!stored || l["metadata"].value("resourceVersion", "") != (*stored)["metadata"]["resourceVersion"])
      return k8s::Error{"Conflict"};
    return write(l);
  }
  json write(json l) {
    l["metadata"]["resourceVersion"] = std::to_string(++version);
    stored = l;
    return l;
  }
  std::string holder() {
    std::lock_guard lock(mutex);
    return stored ? (*stored)["spec"].value("holderIdentity", "") : "";
  }
};

TEST_CASE("LeaderElection: two electors, one leader; the other takes over when it stops") {
  auto leases = std::make_shared<MemoryLeases>();
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
  LeaderElector a(leases, options("a"));
  LeaderElector b(leases, options("b"));
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

}  // namespace
}  // namespace fedmetrics::controller
