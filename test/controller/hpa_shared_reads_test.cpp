// The loop's shared reads (ControllerOptions::member_pods): the target's pods
// from the members' watches, a member's pod metrics of a namespace fetched
// once a period for every FederatedHPA of that namespace. The same world is
// replayed with and without them: the decisions must not change, the
// requests to the members must.
#include <catch2/catch.hpp>

#include <algorithm>
#include <tuple>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fedmetrics/controller/hpa_controller.hpp"
#include "support/fake_control_plane.hpp"
#include "support/fake_member_cluster.hpp"
#include "support/fake_member_pods.hpp"
#include "support/fake_metrics_service.hpp"
#include "support/run_loop.hpp"

namespace fedmetrics::controller {
namespace {

using aggregator::testing::FakeMember;
using aggregator::testing::quantity;
using nlohmann::json;

k8s::Timestamp at(int second) { return k8s::Timestamp(std::chrono::seconds(1'787'000'000 + second)); }

json fhpa(const std::string& name, const std::string& ns = "shop") {
  return json::parse(R"({"apiVersion":"autoscaling.karmada.io/v1alpha1","kind":"FederatedHPA",
    "metadata":{"name":")" +
                     name + R"(","namespace":")" + ns + R"(","uid":"u-)" + name + R"(","generation":1},
    "spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":")" +
                     name + R"("},
      "minReplicas":1,"maxReplicas":20,
      "metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":50}}}]}})");
}

// A federation as its members answer: each member's pods (labelled app=<workload>,
// 100m cpu requested) and each pod's cpu usage; the pod metrics query is
// answered as the aggregator answers it (the members its cluster selector
// chooses, pods its label selector matches, sorted by namespace and name).
struct World {
  std::map<std::string, std::vector<k8s::Pod>> pods;                 // by member
  std::map<std::pair<std::string, std::string>, std::string> usage;  // (member, pod) -> cpu
  std::set<std::string> down;
  std::map<std::string, std::shared_ptr<FakeMember>> members;

  void add_pod(const std::string& member, const std::string& ns, const std::string& app, const std::string& pod,
               const std::string& cpu) {
    auto p = aggregator::testing::ready_pod(ns, pod);
    p.metadata.labels = {{"app", app}};
    pods[member].push_back(p);
    usage[{member, pod}] = cpu;
  }
  // The members' pod lists as the world is now.
  void apply() {
    for (const auto& [name, list] : pods) {
      auto& m = members[name];
      if (!m) {
        m = std::make_shared<FakeMember>(name, nullptr);
        m->select_pods = true;
      }
      if (down.count(name))
        m->pod_list = aggregator::MemberError{aggregator::MemberError::Kind::Refused, "connection refused", 0, {}};
      else m->pod_list = list;
    }
  }
  static bool chooses(const k8s::LabelSelector& selector, const std::string& member) {
    k8s::Labels cluster{{std::string(aggregator::kClusterLabel), member}};
    for (const auto& r : selector.requirements())
      if (r.key == aggregator::kClusterLabel && !r.matches(cluster)) return false;
    return true;
  }
  aggregator::PodMetricsAnswer answer(const aggregator::ResourceMetricsQuery& query) const {
    std::vector<k8s::PodMetrics> items;
    std::vector<std::string> failures;
    std::size_t chosen = 0;
    for (const auto& [name, list] : pods) {
      if (!chooses(query.label_selector, name)) continue;
      ++chosen;
      if (down.count(name)) {
        failures.push_back(name + ": connection refused");
        continue;
      }
      for (const auto& p : list) {
        if (p.metadata.namespace_name != query.namespace_name) continue;
        k8s::Labels labels = p.metadata.labels;
        labels[std::string(aggregator::kClusterLabel)] = name;
        if (!query.label_selector.matches(labels)) continue;
        k8s::PodMetrics pm;
        pm.metadata.name = p.metadata.name;
        pm.metadata.namespace_name = p.metadata.namespace_name;
        pm.metadata.labels = p.metadata.labels;
        pm.metadata.annotations[std::string(aggregator::kQueryFromClusterAnnotation)] = name;
        pm.timestamp = at(0);
        pm.window = std::chrono::seconds(15);
        pm.containers.push_back({"web", {{"cpu", quantity(usage.at({name, p.metadata.name}))}}});
        items.push_back(std::move(pm));
      }
    }
    if (chosen > 0 && failures.size() == chosen) {
      std::string message = "no member cluster could serve metrics.k8s.io: ";
      for (std::size_t i = 0; i < failures.size(); ++i) message += (i ? "; " : "") + failures[i];
      return {k8s::Status::service_unavailable(message), {}};
    }
    std::stable_sort(items.begin(), items.end(), [](const auto& a, const auto& b) {
      return std::tie(a.metadata.namespace_name, a.metadata.name) <
             std::tie(b.metadata.namespace_name, b.metadata.name);
    });
    aggregator::PodMetricsAnswer out{std::move(items), failures};
    for (const auto& f : failures) out.missing_members.push_back(f.substr(0, f.find(':')));
    return out;
  }
};

