// The CronFederatedHPA loop (docs/cron.md) with the control plane in memory and
// the clock in the test's hands: a rule runs once at its firing time with
// what it applied recorded and an Event; a failover within the deadline
// still runs the miss, later than it skips it; min > max and invalid rules
// fail visibly without stopping the others; a conflict is read again; a
// workload is scaled from 0 and to 0; a status write that failed never lets
// a run repeat.
#include <catch2/catch.hpp>

#include <atomic>
#include <mutex>

#include "async_test_support.hpp"
#include "fedmetrics/kube/https_client.hpp"
#include "fedmetrics/controller/cron_controller.hpp"

namespace fedmetrics::controller {
namespace {

using nlohmann::json;

k8s::Timestamp at(const char* text) { return *k8s::parse_time(text); }

struct CronControlPlane : ControlPlane {
  std::mutex mutex;
  std::vector<json> crons;
  json fhpa = json::parse(R"({"apiVersion": "autoscaling.karmada.io/v1alpha1", "kind": "FederatedHPA",
      "metadata": {"name": "web", "namespace": "shop", "resourceVersion": "10"},
      "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
               "minReplicas": 2, "maxReplicas": 10,
               "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}]}})");
  Scale scale{0, 0, "app=batch", "5"};
  std::vector<std::int32_t> scale_writes;
  int fhpa_writes = 0;
  int conflicts_to_answer = 0;  // the next N FederatedHPA writes conflict
  bool status_fails = false;
  int status_writes = 0;
  std::vector<std::string> events;  // "Type Reason: message"

  void list_federated_hpas(const k8s::LabelSelector&, Done<std::vector<json>> done) override { done(std::vector<json>{}); }
  void list_cron_federated_hpas(const k8s::LabelSelector& selector, Done<std::vector<json>> done) override {
    std::vector<json> out;
    {
      std::lock_guard lock(mutex);
      for (const auto& c : crons) {
        k8s::Labels labels;
        const json raw = c["metadata"].value("labels", json::object());
        for (const auto& [k, v] : raw.items()) labels[k] = v.get<std::string>();
        if (selector.matches(labels)) out.push_back(c);
      }
    }
    done(out);
  }
  void get_federated_hpa(const std::string&, const std::string& name, Done<json> done) override {
    if (name != "web") return done(k8s::Error{"federatedhpas \"" + name + "\" not found"});
    done(fhpa);
  }
  void update_federated_hpa_replicas(const std::string&, const std::string&, std::int32_t min, std::int32_t max,
                                     const std::string& resource_version, Done<bool> done) override {
    if (conflicts_to_answer > 0) {
      --conflicts_to_answer;
      fhpa["metadata"]["resourceVersion"] = std::to_string(std::stoi(fhpa["metadata"]["resourceVersion"].get<std::string>()) + 1);
      return done(k8s::Error{"Operation cannot be fulfilled: the object has been modified"});
    }
    if (resource_version != fhpa["metadata"]["resourceVersion"]) return done(k8s::Error{"stale resourceVersion"});
    ++fhpa_writes;
    fhpa["spec"]["minReplicas"] = min;
    fhpa["spec"]["maxReplicas"] = max;
    fhpa["metadata"]["resourceVersion"] = std::to_string(std::stoi(resource_version) + 1);
    done(true);
  }
  void get_scale(const std::string&, const autoscaler::CrossVersionObjectReference&, Done<Scale> done) override { done(scale); }
  bool retained = false;     // the template is labelled retain-replicas
  bool syncer_wins = false;  // a write is answered with the members' sum (keeps), not the count written
  std::int32_t keeps = 4;
  void get_retain_replicas(const std::string&, const autoscaler::CrossVersionObjectReference&, Done<bool> done) override {
    done(retained);
  }
  void update_scale(const std::string&, const autoscaler::CrossVersionObjectReference&, std::int32_t replicas,
                    const std::string& resource_version, Done<Scale> done) override {
    if (resource_version != scale.resource_version) return done(k8s::Error{"conflict"});
    scale_writes.push_back(replicas);
    scale.spec_replicas = syncer_wins ? keeps : replicas;
    scale.resource_version = std::to_string(std::stoi(resource_version) + 1);
    done(scale);
  }
  void update_status(const std::string&, const std::string&, json, Done<bool> done) override { done(true); }
  void update_cron_status(const std::string&, const std::string& name, json status, Done<bool> done) override {
    if (status_fails) return done(k8s::Error{"etcd timeout"});
    ++status_writes;
    std::lock_guard lock(mutex);
    for (auto& c : crons)
      if (c["metadata"]["name"] == name) c["status"] = status;
    done(true);
  }
  void record_event(const EventSubject& subject, const std::string& type, const std::string& reason,
                    const std::string& message) override {
    CHECK(subject.kind == "CronFederatedHPA");
    events.push_back(type + " " + reason + ": " + message);
  }
  json status(const std::string& name) {
    std::lock_guard lock(mutex);
    for (auto& c : crons)
      if (c["metadata"]["name"] == name) return c.value("status", json::object());
    return {};
  }
};

json cron_object(const char* name, const char* target, const char* rules) {
  json object = {{"apiVersion", "autoscaling.karmada.io/v1alpha1"},
                 {"kind", "CronFederatedHPA"},
                 {"metadata", {{"name", name}, {"namespace", "shop"}, {"uid", std::string("uid-") + name}}},
                 {"spec", {{"scaleTargetRef", json::parse(target)}, {"rules", json::parse(rules)}}}};
  return object;
}

const char* kFhpaTarget = R"({"apiVersion": "autoscaling.karmada.io/v1alpha1", "kind": "FederatedHPA", "name": "web"})";
const char* kDeploymentTarget = R"({"apiVersion": "apps/v1", "kind": "Deployment", "name": "batch"})";

struct Fixture {
  kube::ClientRuntime runtime{1};  // first: it outlives the controller
  std::shared_ptr<CronControlPlane> cp = std::make_shared<CronControlPlane>();
  std::shared_ptr<std::atomic<std::int64_t>> now = std::make_shared<std::atomic<std::int64_t>>(0);
  std::unique_ptr<CronController> controller;

