// The live FederatedHPA loop with its ports in memory: a control plane that
// holds FederatedHPAs, scales and events, members that list pods, and a
// metrics service that answers from a table. The fakes answer at once; the
// loop runs on the test's own thread (support/run_loop.hpp), on a fake clock.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>

#include <map>
#include <optional>
#include <mutex>

#include "support/fake_control_plane.hpp"
#include "support/fake_member_cluster.hpp"
#include "support/fake_member_hpas.hpp"
#include "support/fake_metrics_service.hpp"
#include "fedmetrics/controller/hpa_controller.hpp"
#include "fedmetrics/controller/metrics_gatherer.hpp"
#include "fedmetrics/k8s/pod.hpp"
#include "support/run_loop.hpp"

namespace fedmetrics::controller {
namespace {

using nlohmann::json;

k8s::Quantity q(std::string_view text) { return *k8s::Quantity::parse(text); }
k8s::Timestamp at(int second) { return k8s::Timestamp(std::chrono::seconds(1'787'000'000 + second)); }

using aggregator::testing::FakeMember;
using aggregator::testing::FakeSource;

// Ready pods in "shop" requesting 100m cpu each.
std::vector<k8s::Pod> running_pods(const std::vector<std::string>& names) {
  std::vector<k8s::Pod> out;
  for (const auto& n : names) out.push_back(aggregator::testing::ready_pod("shop", n));
  return out;
}

// A member whose pods request 100m cpu each; it lists no pods while down.
std::shared_ptr<FakeMember> pod_member(std::string name, const std::vector<std::string>& pods) {
  auto m = std::make_shared<FakeMember>(std::move(name), nullptr);
  m->pod_list = running_pods(pods);
  return m;
}
void set_down(FakeMember& m, bool down, const std::vector<std::string>& pods = {"web-a"}) {
  if (down) m.pod_list = aggregator::MemberError{aggregator::MemberError::Kind::Refused, "connection refused", 0, {}};
  else m.pod_list = running_pods(pods);
}

// Pod cpu usage by (cluster, pod), answered as the aggregator does (annotated
// items), custom and external metrics by name (absent: NotFound), through
// the one fake MetricsService.
struct TableMetrics {
  std::map<std::pair<std::string, std::string>, std::string> cpu;
  std::map<std::string, aggregator::CustomMetricsAnswer> custom;
  std::map<std::string, aggregator::ExternalMetricsAnswer> external;
  std::shared_ptr<testing::FakeMetricsService> service = std::make_shared<testing::FakeMetricsService>();

  TableMetrics() {
    service->pods_for = [this](const aggregator::ResourceMetricsQuery& query) {
      std::vector<k8s::PodMetrics> items;
      for (const auto& [key, value] : cpu) {
        k8s::PodMetrics pm;
        pm.metadata.name = key.second;
        pm.metadata.namespace_name = query.namespace_name;
        pm.metadata.annotations[std::string(aggregator::kQueryFromClusterAnnotation)] = key.first;
        pm.timestamp = at(0);
        pm.window = std::chrono::seconds(15);
        pm.containers.push_back({"web", {{"cpu", q(value)}}});
        items.push_back(std::move(pm));
      }
      return aggregator::PodMetricsAnswer{std::move(items), {}};
    };
    service->custom_for = [this](const aggregator::CustomMetricsQuery& query) {
      if (auto it = custom.find(query.metric); it != custom.end()) return it->second;
      return aggregator::CustomMetricsAnswer{k8s::Status::not_found_resource(), {}};
    };
    service->external_for = [this](const aggregator::ExternalMetricsQuery& query) {
      if (auto it = external.find(query.metric); it != external.end()) return it->second;
      return aggregator::ExternalMetricsAnswer{k8s::Status::not_found_resource(), {}};
    };
  }
  TableMetrics(const TableMetrics&) = delete;
  TableMetrics& operator=(const TableMetrics&) = delete;
  [[nodiscard]] const std::vector<aggregator::ResourceMetricsQuery>& asked() const { return service->pod_queries; }
  [[nodiscard]] const std::vector<aggregator::CustomMetricsQuery>& custom_asked() const {
    return service->custom_queries;
  }
};

json fhpa(std::string name, std::string target = "web", json labels = json::object()) {
  return json::parse(R"({"apiVersion":"autoscaling.karmada.io/v1alpha1","kind":"FederatedHPA",
    "metadata":{"name":")" +
                     name + R"(","namespace":"shop","uid":"u-1","generation":3,"labels":)" + labels.dump() + R"(},
    "spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":")" +
                     target + R"("},
      "minReplicas":1,"maxReplicas":10,
      "metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":50}}}]}})");
}

// The loop's metrics port, recorded: "action error" per reconciliation,
// "action error type" per metric computation, the replicas last set.
struct RecordingMetrics : AutoscalerMetrics {
  mutable std::mutex mutex;
  std::vector<std::string> reconciliations;
  std::vector<std::string> computations;
  std::vector<double> durations;                                          // seconds, of every observation
  std::map<std::string, std::pair<std::int32_t, std::int32_t>> replicas;  // "ns/name" -> (current, desired)
  std::vector<std::string> writes;                                        // "create success"
  int rebalances = 0;
  void observe_reconciliation(ScaleAction action, SyncError error, Seconds duration) override {
    std::lock_guard lock(mutex);
    reconciliations.push_back(std::string(to_string(action)) + " " + std::string(to_string(error)));
    durations.push_back(duration.count());
  }
  void observe_metric_computation(ScaleAction action, SyncError error, autoscaler::MetricSourceType type,
                                  Seconds duration) override {
    std::lock_guard lock(mutex);
    computations.push_back(std::string(to_string(action)) + " " + std::string(to_string(error)) + " " +
                           std::string(autoscaler::to_string(type)));
    durations.push_back(duration.count());
  }
  void set_replicas(const std::string& ns, const std::string& name, std::int32_t current,
                    std::int32_t desired) override {
    std::lock_guard lock(mutex);
    replicas[ns + "/" + name] = {current, desired};
  }
  void forget(const std::string& ns, const std::string& name) override {
    std::lock_guard lock(mutex);
    replicas.erase(ns + "/" + name);
  }
  void observe_member_hpa_write(MemberHPAOp op, bool succeeded) override {
    std::lock_guard lock(mutex);
    writes.push_back(std::string(to_string(op)) + (succeeded ? " success" : " error"));
  }
  void observe_rebalance() override {
    std::lock_guard lock(mutex);
    ++rebalances;
  }
  template <class F>
  auto read(F f) const {
    std::lock_guard lock(mutex);
    return f(*this);
  }
};

struct Fixture {
  testing::RunLoop loop;  // first: it outlives the controller
  std::shared_ptr<testing::FakeControlPlane> cp = std::make_shared<testing::FakeControlPlane>();
  std::shared_ptr<TableMetrics> metrics = std::make_shared<TableMetrics>();
  std::shared_ptr<FakeMember> member1 = pod_member("member1", {"web-a"});
  std::shared_ptr<FakeMember> member2 = pod_member("member2", {"web-a"});
  std::shared_ptr<FakeSource> members = std::make_shared<FakeSource>();
  std::unique_ptr<HpaController> controller;

  explicit Fixture(ControllerOptions options = {}) {
    members->list = aggregator::MemberList{member1, member2};
    options.clock = [] { return at(0); };
    options.monotonic = loop.clock;
    controller = std::make_unique<HpaController>(loop.executor(), cp->ports(), metrics->service, members, options);
  }
  ~Fixture() { stop(); }
  // A pass over every FederatedHPA, run to its end.
  void pass() { loop.run(controller->sync_all()); }
  void stop() { loop.run(controller->shutdown()); }
};

TEST_CASE("HpaController: scales up from the pods of every member, same-named pods counted apart") {
  Fixture f;
  f.cp->federated_hpas->objects.push_back(fhpa("web"));
  // Two pods named web-a, one per member, each at 150m of 100m requested: 150 % vs 50 %.
  f.metrics->cpu = {{{"member1", "web-a"}, "150m"}, {{"member2", "web-a"}, "150m"}};
  f.pass();
  // ceil(2 * 150 / 50) = 6, limited without behavior to max(2 * 2, 4) = 4, as upstream.
  REQUIRE(f.cp->scales->updates == std::vector<std::int32_t>{4});
  REQUIRE(f.cp->events->recorded.size() == 1);
  CHECK(
      f.cp->events->recorded[0].starts_with("Normal SuccessfulRescale: New size: 4; reason: cpu resource utilization"));
  const auto& status = f.cp->federated_hpas->statuses.at("shop/web");
  CHECK(status["desiredReplicas"] == 4);
  CHECK(status["currentReplicas"] == 2);
  CHECK(status["observedGeneration"] == 3);
  CHECK(status["currentMetrics"][0]["resource"]["current"]["averageUtilization"] == 150);
  CHECK(f.metrics->asked().at(0).label_selector.to_string() == "app=web");
  CHECK(f.controller->stats().rescales == 1);
}

TEST_CASE("HpaController: only the members the target's ResourceBinding names are asked") {
  Fixture f;
  f.cp->federated_hpas->objects.push_back(fhpa("web"));
  f.cp->placement->clusters = std::vector<TargetCluster>{{"member1", 2}};
  // member2 runs a pod with the same labels that is not the target's: it must not count.
  f.metrics->cpu = {{{"member1", "web-a"}, "150m"}, {{"member2", "web-a"}, "150m"}};
  f.pass();
  CHECK(f.member1->pod_list_calls.size() == 1);
  CHECK(f.member2->pod_list_calls.size() == 0);
  REQUIRE(f.metrics->asked().size() == 1);
  CHECK(f.metrics->asked()[0].label_selector.to_string() == "app=web,fedmetrics/cluster in (member1)");
  // One pod at 150 % of a 50 % target: ceil(1 * 150 / 50) = 3, not the 4 two pods would give.
  CHECK(f.cp->scales->updates == std::vector<std::int32_t>{3});
}

