#include <catch2/catch.hpp>

#include <set>

#include "fedmetrics/sim/deployment.hpp"
#include "sim/federation_placement.hpp"
#include "sim/sim_test_support.hpp"

using namespace fedmetrics::sim;
using namespace std::chrono_literals;

namespace {
std::size_t live(const Federation& f, std::size_t member, std::size_t workload, fedmetrics::k8s::Timestamp now) {
  std::size_t n = 0;
  for (const auto& p : f.members[member].pods)
    if (p.workload == workload && f.exists(p, now) && !p.deleted) ++n;
  return n;
}
}  // namespace

TEST_CASE("Federation: pods are placed by the propagation, named per member, Ready at start", "[sim][federation]") {
  auto f = sim_test::federation();
  CHECK(live(f, 0, 0, sim_test::t0()) == 2);  // web 4 at 1:1
  CHECK(live(f, 1, 0, sim_test::t0()) == 2);
  CHECK(live(f, 2, 0, sim_test::t0()) == 0);  // member3 is not in web's propagation
  CHECK(live(f, 2, 1, sim_test::t0()) == 1);  // batch
  std::set<std::string> names;
  for (const auto& m : f.members)
    for (const auto& p : m.pods) {
      CHECK(names.insert(p.name).second);
      CHECK(f.ready(p, sim_test::t0()));
    }
  // One template, one pod-template-hash in every member (names still apart by their suffixes).
  const auto& p = f.members[0].pods[0];
  CHECK_THAT(p.name, Catch::StartsWith("web-" + pod_template_hash(f.world.workloads[0]) + "-"));
  CHECK(f.members[1].pods[0].template_hash == p.template_hash);
  // Round-robin over the member's nodes.
  CHECK(f.members[0].pods[0].node == "m1-node-a");
  CHECK(f.members[0].pods[1].node == "m1-node-b");
  CHECK(f.serving_pods(0, sim_test::t0()) == 4);
}

TEST_CASE("Federation: scaling re-divides, new pods wait for readiness, removed ones terminate", "[sim][federation]") {
  auto w = sim_test::world();
  w.workloads[0].readiness_delay = 10s;
  w.workloads[0].termination_grace = 30s;
  auto f = Federation::create(w, sim_test::t0());
  auto t1 = sim_test::t0() + 60s;
  auto up = f.with_replicas(0, 6, t1);
  CHECK(up.workloads[0].placement == std::vector<TargetCluster>{{"member1", 3}, {"member2", 3}});
  CHECK(live(up, 0, 0, t1) == 3);
  CHECK(up.serving_pods(0, t1) == 4);  // the two new pods are not Ready yet
  CHECK(up.serving_pods(0, t1 + 10s) == 6);
  CHECK(up.resource_version > f.resource_version);

  auto t2 = t1 + 20s;
  auto down = up.with_replicas(0, 2, t2);
  CHECK(live(down, 0, 0, t2) == 1);
  std::size_t terminating = 0;
  for (const auto& p : down.members[0].pods)
    if (p.deleted) {
      ++terminating;
      CHECK(down.exists(p, t2 + 29s));
      CHECK_FALSE(down.exists(p, t2 + 30s));
      CHECK_FALSE(down.serving(p, t2));
    }
  CHECK(terminating == 2);
  CHECK(down.serving_pods(0, t2) == 2);

  // The one-pass count member_api uses agrees with the per-workload one at every step.
  for (const auto* state : {&f, &up, &down})
    for (auto at : {t1, t1 + 10s, t2, t2 + 30s}) {
      auto counts = state->serving_pods_by_workload(at);
      REQUIRE(counts.size() == state->workloads.size());
      for (std::size_t w = 0; w < counts.size(); ++w) CHECK(counts[w] == state->serving_pods(w, at));
    }
  CHECK(up.serving_pods_by_workload(t1)[0] == 4);
}

TEST_CASE("Federation: load is spread over serving pods across members", "[sim][federation]") {
  auto f = sim_test::federation();
  const auto& pod = f.members[1].pods[0];
  auto u = f.usage(1, pod, sim_test::t0());
  CHECK(u.cpu_nanocores() == 251'000'000);  // 1 core over 4 pods + 1m
  CHECK(u.requests_per_second == Approx(2.0));
  auto g = f.with_load(0, Load{fedmetrics::k8s::Quantity::parse("4").value(), {}});
  CHECK(g.usage(1, g.members[1].pods[0], sim_test::t0()).cpu_nanocores() == 500'000'000);  // capped at 500m
  CHECK(g.usage(1, g.members[1].pods[0], sim_test::t0()).requests_per_second == 0.0);
}