// The loop over a World, with or without shared reads.
struct Run {
  testing::RunLoop loop;  // first: it outlives the controller
  std::shared_ptr<testing::FakeControlPlane> cp = std::make_shared<testing::FakeControlPlane>();
  std::shared_ptr<testing::FakeMetricsService> metrics = std::make_shared<testing::FakeMetricsService>();
  std::shared_ptr<aggregator::testing::FakeSource> source = std::make_shared<aggregator::testing::FakeSource>();
  std::shared_ptr<testing::FakeMemberPods> watched;
  std::unique_ptr<HpaController> controller;

  Run(World& world, bool shared) {
    world.apply();
    for (const auto& [name, m] : world.members) source->list.push_back(m);
    metrics->pods_for = [&world](const aggregator::ResourceMetricsQuery& q) { return world.answer(q); };
    ControllerOptions options;
    options.clock = [] { return at(0); };
    options.monotonic = loop.clock;
    if (shared) {
      watched = std::make_shared<testing::FakeMemberPods>();
      options.member_pods = watched;
    }
    controller = std::make_unique<HpaController>(loop.executor(), cp->ports(), metrics, source, options);
  }
  ~Run() { loop.run(controller->shutdown()); }
  void pass() { loop.run(controller->sync_all()); }
  std::size_t member_pod_lists(const World& world) const {
    std::size_t n = 0;
    for (const auto& [name, m] : world.members) n += m->pod_list_calls.size();
    return n;
  }
  // How many member requests the pod metrics queries made: one per member each chose.
  std::size_t member_metric_calls(const World& world) const {
    std::size_t n = 0;
    for (const auto& q : metrics->pod_queries)
      for (const auto& [name, m] : world.members) n += World::chooses(q.label_selector, name);
    return n;
  }
};

// Two workloads in "shop" over three members, web on member1 and member2, api on member2 and member3.
void populate(World& world) {
  world.add_pod("member1", "shop", "web", "web-1", "60m");
  world.add_pod("member1", "shop", "web", "web-2", "40m");
  world.add_pod("member2", "shop", "web", "web-3", "50m");
  world.add_pod("member2", "shop", "api", "api-1", "30m");
  world.add_pod("member3", "shop", "api", "api-2", "20m");
  world.add_pod("member3", "shop", "api", "api-3", "25m");
  world.add_pod("member3", "other", "web", "web-9", "90m");  // same labels, another namespace: never counted
}
void place(testing::FakeControlPlane& cp) {
  cp.federated_hpas->objects = {fhpa("web"), fhpa("api")};
  cp.scales->others["web"] = Scale{3, 3, "app=web", "1"};
  cp.scales->others["api"] = Scale{3, 3, "app=api", "1"};
  cp.placement->by_target["web"] = {{"member1", 2}, {"member2", 1}};
  cp.placement->by_target["api"] = {{"member2", 1}, {"member3", 2}};
}

// What the loop decided: per FederatedHPA, every scale written and every
// status, in order; the Events (two syncs of a pass may interleave otherwise).
std::vector<std::string> decisions(const testing::FakeControlPlane& cp) {
  std::vector<std::string> out = cp.scales->writes;
  for (std::size_t i = 0; i < cp.federated_hpas->status_history.size(); ++i)
    out.push_back(cp.federated_hpas->status_writers[i] + " " + cp.federated_hpas->status_history[i].dump());
  std::stable_sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
    return a.substr(0, a.find_first_of("= ")) < b.substr(0, b.find_first_of("= "));
  });
  auto events = cp.events->recorded;
  std::sort(events.begin(), events.end());
  out.insert(out.end(), events.begin(), events.end());
  return out;
}

// The world's story, one step a period: the same for both runs.
void replay(World& world, Run& run) {
  const auto period = std::chrono::seconds(15);
  run.pass();
  // web runs hot: a scale-up.
  world.usage[{"member1", "web-1"}] = "150m";
  world.usage[{"member2", "web-3"}] = "140m";
  run.loop.clock->advance(period);
  run.pass();
  // member3 stops answering: api's pods there are missing, not gone; api's pod on member2 idles.
  world.down.insert("member3");
  world.usage[{"member2", "api-1"}] = "5m";
  world.apply();
  run.loop.clock->advance(period);
  run.pass();
  // member3 is back, and api runs hot.
  world.down.clear();
  for (auto pod : {"api-2", "api-3"}) world.usage[{"member3", pod}] = "160m";
  world.apply();
  run.loop.clock->advance(period);
  run.pass();
}

// One replay of the world's story, with or without shared reads: what was
// decided, and what the members were asked.
struct Replayed {
  std::vector<std::string> decisions;
  std::size_t member_requests = 0;  // pod lists and pod-metrics requests
  std::size_t pod_lists = 0;
  std::size_t watch_reads = 0;
  std::size_t watches_started = 0;
};
Replayed replayed(bool shared) {
  World world;
  populate(world);
  Run run(world, shared);
  place(*run.cp);
  replay(world, run);
  Replayed out;
  out.decisions = decisions(*run.cp);
  out.pod_lists = run.member_pod_lists(world);
  out.member_requests = out.pod_lists + run.member_metric_calls(world);
  if (run.watched) {
    out.watch_reads = run.watched->reads.size();
    out.watches_started = run.watched->started;
  }
  return out;
}

}  // namespace

