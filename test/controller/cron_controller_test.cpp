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

#include "support/fake_control_plane.hpp"
#include "support/run_loop.hpp"
#include "fedmetrics/controller/cron_controller.hpp"

namespace fedmetrics::controller {
namespace {

using nlohmann::json;

k8s::Timestamp at(const char* text) { return *k8s::parse_time(text); }

// The control plane's fakes with the FederatedHPA web (rv 10) the rules
// may target and the Deployment batch at 0 replicas.
std::shared_ptr<testing::FakeControlPlane> cron_control_plane() {
  auto cp = std::make_shared<testing::FakeControlPlane>();
  cp->federated_hpas->objects.push_back(
      json::parse(R"({"apiVersion": "autoscaling.karmada.io/v1alpha1", "kind": "FederatedHPA",
      "metadata": {"name": "web", "namespace": "shop", "resourceVersion": "10"},
      "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
               "minReplicas": 2, "maxReplicas": 10,
               "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}]}})"));
  cp->scales->target = "batch";
  cp->scales->scale = Scale{0, 0, "app=batch", "5"};
  return cp;
}

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
  testing::RunLoop loop;  // first: it outlives the controller
  std::shared_ptr<testing::FakeControlPlane> cp = cron_control_plane();
  std::shared_ptr<std::atomic<std::int64_t>> now = std::make_shared<std::atomic<std::int64_t>>(0);
  std::unique_ptr<CronController> controller;

