// `fedmetrics simulate --output table`: the rows, cells and alignment for
// hand-made replays (a table of cases), and the replay of shipped examples
// (the values the table shows: members, metrics against targets, reasons).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fedmetrics/autoscaler/simulate.hpp"
#include "fedmetrics/autoscaler/simulate_table.hpp"

#ifndef FEDMETRICS_SOURCE_DIR
#define FEDMETRICS_SOURCE_DIR "."
#endif

namespace fedmetrics::autoscaler {
namespace {

ReplayMetric metric(std::string name, std::string current, std::string target) {
  ReplayMetric m;
  m.name = std::move(name);
  m.current_text = std::move(current);
  m.target_text = std::move(target);
  return m;
}

ReplayStep step(nlohmann::json at, int current, int desired, std::map<std::string, ReplayMember> members,
                std::vector<ReplayMetric> metrics, std::string reason, std::vector<std::string> events = {}) {
  ReplayStep s;
  s.line["at"] = at;
  s.at = at.is_string() ? at.get<std::string>() : at.dump();
  s.current_replicas = current;
  s.desired_replicas = desired;
  s.min_replicas = 1;
  s.max_replicas = 10;
  s.members = std::move(members);
  s.metrics = std::move(metrics);
  s.reason = std::move(reason);
  s.events = std::move(events);
  return s;
}

ReplayMember replicas(int n) { return ReplayMember{n, std::nullopt, false}; }
ReplayMember share(int n, int min, int max) { return ReplayMember{n, MemberShare{min, max}, false}; }

struct TableCase {
  const char* name;
  Replay replay;
  const char* expected;
};

TEST_CASE("simulate table: rows, cells and alignment", "[autoscaler][simulate][table]") {
  Replay centralized;
  centralized.steps = {
      step(0, 1, 1, {{"member1", replicas(1)}}, {metric("cpu", "8%", "10%")}, "ReadyForNewScale"),
      step(15, 1, 5, {{"member1", replicas(1)}}, {metric("cpu", "1200%", "10%")}, "ScaleUpLimit"),
      step(30, 5, 10, {{"member1", replicas(3)}, {"member2", replicas(2)}}, {metric("cpu", "?", "10%")},
           "FailedGetResourceMetric"),
  };
  Replay two_metrics;
  two_metrics.steps = {step("2024-01-01T00:00:00Z", 2, 2, {},
                            {metric("cpu", "50%", "50%"), metric("queue_depth{queue=jobs}", "12", "20")}, "")};
  two_metrics.steps[0].min_replicas = 2;
  Replay distributed;
  distributed.mode = ReplayMode::Distributed;
  distributed.steps = {
      step(0, 0, 0, {{"member1", share(0, 1, 3)}, {"member2", share(0, 1, 6)}}, {}, "ValidDistribution",
           {"create member1,member2"}),
      step(300, 7, 7, {{"member1", share(6, 1, 6)}, {"member2", ReplayMember{0, std::nullopt, true}}}, {},
           "TooManyReplicas", {"delete member2", "move max 2 member2->member1"}),
      step(600, 6, 6, {{"member1", replicas(6)}}, {}, "InvalidDistribution"),
  };

  const TableCase cases[] = {
      {"centralized: a member absent is -, a decision that differs is ->, a metric not computed is ?", centralized,
       "AT   REPLICAS  MIN-MAX  member1  member2  cpu        REASON\n"
       "0s   1         1-10     1        -        8%/10%     ReadyForNewScale\n"
       "15s  1->5      1-10     1        -        1200%/10%  ScaleUpLimit\n"
       "30s  5->10     1-10     3        2        ?/10%      FailedGetResourceMetric\n"},
      {"a time as written, two metrics, no reason", two_metrics,
       "AT                    REPLICAS  MIN-MAX  cpu      queue_depth{queue=jobs}  REASON\n"
       "2024-01-01T00:00:00Z  2         2-10     50%/50%  12/20                    -\n"},
      {"distributed: replicas [min-max], left, no share on an invalid step; EVENTS joined with ;", distributed,
       "AT    REPLICAS  MIN-MAX  member1  member2  REASON               EVENTS\n"
       "0s    0         1-10     0 [1-3]  0 [1-6]  ValidDistribution    create member1,member2\n"
       "300s  7         1-10     6 [1-6]  left     TooManyReplicas      delete member2; move max 2 member2->member1\n"
       "600s  6         1-10     6        -        InvalidDistribution\n"},
      {"no steps: the header alone", Replay{}, "AT  REPLICAS  MIN-MAX  REASON\n"},
  };
  for (const auto& c : cases) {
    SECTION(c.name) { CHECK(format_table(c.replay) == c.expected); }
  }
}

Replay replay_file(const std::string& name) {
  std::ifstream file(std::filesystem::path(FEDMETRICS_SOURCE_DIR) / "examples" / "scenarios" / name);
  REQUIRE(file.good());
  std::ostringstream warnings;
  auto replay = replay_scenario(file, warnings);
  REQUIRE(replay.ok());
  return *replay;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST_CASE("simulate table: the Karmada nginx walkthrough", "[autoscaler][simulate][table]") {
  const Replay replay = replay_file("karmada-nginx-cpu.json");
  REQUIRE(replay.steps.size() == 7);
  // Members from the pods, metric against its target, the deciding condition.
  CHECK(replay.steps[1].metrics.size() == 1);
  CHECK(replay.steps[1].metrics[0].current_text == "1200%");
  CHECK(replay.steps[1].metrics[0].target_text == "10%");
  CHECK(replay.steps[1].metrics[0].current == Approx(1200));
  CHECK(replay.steps[1].reason == "ScaleUpLimit");
  CHECK(replay.steps[2].reason == "TooManyReplicas");
  CHECK(replay.steps[4].reason == "ScaleDownStabilized");
  CHECK(replay.steps[3].members.at("member1").replicas == 5);
  CHECK(replay.steps[3].members.at("member2").replicas == 5);
  CHECK(replay.steps[2].max_replicas == 10);
  const auto lines = lines_of(format_table(replay));
  REQUIRE(lines.size() == 8);
  CHECK(lines[0] == "AT   REPLICAS  MIN-MAX  member1  member2  cpu        REASON");
  CHECK(lines[2] == "15s  1->5      1-10     1        -        1200%/10%  ScaleUpLimit");
}

TEST_CASE("simulate table: placement, incomplete data, cron and distributed replays", "[autoscaler][simulate][table]") {
  SECTION("memberReplicas is what each member runs; a member not read keeps its replicas") {
    const Replay replay = replay_file("several-members-incomplete-data.json");
    CHECK(replay.steps[0].members.at("member3").replicas == 2);
    REQUIRE(replay.steps[0].metrics.size() == 2);
    CHECK(replay.steps[0].metrics[1].name == "queue_depth{queue=jobs}");
    CHECK(replay.steps[0].metrics[1].target_text == "20");
  }
  SECTION("no pods anywhere: one series named replicas") {
    const Replay replay = replay_file("external-queue-scale-to-zero.json");
    CHECK(replay.members_unknown);
    CHECK(replay.steps[1].members.at("replicas").replicas == replay.steps[1].current_replicas);
    CHECK(replay.steps[0].min_replicas == 0);
  }
  SECTION("cron firings are events and move the bounds") {
    const Replay replay = replay_file("cron-business-hours.json");
    int raised = 0;
    for (const auto& s : replay.steps) {
      if (s.min_replicas == 20) ++raised;
    }
    CHECK(raised > 0);
    CHECK(std::any_of(replay.steps.begin(), replay.steps.end(),
                      [](const ReplayStep& s) { return !s.events.empty() && s.events[0].rfind("cron ", 0) == 0; }));
    CHECK(replay.steps[1].seconds == Approx(3600));
  }
  SECTION("distributed: shares and moves") {
    const Replay replay = replay_file("distributed-rebalance.json");
    CHECK(replay.mode == ReplayMode::Distributed);
    REQUIRE(replay.steps.size() >= 2);
    CHECK(replay.steps[1].members.at("member1").share->max_replicas == 6);
    CHECK(std::find(replay.steps[1].events.begin(), replay.steps[1].events.end(), "move max 2 member2->member1") !=
          replay.steps[1].events.end());
    const auto lines = lines_of(format_table(replay));
    CHECK(lines.size() == replay.steps.size() + 1);
    CHECK(lines[0].rfind("AT", 0) == 0);
    CHECK(lines[0].find("EVENTS") != std::string::npos);
  }
}

}  // namespace
}  // namespace fedmetrics::autoscaler