TEST_CASE("HpaController: a stale scale is a FailedRescale, retried at the next pass") {
  Fixture f;
  f.cp->federated_hpas->objects.push_back(fhpa("web"));
  f.metrics->cpu = {{{"member1", "web-a"}, "150m"}, {{"member2", "web-a"}, "150m"}};
  f.cp->scales->conflict = true;
  f.pass();
  CHECK(f.cp->scales->updates.empty());
  REQUIRE(f.cp->events->recorded.size() == 1);
  CHECK(f.cp->events->recorded[0].starts_with("Warning FailedRescale: New size: 4;"));
  CHECK(f.cp->events->recorded[0].find("the object has been modified") != std::string::npos);
  auto conditions = f.cp->federated_hpas->statuses.at("shop/web")["conditions"];
  CHECK(conditions[0]["type"] == "AbleToScale");
  CHECK(conditions[0]["status"] == "False");
  CHECK(conditions[0]["reason"] == "FailedUpdateScale");
  f.cp->scales->conflict = false;
  f.pass();
  CHECK(f.cp->scales->updates == std::vector<std::int32_t>{4});
}

TEST_CASE("HpaController: a target without a scale gives FailedGetScale and a status saying so") {
  Fixture f;
  f.cp->federated_hpas->objects.push_back(fhpa("orphan", "missing"));
  f.pass();
  REQUIRE(f.cp->events->recorded.size() == 1);
  CHECK(f.cp->events->recorded[0] ==
        "Warning FailedGetScale: the HPA controller was unable to get the target's current scale: deployments.apps "
        "\"missing\" not found");
  CHECK(f.cp->federated_hpas->statuses.at("shop/orphan")["conditions"][0]["reason"] == "FailedGetScale");
}

TEST_CASE("HpaController: the mode annotation: invalid is InvalidMode, distributed is refused, centralized scales") {
  Fixture f;
  f.metrics->cpu = {{{"member1", "web-a"}, "150m"}, {{"member2", "web-a"}, "150m"}};  // a scale-up is due
  auto with_mode = [](std::string mode) {
    json h = fhpa("web");
    h["metadata"]["annotations"] = {{"autoscaling.fedmetrics.io/mode", mode}};
    return h;
  };
  auto scaling_active = [&] {
    for (const auto& c : f.cp->federated_hpas->statuses.at("shop/web")["conditions"])
      if (c["type"] == "ScalingActive") return c;
    return json();
  };
  SECTION("an unknown value: ScalingActive False, InvalidMode, a Warning, no scale") {
    f.cp->federated_hpas->objects.push_back(with_mode("Distributed"));  // values are case-sensitive
    f.pass();
    CHECK(f.cp->scales->updates.empty());
    CHECK(scaling_active()["status"] == "False");
    CHECK(scaling_active()["reason"] == "InvalidMode");
    REQUIRE(f.cp->events->recorded.size() == 1);
    CHECK(f.cp->events->recorded[0].starts_with("Warning InvalidMode: "));
  }
  SECTION("distributed: not scaled centrally, and the status says why") {
    f.cp->federated_hpas->objects.push_back(with_mode("distributed"));
    f.pass();
    CHECK(f.cp->scales->updates.empty());
    CHECK(scaling_active()["reason"] == "DistributedModeUnavailable");
    CHECK(f.cp->events->recorded.size() == 1);
  }
  SECTION("centralized: as without the annotation") {
    f.cp->federated_hpas->objects.push_back(with_mode("centralized"));
    f.pass();
    CHECK(f.cp->scales->updates.size() == 1);
  }
}

TEST_CASE("HpaController: a member that is down makes its pods missing, not the sync fail") {
  Fixture f;
  f.cp->federated_hpas->objects.push_back(fhpa("web"));
  set_down(*f.member2, true);
  f.metrics->cpu = {{{"member1", "web-a"}, "150m"}};
  f.pass();
  // One known pod at 150 %: still a scale-up, from the pods that answered.
  REQUIRE(f.cp->scales->updates.size() == 1);
  CHECK(f.cp->scales->updates[0] > 2);
}

TEST_CASE("HpaController: each decision is kept on the object for explain, written again only when it changed") {
  Fixture f;
  f.cp->federated_hpas->objects.push_back(fhpa("web"));
  const std::string annotation(autoscaler::kDecisionAnnotation);
  auto decision = [&] {
    const auto& annotations = f.cp->federated_hpas->objects[0]["metadata"]["annotations"];
    auto decoded = autoscaler::decision_from_json(json::parse(annotations[annotation].get<std::string>()));
    REQUIRE(decoded);
    return *decoded;
  };
  // Two pods at 52 % of a 50 % target: within the tolerance, no change.
  f.metrics->cpu = {{{"member1", "web-a"}, "52m"}, {{"member2", "web-a"}, "52m"}};
  f.pass();
  CHECK(f.cp->federated_hpas->annotation_writes[annotation] == 1);
  auto first = decision();
  CHECK(first.rule == autoscaler::rule::kTolerance);
  REQUIRE(first.metrics.size() == 1);
  REQUIRE(first.metrics[0].members.size() == 2);
  CHECK(first.metrics[0].members[0].member == "member1");
  CHECK(first.metrics[0].members[0].counted == 1);
  // The same decision again: not written again.
  f.pass();
  CHECK(f.cp->federated_hpas->annotation_writes[annotation] == 1);
  // Under load the decision changes: written, bound by the scale-up limit.
  f.metrics->cpu = {{{"member1", "web-a"}, "150m"}, {{"member2", "web-a"}, "150m"}};
  f.pass();
  CHECK(f.cp->federated_hpas->annotation_writes[annotation] == 2);
  auto second = decision();
  CHECK(second.rule == autoscaler::rule::kScaleUpLimit);
  CHECK(second.desired_replicas == 4);
  CHECK(second.proposal == 6);
}

TEST_CASE("HpaController: --autoscaler-label-selector picks the FederatedHPAs it manages") {
  ControllerOptions options;
  options.selector = *k8s::LabelSelector::parse("autoscaler=fedmetrics");
  Fixture f(options);
  f.cp->federated_hpas->objects.push_back(fhpa("web"));
  f.cp->federated_hpas->objects.push_back(fhpa("mine", "web", json::object({{"autoscaler", "fedmetrics"}})));
  f.metrics->cpu = {{{"member1", "web-a"}, "50m"}, {{"member2", "web-a"}, "50m"}};
  f.pass();
  CHECK(f.cp->federated_hpas->statuses.count("shop/web") == 0);
  CHECK(f.cp->federated_hpas->statuses.count("shop/mine") == 1);
}

TEST_CASE("HpaController: pure pieces: pods, scale target resources") {
  auto pod = k8s::pod_from_json(json::parse(R"({"metadata":{"name":"p","namespace":"n",
      "deletionTimestamp":"2026-01-01T00:00:00Z"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"250m"}}}]},
      "status":{"phase":"Running","startTime":"2025-12-31T23:00:00Z",
        "conditions":[{"type":"Ready","status":"False","lastTransitionTime":"2025-12-31T23:30:00Z"}]}})"));
  REQUIRE(pod.ok());
  auto converted = to_autoscaler_pod("member9", *pod);
  CHECK(converted.key == autoscaler::PodKey{"member9", "n", "p"});
  CHECK(converted.deleting);
  CHECK(converted.phase == autoscaler::PodPhase::Running);
  REQUIRE(converted.ready.has_value());
  CHECK(converted.ready->status == autoscaler::ConditionStatus::False);
  CHECK(converted.containers.at(0).requests.at("cpu") == q("250m"));
  auto bad = k8s::pod_list_from_json(json::parse(R"({"items":[{"metadata":{"name":"p"},"status":{"phase":7}}]})"));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message == "items[0].status.phase: expected a string, got number");

  auto deployment = target_resource({"Deployment", "web", "apps/v1"});
  CHECK((deployment.group == "apps" && deployment.version == "v1" && deployment.resource == "deployments"));
  CHECK(target_resource({"StatefulSet", "db", "apps/v1"}).resource == "statefulsets");
  CHECK(target_resource({"Ingress", "i", "networking.k8s.io/v1"}).resource == "ingresses");
  CHECK(target_resource({"Policy", "p", "example.com/v1"}).resource == "policies");
  CHECK(target_resource({"ReplicationController", "rc", "v1"}).group.empty());
}

}  // namespace
}  // namespace fedmetrics::controller

