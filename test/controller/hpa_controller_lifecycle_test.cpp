// The FederatedHPA loop across restarts and leadership changes: the previous
// status comes from the object (as upstream's reconcile reads hpa.Status),
// and losing the lease cancels a sync in flight before its next write.
// The control plane's fakes (test/support) with its scale reads or status
// writes held back, one member, and pod metrics from a table.
#include <catch2/catch.hpp>

#include <atomic>
#include <map>
#include <mutex>

#include "fedmetrics/controller/federated_hpa_status.hpp"
#include "support/fake_control_plane.hpp"
#include "support/fake_member_cluster.hpp"
#include "support/fake_metrics_service.hpp"
#include "fedmetrics/controller/hpa_controller.hpp"
#include "fedmetrics/k8s/pod.hpp"
#include "support/run_loop.hpp"

namespace fedmetrics::controller {
namespace {

using nlohmann::json;

k8s::Timestamp at(int second) { return k8s::Timestamp(std::chrono::seconds(1'787'000'000 + second)); }
std::string stamp(int second) { return k8s::format_time(at(second)); }

// One member, "member1", with two ready pods requesting 100m cpu each.
std::shared_ptr<aggregator::testing::FakeSource> one_member() {
  auto member = std::make_shared<aggregator::testing::FakeMember>("member1", nullptr);
  std::vector<k8s::Pod> pods;
  for (const char* n : {"web-a", "web-b"}) pods.push_back(aggregator::testing::ready_pod("shop", n));
  member->pod_list = std::move(pods);
  auto source = std::make_shared<aggregator::testing::FakeSource>();
  source->list = {member};
  return source;
}

// Every pod at `cpu` usage; none when empty (the metrics API has nothing).
struct CpuMetrics {
  std::string cpu;
  std::shared_ptr<testing::FakeMetricsService> service = std::make_shared<testing::FakeMetricsService>();
  CpuMetrics() {
    service->pods_for = [this](const aggregator::ResourceMetricsQuery& query) {
      std::vector<k8s::PodMetrics> items;
      for (const char* n : {"web-a", "web-b"}) {
        if (cpu.empty()) break;
        k8s::PodMetrics pm;
        pm.metadata.name = n;
        pm.metadata.namespace_name = query.namespace_name;
        pm.metadata.annotations[std::string(aggregator::kQueryFromClusterAnnotation)] = "member1";
        pm.timestamp = at(0);
        pm.window = std::chrono::seconds(15);
        pm.containers.push_back({"web", {{"cpu", *k8s::Quantity::parse(cpu)}}});
        items.push_back(std::move(pm));
      }
      return aggregator::PodMetricsAnswer{std::move(items), {}};
    };
    service->custom = {k8s::Status::not_found_resource(), {}};
    service->external = {k8s::Status::not_found_resource(), {}};
  }
  CpuMetrics(const CpuMetrics&) = delete;
  CpuMetrics& operator=(const CpuMetrics&) = delete;
};

json fhpa(std::string target = "web") {
  return {
      {"apiVersion", "autoscaling.karmada.io/v1alpha1"},
      {"kind", "FederatedHPA"},
      {"metadata", {{"name", "web"}, {"namespace", "shop"}, {"uid", "u-1"}, {"generation", 3}}},
      {"spec",
       {{"scaleTargetRef", {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", target}}},
        {"minReplicas", 1},
        {"maxReplicas", 10},
        {"metrics",
         json::array({{{"type", "Resource"},
                       {"resource",
                        {{"name", "cpu"}, {"target", {{"type", "Utilization"}, {"averageUtilization", 50}}}}}}})}}}};
}

// What a previous controller (before a restart, or another leader) wrote:
// scaled to 2 at -600 s, metrics fine since -3000 s.
json written_status() {
  return {{"observedGeneration", 3},
          {"lastScaleTime", stamp(-600)},
          {"currentReplicas", 2},
          {"desiredReplicas", 2},
          {"conditions", json::array({{{"type", "AbleToScale"},
                                       {"status", "True"},
                                       {"lastTransitionTime", stamp(-600)},
                                       {"reason", "ReadyForNewScale"},
                                       {"message", "recommended size matches current size"}},
                                      {{"type", "ScalingActive"},
                                       {"status", "True"},
                                       {"lastTransitionTime", stamp(-3000)},
                                       {"reason", "ValidMetricFound"},
                                       {"message", "the HPA was able to compute the replica count"}},
                                      {{"type", "ScalingLimited"},
                                       {"status", "False"},
                                       {"lastTransitionTime", stamp(-3000)},
                                       {"reason", "DesiredWithinRange"},
                                       {"message", "the desired count is within the acceptable range"}}})}};
}

const json& condition(const json& status, std::string_view type) {
  for (const auto& c : status.at("conditions"))
    if (c.at("type") == type) return c;
  FAIL("no condition " << type);
  static json none;
  return none;
}

struct Fixture {
  testing::RunLoop loop;  // first: it outlives the controller
  std::shared_ptr<testing::FakeControlPlane> cp = std::make_shared<testing::FakeControlPlane>();
  std::shared_ptr<CpuMetrics> metrics = std::make_shared<CpuMetrics>();
  std::atomic<bool> leading{true};
  std::unique_ptr<HpaController> controller;
  explicit Fixture(std::shared_ptr<AutoscalerMetrics> monitor = nullptr) {
    ControllerOptions options;
    options.clock = [] { return at(0); };
    options.monotonic = loop.clock;
    options.active = [this] { return leading.load(); };
    options.monitor = std::move(monitor);
    controller = std::make_unique<HpaController>(loop.executor(), cp->ports(), metrics->service, one_member(), options);
  }
  ~Fixture() { loop.run(controller->shutdown()); }
  void pass() { loop.run(controller->sync_all()); }
  // A pass started, and run until it waits for what the test holds back.
  std::shared_ptr<bool> start_pass() {
    auto ended = loop.spawn(controller->sync_all());
    loop.poll();
    return ended;
  }
};

TEST_CASE("HpaController: a restarted controller starts from the object's status") {
  Fixture f;  // a new process: nothing in memory
  f.cp->federated_hpas->objects.push_back(fhpa());
  f.cp->federated_hpas->objects[0]["status"] = written_status();

  SECTION("metrics on target: lastScaleTime and every lastTransitionTime kept") {
    f.metrics->cpu = "50m";  // 50 % of 100m: on target
    f.pass();
    REQUIRE(f.cp->scales->updates.empty());
    const json& s = f.cp->federated_hpas->status_history.at(0);
    CHECK(s["lastScaleTime"] == stamp(-600));
    CHECK(s["desiredReplicas"] == 2);
    CHECK(condition(s, "AbleToScale")["lastTransitionTime"] == stamp(-600));
    CHECK(condition(s, "ScalingActive")["lastTransitionTime"] == stamp(-3000));
    CHECK(condition(s, "ScalingLimited")["lastTransitionTime"] == stamp(-3000));
  }
  SECTION("no metrics: desiredReplicas stays the object's, not 0; only the condition that changed moves") {
    f.pass();
    const json& s = f.cp->federated_hpas->status_history.at(0);
    CHECK(s["desiredReplicas"] == 2);
    CHECK(s["lastScaleTime"] == stamp(-600));
    CHECK(condition(s, "ScalingActive")["status"] == "False");
    CHECK(condition(s, "ScalingActive")["lastTransitionTime"] == stamp(0));   // True -> False: now
    CHECK(condition(s, "AbleToScale")["lastTransitionTime"] == stamp(-600));  // still True: kept
  }
  SECTION("the target's scale cannot be read: the status written back keeps the object's") {
    f.cp->federated_hpas->objects[0]["spec"]["scaleTargetRef"]["name"] = "gone";
    f.pass();
    const json& s = f.cp->federated_hpas->status_history.at(0);
    CHECK(s["desiredReplicas"] == 2);
    CHECK(s["lastScaleTime"] == stamp(-600));
    CHECK(condition(s, "AbleToScale")["reason"] == "FailedGetScale");
    CHECK(condition(s, "ScalingActive")["lastTransitionTime"] == stamp(-3000));
  }
}

TEST_CASE("HpaController: a FederatedHPA without a status never gets desiredReplicas 0") {
  Fixture f;
  f.cp->federated_hpas->objects.push_back(fhpa());  // no metrics either: the calculation cannot decide
  f.pass();
  CHECK(f.cp->federated_hpas->status_history.at(0)["desiredReplicas"] == 2);  // the target's replicas
}

TEST_CASE("HpaController: losing the lease cancels a sync in flight before its next write") {
  Fixture f;
  f.cp->federated_hpas->objects.push_back(fhpa());
  f.metrics->cpu = "150m";  // 150 % of a 50 % target: a scale-up to 4 is due
  f.cp->scales->hold_reads.on = true;
  auto ended = f.start_pass();
  REQUIRE(f.cp->scales->hold_reads.count() == 1);  // the sync waits for the control plane

  // The elector's OnStoppedLeading: the term's syncs are cancelled.
  f.leading = false;
  f.controller->cancel_in_flight();

  // The scale arrives after the lease was lost.
  f.cp->scales->hold_reads.release();
  f.loop.poll();
  REQUIRE(*ended);
  CHECK(f.cp->scales->updates.empty());
  CHECK(f.cp->federated_hpas->status_history.empty());
  CHECK(f.cp->events->recorded.empty());
  CHECK(f.controller->stats().cancelled_syncs == 1);

  // Leading again: the sync writes, and its previous status is the object's
  // (here none), not what the cancelled term had computed.
  f.leading = true;
  f.controller->cancel_in_flight();  // what a new term begins with
  f.cp->scales->hold_reads.on = false;
  f.pass();
  CHECK(f.cp->scales->updates == std::vector<std::int32_t>{4});
  CHECK(f.cp->federated_hpas->status_history.size() == 1);
}

// The loop's gauges of a FederatedHPA's replicas, as a test sees them.
struct ReplicaGauges : AutoscalerMetrics {
  std::mutex mutex;
  std::map<std::string, std::int32_t> desired;  // "ns/name" -> desiredReplicas
  void observe_reconciliation(ScaleAction, SyncError, Seconds) override {}
  void observe_metric_computation(ScaleAction, SyncError, autoscaler::MetricSourceType, Seconds) override {}
  void set_replicas(const std::string& ns, const std::string& name, std::int32_t, std::int32_t d) override {
    std::lock_guard lock(mutex);
    desired[ns + "/" + name] = d;
  }
  void forget(const std::string& ns, const std::string& name) override {
    std::lock_guard lock(mutex);
    desired.erase(ns + "/" + name);
  }
  void observe_member_hpa_write(MemberHPAOp, bool) override {}
  void observe_rebalance() override {}
  std::size_t count() {
    std::lock_guard lock(mutex);
    return desired.size();
  }
};

TEST_CASE("HpaController: a status write answered after the lease was lost leaves no replica gauge behind") {
  auto gauges = std::make_shared<ReplicaGauges>();
  Fixture f(gauges);
  f.cp->federated_hpas->objects.push_back(fhpa());
  f.metrics->cpu = "150m";
  f.pass();
  REQUIRE(gauges->count() == 1);

  f.cp->federated_hpas->hold_status_writes.on = true;
  auto ended = f.start_pass();
  REQUIRE(f.cp->federated_hpas->hold_status_writes.count() == 1);  // the status is on its way
  f.leading = false;
  f.controller->cancel_in_flight();  // the term ends: its gauges are forgotten
  f.loop.poll();
  REQUIRE(gauges->count() == 0);
  f.cp->federated_hpas->hold_status_writes.release();  // the API server answers the write only now
  f.loop.poll();
  REQUIRE(*ended);
  CHECK(gauges->count() == 0);
}

TEST_CASE("HpaController: a new term forgets the remembered status and reads the object again") {
  Fixture f;
  f.cp->federated_hpas->objects.push_back(fhpa());
  f.metrics->cpu = "150m";
  f.pass();  // scales 2 -> 4 at 0 s, remembered
  REQUIRE(f.cp->scales->updates == std::vector<std::int32_t>{4});
  // Meanwhile another leader wrote its own status (scaled at 30 s to 5).
  json theirs = f.cp->federated_hpas->status_history.back();
  theirs["lastScaleTime"] = stamp(30);
  theirs["desiredReplicas"] = 5;
  f.cp->federated_hpas->objects[0]["status"] = theirs;
  f.controller->cancel_in_flight();  // this replica lost the lease, then got it back
  f.metrics->cpu = "";               // no metrics: the status carries the previous values over
  f.pass();
  CHECK(f.cp->federated_hpas->status_history.back()["lastScaleTime"] == stamp(30));
  CHECK(f.cp->federated_hpas->status_history.back()["desiredReplicas"] == 5);
}

TEST_CASE("observed_status: the object's status read back, tolerant of what others broke") {
  json object = fhpa();
  object["status"] = written_status();
  auto observed = observed_status(object);
  CHECK(observed.has_desired_replicas);
  CHECK(observed.status.desired_replicas == 2);
  CHECK(observed.status.last_scale_time == at(-600));
  REQUIRE(observed.status.conditions.size() == 3);
  CHECK(observed.status.conditions[1].type == "ScalingActive");
  CHECK(observed.status.conditions[1].status == autoscaler::ConditionStatus::True);
  CHECK(observed.status.conditions[1].last_transition_time == at(-3000));

  CHECK_FALSE(observed_status(fhpa()).has_desired_replicas);
  object["status"] = {{"desiredReplicas", "two"},
                      {"lastScaleTime", "yesterday"},
                      {"conditions", json::array({7, {{"status", "True"}}})}};
  auto broken = observed_status(object);
  CHECK_FALSE(broken.has_desired_replicas);
  CHECK_FALSE(broken.status.last_scale_time);
  CHECK(broken.status.conditions.empty());
}

}  // namespace
}  // namespace fedmetrics::controller