  explicit Fixture(const char* time) { make(time); }
  void make(const char* time) {
    set(time);
    CronControllerOptions o;
    o.clock = [now = now] { return k8s::Timestamp(std::chrono::nanoseconds(now->load())); };
    controller = std::make_unique<CronController>(runtime.executor(), cp, o);
  }
  void set(const char* time) { *now = at(time).time_since_epoch().count(); }
  void pass() {
    auto done = std::make_shared<std::atomic<bool>>(false);
    controller->pass_now([done] { *done = true; });
    REQUIRE(testing::eventually([done] { return done->load(); }));
  }
  ~Fixture() { controller->stop(); }
};

TEST_CASE("CronController: a FederatedHPA rule runs once at its firing time, what it applied recorded") {
  Fixture f("2026-11-25T08:29:00Z");
  f.cp->crons.push_back(cron_object("hours", kFhpaTarget,
      R"([{"name": "morning", "schedule": "30 8 * * *", "targetMinReplicas": 4, "targetMaxReplicas": 20}])"));
  f.pass();
  // First sight: nothing runs; the next firing is recorded.
  CHECK(f.cp->fhpa_writes == 0);
  CHECK(f.cp->status("hours")["executionHistories"][0] ==
        json::parse(R"({"ruleName": "morning", "nextExecutionTime": "2026-11-25T08:30:00Z"})"));
  f.set("2026-11-25T08:30:01Z");
  f.pass();
  CHECK(f.cp->fhpa["spec"]["minReplicas"] == 4);
  CHECK(f.cp->fhpa["spec"]["maxReplicas"] == 20);
  auto history = f.cp->status("hours")["executionHistories"][0];
  CHECK(history["nextExecutionTime"] == "2026-11-26T08:30:00Z");
  REQUIRE(history["successfulExecutions"].size() == 1);
  CHECK(history["successfulExecutions"][0] == json::parse(R"({"scheduleTime": "2026-11-25T08:30:00Z",
      "executionTime": "2026-11-25T08:30:01Z", "appliedMinReplicas": 4, "appliedMaxReplicas": 20})"));
  REQUIRE(f.cp->events.size() == 1);
  CHECK(f.cp->events[0] ==
        "Normal ScaleSucceeded: rule morning (2026-11-25T08:30:00Z): FederatedHPA web set to minReplicas 4, maxReplicas 20");
  // Again within the minute: never twice for one scheduleTime.
  f.set("2026-11-25T08:30:30Z");
  f.pass();
  CHECK(f.cp->fhpa_writes == 1);
  CHECK(f.controller->stats().runs == 1);
  const auto stats = f.controller->stats();
  CHECK(stats.rule_success.count == 1);  // the run, not the passes with nothing to do
  CHECK(stats.rule_error.count == 0);
  CHECK(stats.process_success.count == 3);  // one per object and pass
}

TEST_CASE("CronController: the duration histograms' buckets, as Karmada's (1 ms doubling, 12)") {
  DurationHistogram h;
  CHECK(DurationHistogram::upper_bound(0) == 0.001);
  CHECK(DurationHistogram::upper_bound(11) == 2.048);
  h.observe(0.0005);
  h.observe(0.001);
  h.observe(0.003);
  h.observe(100);
  CHECK(h.buckets[0] == 2);
  CHECK(h.buckets[2] == 1);  // (0.002, 0.004]
  CHECK(h.count == 4);       // 100 s above every bound: in the count only
  CHECK(h.sum == Approx(100.0045));
}

TEST_CASE("CronController: after a failover a miss within the deadline runs once, an older one is skipped") {
  // The old leader wrote nextExecutionTime 08:30 and died before it.
  auto leader_wrote = cron_object("hours", kFhpaTarget,
      R"([{"name": "morning", "schedule": "30 8 * * *", "targetMinReplicas": 4}])");
  leader_wrote["status"] = json::parse(R"({"executionHistories": [{"ruleName": "morning", "nextExecutionTime": "2026-11-25T08:30:00Z"}]})");
  {
    Fixture f("2026-11-25T08:33:00Z");
    f.cp->crons.push_back(leader_wrote);
    f.pass();
    CHECK(f.cp->fhpa["spec"]["minReplicas"] == 4);
    CHECK(f.cp->status("hours")["executionHistories"][0]["successfulExecutions"][0]["scheduleTime"] ==
          "2026-11-25T08:30:00Z");
    // Another new leader a moment later reads the status: no second run.
    f.make("2026-11-25T08:34:00Z");
    f.pass();
    CHECK(f.cp->fhpa_writes == 1);
  }
  {
    Fixture f("2026-11-25T08:40:00Z");
    f.cp->crons.push_back(leader_wrote);
    f.pass();
    f.pass();
    CHECK(f.cp->fhpa_writes == 0);
    CHECK(f.controller->stats().missed_runs == 1);  // logged once
    CHECK(f.cp->status("hours")["executionHistories"][0]["nextExecutionTime"] == "2026-11-26T08:30:00Z");
  }
}

TEST_CASE("CronController: min above max and invalid rules fail visibly, and the other rules run") {
  Fixture f("2026-11-25T08:29:00Z");
  f.cp->crons.push_back(cron_object("hours", kFhpaTarget, R"([
      {"name": "too-high", "schedule": "30 8 * * *", "targetMinReplicas": 50},
      {"name": "broken", "schedule": "0 0 13 *", "targetMinReplicas": 1},
      {"name": "no-limit", "schedule": "bad", "targetMinReplicas": 1, "failedHistoryLimit": 0},
      {"name": "fine", "schedule": "30 8 * * *", "targetMaxReplicas": 12}])"));
  f.pass();
  f.set("2026-11-25T08:30:01Z");
  f.pass();
  f.pass();
  const auto histories = f.cp->status("hours")["executionHistories"];
  REQUIRE(histories.size() == 4);
  CHECK(histories[0]["failedExecutions"][0]["message"] ==
        "minReplicas 50 (the rule's) would exceed maxReplicas 10 (the FederatedHPA's); nothing written");
  CHECK(histories[1]["failedExecutions"].size() == 1);  // once, not at every pass
  CHECK(histories[1]["failedExecutions"][0]["message"] == "invalid schedule \"0 0 13 *\": expected 5 fields, found 4");
  CHECK_FALSE(histories[1].contains("nextExecutionTime"));
  CHECK_FALSE(histories[2].contains("failedExecutions"));  // failedHistoryLimit 0 keeps none
  CHECK(histories[3]["successfulExecutions"][0]["appliedMaxReplicas"] == 12);
  CHECK(f.cp->fhpa["spec"]["maxReplicas"] == 12);
  int invalid_events = 0;
  int failed_events = 0;
  for (const auto& e : f.cp->events) {
    invalid_events += e.starts_with("Warning InvalidRule: ");
    failed_events += e.starts_with("Warning ScaleFailed: rule too-high");
  }
  CHECK(invalid_events == 2);  // broken and no-limit, each once
  CHECK(failed_events == 1);
  CHECK(f.controller->stats().rule_error.count == 3);    // too-high's run, broken and no-limit once each
  CHECK(f.controller->stats().rule_success.count == 1);  // fine
  CHECK(f.controller->stats().process_error.count >= 1);
}

TEST_CASE("CronController: a run is claimed in the status first, a conflict is read again and retried") {
  Fixture f("2026-11-25T08:29:00Z");
  f.cp->crons.push_back(cron_object("hours", kFhpaTarget,
      R"([{"name": "morning", "schedule": "30 8 * * *", "targetMinReplicas": 4, "failedHistoryLimit": 0}])"));
  f.pass();
  // The claim (nextExecutionTime moved past 08:30) cannot be written: no run.
  f.cp->status_fails = true;
  f.set("2026-11-25T08:30:01Z");
  f.pass();
  CHECK(f.cp->fhpa_writes == 0);
  // Written at the next pass, within the deadline: the run, its first write conflicting.
  f.cp->status_fails = false;
  f.cp->conflicts_to_answer = 1;
  f.set("2026-11-25T08:30:20Z");
  f.pass();
  CHECK(f.cp->fhpa_writes == 1);
  CHECK(f.cp->fhpa["spec"]["minReplicas"] == 4);
  CHECK(f.cp->status("hours")["executionHistories"][0]["successfulExecutions"].size() == 1);
  // A new leader (no memory) after a run it cannot see recorded: the claim alone keeps it from repeating.
  json claimed_only = f.cp->crons[0];
  claimed_only["status"]["executionHistories"][0].erase("successfulExecutions");
  f.cp->crons[0] = claimed_only;
  f.make("2026-11-25T08:31:00Z");
  f.pass();
  CHECK(f.cp->fhpa_writes == 1);
}

TEST_CASE("CronController: a rule back from suspended does not run what fell in the suspension") {
  Fixture f("2026-11-25T19:57:00Z");
  f.cp->crons.push_back(cron_object("batch", kDeploymentTarget,
      R"([{"name": "down", "schedule": "0 20 * * *", "targetReplicas": 0}])"));
  f.pass();
  f.cp->crons[0]["spec"]["rules"][0]["suspend"] = true;
  f.set("2026-11-25T19:58:00Z");
  f.pass();
  CHECK_FALSE(f.cp->status("batch")["executionHistories"][0].contains("nextExecutionTime"));
  f.cp->crons[0]["spec"]["rules"][0]["suspend"] = false;
  f.set("2026-11-25T20:03:00Z");
  f.pass();
  CHECK(f.cp->scale_writes.empty());
  CHECK(f.cp->status("batch")["executionHistories"][0]["nextExecutionTime"] == "2026-11-26T20:00:00Z");
}

TEST_CASE("CronController: a workload scaled from 0 and back to 0") {
  Fixture f("2026-11-25T19:59:00Z");
  f.cp->crons.push_back(cron_object("batch", kDeploymentTarget, R"([
      {"name": "up", "schedule": "0 20 * * *", "targetReplicas": 3},
      {"name": "down", "schedule": "0 22 * * *", "targetReplicas": 0}])"));
  f.pass();
  f.set("2026-11-25T20:00:00.5Z");
  f.pass();
  f.set("2026-11-25T22:00:01Z");
  f.pass();
  CHECK(f.cp->scale_writes == std::vector<std::int32_t>{3, 0});
  const auto histories = f.cp->status("batch")["executionHistories"];
  CHECK(histories[0]["successfulExecutions"][0]["appliedReplicas"] == 3);
  CHECK(histories[1]["successfulExecutions"][0]["appliedReplicas"] == 0);
}

TEST_CASE("CronController: a Deployment whose replicas the members keep is a failed run, not a success") {
  Fixture f("2026-11-25T19:59:00Z");
  f.cp->crons.push_back(cron_object("batch", kDeploymentTarget, R"([
      {"name": "night", "schedule": "0 20 * * *", "targetReplicas": 1},
      {"name": "late", "schedule": "0 22 * * *", "targetReplicas": 2}])"));
  f.cp->retained = true;  // a FederatedHPA in distributed mode labelled it
  f.pass();
  f.set("2026-11-25T20:00:00.5Z");
  f.pass();
  CHECK(f.cp->scale_writes.empty());
  auto histories = f.cp->status("batch")["executionHistories"];
  CHECK(histories[0].value("successfulExecutions", json::array()).empty());
  REQUIRE(histories[0]["failedExecutions"].size() == 1);
  const std::string message = histories[0]["failedExecutions"][0]["message"];
  CHECK(message.starts_with("Deployment batch keeps the replica counts of its member clusters (label "
                            "resourcetemplate.karmada.io/retain-replicas: \"true\""));
  CHECK(f.cp->events.back().starts_with("Warning ScaleFailed: rule night (2026-11-25T20:00:00Z): Deployment batch keeps"));

  // A control plane that answers the write with another count (the label
  // unseen): the answer is believed, the run failed.
  f.cp->retained = false;
  f.cp->syncer_wins = true;
  f.set("2026-11-25T22:00:01Z");
  f.pass();
  CHECK(f.cp->scale_writes == std::vector<std::int32_t>{2});
  histories = f.cp->status("batch")["executionHistories"];
  CHECK(histories[1].value("successfulExecutions", json::array()).empty());
  CHECK(histories[1]["failedExecutions"][0]["message"] == "Deployment batch was set to replicas 2 but keeps 4");
}

}  // namespace
}  // namespace fedmetrics::controller