namespace fedmetrics::controller {
namespace {

json scaling_active_of(const testing::FakeControlPlane& cp, const std::string& key) {
  for (const auto& c : cp.federated_hpas->statuses.at(key)["conditions"])
    if (c["type"] == "ScalingActive") return c;
  return json();
}

// The cadence on the fake clock: each FederatedHPA when it is due, no wall time waited for.
TEST_CASE("HpaController: only syncs while active (the leader election)") {
  ControllerOptions options;
  options.sync_period = std::chrono::seconds(10);
  std::atomic<bool> leading{false};
  options.active = [&] { return leading.load(); };
  Fixture f(options);
  f.cp->federated_hpas->objects.push_back(fhpa("web"));
  f.metrics->cpu = {{{"member1", "web-a"}, "50m"}, {{"member2", "web-a"}, "50m"}};
  f.controller->start();
  f.loop.advance(5 * options.sync_period);
  CHECK(f.controller->stats().syncs == 0);  // looked, but not leading
  leading = true;
  f.loop.advance(options.sync_period);  // looked at again a period later
  CHECK(f.controller->stats().syncs == 1);
  f.loop.advance(options.sync_period);
  CHECK(f.controller->stats().syncs == 2);
  f.stop();
  f.loop.advance(10 * options.sync_period);
  CHECK(f.controller->stats().syncs == 2);  // none after stop
}

TEST_CASE("HpaController: sync_soon syncs every FederatedHPA at once, not when due (a new leader)") {
  ControllerOptions options;
  options.sync_period = std::chrono::hours(1);
  std::atomic<bool> leading{false};
  options.active = [&] { return leading.load(); };
  Fixture f(options);
  f.cp->federated_hpas->objects.push_back(fhpa("web"));
  f.metrics->cpu = {{{"member1", "web-a"}, "50m"}, {{"member2", "web-a"}, "50m"}};
  const auto started = f.loop.clock->now();
  f.controller->start();  // finds it not leading; it looks again an hour later
  f.loop.poll();
  CHECK(f.controller->stats().syncs == 0);
  leading = true;
  f.controller->sync_soon();
  f.loop.poll();
  CHECK(f.controller->stats().syncs == 1);
  CHECK(f.loop.clock->now() == started);  // no time passed
}

TEST_CASE("HpaController: a FederatedHPA the watch reports as new is synced at once, a known one is not") {
  ControllerOptions options;
  options.sync_period = std::chrono::hours(1);
  std::atomic<bool> leading{true};
  options.active = [&] { return leading.load(); };
  Fixture f(options);
  f.cp->federated_hpas->objects.push_back(fhpa("web"));
  f.metrics->cpu = {{{"member1", "web-a"}, "50m"}, {{"member2", "web-a"}, "50m"}};
  f.controller->start();
  f.loop.poll();
  REQUIRE(f.controller->stats().syncs == 1);  // the first pass
  REQUIRE(f.cp->federated_hpas->watching);
  REQUIRE(f.cp->federated_hpas->on_added);
  f.cp->federated_hpas->on_added(fhpa("web2"));  // the watch's ADDED event; the next list is an hour away
  f.loop.poll();
  CHECK(f.controller->stats().syncs == 2);
  CHECK(f.controller->stats().synced_on_create == 1);
  // An object the loop already knows, unchanged (a relist reporting it again), waits for its period.
  f.cp->federated_hpas->on_added(fhpa("web"));
  // A follower does not sync what it is told about.
  leading = false;
  f.cp->federated_hpas->on_added(fhpa("web3"));
  f.loop.poll();
  CHECK(f.controller->stats().syncs == 2);
  CHECK(f.controller->stats().synced_on_create == 1);
  f.stop();
  CHECK_FALSE(f.cp->federated_hpas->watching);  // the watch ends with the loop
}

// When (seconds from now) each FederatedHPA's status was written while the
// fake clock moves on a second at a time for `seconds`; `at_second` runs at
// each second, after what was due then (a watch event, an edit).
std::map<std::string, std::vector<int>> syncs_over(Fixture& f, int seconds,
                                                   const std::function<void(int)>& at_second = nullptr) {
  std::map<std::string, std::vector<int>> synced;
  std::size_t seen = f.cp->federated_hpas->status_writers.size();
  for (int second = 0; second <= seconds; ++second) {
    if (second > 0) f.loop.advance(std::chrono::seconds(1));
    if (at_second) at_second(second);
    f.loop.poll();
    const auto& writers = f.cp->federated_hpas->status_writers;
    for (; seen < writers.size(); ++seen) synced[writers[seen]].push_back(second);
  }
  return synced;
}

using Seconds = std::vector<int>;

ControllerOptions every_ten_seconds() {
  ControllerOptions options;
  options.sync_period = std::chrono::seconds(10);
  return options;
}

// The loop started on `objects`, their pods on target (no scale).
void start_with(Fixture& f, std::vector<json> objects) {
  f.cp->federated_hpas->objects = std::move(objects);
  f.metrics->cpu = {{{"member1", "web-a"}, "50m"}, {{"member2", "web-a"}, "50m"}};
  f.controller->start();
}

TEST_CASE("HpaController: a new FederatedHPA is synced at creation and a period later, never twice within one") {
  Fixture f(every_ten_seconds());
  start_with(f, {fhpa("web")});
  const auto synced = syncs_over(f, 30, [&](int second) {
    if (second != 4) return;
    // Created at 4 s: the watch reports it, and the lists have it from now on.
    f.cp->federated_hpas->objects.push_back(fhpa("web2", "other"));
    f.cp->federated_hpas->on_added(f.cp->federated_hpas->objects.back());
  });
  CHECK(synced.at("shop/web") == Seconds{0, 10, 20, 30});
  // At 4 s, then 14 s: not again at 10 s with the one listed before it.
  CHECK(synced.at("shop/web2") == Seconds{4, 14, 24});
  CHECK(f.controller->stats().synced_on_create == 1);
}

TEST_CASE("HpaController: a new generation is synced at once and its period starts again") {
  Fixture f(every_ten_seconds());
  start_with(f, {fhpa("web")});
  const auto synced = syncs_over(f, 35, [&](int second) {
    auto& object = f.cp->federated_hpas->objects[0];
    if (second == 13) {
      object["spec"]["maxReplicas"] = 12;  // edited: the API server moves the generation on
      object["metadata"]["generation"] = 4;
      f.cp->federated_hpas->on_added(object);  // the watch's MODIFIED event
    }
    // A change of status or labels keeps the generation: nothing at once.
    if (second == 17) f.cp->federated_hpas->on_added(object);
  });
  CHECK(synced.at("shop/web") == Seconds{0, 10, 13, 23, 33});
}

TEST_CASE("HpaController: a generation seen first in a list is a change too") {
  Fixture f(every_ten_seconds());
  json web2 = fhpa("web2", "other");
  web2["metadata"]["annotations"]["autoscaling.fedmetrics.io/sync-period"] = "3s";
  start_with(f, {fhpa("web"), web2});
  // web edited at 1 s without a watch event: the list of web2's sync at 3 s sees it.
  const auto synced = syncs_over(f, 14, [&](int second) {
    if (second == 1) f.cp->federated_hpas->objects[0]["metadata"]["generation"] = 4;
  });
  CHECK(synced.at("shop/web") == Seconds{0, 3, 13});
}

TEST_CASE("HpaController: autoscaling.fedmetrics.io/sync-period sets a FederatedHPA's own period") {
  Fixture f(every_ten_seconds());
  json fast = fhpa("fast", "other");
  fast["metadata"]["annotations"]["autoscaling.fedmetrics.io/sync-period"] = "4s";
  json slow = fhpa("slow", "missing");
  slow["metadata"]["annotations"]["autoscaling.fedmetrics.io/sync-period"] = "1m30s";
  start_with(f, {fhpa("web"), fast, slow});
  const auto synced = syncs_over(f, 100);
  CHECK(synced.at("shop/web") == Seconds{0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100});
  CHECK(synced.at("shop/fast") ==
        Seconds{0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60, 64, 68, 72, 76, 80, 84, 88, 92, 96, 100});
  CHECK(synced.at("shop/slow") == Seconds{0, 90});
}

TEST_CASE("HpaController: an invalid sync-period annotation is InvalidSyncPeriod, and the sync period stands") {
  struct Case {
    json value;
    std::string message;
  };
  const std::string keeps =
      "; the FederatedHPA is synced every 10s (--horizontal-pod-autoscaler-sync-period) and not scaled until it is "
      "fixed";
  const std::vector<Case> cases = {
      {"2s", "annotation autoscaling.fedmetrics.io/sync-period: \"2s\" is shorter than the minimum of 3s" + keeps},
      {"2999ms",
       "annotation autoscaling.fedmetrics.io/sync-period: \"2999ms\" is shorter than the minimum of 3s" + keeps},
      {"-5s", "annotation autoscaling.fedmetrics.io/sync-period: \"-5s\" is shorter than the minimum of 3s" + keeps},
      {"fast",
       "annotation autoscaling.fedmetrics.io/sync-period: \"fast\" is not a duration such as \"30s\" or \"1m30s\"" +
           keeps},
      {"30",
       "annotation autoscaling.fedmetrics.io/sync-period: \"30\" is not a duration such as \"30s\" or "
       "\"1m30s\"" +
           keeps},
      {30, "annotation autoscaling.fedmetrics.io/sync-period: must be a string such as \"30s\" or \"1m30s\"" + keeps},
  };
  for (const auto& c : cases) {
    SECTION(c.value.dump()) {
      Fixture f(every_ten_seconds());
      json h = fhpa("web");
      h["metadata"]["annotations"]["autoscaling.fedmetrics.io/sync-period"] = c.value;
      f.cp->federated_hpas->objects = {h};
      f.metrics->cpu = {{{"member1", "web-a"}, "150m"}, {{"member2", "web-a"}, "150m"}};  // a scale-up is due
      f.controller->start();
      const auto synced = syncs_over(f, 20);
      CHECK(synced.at("shop/web") == Seconds{0, 10, 20});
      CHECK(f.cp->scales->updates.empty());
      const json active = scaling_active_of(*f.cp, "shop/web");
      CHECK(active["status"] == "False");
      CHECK(active["reason"] == "InvalidSyncPeriod");
      CHECK(active["message"] == c.message);
      REQUIRE_FALSE(f.cp->events->recorded.empty());
      CHECK(f.cp->events->recorded[0] == "Warning InvalidSyncPeriod: " + c.message);
    }
  }
}

TEST_CASE("HpaController: a slow sync delays no other, and is followed as soon as it ends") {
  Fixture f(every_ten_seconds());
  f.cp->scales->hold_only = "web";
  start_with(f, {fhpa("web"), fhpa("other", "other")});
  const auto synced = syncs_over(f, 40, [&](int second) {
    if (second == 5) f.cp->scales->hold_reads.on = true;  // web's scale read at 10 s takes until 23 s
    if (second == 23) {
      f.cp->scales->hold_reads.on = false;
      f.cp->scales->hold_reads.release();
    }
  });
  CHECK(synced.at("shop/other") == Seconds{0, 10, 20, 30, 40});
  // Its sync of 10 s ends at 23 s; the one due at 20 s starts then, and the next a period later.
  CHECK(synced.at("shop/web") == Seconds{0, 23, 23, 33});
  CHECK(f.controller->stats().skipped_busy == 1);
}

// Many FederatedHPAs created at different moments, a few with their own
// period: each is synced exactly its period apart, never sooner and never
// later, so none waits more than 1.5 periods.
TEST_CASE("HpaController: many FederatedHPAs, each on its own cadence") {
  ControllerOptions options;
  options.sync_period = std::chrono::seconds(15);
  options.concurrent_syncs = 2;
  Fixture f(options);
  f.metrics->cpu = {{{"member1", "web-a"}, "50m"}, {{"member2", "web-a"}, "50m"}};
  std::map<std::string, int> period;  // seconds
  f.controller->start();
  const auto synced = syncs_over(f, 120, [&](int second) {
    if (second % 3 != 1 || second > 40) return;
    const std::string name = "h" + std::to_string(second);
    json h = fhpa(name, "target-" + name);
    h["metadata"]["uid"] = "uid-" + name;
    period[name] = 15;
    if (second % 2 == 0) {
      period[name] = 5 + second % 7;
      h["metadata"]["annotations"]["autoscaling.fedmetrics.io/sync-period"] = std::to_string(period[name]) + "s";
    }
    f.cp->federated_hpas->objects.push_back(h);
    if (second % 4 != 0) f.cp->federated_hpas->on_added(h);  // some seen by the watch, the others by a list
  });
  REQUIRE(synced.size() == period.size());
  for (const auto& [name, times] : synced) {
    INFO(name);
    const int p = period.at(name.substr(5));
    REQUIRE(times.size() >= 5);
    for (std::size_t i = 1; i < times.size(); ++i) CHECK(times[i] - times[i - 1] == p);
  }
}

TEST_CASE("HpaController: a spec the API server would refuse is never acted on, and the status says why") {
  struct Case {
    std::string name;
    std::function<void(json&)> edit;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"minReplicas above maxReplicas", [](json& spec) { spec["minReplicas"] = 7, spec["maxReplicas"] = 3; },
       "spec.maxReplicas: Invalid value: 3: must be greater than or equal to `minReplicas`"},
      {"an unknown metric type", [](json& spec) { spec["metrics"][0]["type"] = "Foo"; },
       "spec.metrics[0].type: must be Resource, ContainerResource, Pods, Object or External (got \"Foo\")"},
      {"no maxReplicas", [](json& spec) { spec.erase("maxReplicas"); }, "spec.maxReplicas: is required"},
      {"an empty scale-up policy list",
       [](json& spec) {
         spec["behavior"] = {{"scaleUp", {{"policies", json::array()}}}};
       },
       "spec.behavior.scaleUp.policies: Required value: must specify at least one Policy"},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      Fixture f;
      f.metrics->cpu = {{{"member1", "web-a"}, "150m"}, {{"member2", "web-a"}, "150m"}};  // a scale-up is due
      json h = fhpa("web");
      c.edit(h["spec"]);
      f.cp->federated_hpas->objects.push_back(h);
      f.pass();
      CHECK(f.cp->scales->updates.empty());
      const json active = scaling_active_of(*f.cp, "shop/web");
      CHECK(active["status"] == "False");
      CHECK(active["reason"] == "FailedConvertHPA");
      CHECK(active["message"] == c.message);
      CHECK(f.cp->events->recorded == std::vector<std::string>{"Warning FailedConvertHPA: " + c.message});
      SECTION("before the target is looked at") {
        h["spec"]["scaleTargetRef"]["name"] = "missing";
        f.cp->federated_hpas->objects = {h};
        f.pass();
        CHECK(scaling_active_of(*f.cp, "shop/web")["reason"] == "FailedConvertHPA");
        REQUIRE(f.cp->events->recorded.size() == 2);
        CHECK(f.cp->events->recorded[1] == f.cp->events->recorded[0]);  // the same Event again: the recorder counts it
      }
    }
  }
}