TEST_CASE("HpaController: shared reads decide as the per-sync reads do") {
  const Replayed per_sync = replayed(false);
  const Replayed shared_reads = replayed(true);
  const auto& plain = per_sync.decisions;
  const auto& shared = shared_reads.decisions;
  CHECK(shared_reads.pod_lists == 0);        // every pod from the watches
  CHECK(shared_reads.watch_reads == 4 * 4);  // two FederatedHPAs, two members each, four passes
  CHECK(shared_reads.watches_started == 3);  // one watch per member of namespace shop
  const std::size_t plain_requests = per_sync.member_requests, shared_requests = shared_reads.member_requests;
  // The story has decisions worth comparing: web and api scaled.
  REQUIRE_FALSE(plain.empty());
  CHECK(std::count_if(plain.begin(), plain.end(), [](const auto& d) { return d.rfind("web=", 0) == 0; }) >= 1);
  CHECK(std::count_if(plain.begin(), plain.end(), [](const auto& d) { return d.rfind("api=", 0) == 0; }) >= 1);
  CHECK(shared == plain);
  // Per sync the plain loop lists the pods and asks their metrics of each host (4 requests a
  // FederatedHPA); shared, the three members' metrics once a pass.
  CHECK(plain_requests == 4 * 4 * 2);
  CHECK(shared_requests == 4 * 3);
}

TEST_CASE("HpaController: a shared pod metrics fetch is never used once a period old") {
  World world;
  populate(world);
  Run run(world, true);
  place(*run.cp);
  run.cp->federated_hpas->objects = {fhpa("web")};
  auto asked_of = [&](const std::string& member) {
    return std::count_if(run.metrics->pod_queries.begin(), run.metrics->pod_queries.end(),
                         [&](const auto& q) { return World::chooses(q.label_selector, member); });
  };
  run.pass();
  REQUIRE(run.metrics->pod_queries.size() == 2);  // member1 and member2, web's hosts
  CHECK(run.metrics->pod_queries[0].namespace_name == "shop");
  CHECK(run.metrics->pod_queries[0].label_selector.to_string() == "fedmetrics/cluster=member1");
  // 14.999 s later the fetches are younger than the 15 s period: used again, nothing asked.
  run.loop.clock->advance(std::chrono::milliseconds(14'999));
  run.pass();
  CHECK(run.metrics->pod_queries.size() == 2);
  // At 15 s they are a period old: asked again before they are used.
  run.loop.clock->advance(std::chrono::milliseconds(1));
  run.pass();
  CHECK(asked_of("member1") == 2);
  CHECK(asked_of("member2") == 2);
  // A FederatedHPA with a period of its own (5 s) does not use a fetch 5 s old that the others still would.
  auto fast = fhpa("api");
  fast["metadata"]["annotations"]["autoscaling.fedmetrics.io/sync-period"] = "5s";
  run.cp->federated_hpas->objects.push_back(fast);
  run.pass();
  const auto member2_before = asked_of("member2");  // api's first sync used member2's fetch of this instant
  run.loop.clock->advance(std::chrono::seconds(5));
  run.pass();
  CHECK(asked_of("member2") == member2_before + 1);
  CHECK(asked_of("member1") == 2);  // web's fetch of member1, 5 s old, is still fresh for web's 15 s
}

TEST_CASE("HpaController: a failed shared fetch is asked again, not shared") {
  World world;
  populate(world);
  world.down.insert("member2");
  Run run(world, true);
  place(*run.cp);
  auto asked_member2 = [&] {
    return std::count_if(run.metrics->pod_queries.begin(), run.metrics->pod_queries.end(),
                         [](const auto& q) { return World::chooses(q.label_selector, "member2"); });
  };
  run.pass();
  const auto first = asked_member2();
  CHECK(first >= 1);
  run.pass();  // the same instant: a kept answer would be used, a failure is asked again
  CHECK(asked_member2() > first);
  world.down.clear();
  world.apply();
  run.pass();
  const auto answered = asked_member2();
  run.pass();  // answered now: shared by web and api until it is a period old
  CHECK(asked_member2() == answered);
}

TEST_CASE("HpaController: the watches of a namespace stop when its last FederatedHPA goes") {
  World world;
  populate(world);
  Run run(world, true);
  place(*run.cp);
  run.pass();
  CHECK(run.watched->watching ==
        std::set<MemberNamespace>{{"member1", "shop"}, {"member2", "shop"}, {"member3", "shop"}});
  // api is deleted: forgotten after two lists without it; web still reads member1 and member2.
  run.cp->federated_hpas->objects = {fhpa("web")};
  run.pass();
  run.pass();
  run.pass();
  CHECK(run.watched->watching == std::set<MemberNamespace>{{"member1", "shop"}, {"member2", "shop"}});
  run.cp->federated_hpas->objects.clear();
  for (int i = 0; i < 3; ++i) run.pass();
  CHECK(run.watched->watching.empty());
}

}  // namespace fedmetrics::controller