  explicit Fixture(const char* time) { make(time); }
  // A new controller (a new leader, a restart) at `time`.
  void make(const char* time) {
    if (controller) loop.run(controller->shutdown());
    set(time);
    CronControllerOptions o;
    o.clock = [now = now] { return k8s::Timestamp(std::chrono::nanoseconds(now->load())); };
    o.monotonic = loop.clock;
    controller = std::make_unique<CronController>(loop.executor(), cp->ports(), o);
  }
  void set(const char* time) { *now = at(time).time_since_epoch().count(); }
  void pass() { loop.run(controller->pass_now()); }
  ~Fixture() {
    loop.run(controller->shutdown());
    for (const auto& e : cp->events->occurrences) CHECK(e.subject.kind == "CronFederatedHPA");
  }
};

TEST_CASE("CronController: a FederatedHPA rule runs once at its firing time, what it applied recorded") {
  Fixture f("2026-11-25T08:29:00Z");
  f.cp->crons->objects.push_back(cron_object(
      "hours", kFhpaTarget,
      R"([{"name": "morning", "schedule": "30 8 * * *", "targetMinReplicas": 4, "targetMaxReplicas": 20}])"));
  f.pass();
  // First sight: nothing runs; the next firing is recorded.
  CHECK(f.cp->federated_hpas->replica_writes == 0);
  CHECK(f.cp->crons->status("hours")["executionHistories"][0] ==
        json::parse(R"({"ruleName": "morning", "nextExecutionTime": "2026-11-25T08:30:00Z"})"));
  f.set("2026-11-25T08:30:01Z");
  f.pass();
  CHECK(f.cp->federated_hpas->objects.at(0)["spec"]["minReplicas"] == 4);
  CHECK(f.cp->federated_hpas->objects.at(0)["spec"]["maxReplicas"] == 20);
  auto history = f.cp->crons->status("hours")["executionHistories"][0];
  CHECK(history["nextExecutionTime"] == "2026-11-26T08:30:00Z");
  REQUIRE(history["successfulExecutions"].size() == 1);
  CHECK(history["successfulExecutions"][0] == json::parse(R"({"scheduleTime": "2026-11-25T08:30:00Z",
      "executionTime": "2026-11-25T08:30:01Z", "appliedMinReplicas": 4, "appliedMaxReplicas": 20})"));
  REQUIRE(f.cp->events->recorded.size() == 1);
  CHECK(f.cp->events->recorded[0] ==
        "Normal ScaleSucceeded: rule morning (2026-11-25T08:30:00Z): FederatedHPA web set to minReplicas 4, "
        "maxReplicas 20");
  // Again within the minute: never twice for one scheduleTime.
  f.set("2026-11-25T08:30:30Z");
  f.pass();
  CHECK(f.cp->federated_hpas->replica_writes == 1);
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
  auto leader_wrote =
      cron_object("hours", kFhpaTarget, R"([{"name": "morning", "schedule": "30 8 * * *", "targetMinReplicas": 4}])");
  leader_wrote["status"] =
      json::parse(R"({"executionHistories": [{"ruleName": "morning", "nextExecutionTime": "2026-11-25T08:30:00Z"}]})");
  {
    Fixture f("2026-11-25T08:33:00Z");
    f.cp->crons->objects.push_back(leader_wrote);
    f.pass();
    CHECK(f.cp->federated_hpas->objects.at(0)["spec"]["minReplicas"] == 4);
    CHECK(f.cp->crons->status("hours")["executionHistories"][0]["successfulExecutions"][0]["scheduleTime"] ==
          "2026-11-25T08:30:00Z");
    // Another new leader a moment later reads the status: no second run.
    f.make("2026-11-25T08:34:00Z");
    f.pass();
    CHECK(f.cp->federated_hpas->replica_writes == 1);
  }
  {
    Fixture f("2026-11-25T08:40:00Z");
    f.cp->crons->objects.push_back(leader_wrote);
    f.pass();
    f.pass();
    CHECK(f.cp->federated_hpas->replica_writes == 0);
    CHECK(f.controller->stats().missed_runs == 1);  // logged once
    CHECK(f.cp->crons->status("hours")["executionHistories"][0]["nextExecutionTime"] == "2026-11-26T08:30:00Z");
  }
}

TEST_CASE("CronController: min above max and invalid rules fail visibly, and the other rules run") {
  Fixture f("2026-11-25T08:29:00Z");
  f.cp->crons->objects.push_back(cron_object("hours", kFhpaTarget, R"([
      {"name": "too-high", "schedule": "30 8 * * *", "targetMinReplicas": 50},
      {"name": "broken", "schedule": "0 0 13 *", "targetMinReplicas": 1},
      {"name": "no-limit", "schedule": "bad", "targetMinReplicas": 1, "failedHistoryLimit": 0},
      {"name": "fine", "schedule": "30 8 * * *", "targetMaxReplicas": 12}])"));
  f.pass();
  f.set("2026-11-25T08:30:01Z");
  f.pass();
  f.pass();
  const auto histories = f.cp->crons->status("hours")["executionHistories"];
  REQUIRE(histories.size() == 4);
  CHECK(histories[0]["failedExecutions"][0]["message"] ==
        "minReplicas 50 (the rule's) would exceed maxReplicas 10 (the FederatedHPA's); nothing written");
  CHECK(histories[1]["failedExecutions"].size() == 1);  // once, not at every pass
  CHECK(histories[1]["failedExecutions"][0]["message"] == "invalid schedule \"0 0 13 *\": expected 5 fields, found 4");
  CHECK_FALSE(histories[1].contains("nextExecutionTime"));
  CHECK_FALSE(histories[2].contains("failedExecutions"));  // failedHistoryLimit 0 keeps none
  CHECK(histories[3]["successfulExecutions"][0]["appliedMaxReplicas"] == 12);
  CHECK(f.cp->federated_hpas->objects.at(0)["spec"]["maxReplicas"] == 12);
  int invalid_events = 0;
  int failed_events = 0;
  for (const auto& e : f.cp->events->recorded) {
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
  f.cp->crons->objects.push_back(cron_object(
      "hours", kFhpaTarget,
      R"([{"name": "morning", "schedule": "30 8 * * *", "targetMinReplicas": 4, "failedHistoryLimit": 0}])"));
  f.pass();
  // The claim (nextExecutionTime moved past 08:30) cannot be written: no run.
  f.cp->crons->status_fails = true;
  f.set("2026-11-25T08:30:01Z");
  f.pass();
  CHECK(f.cp->federated_hpas->replica_writes == 0);
  // Written at the next pass, within the deadline: the run, its first write conflicting.
  f.cp->crons->status_fails = false;
  f.cp->federated_hpas->conflicts_to_answer = 1;
  f.set("2026-11-25T08:30:20Z");
  f.pass();
  CHECK(f.cp->federated_hpas->replica_writes == 1);
  CHECK(f.cp->federated_hpas->objects.at(0)["spec"]["minReplicas"] == 4);
  CHECK(f.cp->crons->status("hours")["executionHistories"][0]["successfulExecutions"].size() == 1);
  // A new leader (no memory) after a run it cannot see recorded: the claim alone keeps it from repeating.
  json claimed_only = f.cp->crons->objects[0];
  claimed_only["status"]["executionHistories"][0].erase("successfulExecutions");
  f.cp->crons->objects[0] = claimed_only;
  f.make("2026-11-25T08:31:00Z");
  f.pass();
  CHECK(f.cp->federated_hpas->replica_writes == 1);
}

TEST_CASE("CronController: a rule back from suspended does not run what fell in the suspension") {
  Fixture f("2026-11-25T19:57:00Z");
  f.cp->crons->objects.push_back(
      cron_object("batch", kDeploymentTarget, R"([{"name": "down", "schedule": "0 20 * * *", "targetReplicas": 0}])"));
  f.pass();
  f.cp->crons->objects[0]["spec"]["rules"][0]["suspend"] = true;
  f.set("2026-11-25T19:58:00Z");
  f.pass();
  CHECK_FALSE(f.cp->crons->status("batch")["executionHistories"][0].contains("nextExecutionTime"));
  f.cp->crons->objects[0]["spec"]["rules"][0]["suspend"] = false;
  f.set("2026-11-25T20:03:00Z");
  f.pass();
  CHECK(f.cp->scales->updates.empty());
  CHECK(f.cp->crons->status("batch")["executionHistories"][0]["nextExecutionTime"] == "2026-11-26T20:00:00Z");
}

TEST_CASE("CronController: a workload scaled from 0 and back to 0") {
  Fixture f("2026-11-25T19:59:00Z");
  f.cp->crons->objects.push_back(cron_object("batch", kDeploymentTarget, R"([
      {"name": "up", "schedule": "0 20 * * *", "targetReplicas": 3},
      {"name": "down", "schedule": "0 22 * * *", "targetReplicas": 0}])"));
  f.pass();
  f.set("2026-11-25T20:00:00.5Z");
  f.pass();
  f.set("2026-11-25T22:00:01Z");
  f.pass();
  CHECK(f.cp->scales->updates == std::vector<std::int32_t>{3, 0});
  const auto histories = f.cp->crons->status("batch")["executionHistories"];
  CHECK(histories[0]["successfulExecutions"][0]["appliedReplicas"] == 3);
  CHECK(histories[1]["successfulExecutions"][0]["appliedReplicas"] == 0);
}

TEST_CASE("CronController: a Deployment whose replicas the members keep is a failed run, not a success") {
  Fixture f("2026-11-25T19:59:00Z");
  f.cp->crons->objects.push_back(cron_object("batch", kDeploymentTarget, R"([
      {"name": "night", "schedule": "0 20 * * *", "targetReplicas": 1},
      {"name": "late", "schedule": "0 22 * * *", "targetReplicas": 2}])"));
  f.cp->scales->retain = true;  // a FederatedHPA in distributed mode labelled it
  f.pass();
  f.set("2026-11-25T20:00:00.5Z");
  f.pass();
  CHECK(f.cp->scales->updates.empty());
  auto histories = f.cp->crons->status("batch")["executionHistories"];
  CHECK(histories[0].value("successfulExecutions", json::array()).empty());
  REQUIRE(histories[0]["failedExecutions"].size() == 1);
  const std::string message = histories[0]["failedExecutions"][0]["message"];
  CHECK(
      message.starts_with("Deployment batch keeps the replica counts of its member clusters (label "
                          "resourcetemplate.karmada.io/retain-replicas: \"true\""));
  CHECK(f.cp->events->recorded.back().starts_with(
      "Warning ScaleFailed: rule night (2026-11-25T20:00:00Z): Deployment batch keeps"));

  // A control plane that answers the write with another count (the label
  // unseen): the answer is believed, the run failed.
  f.cp->scales->retain = false;
  f.cp->scales->syncer_wins = true;
  f.set("2026-11-25T22:00:01Z");
  f.pass();
  CHECK(f.cp->scales->updates == std::vector<std::int32_t>{2});
  histories = f.cp->crons->status("batch")["executionHistories"];
  CHECK(histories[1].value("successfulExecutions", json::array()).empty());
  CHECK(histories[1]["failedExecutions"][0]["message"] == "Deployment batch was set to replicas 2 but keeps 4");
}

// The loop itself, not pass_now(): after the first pass it sleeps until the
// rule's firing time (not the resync period), then runs it. On the fake
// clock, with the wall clock moving with it: no minute boundary waited for.
TEST_CASE("CronController: the loop wakes at the rule's firing time and runs it") {
  using namespace std::chrono_literals;
  testing::RunLoop loop;
  auto cp = cron_control_plane();
  auto clock = loop.clock;
  const auto started = clock->now();
  CronControllerOptions o;
  o.resync_period = 10min;
  o.monotonic = clock;
  o.clock = [clock, started, wall = at("2026-11-25T08:29:00Z")] {
    return wall + std::chrono::duration_cast<std::chrono::nanoseconds>(clock->now() - started);
  };
  cp->crons->objects.push_back(cron_object(
      "hours", kFhpaTarget,
      R"([{"name": "morning", "schedule": "30 8 * * *", "targetMinReplicas": 4, "targetMaxReplicas": 20}])"));
  CronController controller(loop.executor(), cp->ports(), o);
  controller.start();
  loop.poll();
  // First sight recorded, then asleep until the firing time.
  CHECK(cp->crons->status("hours")["executionHistories"][0]["nextExecutionTime"] == "2026-11-25T08:30:00Z");
  REQUIRE(clock->next_deadline());
  CHECK(*clock->next_deadline() - started > 60s);  // just after 08:30:00, so that the firing is in the past
  CHECK(*clock->next_deadline() - started < 61s);  // not the 10 minutes of the resync period
  loop.advance(59s);
  CHECK(cp->federated_hpas->replica_writes == 0);
  loop.advance(2s);
  CHECK(cp->crons->status("hours")["executionHistories"][0].contains("successfulExecutions"));
  loop.run(controller.shutdown());
  CHECK(cp->federated_hpas->objects.at(0)["spec"]["minReplicas"] == 4);
  CHECK(cp->federated_hpas->replica_writes == 1);
}

// Each CronFederatedHPA on its own cadence: a new or edited one checked at
// once and not the others with it, each then a resync period after its own check.
TEST_CASE("CronController: each object is checked on its own cadence, a new or edited one at once") {
  using namespace std::chrono_literals;
  testing::RunLoop loop;
  auto cp = cron_control_plane();
  const auto started = loop.clock->now();
  CronControllerOptions o;
  o.resync_period = 60s;
  o.monotonic = loop.clock;
  o.clock = [clock = loop.clock, started, wall = at("2026-11-25T08:00:00Z")] {
    return wall + std::chrono::duration_cast<std::chrono::nanoseconds>(clock->now() - started);
  };
  const char* nine = R"([{"name": "nine", "schedule": "0 9 * * *", "targetMinReplicas": 4}])";
  cp->crons->objects.push_back(cron_object("a", kFhpaTarget, nine));
  CronController controller(loop.executor(), cp->ports(), o);
  controller.start();
  auto checks = [&] {
    const auto stats = controller.stats();
    return stats.process_success.count + stats.process_error.count;
  };
  loop.poll();
  CHECK(checks() == 1);
  loop.advance(20s);
  CHECK(checks() == 1);
  {
    std::lock_guard lock(cp->crons->mutex);
    cp->crons->objects.push_back(cron_object("b", kFhpaTarget, nine));
  }
  REQUIRE(cp->crons->on_change);
  cp->crons->on_change();  // created at 20 s: b alone, at once
  loop.poll();
  CHECK(checks() == 2);
  loop.advance(40s);  // a's period: 60 s
  CHECK(checks() == 3);
  loop.advance(19s);
  CHECK(checks() == 3);
  loop.advance(1s);  // b's: 80 s
  CHECK(checks() == 4);
  {
    std::lock_guard lock(cp->crons->mutex);
    cp->crons->objects[0]["metadata"]["generation"] = 2;  // a edited at 80 s
  }
  cp->crons->on_change();
  loop.poll();
  CHECK(checks() == 5);
  loop.advance(59s);
  CHECK(checks() == 5);
  loop.advance(1s);  // both at 140 s: a restarted its period at 80 s
  CHECK(checks() == 7);
  loop.run(controller.shutdown());
  CHECK(cp->federated_hpas->replica_writes == 0);  // nothing fired
}

}  // namespace
}  // namespace fedmetrics::controller