TEST_CASE("HpaController: two FederatedHPAs on one target: AmbiguousSelector on both, neither scales it") {
  Fixture f;
  f.metrics->cpu = {{{"member1", "web-a"}, "150m"}, {{"member2", "web-a"}, "150m"}};  // a scale-up is due
  f.cp->federated_hpas->objects = {fhpa("web"), fhpa("web-cpu"), fhpa("other", "missing")};
  f.pass();
  CHECK(f.cp->scales->updates.empty());
  const std::string message = "pods by selector app=web are controlled by multiple HPAs: [shop/web shop/web-cpu]";
  for (const std::string key : {"shop/web", "shop/web-cpu"}) {
    const json active = scaling_active_of(*f.cp, key);
    CHECK(active["status"] == "False");
    CHECK(active["reason"] == "AmbiguousSelector");
    CHECK(active["message"] == message);
  }
  CHECK(std::count(f.cp->events->recorded.begin(), f.cp->events->recorded.end(),
                   "Warning AmbiguousSelector: " + message) == 2);
  SECTION("the same workload named by another API version is the same target") {
    f.cp->federated_hpas->objects[1]["spec"]["scaleTargetRef"]["apiVersion"] = "apps/v1beta2";
    f.pass();
    CHECK(f.cp->scales->updates.empty());
  }
  SECTION("the other one deleted: scaled once the loop has forgotten it (two lists without it)") {
    f.cp->federated_hpas->objects.erase(f.cp->federated_hpas->objects.begin() + 1);
    f.pass();
    CHECK(f.cp->scales->updates.empty());
    f.pass();
    CHECK(f.cp->scales->updates.size() == 1);
    CHECK(scaling_active_of(*f.cp, "shop/web")["reason"] == "ValidMetricFound");
  }
}

// The scale-up policy that makes history visible: one pod per 10 minutes.
json one_pod_per_ten_minutes(std::string uid) {
  json h = fhpa("web");
  h["metadata"]["uid"] = std::move(uid);
  h["spec"]["behavior"] = json::parse(R"({"scaleUp":{"policies":[{"type":"Pods","value":1,"periodSeconds":600}]}})");
  return h;
}

TEST_CASE("HpaController: history belongs to the object: one created again under its name starts afresh") {
  Fixture f;
  f.metrics->cpu = {{{"member1", "web-a"}, "150m"}, {{"member2", "web-a"}, "150m"}};  // 300 %: 6 wanted
  f.cp->federated_hpas->objects = {one_pod_per_ten_minutes("uid-1")};
  f.pass();
  REQUIRE(f.cp->scales->updates == std::vector<std::int32_t>{3});  // 2 -> 3: one pod per period
  f.pass();
  REQUIRE(f.cp->scales->updates.size() == 1);  // the same object waits for its period
  SECTION("deleted and created again: a new uid, no scale event behind it: 3 -> 4") {
    f.cp->federated_hpas->objects = {one_pod_per_ten_minutes("uid-2")};
    f.pass();
    CHECK(f.cp->scales->updates == std::vector<std::int32_t>{3, 4});
  }
}

TEST_CASE("HpaController: a FederatedHPA created again under a known name is synced at once") {
  ControllerOptions options;
  options.sync_period = std::chrono::hours(1);
  Fixture f(options);
  f.metrics->cpu = {{{"member1", "web-a"}, "150m"}, {{"member2", "web-a"}, "150m"}};
  f.cp->federated_hpas->objects = {one_pod_per_ten_minutes("uid-1")};
  f.controller->start();
  f.loop.poll();
  REQUIRE(f.controller->stats().syncs == 1);
  REQUIRE(f.cp->scales->updates == std::vector<std::int32_t>{3});
  REQUIRE(f.cp->federated_hpas->on_added);
  // Deleted and created again (an hour before it is due): the watch reports the new object.
  f.cp->federated_hpas->objects = {one_pod_per_ten_minutes("uid-2")};
  f.cp->federated_hpas->on_added(f.cp->federated_hpas->objects[0]);
  f.loop.poll();
  CHECK(f.controller->stats().syncs == 2);
  CHECK(f.controller->stats().synced_on_create == 1);
  CHECK(f.cp->scales->updates == std::vector<std::int32_t>{3, 4});
}

}  // namespace
}  // namespace fedmetrics::controller