TEST_CASE("Federation: a member's own load is shared by its pods alone", "[sim][federation]") {
  using fedmetrics::k8s::Quantity;
  auto f = sim_test::federation();  // web: 2 pods in member1, 2 in member2; 1 core, 8 requests/s
  auto hot = f.with_member_load(0, 0, Load{Quantity::parse("200m").value(), Quantity::parse("20").value()});
  CHECK(hot.resource_version > f.resource_version);
  auto shares = hot.load_shares(sim_test::t0());
  CHECK(shares.shared[0] == 2);
  CHECK(shares.own.at({0, 0}) == 2);
  for (const auto& pod : hot.members[0].pods) {
    if (pod.workload != 0) continue;
    CHECK(hot.usage(0, pod, sim_test::t0()).cpu_nanocores() == 101'000'000);  // 200m over member1's 2 pods + 1m
    CHECK(hot.usage(0, pod, sim_test::t0()).requests_per_second == Approx(10.0));
  }
  // member2 keeps the workload's load, now over its own 2 pods only.
  CHECK(hot.usage(1, hot.members[1].pods[0], sim_test::t0()).cpu_nanocores() == 500'000'000);  // 1/2 + 1m, capped
  CHECK(hot.usage(1, hot.members[1].pods[0], sim_test::t0()).requests_per_second == Approx(4.0));
  auto back = hot.with_member_load(0, 0, std::nullopt);
  CHECK(back.workloads[0].member_loads.empty());
  CHECK(back.usage(0, back.members[0].pods[0], sim_test::t0()).cpu_nanocores() == 251'000'000);
}

TEST_CASE("Federation: a retaining workload leaves members their replicas and sums them", "[sim][federation]") {
  auto f = sim_test::federation();  // web: 4, divided 2 and 2
  auto now = sim_test::t0();
  // Without retain a member's own count stays the member's; the template keeps its count.
  auto plain = f.with_member_replicas(0, 0, 5, now);
  CHECK(plain.workloads[0].placement[0].replicas == 5);
  CHECK(plain.workloads[0].replicas == 4);
  CHECK(plain.with_replicas(0, 6, now).workloads[0].placement ==
        std::vector<TargetCluster>{{"member1", 3}, {"member2", 3}});

  auto retain = f.with_retain_replicas(0, true).with_member_replicas(0, 0, 5, now);
  CHECK(retain.workloads[0].replicas == 7);  // the replicas syncer: 5 + 2
  auto scaled = retain.with_replicas(0, 10, now);
  CHECK(scaled.workloads[0].placement == std::vector<TargetCluster>{{"member1", 5}, {"member2", 2}});
  CHECK(scaled.workloads[0].replicas == 7);
  auto released = scaled.with_retain_replicas(0, false).with_replicas(0, 6, now);
  CHECK(released.workloads[0].placement == std::vector<TargetCluster>{{"member1", 3}, {"member2", 3}});
  CHECK(released.workloads[0].replicas == 6);
  // A member the workload is not propagated to is left alone.
  CHECK(f.with_member_replicas(0, 2, 3, now).workloads[0].placement == f.workloads[0].placement);
}

TEST_CASE("Federation: overflow affinities fill the primary group, spill, and reclaim from the overflow first",
          "[sim][federation]") {
  // m1 has room for four 250m pods (one 1-core node), m2 for sixteen, m3 for none
  // (a pod of 2 cores already fills its 2-core node).
  auto world = parse_world(R"(
members:
  - {name: m1, nodes: [{cpu: "1"}]}
  - {name: m2}
  - {name: m3, nodes: [{cpu: "2"}]}
workloads:
  - name: big
    containers: [{name: c, resources: {requests: {cpu: "2"}}}]
    propagation: {clusters: [m3]}
  - name: web
    replicas: 3
    containers: [{name: c, resources: {requests: {cpu: 250m}}}]
    propagation:
      clusters: [m1]
      overflowAffinities:
        - {affinityName: full, clusterNames: [m3]}
        - {affinityName: cloud, clusterNames: [m2]}
)");
  REQUIRE(world.ok());
  auto now = sim_test::t0();
  auto f = Federation::create(std::move(*world), now);
  using Placement = std::vector<TargetCluster>;
  CHECK(f.workloads[1].placement == Placement{{"m1", 3}, {"m3", 0}, {"m2", 0}});
  CHECK(detail::free_replicas(f, 0, 1, 100) == 1);
  CHECK(detail::free_replicas(f, 2, 1, 100) == 0);
  CHECK(detail::free_replicas(f, 1, 1, 100) == 16);
  CHECK(detail::free_replicas(f, 1, 1, 5) == 5);  // never above the count being placed

  auto up = f.with_replicas(1, 7, now);
  CHECK(up.workloads[1].placement == Placement{{"m1", 4}, {"m3", 0}, {"m2", 3}});
  CHECK(live(up, 0, 1, now) == 4);
  CHECK(live(up, 1, 1, now) == 3);
  // Scale-down: the overflow group gives its replicas back first.
  auto down = up.with_replicas(1, 5, now);
  CHECK(down.workloads[1].placement == Placement{{"m1", 4}, {"m3", 0}, {"m2", 1}});
  auto back = down.with_replicas(1, 2, now);
  CHECK(back.workloads[1].placement == Placement{{"m1", 2}, {"m3", 0}, {"m2", 0}});
  CHECK(live(back, 1, 1, now) == 0);
  // More than every group can hold: Karmada keeps the placement it had.
  auto too_many = back.with_replicas(1, 30, now);
  CHECK(too_many.workloads[1].placement == back.workloads[1].placement);
  CHECK(too_many.workloads[1].replicas == 30);
}
