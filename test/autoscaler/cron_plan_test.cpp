// When a CronFederatedHPA rule runs (docs/cron.md): the first sight schedules from
// now, a due firing runs once with its scheduleTime, a miss older than the
// deadline is skipped, a failover within it still runs, suspended and
// invalid rules do nothing; and, walked through time at random steps with
// the history kept as the loop keeps it, every firing runs exactly once.
#include <catch2/catch.hpp>

#include <random>

#include "fedmetrics/autoscaler/cron_plan.hpp"

namespace fedmetrics::autoscaler {
namespace {

using namespace std::chrono_literals;

k8s::Timestamp at(const char* text) { return *k8s::parse_time(text); }

CronRule rule(const char* schedule) {
  CronRule r;
  r.name = "r";
  r.schedule = schedule;
  r.target_min_replicas = 2;
  return r;
}

void ran(CronRuleHistory& h, const CronRule& r, k8s::Timestamp schedule_time, k8s::Timestamp now) {
  CronExecution x;
  x.schedule_time = schedule_time;
  x.execution_time = now;
  record_success(h, r, x);
}

TEST_CASE("cron plan: first sight, due, run once, then the next", "[autoscaler][cron]") {
  const auto r = rule("30 8 * * *");
  CronRuleHistory h{"r", std::nullopt, {}, {}};
  // Seen first at 08:31: 08:30 is in its past, not run; the next is tomorrow.
  auto first = plan_cron_rule(r, h, at("2026-11-25T08:31:00Z"), 5min, "UTC");
  CHECK_FALSE(first.run);
  CHECK_FALSE(first.missed);
  CHECK(first.next == at("2026-11-26T08:30:00Z"));
  h.next_execution_time = first.next;
  // Before it: nothing.
  CHECK_FALSE(plan_cron_rule(r, h, at("2026-11-26T08:29:59Z"), 5min, "UTC").run);
  // At it, and a little after (the loop wakes late): run with its scheduleTime.
  CHECK(plan_cron_rule(r, h, at("2026-11-26T08:30:00Z"), 5min, "UTC").run == at("2026-11-26T08:30:00Z"));
  auto late = plan_cron_rule(r, h, at("2026-11-26T08:30:02Z"), 5min, "UTC");
  REQUIRE(late.run == at("2026-11-26T08:30:00Z"));
  CHECK(late.next == at("2026-11-27T08:30:00Z"));
  ran(h, r, *late.run, at("2026-11-26T08:30:02Z"));
  // Recorded: never again for that scheduleTime.
  CHECK_FALSE(plan_cron_rule(r, h, at("2026-11-26T08:30:03Z"), 5min, "UTC").run);
  CHECK_FALSE(plan_cron_rule(r, h, at("2026-11-26T08:34:00Z"), 5min, "UTC").run);
}

TEST_CASE("cron plan: after a failover, a miss within the deadline runs, an older one is skipped",
          "[autoscaler][cron]") {
  const auto r = rule("30 8 * * *");
  CronRuleHistory h{"r", at("2026-11-25T08:30:00Z"), {}, {}};
  ran(h, r, at("2026-11-24T08:30:00Z"), at("2026-11-24T08:30:01Z"));
  // The old leader died at 08:29; the new one leads from 08:33.
  auto within = plan_cron_rule(r, h, at("2026-11-25T08:33:00Z"), 5min, "UTC");
  CHECK(within.run == at("2026-11-25T08:30:00Z"));
  // From 08:36: more than 5 minutes late, skipped.
  auto beyond = plan_cron_rule(r, h, at("2026-11-25T08:36:00Z"), 5min, "UTC");
  CHECK_FALSE(beyond.run);
  CHECK(beyond.missed == at("2026-11-25T08:30:00Z"));
  CHECK(beyond.next == at("2026-11-26T08:30:00Z"));
  // Exactly at the deadline: still runs.
  CHECK(plan_cron_rule(r, h, at("2026-11-25T08:35:00Z"), 5min, "UTC").run == at("2026-11-25T08:30:00Z"));
  // A failed run counts as a run of its scheduleTime too.
  CronRuleHistory failed{"r", at("2026-11-25T08:30:00Z"), {}, {}};
  record_failure(failed, r, CronExecution{at("2026-11-25T08:30:00Z"), at("2026-11-25T08:30:01Z"), {}, "conflict"});
  CHECK_FALSE(plan_cron_rule(r, failed, at("2026-11-25T08:31:00Z"), 5min, "UTC").run);
  // failedHistoryLimit 0 keeps no failure: the watermark the loop moved
  // before the run (nextExecutionTime past 08:30) still keeps it from repeating.
  CronRuleHistory unkept{"r", at("2026-11-26T08:30:00Z"), {}, {}};
  CHECK_FALSE(plan_cron_rule(r, unkept, at("2026-11-25T08:31:00Z"), 5min, "UTC").run);
}

TEST_CASE("cron plan: back from suspended or invalid, or edited, nothing in the past runs", "[autoscaler][cron]") {
  auto r = rule("0 20 * * *");
  CronRuleHistory h{"r", std::nullopt, {}, {}};
  ran(h, r, at("2026-11-24T20:00:00Z"), at("2026-11-24T20:00:01Z"));
  // Suspended at 19:58 (nextExecutionTime cleared), resumed at 20:03: 20:00 fell in the suspension.
  auto resumed = plan_cron_rule(r, h, at("2026-11-25T20:03:00Z"), 5min, "UTC");
  CHECK_FALSE(resumed.run);
  CHECK(resumed.next == at("2026-11-26T20:00:00Z"));
  // Edited at 08:32 to fire at 08:30: the watermark is the old schedule's next firing.
  auto edited = rule("30 8 * * *");
  CronRuleHistory before_edit{"r", at("2026-11-25T20:00:00Z"), {}, {}};
  CHECK_FALSE(plan_cron_rule(edited, before_edit, at("2026-11-25T08:32:00Z"), 5min, "UTC").run);
}

TEST_CASE("cron plan: suspended, invalid, time zones", "[autoscaler][cron]") {
  auto r = rule("30 8 * * *");
  CronRuleHistory h{"r", at("2026-11-25T08:30:00Z"), {}, {}};
  r.suspend = true;
  auto suspended = plan_cron_rule(r, h, at("2026-11-25T08:31:00Z"), 5min, "UTC");
  CHECK_FALSE(suspended.run);
  CHECK_FALSE(suspended.next);
  CHECK_FALSE(suspended.invalid);

  auto bad = rule("0 0 13 *");
  auto invalid = plan_cron_rule(bad, h, at("2026-11-25T08:31:00Z"), 5min, "UTC");
  CHECK(invalid.invalid == std::optional<std::string>("invalid schedule \"0 0 13 *\": expected 5 fields, found 4"));
  CHECK_FALSE(invalid.next);
  CHECK_FALSE(invalid.run);
  auto defective = rule("* * * * *");
  defective.invalid = "spec.rules[0].targetMaxReplicas: must be at least 1";
  CHECK(plan_cron_rule(defective, h, at("2026-11-25T08:31:00Z"), 5min, "UTC").invalid == defective.invalid);
  auto zone = rule("30 8 * * *");
  zone.time_zone = "Mars/Olympus";
  CHECK(plan_cron_rule(zone, h, at("2026-11-25T08:31:00Z"), 5min, "UTC").invalid ==
        std::optional<std::string>("unknown time zone \"Mars/Olympus\""));

  // 08:30 in Berlin is 07:30Z in winter; the default zone applies without timeZone; CRON_TZ= wins.
  auto berlin = rule("30 8 * * *");
  berlin.time_zone = "Europe/Berlin";
  CronRuleHistory fresh{"r", std::nullopt, {}, {}};
  CHECK(plan_cron_rule(berlin, fresh, at("2026-11-25T00:00:00Z"), 5min, "UTC").next == at("2026-11-25T07:30:00Z"));
  CHECK(plan_cron_rule(rule("30 8 * * *"), fresh, at("2026-11-25T00:00:00Z"), 5min, "America/New_York").next ==
        at("2026-11-25T13:30:00Z"));
  auto prefixed = rule("CRON_TZ=Asia/Tokyo 30 8 * * *");
  prefixed.time_zone = "Europe/Berlin";
  CHECK(plan_cron_rule(prefixed, fresh, at("2026-11-25T00:00:00Z"), 5min, "UTC").next == at("2026-11-25T23:30:00Z"));
}

TEST_CASE("cron plan: @every counts from the rule's first scheduling, kept in the history", "[autoscaler][cron]") {
  const auto r = rule("@every 90m");
  CronRuleHistory h{"r", std::nullopt, {}, {}};
  auto first = plan_cron_rule(r, h, at("2026-11-25T10:00:00Z"), 5min, "UTC");
  CHECK(first.next == at("2026-11-25T11:30:00Z"));
  CHECK_FALSE(first.run);
  h.next_execution_time = first.next;
  // A restart in between: the origin is read back from nextExecutionTime.
  CHECK(plan_cron_rule(r, h, at("2026-11-25T11:00:00Z"), 5min, "UTC").next == at("2026-11-25T11:30:00Z"));
  auto due = plan_cron_rule(r, h, at("2026-11-25T11:30:01Z"), 5min, "UTC");
  REQUIRE(due.run == at("2026-11-25T11:30:00Z"));
  ran(h, r, *due.run, at("2026-11-25T11:30:01Z"));
  CHECK(plan_cron_rule(r, h, at("2026-11-25T11:31:00Z"), 5min, "UTC").next == at("2026-11-25T13:00:00Z"));
}

TEST_CASE("cron plan: walked through time as the loop does, every firing runs exactly once", "[autoscaler][cron]") {
  std::mt19937 random(20261125);
  for (const char* schedule : {"*/7 * * * *", "0,30 * * * *", "15 */2 * * *", "@every 13m"}) {
    INFO(schedule);
    const auto r = rule(schedule);
    CronRuleHistory h{"r", std::nullopt, {}, {}};
    auto limited = r;
    limited.successful_history_limit = 32;
    std::vector<k8s::Timestamp> runs;
    auto now = at("2026-11-25T00:00:00Z");
    const auto end = at("2026-11-25T12:00:00Z");
    std::optional<k8s::Timestamp> first_next;
    while (now < end) {
      auto plan = plan_cron_rule(limited, h, now, 5min, "UTC");
      if (!first_next) first_next = plan.next;
      CHECK_FALSE(plan.missed);  // the steps below stay within the deadline
      if (plan.run) {
        CHECK(*plan.run <= now);
        ran(h, limited, *plan.run, now);
        runs.push_back(*plan.run);
      }
      h.next_execution_time = plan.next;
      // The loop wakes at the next firing or up to 4 minutes later (a slow
      // pass, a failover within the deadline), or earlier for other rules.
      std::uniform_int_distribution<int> seconds(1, 240);
      now += std::chrono::seconds(seconds(random));
    }
    REQUIRE(first_next);
    // The firings in [first_next, end): each ran once, in order.
    std::vector<k8s::Timestamp> expected;
    for (auto t = *first_next; t < end - 4min;) {
      expected.push_back(t);
      // @every counts from the first scheduling: first_next + k * 13m; the others from the calendar.
      if (limited.schedule == "@every 13m") t += 13min;
      else t = *plan_cron_rule(limited, CronRuleHistory{"r", std::nullopt, {}, {}}, t, 5min, "UTC").next;
    }
    REQUIRE(runs.size() >= expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) CHECK(runs[i] == expected[i]);
    for (std::size_t i = 1; i < runs.size(); ++i) CHECK(runs[i] > runs[i - 1]);
  }
}

}  // namespace
}  // namespace fedmetrics::autoscaler