// Deciding only on complete data in the live loop: the same rules as
// `simulate` (member_placement_test.cpp), fed from the ResourceBinding, the
// pod lists and the aggregator's warnings.
namespace fedmetrics::controller {
namespace {

json fhpa_with(const json& metrics) {
  json h = fhpa("web");
  h["spec"]["metrics"] = metrics;
  return h;
}

ControllerOptions no_window() {
  ControllerOptions options;
  options.algorithm.downscale_stabilization = std::chrono::seconds(0);
  return options;
}

bool has_event(const testing::FakeControlPlane& cp, const std::string& prefix, const std::string& part) {
  for (const auto& e : cp.events->recorded)
    if (e.starts_with(prefix) && e.find(part) != std::string::npos) return true;
  return false;
}

std::string scaling_active_message(const json& status) {
  for (const auto& c : status["conditions"])
    if (c["type"] == "ScalingActive") return c["message"].get<std::string>();
  return "";
}

TEST_CASE("HpaController: Duplicated placement is calibrated: 2 replicas on 3 members at half the target stay") {
  Fixture f(no_window());
  auto member3 = pod_member("member3", {"web-a", "web-b"});
  f.member1->pod_list = running_pods({"web-a", "web-b"});
  f.member2->pod_list = running_pods({"web-a", "web-b"});
  f.members->list = aggregator::MemberList{f.member1, f.member2, member3};
  f.cp->federated_hpas->objects.push_back(fhpa("web"));
  f.cp->placement->clusters = std::vector<TargetCluster>{{"member1", 2}, {"member2", 2}, {"member3", 2}};
  // 6 pods at 25 % of 100m, half the 50 % target: ceil(0.5 * 6) = 3 uncalibrated.
  for (const char* m : {"member1", "member2", "member3"})
    for (const char* p : {"web-a", "web-b"}) f.metrics->cpu[{m, p}] = "25m";
  f.pass();
  // ceil(0.5 * 6 / 3) = 1: a scale-down, never the scale-up to 3.
  CHECK(f.cp->scales->updates == std::vector<std::int32_t>{1});
}

TEST_CASE("HpaController: a member whose pods could not be read cannot cause a scale-down") {
  Fixture f(no_window());
  f.cp->federated_hpas->objects.push_back(fhpa("web"));
  f.cp->placement->clusters = std::vector<TargetCluster>{{"member1", 1}, {"member2", 1}};
  set_down(*f.member2, true);
  // member1's pod at 10 % of the 50 % target; member2's is missing: at 100 %
  // of its request on a scale-down, (10 + 100) / 200 = 55 %: no scale-down.
  f.metrics->cpu = {{{"member1", "web-a"}, "10m"}};
  f.pass();
  CHECK(f.cp->scales->updates.empty());
  CHECK(f.cp->federated_hpas->statuses.at("shop/web")["desiredReplicas"] == 2);
  CHECK(has_event(*f.cp, "Warning IncompleteMetrics:", "pods of member2 could not be read (1 placed replicas"));
  CHECK_THAT(scaling_active_message(f.cp->federated_hpas->statuses.at("shop/web")), Catch::Contains("member2"));

  // Read again, the same load scales down.
  set_down(*f.member2, false);
  f.metrics->cpu = {{{"member1", "web-a"}, "10m"}, {{"member2", "web-a"}, "10m"}};
  f.pass();
  CHECK(f.cp->scales->updates == std::vector<std::int32_t>{1});
}

TEST_CASE("HpaController: a member left out (its Cluster NotReady) has missing pods, not absent ones") {
  Fixture f(no_window());
  f.cp->federated_hpas->objects.push_back(fhpa("web"));
  f.cp->placement->clusters = std::vector<TargetCluster>{{"member1", 1}, {"member2", 1}};
  // member2 is not a member to ask at all: the member source left it out.
  f.members->list = aggregator::MemberList{f.member1};
  f.members->left_out = {{"member2", "Cluster NotReady (ClusterNotReachable)"}};
  f.metrics->cpu = {{{"member1", "web-a"}, "10m"}};
  f.pass();
  // Without it, member1's pod alone at 10 % of a 50 % target would scale 2 -> 1.
  CHECK(f.cp->scales->updates.empty());
  CHECK(has_event(*f.cp, "Warning IncompleteMetrics:", "member2"));

  // Without a binding, every left-out member's share of the replicas is missing too.
  f.cp->placement->clusters = std::nullopt;
  f.pass();
  CHECK(f.cp->scales->updates.empty());

  // Ready again: the same load scales down.
  f.members->list = aggregator::MemberList{f.member1, f.member2};
  f.members->left_out.clear();
  f.cp->placement->clusters = std::vector<TargetCluster>{{"member1", 1}, {"member2", 1}};
  f.metrics->cpu = {{{"member1", "web-a"}, "10m"}, {{"member2", "web-a"}, "10m"}};
  f.pass();
  CHECK(f.cp->scales->updates == std::vector<std::int32_t>{1});
}

TEST_CASE("HpaController: an External value that misses a member scales up, never down") {
  Fixture f(no_window());
  f.cp->federated_hpas->objects.push_back(
      fhpa_with(json::parse(R"([{"type":"External","external":{"metric":{"name":"queue"},
      "target":{"type":"Value","value":"10"}}}])")));
  // The decision reads missing_members, never the Warning texts.
  auto answer = [](const std::string& value, std::vector<std::string> missing) {
    k8s::ExternalMetricValue v;
    v.metric_name = "queue";
    v.value = q(value);
    aggregator::ExternalMetricsAnswer a{std::vector<k8s::ExternalMetricValue>{v}, {"a warning text"}};
    if (missing.empty()) a.warnings.clear();
    a.missing_members = std::move(missing);
    return a;
  };
  // 2 ready pods; 2 of a target of 10: ceil(0.2 * 2) = 1 when complete.
  f.metrics->external["queue"] = answer("2", {"member2"});
  f.pass();
  CHECK(f.cp->scales->updates.empty());
  const json status = f.cp->federated_hpas->statuses.at("shop/web");
  CHECK(status["currentMetrics"][0]["external"]["current"]["value"] == "2");
  CHECK_THAT(scaling_active_message(status),
             Catch::Contains("external metric queue") && Catch::Contains("misses member2"));
  CHECK(has_event(*f.cp, "Warning IncompleteMetrics:", "misses member2"));

  f.metrics->external["queue"] = answer("30", {"member2"});
  f.pass();
  CHECK(f.cp->scales->updates == std::vector<std::int32_t>{4});  // ceil(3 * 2) = 6, limited to 4

  f.metrics->external["queue"] = answer("2", {});
  f.pass();
  CHECK(f.cp->scales->updates == std::vector<std::int32_t>{4, 1});
}

json scaled_to_zero(const json& status) {
  for (const auto& c : status["conditions"])
    if (c["type"] == "ScaledToZero") return c;
  return nullptr;
}

// minReplicas 0 on an External queue with a target value of 10.
json queue_fhpa() {
  json h = fhpa_with(json::parse(R"([{"type":"External","external":{"metric":{"name":"queue"},
      "target":{"type":"Value","value":"10"}}}])"));
  h["spec"]["minReplicas"] = 0;
  return h;
}

aggregator::ExternalMetricsAnswer queue(const std::string& value) {
  k8s::ExternalMetricValue v;
  v.metric_name = "queue";
  v.value = q(value);
  return aggregator::ExternalMetricsAnswer{std::vector<k8s::ExternalMetricValue>{v}, {}};
}

TEST_CASE(
    "HpaController: ScaledToZero on the status marks its own zero, which it wakes, and a manual zero is left alone") {
  Fixture f(no_window());
  f.cp->federated_hpas->objects.push_back(queue_fhpa());
  f.metrics->external["queue"] = queue("0");
  f.pass();
  REQUIRE(f.cp->scales->updates == std::vector<std::int32_t>{0});
  json zero = scaled_to_zero(f.cp->federated_hpas->statuses.at("shop/web"));
  REQUIRE(zero.is_object());
  CHECK(zero["status"] == "True");
  CHECK(zero["reason"] == "ScaledToZero");
  CHECK(has_event(*f.cp, "Normal SuccessfulRescale:", "New size: 0; reason: All metrics below target"));

  f.metrics->external["queue"] = queue("30");
  f.pass();
  CHECK(f.cp->scales->updates == std::vector<std::int32_t>{0, 3});  // ceil(30 / 10) from zero
  zero = scaled_to_zero(f.cp->federated_hpas->statuses.at("shop/web"));
  CHECK(zero["status"] == "False");
  CHECK(zero["reason"] == "NotScaledToZero");

  // An operator scales it to 0: the status says ScaledToZero False, so it stays.
  f.cp->scales->scale.spec_replicas = 0;
  f.pass();
  CHECK(f.cp->scales->updates == std::vector<std::int32_t>{0, 3});
  const json& status = f.cp->federated_hpas->statuses.at("shop/web");
  CHECK_THAT(scaling_active_message(status),
             Catch::Equals("scaling is disabled since the replica count of the target is zero"));
}

TEST_CASE("HpaController: a target found at zero without ScaledToZero on the object is a manual zero") {
  Fixture f(no_window());
  json h = queue_fhpa();
  f.cp->federated_hpas->objects.push_back(h);
  f.metrics->external["queue"] = queue("30");
  f.cp->scales->scale.spec_replicas = 0;
  f.pass();
  CHECK(f.cp->scales->updates.empty());
  CHECK(scaled_to_zero(f.cp->federated_hpas->statuses.at("shop/web")).is_null());

  // The same object whose status carries ScaledToZero=True (written before a restart): woken.
  Fixture g(no_window());
  h["status"] = json::parse(R"({"conditions":[{"type":"ScaledToZero","status":"True","reason":"ScaledToZero",
      "message":"the HPA controller scaled the workload to zero","lastTransitionTime":"2026-08-22T10:00:00Z"}]})");
  g.cp->federated_hpas->objects.push_back(h);
  g.metrics->external["queue"] = queue("30");
  g.cp->scales->scale.spec_replicas = 0;
  g.pass();
  CHECK(g.cp->scales->updates == std::vector<std::int32_t>{3});
}

TEST_CASE("HpaController: a replica that is not the leader writes no IncompleteMetrics Event either") {
  auto options = no_window();
  options.active = [] { return false; };  // the lease is someone else's
  Fixture f(options);
  f.cp->federated_hpas->objects.push_back(
      fhpa_with(json::parse(R"([{"type":"External","external":{"metric":{"name":"queue"},
      "target":{"type":"Value","value":"10"}}}])")));
  k8s::ExternalMetricValue v;
  v.metric_name = "queue";
  v.value = q("2");
  f.metrics->external["queue"] =
      aggregator::ExternalMetricsAnswer{std::vector<k8s::ExternalMetricValue>{v}, {"member2: timeout: deadline"}};
  f.pass();
  CHECK(f.cp->events->recorded.empty());
  CHECK(f.cp->federated_hpas->statuses.empty());
  CHECK(f.cp->scales->updates.empty());
}

TEST_CASE("HpaController: a Namespace's Object metric is always the FederatedHPA's own namespace") {
  Fixture f;
  f.cp->federated_hpas->objects.push_back(fhpa_with(json::parse(R"([{"type":"Object","object":{
      "describedObject":{"apiVersion":"v1","kind":"Namespace","name":"other-team"},
      "metric":{"name":"backlog"},"target":{"type":"Value","value":"10"}}}])")));
  f.pass();
  REQUIRE(f.metrics->custom_asked().size() == 1);
  CHECK(f.metrics->custom_asked()[0].namespace_name.empty());  // root-scoped
  CHECK(f.metrics->custom_asked()[0].name == "shop");          // never "other-team"
  CHECK(f.metrics->custom_asked()[0].resource.resource == "namespaces");
}

TEST_CASE("HpaController: Pods and Object metrics of one name with different selectors are asked apart") {
  Fixture f;
  f.cp->federated_hpas->objects.push_back(fhpa_with(json::parse(R"([
      {"type":"Object","object":{"describedObject":{"apiVersion":"v1","kind":"Service","name":"web"},
        "metric":{"name":"rps","selector":{"matchLabels":{"verb":"GET"}}},"target":{"type":"Value","value":"10"}}},
      {"type":"Object","object":{"describedObject":{"apiVersion":"v1","kind":"Service","name":"web"},
        "metric":{"name":"rps","selector":{"matchLabels":{"verb":"POST"}}},"target":{"type":"Value","value":"10"}}},
      {"type":"Object","object":{"describedObject":{"apiVersion":"v1","kind":"Service","name":"web"},
        "metric":{"name":"rps","selector":{"matchLabels":{"verb":"POST"}}},"target":{"type":"Value","value":"20"}}},
      {"type":"Pods","pods":{"metric":{"name":"qps","selector":{"matchLabels":{"verb":"GET"}}},
        "target":{"type":"AverageValue","averageValue":"1"}}},
      {"type":"Pods","pods":{"metric":{"name":"qps","selector":{"matchLabels":{"verb":"POST"}}},
        "target":{"type":"AverageValue","averageValue":"1"}}}])")));
  f.pass();
  std::map<std::string, int> asked;  // metric + selector -> queries
  for (const auto& q : f.metrics->custom_asked()) ++asked[q.metric + " " + q.metric_selector.to_string()];
  CHECK(asked["rps verb=GET"] == 1);
  CHECK(asked["rps verb=POST"] == 1);  // the same metric twice is asked once
  CHECK(asked["qps verb=GET"] == 2);   // once per member
  CHECK(asked["qps verb=POST"] == 2);
}

TEST_CASE("HpaController: pure pieces: placement, native sidecars") {
  PodListing listing;
  listing.pods.push_back(to_autoscaler_pod("member1", k8s::Pod{}));
  listing.unread_members = {"member2", "member3"};
  auto placed =
      member_placement(std::vector<TargetCluster>{{"member1", 2}, {"member2", 2}, {"member3", 2}}, listing, 2);
  CHECK(placed.member_replicas.size() == 3);
  CHECK(placed.unread_members == std::map<std::string, std::int32_t, std::less<>>{{"member2", 2}, {"member3", 2}});
  // No binding: the 5 existing replicas less the 1 listed pod, shared: 2 and 2.
  auto estimated = member_placement(std::nullopt, listing, 5);
  CHECK(estimated.member_replicas.empty());
  CHECK(estimated.unread_members == std::map<std::string, std::int32_t, std::less<>>{{"member2", 2}, {"member3", 2}});

  auto pod = k8s::pod_from_json(json::parse(R"({"metadata":{"name":"p","namespace":"n"},"spec":{
      "initContainers":[{"name":"init","resources":{"requests":{"cpu":"1"}}},
                        {"name":"proxy","restartPolicy":"Always","resources":{"requests":{"cpu":"50m"}}}],
      "containers":[{"name":"app","resources":{"requests":{"cpu":"200m"}}}]}})"));
  REQUIRE(pod.ok());
  auto converted = to_autoscaler_pod("member1", *pod);
  REQUIRE(converted.containers.size() == 2);  // app and the sidecar; the finished init container does not count
  CHECK(converted.containers[0].name == "app");
  CHECK(converted.containers[1].name == "proxy");
  auto requests = autoscaler::calculate_requests({converted}, "", "cpu");
  REQUIRE(requests.ok());
  CHECK(requests->at(converted.key) == 250);

  // Pod-level requests (spec.resources) and the overhead reach the calculation.
  auto pod_level = k8s::pod_from_json(json::parse(R"({"metadata":{"name":"q","namespace":"n"},"spec":{
      "resources":{"requests":{"cpu":"1"}},"overhead":{"cpu":"100m"},
      "containers":[{"name":"app","resources":{"requests":{"cpu":"200m"}}},{"name":"log"}]}})"));
  REQUIRE(pod_level.ok());
  auto with_pod_level = to_autoscaler_pod("member1", *pod_level);
  auto pod_requests = autoscaler::calculate_requests({with_pod_level}, "", "cpu");
  REQUIRE(pod_requests.ok());
  CHECK(pod_requests->at(with_pod_level.key) == 1100);
}

// Distributed mode in the live loop (docs/distributed-mode.md), with the members' HPAs in memory.
struct DistributedFixture {
  std::shared_ptr<RecordingMetrics> monitor = std::make_shared<RecordingMetrics>();
  std::shared_ptr<testing::FakeMemberHPAs> hpas1 = std::make_shared<testing::FakeMemberHPAs>("member1");
  std::shared_ptr<testing::FakeMemberHPAs> hpas2 = std::make_shared<testing::FakeMemberHPAs>("member2");
  Fixture f;
  DistributedFixture() : f(options()) {}
  ControllerOptions options() {
    ControllerOptions o;
    o.orphan_sweep_period = std::chrono::milliseconds(0);  // at the end of every pass
    o.monitor = monitor;
    o.member_hpas = [h1 = hpas1, h2 = hpas2](const aggregator::MemberCluster& m) -> std::shared_ptr<MemberHPAs> {
      if (m.name() == "member1") return h1;
      if (m.name() == "member2") return h2;
      return nullptr;
    };
    return o;
  }
  static json distributed(json h) {
    h["metadata"]["annotations"]["autoscaling.fedmetrics.io/mode"] = "distributed";
    h["spec"]["minReplicas"] = 2;
    h["spec"]["maxReplicas"] = 9;
    return h;
  }
  json& hpa(testing::FakeMemberHPAs& m) { return m.stored.at("shop/web"); }
  // The FederatedHPA web in distributed mode, synced once: an HPA in each member.
  void distribute_web() {
    f.cp->federated_hpas->objects.push_back(distributed(fhpa("web")));
    f.pass();
    REQUIRE(hpas1->stored.count("shop/web"));
    REQUIRE(hpas2->stored.count("shop/web"));
  }
};

std::string share(const json& hpa) {
  return std::to_string(hpa["spec"].value("minReplicas", 0)) + "/" +
         std::to_string(hpa["spec"].value("maxReplicas", 0));
}

TEST_CASE("HpaController distributed: a member HPA each with its share, the template retained, the shares annotated") {
  DistributedFixture d;
  d.distribute_web();
  // max 9 over two equal members: 5 and 4 (largest remainder, ties by name); min max(2, n) = 2: 1 and 1.
  CHECK(share(d.hpa(*d.hpas1)) == "1/5");
  CHECK(share(d.hpa(*d.hpas2)) == "1/4");
  CHECK(d.hpa(*d.hpas1)["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "fedmetrics");
  CHECK(d.hpa(*d.hpas1)["spec"]["scaleTargetRef"]["name"] == "web");
  CHECK(d.f.cp->scales->retain == std::optional<bool>(true));
  REQUIRE(d.f.cp->federated_hpas->distribution);
  CHECK(json::parse(*d.f.cp->federated_hpas->distribution) ==
        json::parse(R"({"member1":{"minReplicas":1,"maxReplicas":5},"member2":{"minReplicas":1,"maxReplicas":4}})"));
  CHECK(d.f.cp->scales->updates.empty());  // the members' own HPAs scale, not the loop
  REQUIRE(d.f.cp->federated_hpas->statuses.count("shop/web"));
  CHECK(d.f.cp->federated_hpas->statuses.at("shop/web")["observedGeneration"] == 3);

  // The next sync reads the HPAs back and changes nothing.
  const int writes = d.hpas1->writes + d.hpas2->writes;
  d.f.pass();
  CHECK(d.hpas1->writes + d.hpas2->writes == writes);
}

TEST_CASE("HpaController distributed: a member pegged at its max gets max from the member with room (Rebalanced)") {
  DistributedFixture d;
  d.f.cp->federated_hpas->objects.push_back(DistributedFixture::distributed(fhpa("web")));
  d.f.pass();
  // member1 wants more: ScalingLimited TooManyReplicas at its max 5; member2 idles at 1 of 4.
  d.hpa(*d.hpas1)["status"] = json::parse(R"({"currentReplicas":5,"desiredReplicas":5,
      "conditions":[{"type":"ScalingLimited","status":"True","reason":"TooManyReplicas","message":"the desired replica count is more than the maximum replica count"}]})");
  d.hpa(*d.hpas2)["status"] = json::parse(R"({"currentReplicas":1,"desiredReplicas":1})");
  d.f.pass();
  CHECK(share(d.hpa(*d.hpas1)) == "1/8");  // 3 moved: member2's spare (4 - max(1, 1, 1))
  CHECK(share(d.hpa(*d.hpas2)) == "1/1");
  bool rebalanced = false;
  for (const auto& e : d.f.cp->events->recorded) rebalanced = rebalanced || e.starts_with("Normal Rebalanced: ");
  CHECK(rebalanced);
  CHECK(d.f.cp->federated_hpas->statuses.at("shop/web")["currentReplicas"] == 6);
}

TEST_CASE("HpaController distributed: a spec the API server would refuse writes no member HPA") {
  DistributedFixture d;
  json h = DistributedFixture::distributed(fhpa("web"));
  h["spec"]["minReplicas"] = 7;
  h["spec"]["maxReplicas"] = 3;
  d.f.cp->federated_hpas->objects.push_back(h);
  d.f.pass();
  CHECK(d.hpas1->stored.empty());
  CHECK(d.hpas2->stored.empty());
  CHECK_FALSE(d.f.cp->scales->retain.has_value());
  CHECK(scaling_active_of(*d.f.cp, "shop/web")["message"] ==
        "spec.maxReplicas: Invalid value: 3: must be greater than or equal to `minReplicas`");
}

TEST_CASE("HpaController distributed: one of two FederatedHPAs on a target: neither acts") {
  DistributedFixture d;
  d.f.metrics->cpu = {{{"member1", "web-a"}, "150m"}, {{"member2", "web-a"}, "150m"}};  // a scale-up is due
  d.f.cp->federated_hpas->objects = {fhpa("web"), DistributedFixture::distributed(fhpa("web-cpu"))};
  d.f.pass();
  CHECK(d.f.cp->scales->updates.empty());
  CHECK(d.hpas1->stored.empty());
  CHECK(d.hpas2->stored.empty());
  CHECK_FALSE(d.f.cp->scales->retain.has_value());
  CHECK(scaling_active_of(*d.f.cp, "shop/web")["reason"] == "AmbiguousSelector");
  CHECK(scaling_active_of(*d.f.cp, "shop/web-cpu")["message"] ==
        "pods of Deployment/web are controlled by multiple HPAs: [shop/web shop/web-cpu]");
}

TEST_CASE("HpaController distributed: an HPA of that name fedmetrics did not create is never overwritten") {
  DistributedFixture d;
  json theirs = json::parse(R"({"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler",
      "metadata":{"name":"web","namespace":"shop","resourceVersion":"1","labels":{"team":"shop"}},
      "spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"minReplicas":3,"maxReplicas":30}})");
  d.hpas2->stored["shop/web"] = theirs;
  d.f.cp->federated_hpas->objects.push_back(DistributedFixture::distributed(fhpa("web")));
  d.f.pass();
  CHECK(d.hpa(*d.hpas2) == theirs);
  CHECK(d.hpas2->writes == 0);
  // member2 takes no part: member1 holds the whole distribution (n = 1), so
  // the member HPAs that exist still sum to maxReplicas.
  CHECK(share(d.hpa(*d.hpas1)) == "2/9");
  REQUIRE(d.f.cp->federated_hpas->distribution);
  CHECK(json::parse(*d.f.cp->federated_hpas->distribution) ==
        json::parse(R"({"member1":{"minReplicas":2,"maxReplicas":9}})"));
  bool warned = false;
  for (const auto& e : d.f.cp->events->recorded) warned = warned || e.starts_with("Warning ForeignMemberHPA: ");
  CHECK(warned);
}

TEST_CASE("HpaController distributed: without the ResourceBinding nothing is written (it could name other members)") {
  DistributedFixture d;
  d.f.cp->federated_hpas->objects.push_back(DistributedFixture::distributed(fhpa("web")));
  d.f.cp->placement->fails = true;
  d.f.pass();
  CHECK(d.hpas1->stored.empty());
  CHECK(d.hpas2->stored.empty());
  CHECK_FALSE(d.f.cp->federated_hpas->distribution);
  CHECK_FALSE(d.f.cp->scales->retain);
  d.f.cp->placement->fails = false;  // the next sync, with the binding: member1 only
  d.f.cp->placement->clusters = std::vector<TargetCluster>{{"member1", 2}};
  d.f.pass();
  CHECK(share(d.hpa(*d.hpas1)) == "2/9");
  CHECK(d.hpas2->stored.empty());
}

TEST_CASE("HpaController distributed: back to centralized deletes our member HPAs, then scales centrally") {
  DistributedFixture d;
  d.f.cp->federated_hpas->objects.push_back(DistributedFixture::distributed(fhpa("web")));
  d.f.pass();
  REQUIRE(d.hpas1->stored.size() == 1);
  json theirs = json::parse(
      R"({"metadata":{"name":"other","namespace":"shop","labels":{"autoscaling.fedmetrics.io/federatedhpa":"web"}},"spec":{}})");
  d.hpas1->stored["shop/other"] = theirs;  // matches the selector but is not managed by fedmetrics: kept
  d.f.cp->federated_hpas->objects[0]["metadata"]["annotations"].erase("autoscaling.fedmetrics.io/mode");
  d.f.metrics->cpu = {{{"member1", "web-a"}, "150m"}, {{"member2", "web-a"}, "150m"}};
  // A member NotReady that never held one of our HPAs does not hold the way back up.
  d.f.members->left_out = {aggregator::LeftOutMember{"member9", "Cluster NotReady"}};
  d.f.pass();
  CHECK_FALSE(d.hpas1->stored.count("shop/web"));
  CHECK_FALSE(d.hpas2->stored.count("shop/web"));
  CHECK(d.hpas1->stored.count("shop/other"));
  CHECK(d.f.cp->scales->retain == std::optional<bool>(false));
  CHECK_FALSE(d.f.cp->federated_hpas->distribution);
  CHECK(d.f.cp->scales->updates.size() == 1);  // scaled centrally in the same sync
}

TEST_CASE("HpaController distributed: a FederatedHPA deleted cleans up as the way back does, then goes") {
  DistributedFixture d;
  d.distribute_web();
  CHECK(d.f.cp->federated_hpas->objects.at(0)["metadata"]["finalizers"] ==
        json::array({"autoscaling.fedmetrics.io/member-hpas"}));
  CHECK(d.f.cp->scales->retain == std::optional<bool>(true));

  // kubectl delete: the API server marks it; member2 is NotReady by then.
  d.f.cp->federated_hpas->objects.at(0)["metadata"]["deletionTimestamp"] = "2026-08-17T21:33:20Z";
  d.f.members->list = aggregator::MemberList{d.f.member1};
  d.f.members->left_out = {{"member2", "Cluster NotReady (ClusterNotReachable)"}};
  d.f.pass();
  CHECK_FALSE(d.hpas1->stored.count("shop/web"));
  CHECK(d.f.cp->scales->retain == std::optional<bool>(false));  // kubectl scale and cron work on the template again
  CHECK(d.f.cp->federated_hpas->objects.empty());  // the finalizer removed: deleted, member2 does not hold it up
  CHECK(d.f.cp->scales->updates.empty());

  // member2 Ready again: the orphan sweep deletes the member HPA it kept.
  REQUIRE(d.hpas2->stored.count("shop/web"));
  d.f.members->list = aggregator::MemberList{d.f.member1, d.f.member2};
  d.f.members->left_out.clear();
  d.f.pass();
  CHECK_FALSE(d.hpas2->stored.count("shop/web"));
}

TEST_CASE("HpaController distributed: without a binding, the Ready members that have the target") {
  DistributedFixture d;
  REQUIRE_FALSE(d.f.cp->placement->clusters);  // no ResourceBinding
  d.hpas2->missing_targets = {"shop/web"};
  d.f.cp->federated_hpas->objects.push_back(DistributedFixture::distributed(fhpa("web")));
  d.f.pass();
  CHECK(share(d.hpa(*d.hpas1)) == "2/9");  // member1 alone: n = 1
  CHECK(d.hpas2->stored.empty());
  // member2 gets the workload: it joins.
  d.hpas2->missing_targets.clear();
  d.f.pass();
  REQUIRE(d.hpas2->stored.count("shop/web"));
  CHECK(json::parse(*d.f.cp->federated_hpas->distribution).size() == 2);
  // member2 cannot say any more: it keeps its part (it had one), nothing moves.
  const auto before = *d.f.cp->federated_hpas->distribution;
  d.hpas2->target_check_fails = true;
  d.f.pass();
  CHECK(*d.f.cp->federated_hpas->distribution == before);
  // member2 no longer has the workload: it leaves, its HPA deleted, member1 holds all.
  d.hpas2->target_check_fails = false;
  d.hpas2->missing_targets = {"shop/web"};
  d.f.pass();
  CHECK(d.hpas2->stored.empty());
  CHECK(share(d.hpa(*d.hpas1)) == "2/9");
}

TEST_CASE(
    "HpaController distributed: the orphan sweep collects member HPAs whose FederatedHPA is gone or gives no share") {
  DistributedFixture d;
  d.f.cp->federated_hpas->objects.push_back(DistributedFixture::distributed(fhpa("web")));
  d.f.pass();
  REQUIRE(d.hpas1->stored.count("shop/web"));
  REQUIRE(d.hpas2->stored.count("shop/web"));
  CHECK(d.f.controller->stats().orphan_member_hpas_deleted == 0);  // nothing to collect while the shares stand
  CHECK(d.f.controller->stats().orphan_sweeps == 1);

  // Left on member2 by a FederatedHPA deleted while this fedmetrics was
  // down, and an HPA of another owner with the same labels otherwise.
  json orphan = d.hpa(*d.hpas2);
  orphan["metadata"]["name"] = "gone";
  orphan["metadata"]["labels"]["autoscaling.fedmetrics.io/federatedhpa"] = "gone";
  orphan["metadata"]["uid"] = "uid-gone";
  d.hpas2->stored["shop/gone"] = orphan;
  json theirs = orphan;
  theirs["metadata"]["labels"]["app.kubernetes.io/managed-by"] = "someone-else";
  theirs["metadata"]["name"] = "theirs";
  d.hpas2->stored["shop/theirs"] = theirs;
  d.f.pass();
  CHECK_FALSE(d.hpas2->stored.count("shop/gone"));
  CHECK(d.hpas2->stored.count("shop/theirs"));
  CHECK(d.hpas2->stored.count("shop/web"));
  CHECK(d.f.controller->stats().orphan_member_hpas_deleted == 1);

  // The FederatedHPA deleted: both member HPAs collected at the next pass.
  d.f.cp->federated_hpas->objects.clear();
  d.f.pass();
  CHECK_FALSE(d.hpas1->stored.count("shop/web"));
  CHECK_FALSE(d.hpas2->stored.count("shop/web"));
  CHECK(d.hpas2->stored.count("shop/theirs"));
  CHECK(d.f.controller->stats().orphan_member_hpas_deleted == 3);
}

TEST_CASE("HpaController distributed: the sweep deletes what it listed, not an HPA created again meanwhile") {
  DistributedFixture d;
  json stale = json::parse(R"({"metadata":{"name":"old","namespace":"shop","uid":"uid-1",
      "labels":{"app.kubernetes.io/managed-by":"fedmetrics","autoscaling.fedmetrics.io/federatedhpa":"old"}},"spec":{}})");
  d.hpas1->stored["shop/old"] = stale;
  // The member answers the list with the object as it was; by the delete, another stands under the name.
  auto swapping = std::make_shared<testing::FakeMemberHPAs>("member1");
  swapping->after_list = [m = swapping.get()] {
    for (auto& [key, h] : m->stored) h["metadata"]["uid"] = "uid-2";
  };
  swapping->stored = d.hpas1->stored;
  ControllerOptions o;
  o.orphan_sweep_period = std::chrono::milliseconds(0);
  o.member_hpas = [swapping](const aggregator::MemberCluster& m) -> std::shared_ptr<MemberHPAs> {
    return m.name() == "member1" ? swapping : nullptr;
  };
  Fixture f(o);
  f.pass();
  CHECK(swapping->stored.count("shop/old"));  // a Conflict: kept, the next sweep judges the new one
  CHECK(f.controller->stats().orphan_member_hpas_deleted == 0);
  f.pass();
  CHECK_FALSE(swapping->stored.count("shop/old"));
  CHECK(f.controller->stats().orphan_member_hpas_deleted == 1);
}

// ---- the loop's own metrics (kube-controller-manager's HPA controller metrics)

struct MonitoredFixture {
  std::shared_ptr<RecordingMetrics> monitor = std::make_shared<RecordingMetrics>();
  Fixture f;
  MonitoredFixture() : f(options()) {}
  ControllerOptions options() {
    ControllerOptions o;
    o.monitor = monitor;
    return o;
  }
  std::vector<std::string> reconciliations() const {
    return monitor->read([](auto& m) { return m.reconciliations; });
  }
  std::vector<std::string> computations() const {
    return monitor->read([](auto& m) { return m.computations; });
  }
  std::map<std::string, std::pair<std::int32_t, std::int32_t>> replicas() const {
    return monitor->read([](auto& m) { return m.replicas; });
  }
};

TEST_CASE("HpaController metrics: a scale-up is a scale_up reconciliation after a scale_up computation") {
  MonitoredFixture m;
  m.f.cp->federated_hpas->objects.push_back(fhpa("web"));
  m.f.metrics->cpu = {{{"member1", "web-a"}, "150m"}, {{"member2", "web-a"}, "150m"}};
  m.f.pass();
  REQUIRE(m.f.cp->scales->updates == std::vector<std::int32_t>{4});
  CHECK(m.reconciliations() == std::vector<std::string>{"scale_up none"});
  CHECK(m.computations() == std::vector<std::string>{"scale_up none Resource"});
  // The status written: currentReplicas 2, desiredReplicas 4.
  CHECK(m.replicas() == std::map<std::string, std::pair<std::int32_t, std::int32_t>>{{"shop/web", {2, 4}}});
  for (double seconds : m.monitor->read([](auto& r) { return r.durations; })) {
    CHECK(seconds >= 0);
    CHECK(seconds < 10);
  }
}

TEST_CASE("HpaController metrics: a scale-down, and a sync that keeps the count") {
  MonitoredFixture m;
  m.f.cp->federated_hpas->objects.push_back(fhpa("web"));
  m.f.cp->scales->scale = Scale{4, 4, "app=web", "7"};
  SECTION("at the target: none / none, the computation's proposal equal to the current replicas") {
    // 2 pods at 50 % of their request, target 50 %: the status's currentReplicas (seeded 0
    // on a first sync) is below the proposal, so the first computation says scale_up as
    // upstream's does against an empty status; the second, against the status written, none.
    m.f.metrics->cpu = {{{"member1", "web-a"}, "50m"}, {{"member2", "web-a"}, "50m"}};
    m.f.cp->scales->scale = Scale{2, 2, "app=web", "7"};
    m.f.pass();
    m.f.pass();
    CHECK(m.reconciliations() == std::vector<std::string>{"none none", "none none"});
    CHECK(m.computations() == std::vector<std::string>{"scale_up none Resource", "none none Resource"});
    CHECK(m.replicas().at("shop/web") == std::pair<std::int32_t, std::int32_t>{2, 2});
  }
  SECTION("idle: scale_down, once the stabilization window allows it") {
    json h = fhpa("web");
    h["spec"]["behavior"] = json::parse(R"({"scaleDown":{"stabilizationWindowSeconds":0}})");
    m.f.cp->federated_hpas->objects = {h};
    m.f.metrics->cpu = {{{"member1", "web-a"}, "10m"}, {{"member2", "web-a"}, "10m"}};
    m.f.pass();
    REQUIRE(m.f.cp->scales->updates.size() == 1);
    CHECK(m.f.cp->scales->updates[0] < 4);
    CHECK(m.reconciliations() == std::vector<std::string>{"scale_down none"});
  }
}

TEST_CASE("HpaController metrics: errors: internal for reads, writes and metrics, spec for the object itself") {
  MonitoredFixture m;
  SECTION("a target without a scale: internal, and no metric computed") {
    m.f.cp->federated_hpas->objects.push_back(fhpa("orphan", "missing"));
    m.f.pass();
    CHECK(m.reconciliations() == std::vector<std::string>{"none internal"});
    CHECK(m.computations().empty());
  }
  SECTION("a conflict on the scale: internal, action none, though the computation wanted scale_up") {
    m.f.cp->federated_hpas->objects.push_back(fhpa("web"));
    m.f.metrics->cpu = {{{"member1", "web-a"}, "150m"}, {{"member2", "web-a"}, "150m"}};
    m.f.cp->scales->conflict = true;
    m.f.pass();
    CHECK(m.reconciliations() == std::vector<std::string>{"none internal"});
    CHECK(m.computations() == std::vector<std::string>{"scale_up none Resource"});
  }
  SECTION("no metrics: the computation and the reconciliation are internal errors") {
    m.f.cp->federated_hpas->objects.push_back(fhpa("web"));
    m.f.pass();
    CHECK(m.reconciliations() == std::vector<std::string>{"none internal"});
    CHECK(m.computations() == std::vector<std::string>{"none internal Resource"});
  }
  SECTION("an invalid mode annotation: spec") {
    json h = fhpa("web");
    h["metadata"]["annotations"] = {{"autoscaling.fedmetrics.io/mode", "Distributed"}};
    m.f.cp->federated_hpas->objects.push_back(h);
    m.f.pass();
    CHECK(m.reconciliations() == std::vector<std::string>{"none spec"});
  }
  SECTION("an object that cannot be decoded: spec") {
    json h = fhpa("web");
    h["spec"]["maxReplicas"] = "ten";
    m.f.cp->federated_hpas->objects.push_back(h);
    m.f.pass();
    CHECK(m.reconciliations() == std::vector<std::string>{"none spec"});
  }
  SECTION("two metrics, one failing: one computation each, and the reconciliation internal") {
    json h = fhpa("web");
    h["spec"]["metrics"].push_back(json::parse(
        R"({"type":"External","external":{"metric":{"name":"queue_depth"},"target":{"type":"Value","value":"10"}}})"));
    m.f.cp->federated_hpas->objects.push_back(h);
    m.f.metrics->cpu = {{{"member1", "web-a"}, "150m"}, {{"member2", "web-a"}, "150m"}};
    m.f.pass();
    CHECK(m.computations() == std::vector<std::string>{"scale_up none Resource", "none internal External"});
    // Still scaled up on the valid metric, as upstream, and reported with the error.
    CHECK(m.reconciliations() == std::vector<std::string>{"scale_up internal"});
  }
}

TEST_CASE("HpaController metrics: the replicas are forgotten with the FederatedHPA, and when leadership ends") {
  MonitoredFixture m;
  m.f.cp->federated_hpas->objects.push_back(fhpa("web"));
  m.f.metrics->cpu = {{{"member1", "web-a"}, "50m"}, {{"member2", "web-a"}, "50m"}};
  m.f.pass();
  REQUIRE(m.replicas().count("shop/web"));
  SECTION("deleted: gone after two lists without it") {
    m.f.cp->federated_hpas->objects.clear();
    m.f.pass();
    m.f.pass();
    CHECK(m.replicas().empty());
  }
  SECTION("another replica leads") {
    m.f.controller->cancel_in_flight();
    m.f.loop.poll();
    CHECK(m.replicas().empty());
  }
}

TEST_CASE("HpaController metrics: distributed mode counts member HPA writes by result, and rebalances") {
  DistributedFixture d;
  d.f.cp->federated_hpas->objects.push_back(DistributedFixture::distributed(fhpa("web")));
  d.f.pass();
  auto writes = [&] { return d.monitor->read([](auto& r) { return r.writes; }); };
  CHECK(writes() == std::vector<std::string>{"create success", "create success"});
  CHECK(d.monitor->read([](auto& r) { return r.reconciliations; }) == std::vector<std::string>{"none none"});
  CHECK(d.monitor->read([](auto& r) { return r.replicas.count("shop/web"); }) == 1);
  // member1 pegged at its max, member2 idle: maxReplicas moves (Rebalanced), two updates.
  d.hpa(*d.hpas1)["status"] = json::parse(R"({"currentReplicas":5,"desiredReplicas":5,
      "conditions":[{"type":"ScalingLimited","status":"True","reason":"TooManyReplicas","message":"at max"}]})");
  d.hpa(*d.hpas2)["status"] = json::parse(R"({"currentReplicas":1,"desiredReplicas":1})");
  d.f.pass();
  CHECK(d.monitor->read([](auto& r) { return r.rebalances; }) == 1);
  CHECK(writes() == std::vector<std::string>{"create success", "create success", "update success", "update success"});
  // Back to centralized: our two member HPAs deleted.
  d.f.cp->federated_hpas->objects[0]["metadata"]["annotations"].erase("autoscaling.fedmetrics.io/mode");
  d.f.pass();
  const auto after = writes();
  REQUIRE(after.size() == 6);
  CHECK(after[4] == "delete success");
  CHECK(after[5] == "delete success");
}

}  // namespace
}  // namespace fedmetrics::controller
