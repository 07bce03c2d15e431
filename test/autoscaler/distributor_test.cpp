// Distributed mode (docs/distributed-mode.md): every rule and example of
// the page as a table, and a property test of the invariants over random
// members, weights, spec edits and member HPA states.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "fedmetrics/autoscaler/distributor.hpp"

namespace fedmetrics::autoscaler {
namespace {

using std::chrono::seconds;

const Timestamp kStart = Timestamp(seconds(1704067200));  // 2024-01-01T00:00:00Z

FederatedHPASpec spec(std::int32_t min, std::int32_t max) {
  FederatedHPASpec s;
  s.scale_target_ref = {"Deployment", "web", "apps/v1"};
  s.min_replicas = min;
  s.max_replicas = max;
  return s;
}

DistributionMember absent(std::string name, std::int32_t weight = 1) {
  DistributionMember m;
  m.name = std::move(name);
  m.weight = weight;
  return m;
}

// A member HPA as read: its share, its replicas, whether it wants more
// (ScalingLimited/TooManyReplicas) and when it last scaled (seconds from kStart).
struct Observed {
  Observed(std::string name, std::int32_t min, std::int32_t max, std::int32_t current, std::int32_t desired,
           bool too_many = false, std::optional<int> last_scale = std::nullopt, std::int32_t weight = 1)
      : name(std::move(name)),
        min(min),
        max(max),
        current(current),
        desired(desired),
        too_many(too_many),
        last_scale(last_scale),
        weight(weight) {}
  std::string name;
  std::int32_t min;
  std::int32_t max;
  std::int32_t current;
  std::int32_t desired;
  bool too_many;
  std::optional<int> last_scale;
  std::int32_t weight;
};

DistributionMember read(const Observed& o) {
  DistributionMember m = absent(o.name, o.weight);
  m.state = MemberHPAState::Read;
  m.hpa.min_replicas = o.min;
  m.hpa.max_replicas = o.max;
  m.hpa.current_replicas = o.current;
  m.hpa.desired_replicas = o.desired;
  if (o.last_scale) m.hpa.last_scale_time = kStart + seconds(*o.last_scale);
  if (o.too_many) {
    m.hpa.conditions.push_back({"ScalingLimited", ConditionStatus::True, "TooManyReplicas", "", kStart});
  }
  return m;
}

DistributionInput input(FederatedHPASpec s, std::vector<DistributionMember> members, int now = 0) {
  DistributionInput in;
  in.spec = std::move(s);
  in.members = std::move(members);
  in.now = kStart + seconds(now);
  for (const auto& m : in.members) {
    if (m.state == MemberHPAState::Read) in.previous[m.name] = {m.hpa.min_replicas, m.hpa.max_replicas};
  }
  return in;
}

// "member1 1/3 create, member2 ..." in name order, to compare whole decisions at once.
std::string decisions(const Distribution& d) {
  std::string out;
  for (const auto& [name, m] : d.members) {
    if (!out.empty()) out += ", ";
    out += name + " ";
    if (m.action != MemberAction::Delete)
      out += std::to_string(m.share.min_replicas) + "/" + std::to_string(m.share.max_replicas) + " ";
    out += std::string(to_string(m.action));
  }
  return out;
}

std::string moves(const Distribution& d) {
  std::string out;
  for (const auto& m : d.moves)
    out += (out.empty() ? "" : ", ") + m.from + "->" + m.to + " " + std::to_string(m.max_replicas);
  return out;
}

const HorizontalPodAutoscalerCondition& condition(const Distribution& d, std::string_view type) {
  const auto* c = find_condition(d.status.conditions, type);
  REQUIRE(c != nullptr);
  return *c;
}

TEST_CASE("distributor: the mode annotation", "[autoscaler][distributor]") {
  CHECK(*parse_scaling_mode(std::nullopt) == ScalingMode::Centralized);
  CHECK(*parse_scaling_mode("centralized") == ScalingMode::Centralized);
  CHECK(*parse_scaling_mode("distributed") == ScalingMode::Distributed);
  for (std::string_view other : {"Distributed", "", "federated", "distributed "}) {
    INFO(other);
    auto mode = parse_scaling_mode(other);
    REQUIRE_FALSE(mode.ok());
    CHECK_THAT(mode.error().message,
               Catch::Contains("autoscaling.fedmetrics.io/mode") && Catch::Contains("\"" + std::string(other) + "\""));
  }
  // What the FederatedHPA then gets: ScalingActive False InvalidMode, a Warning Event, nothing created.
  Distribution d = invalid_mode(parse_scaling_mode("federated").error().message, {}, kStart);
  CHECK_FALSE(d.valid);
  CHECK(d.members.empty());
  CHECK(condition(d, "ScalingActive").status == ConditionStatus::False);
  CHECK(condition(d, "ScalingActive").reason == "InvalidMode");
  REQUIRE(d.events.size() == 1);
  CHECK(d.events[0].warning);
  CHECK(d.events[0].reason == "InvalidMode");
}

TEST_CASE("distributor: initial shares (the documented examples and the tie rules)", "[autoscaler][distributor]") {
  struct Case {
    std::string name;
    std::vector<std::int32_t> weights;
    std::int32_t min;
    std::int32_t max;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"Federation v1: 3 equal weights, min 2 max 9",
       {1, 1, 1},
       2,
       9,
       "member1 1/3 create, member2 1/3 create, member3 1/3 create"},
      {"Karmada's proposal: 4:1, min 2 max 10", {4, 1}, 2, 10, "member1 1/8 create, member2 1/2 create"},
      {"100:1, min 1 max 5: the 0 gets 1 from the largest", {100, 1}, 1, 5, "member1 1/4 create, member2 1/1 create"},
      {"equal remainders go by name", {1, 1, 1}, 1, 10, "member1 1/4 create, member2 1/3 create, member3 1/3 create"},
      {"largest fractional part first", {1, 2}, 1, 5, "member1 1/2 create, member2 1/3 create"},
      {"weight 0 counts as 1", {0, 0}, 1, 4, "member1 1/2 create, member2 1/2 create"},
      {"min by weight too", {3, 1}, 8, 12, "member1 6/9 create, member2 2/3 create"},
      {"minReplicas below n: one each",
       {1, 1, 1, 1},
       1,
       4,
       "member1 1/1 create, member2 1/1 create, member3 1/1 create, member4 1/1 create"},
      {"minReplicas 0 (scale to zero) counts as n", {1, 1}, 0, 4, "member1 1/2 create, member2 1/2 create"},
      {"min = max", {1, 1, 1}, 9, 9, "member1 3/3 create, member2 3/3 create, member3 3/3 create"},
      {"several zeros fixed in name order from the largest",
       {1000, 1, 1},
       1,
       4,
       "member1 1/2 create, member2 1/1 create, member3 1/1 create"},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      std::vector<DistributionMember> members;
      for (std::size_t i = 0; i < c.weights.size(); ++i)
        members.push_back(absent("member" + std::to_string(i + 1), c.weights[i]));
      Distribution d = distribute(input(spec(c.min, c.max), members));
      REQUIRE(d.valid);
      CHECK(decisions(d) == c.expected);
      CHECK(d.moves.empty());
    }
  }
  // The split alone, as exposed.
  CHECK(initial_split(9, {{"a", 1}, {"b", 1}, {"c", 1}}) ==
        std::map<std::string, std::int32_t, std::less<>>{{"a", 3}, {"b", 3}, {"c", 3}});
  CHECK(initial_split(5, {{"a", 100}, {"b", 1}}) ==
        std::map<std::string, std::int32_t, std::less<>>{{"a", 4}, {"b", 1}});
}

TEST_CASE("distributor: the simulate example's step at 300", "[autoscaler][distributor]") {
  // After the initial (1, 3) each: member1 pegged at 3 and asking for more,
  // scaled at 100 (a receiver's own scale time does not matter).
  Distribution d = distribute(input(
      spec(2, 9),
      {read({"member1", 1, 3, 3, 3, true, 100}), read({"member2", 1, 3, 1, 1}), read({"member3", 1, 3, 1, 1})}, 300));
  REQUIRE(d.valid);
  CHECK(decisions(d) == "member1 1/6 update, member2 1/1 update, member3 1/2 update");
  CHECK(moves(d) == "member2->member1 2, member3->member1 1");
  REQUIRE(d.events.size() == 1);
  CHECK(d.events[0].reason == "Rebalanced");
  CHECK_FALSE(d.events[0].warning);
  CHECK(d.events[0].message ==
        "moved 3 of maxReplicas from member2 (gave 2, now 1), member3 (gave 1, now 2) to member1 (now 6)");
  CHECK(d.status.current_replicas == 5);
  CHECK(d.status.desired_replicas == 5);
  CHECK(
      d.annotation ==
      R"({"member1":{"minReplicas":1,"maxReplicas":6},"member2":{"minReplicas":1,"maxReplicas":1},"member3":{"minReplicas":1,"maxReplicas":2}})");
  CHECK(condition(d, "ScalingLimited").status == ConditionStatus::False);
}

TEST_CASE("distributor: rebalancing rules", "[autoscaler][distributor]") {
  struct Case {
    std::string name;
    FederatedHPASpec spec;
    std::vector<Observed> members;
    int now;
    std::string expected;
    std::string moves;
    ConditionStatus limited = ConditionStatus::False;
  };
  const std::vector<Case> cases = {
      {"TooManyReplicas below its max is no receiver",
       spec(3, 9),
       {{"member1", 1, 3, 2, 3, true}, {"member2", 1, 3, 1, 1}, {"member3", 1, 3, 1, 1}},
       300,
       "member1 1/3 none, member2 1/3 none, member3 1/3 none",
       ""},
      {"at its max without TooManyReplicas is no receiver",
       spec(3, 9),
       {{"member1", 1, 3, 3, 3}, {"member2", 1, 3, 1, 1}, {"member3", 1, 3, 1, 1}},
       300,
       "member1 1/3 none, member2 1/3 none, member3 1/3 none",
       ""},
      {"a member that scaled within the window gives nothing",
       spec(3, 9),
       {{"member1", 1, 3, 3, 3, true}, {"member2", 1, 3, 1, 1, false, 200}, {"member3", 1, 3, 1, 1}},
       300,
       "member1 1/5 update, member2 1/3 none, member3 1/1 update",
       "member3->member1 2",
       ConditionStatus::True},
      {"a scale exactly the window ago is outside it",
       spec(3, 9),
       {{"member1", 1, 3, 3, 3, true}, {"member2", 1, 3, 1, 1, false, 180}, {"member3", 1, 3, 1, 1, false, 181}},
       300,
       "member1 1/5 update, member2 1/1 update, member3 1/3 none",
       "member2->member1 2",
       ConditionStatus::True},
      {"spare is above max(min, current, desired)",
       spec(4, 12),
       {{"member1", 1, 3, 3, 3, true}, {"member2", 2, 4, 1, 1}, {"member3", 1, 5, 1, 3}},
       300,
       "member1 1/6 update, member2 2/2 update, member3 1/4 update",
       "member2->member1 2, member3->member1 1"},
      {"at most doubling per pass",
       spec(3, 30),
       {{"member1", 1, 2, 2, 2, true}, {"member2", 1, 14, 1, 1}, {"member3", 1, 14, 1, 1}},
       300,
       "member1 1/4 update, member2 1/12 update, member3 1/14 none",
       "member2->member1 2"},
      {"receivers in name order until the donors run out",
       spec(3, 10),
       {{"member1", 1, 3, 3, 3, true}, {"member2", 1, 3, 3, 3, true}, {"member3", 1, 4, 2, 2}},
       300,
       "member1 1/5 update, member2 1/3 none, member3 1/2 update",
       "member3->member1 2",
       ConditionStatus::True},
      {"everyone pegged: ScalingLimited TooManyReplicas",
       spec(2, 4),
       {{"member1", 1, 2, 2, 2, true}, {"member2", 1, 2, 2, 2, true}},
       300,
       "member1 1/2 none, member2 1/2 none",
       "",
       ConditionStatus::True},
      {"a member just given more that still says TooManyReplicas gives nothing back",
       spec(3, 9),
       {{"member1", 1, 5, 3, 3, true}, {"member2", 1, 2, 2, 2, true}, {"member3", 1, 2, 1, 1}},
       300,
       "member1 1/5 none, member2 1/3 update, member3 1/1 update",
       "member3->member2 1",
       ConditionStatus::True},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      std::vector<DistributionMember> members;
      for (const auto& o : c.members) members.push_back(read(o));
      Distribution d = distribute(input(c.spec, members, c.now));
      REQUIRE(d.valid);
      CHECK(decisions(d) == c.expected);
      CHECK(moves(d) == c.moves);
      CHECK(condition(d, "ScalingLimited").status == c.limited);
      if (c.limited == ConditionStatus::True) CHECK(condition(d, "ScalingLimited").reason == "TooManyReplicas");
    }
  }
  SECTION("donors largest spare first, ties by name; one Event per receiver") {
    Distribution d = distribute(input(spec(4, 16),
                                      {read({"member1", 1, 4, 4, 4, true}), read({"member2", 1, 4, 1, 1}),
                                       read({"member3", 1, 4, 2, 2}), read({"member4", 1, 4, 1, 1})},
                                      300));
    CHECK(moves(d) == "member2->member1 3, member4->member1 1");
    REQUIRE(d.events.size() == 1);
    CHECK(d.events[0].message ==
          "moved 4 of maxReplicas from member2 (gave 3, now 1), member4 (gave 1, now 3) to member1 (now 8)");
  }
  SECTION("two receivers: two Events") {
    Distribution d = distribute(
        input(spec(3, 12),
              {read({"member1", 1, 2, 2, 2, true}), read({"member2", 1, 2, 2, 2, true}), read({"member3", 1, 8, 1, 1})},
              300));
    CHECK(moves(d) == "member3->member1 2, member3->member2 2");
    REQUIRE(d.events.size() == 2);
    CHECK(d.events[1].message == "moved 2 of maxReplicas from member3 (now 4) to member2 (now 4)");
  }
}

TEST_CASE("distributor: changes of the FederatedHPA", "[autoscaler][distributor]") {
  struct Case {
    std::string name;
    FederatedHPASpec spec;
    std::vector<Observed> members;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"maxReplicas raised: to receivers, equally in name order",
       spec(3, 12),
       {{"member1", 1, 3, 3, 3, true, 290}, {"member2", 1, 3, 3, 3, true, 290}, {"member3", 1, 3, 3, 3, false, 290}},
       "member1 1/5 update, member2 1/4 update, member3 1/3 none"},
      {"maxReplicas raised without receivers: in proportion to max",
       spec(3, 13),
       {{"member1", 1, 6, 1, 1, false, 290}, {"member2", 1, 2, 1, 1, false, 290}, {"member3", 1, 1, 1, 1, false, 290}},
       "member1 1/9 update, member2 1/3 update, member3 1/1 none"},
      {"maxReplicas lowered: spare first, largest first",
       spec(3, 6),
       {{"member1", 1, 3, 3, 3}, {"member2", 1, 3, 1, 1}, {"member3", 1, 3, 2, 2}},
       "member1 1/3 none, member2 1/1 update, member3 1/2 update"},
      {"maxReplicas lowered past the spare: in proportion to max - min",
       spec(3, 5),
       {{"member1", 1, 5, 5, 5}, {"member2", 1, 2, 2, 2}, {"member3", 1, 2, 2, 2}},
       "member1 1/2 update, member2 1/1 update, member3 1/2 none"},
      {"minReplicas raised: mins again against the current max, excess to room",
       spec(9, 9),
       {{"member1", 1, 6, 3, 3}, {"member2", 1, 1, 1, 1}, {"member3", 1, 2, 1, 1}},
       "member1 6/6 update, member2 1/1 none, member3 2/2 update"},
      {"minReplicas lowered",
       spec(3, 9),
       {{"member1", 3, 3, 3, 3}, {"member2", 3, 3, 3, 3}, {"member3", 3, 3, 3, 3}},
       "member1 1/3 update, member2 1/3 update, member3 1/3 update"},
      {"both lowered below the mins: mins lowered too, never below 1",
       spec(2, 4),
       {{"member1", 3, 5, 3, 3}, {"member2", 3, 5, 3, 3}},
       "member1 1/2 update, member2 1/2 update"},
      {"an HPA edited by hand is pulled back to 1 <= min <= max and the sum",
       spec(2, 6),
       {{"member1", 0, 0, 0, 0}, {"member2", 5, 2, 2, 2}},
       "member1 1/2 update, member2 1/4 update"},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      std::vector<DistributionMember> members;
      for (const auto& o : c.members) members.push_back(read(o));
      Distribution d = distribute(input(c.spec, members, 300));
      REQUIRE(d.valid);
      CHECK(decisions(d) == c.expected);
    }
  }
}

TEST_CASE("distributor: members join and leave", "[autoscaler][distributor]") {
  const std::vector<Observed> three = {{"member1", 1, 3, 1, 1}, {"member2", 1, 3, 1, 1}, {"member3", 1, 3, 1, 1}};
  auto with = [&](std::vector<DistributionMember> extra, std::vector<Observed> base) {
    std::vector<DistributionMember> members;
    for (const auto& o : base) members.push_back(read(o));
    for (auto& m : extra) members.push_back(std::move(m));
    return members;
  };
  SECTION("a member joins: floor(max / n) from the donors' spare, largest first") {
    Distribution d = distribute(input(spec(2, 9), with({absent("member4")}, three), 300));
    CHECK(decisions(d) == "member1 1/1 update, member2 1/3 none, member3 1/3 none, member4 1/2 create");
    CHECK(moves(d) == "member1->member4 2");
    CHECK(d.events.at(0).message == "moved 2 of maxReplicas from member1 (now 1) to member4 (now 2)");
  }
  SECTION("a member joins with the spare short: what there is") {
    Distribution d = distribute(input(
        spec(2, 9),
        with({absent("member4")}, {{"member1", 1, 3, 3, 3}, {"member2", 1, 3, 2, 2}, {"member3", 1, 3, 3, 3}}), 300));
    CHECK(decisions(d) == "member1 1/3 none, member2 1/2 update, member3 1/3 none, member4 1/1 create");
  }
  SECTION("a member joins with no spare: 1 from the largest max - min") {
    Distribution d = distribute(input(
        spec(4, 9),
        with({absent("member4")}, {{"member1", 1, 3, 3, 3}, {"member2", 2, 3, 3, 3}, {"member3", 1, 3, 3, 3}}), 300));
    CHECK(decisions(d) == "member1 1/2 update, member2 1/3 update, member3 1/3 none, member4 1/1 create");
    CHECK(moves(d) == "member1->member4 1");
  }
  SECTION("a member joins when every member is at its min: from the largest max, its min with it") {
    Distribution d = distribute(input(
        spec(9, 9),
        with({absent("member4")}, {{"member1", 3, 3, 3, 3}, {"member2", 3, 3, 3, 3}, {"member3", 3, 3, 3, 3}}), 300));
    CHECK(decisions(d) == "member1 2/2 update, member2 3/3 none, member3 3/3 none, member4 1/1 create");
  }
  SECTION("a NotReady member never joins") {
    DistributionMember m = absent("member4");
    m.not_ready_since = kStart;
    Distribution d = distribute(input(spec(2, 9), with({m}, three), 300));
    CHECK(decisions(d) == "member1 1/3 none, member2 1/3 none, member3 1/3 none");
  }
  SECTION("a member leaves: its HPA deleted, its max to the others by max, mins again") {
    Distribution d = distribute(input(spec(2, 9), with({}, {{"member1", 1, 4, 1, 1}, {"member2", 1, 2, 1, 1}}), 300));
    // previous shares still name member3 (1, 3)
    DistributionInput in = input(spec(2, 9), with({}, {{"member1", 1, 4, 1, 1}, {"member2", 1, 2, 1, 1}}), 300);
    in.previous["member3"] = {1, 3};
    d = distribute(in);
    CHECK(decisions(d) == "member1 1/6 update, member2 1/3 update, member3 delete");
    CHECK(d.shares.count("member3") == 0);
  }
  SECTION("a member leaves: its max to receivers, equally in name order") {
    DistributionInput in =
        input(spec(2, 9), with({}, {{"member1", 1, 3, 3, 3, true}, {"member2", 1, 3, 3, 3, true}}), 300);
    in.previous["member3"] = {1, 3};
    Distribution d = distribute(in);
    CHECK(decisions(d) == "member1 1/5 update, member2 1/4 update, member3 delete");
  }
  SECTION("one leaves and one joins: the new one takes the old one's place first") {
    DistributionInput in =
        input(spec(2, 9), with({absent("member4")}, {{"member1", 1, 3, 3, 3}, {"member2", 1, 3, 3, 3}}), 300);
    in.previous["member3"] = {1, 3};
    Distribution d = distribute(in);
    CHECK(decisions(d) == "member1 1/3 none, member2 1/3 none, member3 delete, member4 1/3 create");
    CHECK(d.moves.empty());
  }
  SECTION("NotReady within the window keeps its share; past it, it has left") {
    DistributionMember m3 = read({"member3", 1, 3, 1, 1});
    m3.state = MemberHPAState::Unreadable;
    m3.not_ready_since = kStart + seconds(200);
    DistributionInput in = input(spec(2, 9), with({m3}, {{"member1", 1, 3, 1, 1}, {"member2", 1, 3, 1, 1}}), 300);
    in.previous["member3"] = {1, 3};
    CHECK(decisions(distribute(in)) == "member1 1/3 none, member2 1/3 none, member3 1/3 none");
    in.now = kStart + seconds(320);
    CHECK(decisions(distribute(in)) == "member1 1/5 update, member2 1/4 update, member3 delete");
  }
  SECTION("a member whose HPA disappeared gets it created again") {
    DistributionInput in =
        input(spec(2, 9), with({absent("member3")}, {{"member1", 1, 3, 1, 1}, {"member2", 1, 3, 1, 1}}), 300);
    in.previous["member3"] = {1, 3};
    CHECK(decisions(distribute(in)) == "member1 1/3 none, member2 1/3 none, member3 1/3 create");
  }
}

TEST_CASE("distributor: a member that cannot be reached is named while held, left out and when it rejoins",
          "[autoscaler][distributor]") {
  // Two members, min 2 max 6, (1, 3) each; member2 goes NotReady at 100, the
  // window is 120 s. Each sync gets the previous one's conditions, as the loop.
  DistributionInput in = input(spec(2, 6), {read({"member1", 1, 3, 3, 3, true}), read({"member2", 1, 3, 1, 1})}, 110);
  in.rebalance_window = seconds(120);
  in.members[1].state = MemberHPAState::Unreadable;
  in.members[1].not_ready_since = kStart + seconds(100);
  auto reasons = [](const Distribution& d) {
    std::string out;
    for (const auto& e : d.events)
      out += (out.empty() ? "" : ", ") + std::string(e.warning ? "Warning " : "Normal ") + e.reason;
    return out;
  };
  auto next = [&](const Distribution& d, int now) {
    in.previous = d.shares;
    in.previous_conditions = d.status.conditions;
    in.now = kStart + seconds(now);
  };

  // Held: its share kept, its replicas not counted; one Event.
  Distribution d = distribute(in);
  CHECK(decisions(d) == "member1 1/3 none, member2 1/3 none");
  CHECK(condition(d, "MembersReachable").status == ConditionStatus::False);
  CHECK(condition(d, "MembersReachable").reason == "MembersHeld");
  CHECK(condition(d, "MembersReachable").message ==
        "member2 held: NotReady since 2024-01-01T00:01:40Z: its share (min 1, max 3) is kept until "
        "2024-01-01T00:03:40Z, its replicas are not counted meanwhile");
  CHECK(reasons(d) == "Warning MemberHeld");
  CHECK(d.events.at(0).message ==
        "member2: NotReady since 2024-01-01T00:01:40Z: its share (min 1, max 3) is kept until "
        "2024-01-01T00:03:40Z, its replicas are not counted meanwhile");
  CHECK(d.status.current_replicas == 3);

  // Still held at the next sync: no Event again.
  next(d, 115);
  d = distribute(in);
  CHECK(condition(d, "MembersReachable").reason == "MembersHeld");
  CHECK(reasons(d) == "");

  // Past the window: left out, its max to member1 (pegged); one Event.
  next(d, 230);
  d = distribute(in);
  CHECK(decisions(d) == "member1 2/6 update, member2 delete");  // n = 1: its min is minReplicas
  CHECK(condition(d, "MembersReachable").reason == "MembersLeftOut");
  CHECK(condition(d, "MembersReachable").message ==
        "member2 left out: NotReady since 2024-01-01T00:01:40Z, longer than the rebalance window (2m0s): left "
        "out, its share (min 1, max 3) went to the other members");
  CHECK(reasons(d) == "Warning MemberLeftOut");

  // Still NotReady, no share any more: still named, no Event again.
  next(d, 240);
  in.members[0] = read({"member1", 2, 6, 3, 3});
  d = distribute(in);
  CHECK(decisions(d) == "member1 2/6 none");
  CHECK(condition(d, "MembersReachable").message ==
        "member2 left out: NotReady since 2024-01-01T00:01:40Z: left out until it is Ready again");
  CHECK(reasons(d) == "");

  // Ready again: its HPA kept its old share and its pod while member1 scaled
  // into member2's share. The members really run 6 + 1 = 7 pods, above
  // maxReplicas 6, until member1's HPA scales down to its new max: the status
  // counts them and says why.
  next(d, 300);
  in.members[0] = read({"member1", 2, 6, 6, 6});
  in.members[1] = read({"member2", 1, 3, 1, 1});
  d = distribute(in);
  CHECK(decisions(d) == "member1 1/5 update, member2 1/1 update");
  CHECK(condition(d, "MembersReachable").status == ConditionStatus::True);
  CHECK(condition(d, "MembersReachable").reason == "MembersReachable");
  CHECK(reasons(d) == "Normal MemberRejoined");
  CHECK(d.events.at(0).message ==
        "member2 answers again after it was left out: it takes part with min 1, max 1, its HPA runs 1 replicas");
  CHECK(d.status.current_replicas == 7);
  CHECK(condition(d, "ScalingLimited").status == ConditionStatus::True);
  CHECK(condition(d, "ScalingLimited").reason == "TooManyReplicas");
  CHECK(condition(d, "ScalingLimited").message ==
        "the members run 7 replicas, more than maxReplicas 6, until their HPAs scale down to their shares "
        "(member1 runs 6 with a max of 5)");

  // Once member1 scaled down: within maxReplicas again, nothing more said.
  next(d, 330);
  in.members[0] = read({"member1", 1, 5, 5, 5});
  in.members[1] = read({"member2", 1, 1, 1, 1});
  d = distribute(in);
  CHECK(d.status.current_replicas == 6);
  CHECK(condition(d, "ScalingLimited").status == ConditionStatus::False);
  CHECK(condition(d, "MembersReachable").status == ConditionStatus::True);
  CHECK(reasons(d) == "");
}

TEST_CASE("distributor: a Ready member whose HPA cannot be read is held, no condition when all answer",
          "[autoscaler][distributor]") {
  DistributionInput in = input(spec(2, 6), {read({"member1", 1, 3, 1, 1}), read({"member2", 1, 3, 1, 1})}, 300);
  Distribution d = distribute(in);
  CHECK(find_condition(d.status.conditions, "MembersReachable") == nullptr);
  CHECK(d.events.empty());
  in.members[1].state = MemberHPAState::Unreadable;
  d = distribute(in);
  CHECK(
      condition(d, "MembersReachable").message ==
      "member2 held: its HPA cannot be read: its share (min 1, max 3) is kept, its replicas are not counted meanwhile");
  REQUIRE(d.events.size() == 1);
  CHECK(d.events[0].reason == "MemberHeld");
}

TEST_CASE("distributor: maxReplicas below the members is InvalidDistribution", "[autoscaler][distributor]") {
  for (auto [min, max, words] : {std::tuple{1, 2, std::string("maxReplicas 2 is less than the 3 members")},
                                 std::tuple{5, 4, std::string("minReplicas 5 is greater than maxReplicas 4")}}) {
    INFO(words);
    DistributionInput in = input(spec(min, max), {absent("member1"), absent("member2"), absent("member3")});
    in.previous["member1"] = {1, 1};
    Distribution d = distribute(in);
    CHECK_FALSE(d.valid);
    CHECK(d.members.empty());
    CHECK(d.moves.empty());
    CHECK(d.shares == in.previous);
    const auto& active = condition(d, "ScalingActive");
    CHECK(active.status == ConditionStatus::False);
    CHECK(active.reason == "InvalidDistribution");
    CHECK_THAT(active.message, Catch::Contains(words));
    REQUIRE(d.events.size() == 1);
    CHECK(d.events[0].warning);
  }
}

TEST_CASE("distributor: the aggregated status", "[autoscaler][distributor]") {
  FederatedHPASpec s = spec(2, 12);
  MetricSpec cpu;
  cpu.type = MetricSourceType::Resource;
  cpu.resource_name = "cpu";
  cpu.target.type = MetricTargetType::Utilization;
  cpu.target.average_utilization = 50;
  MetricSpec queue;
  queue.type = MetricSourceType::External;
  queue.metric.name = "queue";
  queue.target.type = MetricTargetType::Value;
  s.metrics = {cpu, queue};

  auto metrics = [&](std::int32_t utilization, std::int64_t value_milli) {
    MetricStatus c;
    c.type = MetricSourceType::Resource;
    c.resource_name = "cpu";
    c.current.average_utilization = utilization;
    c.current.average_value = utilization * 10;
    MetricStatus q;
    q.type = MetricSourceType::External;
    q.metric.name = "queue";
    q.current.value = value_milli;
    return std::vector<MetricStatus>{q, c};  // any order
  };
  DistributionMember m1 = read({"member1", 1, 6, 3, 4, false, 100});
  m1.hpa.current_metrics = metrics(90, 3000);
  m1.hpa.conditions = {{"AbleToScale", ConditionStatus::True, "ReadyForNewScale", "", kStart},
                       {"ScalingActive", ConditionStatus::True, "ValidMetricFound", "", kStart}};
  DistributionMember m2 = read({"member2", 1, 6, 1, 1, false, 200});
  m2.hpa.current_metrics = metrics(30, 2000);
  m2.hpa.conditions = {{"AbleToScale", ConditionStatus::False, "FailedGetScale", "no scale", kStart},
                       {"ScalingActive", ConditionStatus::True, "ValidMetricFound", "", kStart}};
  DistributionMember m3 = absent("member3");  // just created: no status yet
  DistributionInput in = input(s, {m1, m2, m3}, 300);
  in.previous["member1"] = {1, 5};
  in.previous["member2"] = {1, 5};
  in.spec.max_replicas = 13;
  Distribution d = distribute(in);
  CHECK(d.status.current_replicas == 4);
  CHECK(d.status.desired_replicas == 5);
  CHECK(d.status.last_scale_time == kStart + seconds(200));
  REQUIRE(d.status.current_metrics.size() == 2);  // in spec order
  CHECK(d.status.current_metrics[0].resource_name == "cpu");
  CHECK(d.status.current_metrics[0].current.average_utilization == 75);  // (3 x 90 + 1 x 30) / 4
  CHECK(d.status.current_metrics[0].current.average_value == 750);
  CHECK(d.status.current_metrics[1].metric.name == "queue");
  CHECK(d.status.current_metrics[1].current.value == 5000);  // summed
  const auto& able = condition(d, "AbleToScale");
  CHECK(able.status == ConditionStatus::False);
  CHECK(able.message == "member2: FailedGetScale (no scale)");
  const auto& active = condition(d, "ScalingActive");
  CHECK(active.status == ConditionStatus::True);
  CHECK_THAT(active.message, Catch::Contains("member1, member2"));
  // member3 joins: 1 left over from the raise, 2 of member1's spare (member2 scaled within the window)
  CHECK(decisions(d) == "member1 1/4 update, member2 1/6 none, member3 1/3 create");
}

TEST_CASE("distributor: the distribution annotation", "[autoscaler][distributor]") {
  Shares shares{{"member2", {1, 2}}, {"member1", {2, 6}}};
  const std::string text = distribution_annotation(shares);
  CHECK(text == R"({"member1":{"minReplicas":2,"maxReplicas":6},"member2":{"minReplicas":1,"maxReplicas":2}})");
  auto parsed = parse_distribution_annotation(text);
  REQUIRE(parsed.ok());
  CHECK(*parsed == shares);
  for (std::string bad :
       {"", "[]", R"({"m": 3})", R"({"m": {"minReplicas": 1}})", R"({"m": {"minReplicas": 0, "maxReplicas": 2}})",
        R"({"m": {"minReplicas": 1, "maxReplicas": "2"}})"}) {
    INFO(bad);
    auto result = parse_distribution_annotation(bad);
    REQUIRE_FALSE(result.ok());
    CHECK_THAT(result.error().message, Catch::StartsWith("autoscaling.fedmetrics.io/distribution: "));
  }
}

// --- property test -----------------------------------------------------------

// What one random member's HPA reports, as the world evolves between syncs.
struct WorldMember {
  std::int32_t weight = 1;
  std::int32_t current = 0;
  std::int32_t desired = 0;
  bool too_many = false;
  std::optional<int> last_scale;
  bool exists = false;
};

std::string describe(const DistributionInput& in) {
  std::ostringstream out;
  out << "spec min " << in.spec.min_replicas.value_or(1) << " max " << in.spec.max_replicas << " now "
      << (in.now - kStart).count() / 1000000000 << ";";
  for (const auto& m : in.members) {
    out << " " << m.name << "(w" << m.weight;
    if (m.state == MemberHPAState::Read) {
      out << " " << m.hpa.min_replicas << "/" << m.hpa.max_replicas << " cur " << m.hpa.current_replicas << " des "
          << m.hpa.desired_replicas << (m.hpa.conditions.empty() ? "" : " TooMany");
      if (m.hpa.last_scale_time) out << " scaled " << (*m.hpa.last_scale_time - kStart).count() / 1000000000;
    } else {
      out << (m.state == MemberHPAState::Unreadable ? " unreadable" : " absent");
    }
    if (m.not_ready_since) out << " NotReady";
    out << ")";
  }
  return out.str();
}

void check_invariants(const DistributionInput& in, const Distribution& d) {
  const std::int64_t n = static_cast<std::int64_t>(in.members.size());
  const std::int64_t min = in.spec.min_replicas.value_or(1);
  if (in.spec.max_replicas < n || min > in.spec.max_replicas) {
    REQUIRE_FALSE(d.valid);
    REQUIRE(d.members.empty());
    return;
  }
  REQUIRE(d.valid);
  std::int64_t sum_max = 0;
  std::int64_t sum_min = 0;
  for (const auto& m : in.members) {
    REQUIRE(d.shares.count(m.name) == 1);
    const MemberShare& s = d.shares.at(m.name);
    REQUIRE(s.min_replicas >= 1);               // invariant 2; never an HPA with max 0
    REQUIRE(s.min_replicas <= s.max_replicas);  // never max below min
    sum_max += s.max_replicas;
    sum_min += s.min_replicas;
  }
  REQUIRE(d.shares.size() == in.members.size());
  REQUIRE(sum_max == in.spec.max_replicas);  // invariant 1
  REQUIRE(sum_min == std::max(min, n));      // invariant 3
  for (const auto& mv : d.moves) REQUIRE(mv.max_replicas > 0);
}

bool same(const Distribution& a, const Distribution& b) {
  if (a.valid != b.valid || a.shares != b.shares || a.moves != b.moves || a.annotation != b.annotation) return false;
  if (a.members.size() != b.members.size() || a.events.size() != b.events.size()) return false;
  for (const auto& [name, m] : a.members) {
    if (!b.members.count(name) || b.members.at(name).action != m.action || b.members.at(name).share != m.share)
      return false;
  }
  for (std::size_t i = 0; i < a.events.size(); ++i) {
    if (a.events[i].message != b.events[i].message) return false;
  }
  return a.status.conditions == b.status.conditions && a.status.current_replicas == b.status.current_replicas;
}

TEST_CASE("distributor: property: invariants, no loop, determinism over random federations",
          "[autoscaler][distributor]") {
  constexpr std::uint64_t kSeed = 20261124;
  constexpr int kCases = 600;
  constexpr int kPasses = 40;
  const std::vector<std::string> pool = {"member1", "member2", "member3", "member4",
                                         "member5", "member6", "member7", "member8"};
  int moved = 0;
  int invalid = 0;
  for (int c = 0; c < kCases; ++c) {
    std::mt19937_64 rng(kSeed + static_cast<std::uint64_t>(c));
    auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    auto chance = [&](int percent) { return uniform(1, 100) <= percent; };

    std::map<std::string, WorldMember> world;
    const int initial = uniform(1, 6);
    for (int i = 0; i < initial; ++i) world[pool[static_cast<std::size_t>(i)]].weight = uniform(0, 5);
    FederatedHPASpec s = spec(uniform(0, 8), uniform(1, 30));
    Shares shares;
    std::vector<HorizontalPodAutoscalerCondition> conditions;

    for (int pass = 0; pass < kPasses; ++pass) {
      const int now = 300 + pass * 15;
      // The world changes: spec edits, joins, leaves, member HPA states.
      if (pass > 0 && chance(15)) s.max_replicas = std::max(1, s.max_replicas + uniform(-6, 6));
      if (pass > 0 && chance(15)) s.min_replicas = std::max(0, *s.min_replicas + uniform(-4, 4));
      if (pass > 0 && chance(10)) {
        const auto& name = pool[static_cast<std::size_t>(uniform(0, static_cast<int>(pool.size()) - 1))];
        if (!world.count(name)) world[name].weight = uniform(0, 5);
      }
      if (pass > 0 && chance(10) && world.size() > 1) {
        auto it = world.begin();
        std::advance(it, uniform(0, static_cast<int>(world.size()) - 1));
        world.erase(it);
      }
      DistributionInput in;
      in.spec = s;
      in.previous = shares;
      in.now = kStart + seconds(now);
      in.previous_conditions = conditions;
      for (auto& [name, w] : world) {
        DistributionMember m = absent(name, w.weight);
        auto share = shares.find(name);
        if (w.exists && share != shares.end()) {
          // The member's own HPA controller: somewhere within its share, or
          // pegged at its max and asking for more; sometimes just scaled.
          const MemberShare& sh = share->second;
          w.current = chance(30) ? sh.max_replicas : uniform(0, sh.max_replicas + 1);
          w.desired = std::clamp(w.current + uniform(-2, 2), sh.min_replicas, sh.max_replicas);
          w.too_many = w.current == sh.max_replicas ? chance(60) : chance(5);
          if (chance(30)) w.last_scale = now - uniform(0, 300);
          m = read({name, sh.min_replicas, sh.max_replicas, w.current, w.desired, w.too_many, w.last_scale, w.weight});
          if (chance(3)) {  // edited by hand
            m.hpa.max_replicas = uniform(0, 5);
            m.hpa.min_replicas = uniform(0, 5);
          }
          if (chance(4)) {  // its HPA could not be read, NotReady within the window or not
            m.state = MemberHPAState::Unreadable;
            if (chance(50)) m.not_ready_since = in.now - seconds(uniform(0, 119));
          }
        }
        in.members.push_back(std::move(m));
      }
      INFO("seed " << kSeed << " + case " << c << ", pass " << pass << ": " << describe(in));

      const Distribution d = distribute(in);
      check_invariants(in, d);

      // Determinism: the same inputs in another order give the same outputs.
      DistributionInput shuffled = in;
      std::shuffle(shuffled.members.begin(), shuffled.members.end(), rng);
      REQUIRE(same(d, distribute(shuffled)));
      REQUIRE(same(d, distribute(in)));

      if (!d.valid) {
        ++invalid;
        continue;
      }
      moved += static_cast<int>(d.moves.size());
      // No loop: the member HPAs as decided, nothing else changed, reach a
      // fixed point at once: no move, nothing to write. A member created in
      // this pass reports its HPA for the first time in the next one (a new
      // observation), so one more pass may move to it before the fixed point.
      int settling = 0;
      for (const auto& [name, m] : d.members) settling = settling || m.action == MemberAction::Create;
      DistributionInput again = in;
      again.previous = d.shares;
      again.previous_conditions = d.status.conditions;
      for (auto& m : again.members) {
        const MemberShare& sh = d.shares.at(m.name);
        if (m.state == MemberHPAState::Absent) {
          m = read({m.name, sh.min_replicas, sh.max_replicas, 0, 0, false, std::nullopt, m.weight});
        }
        m.hpa.min_replicas = sh.min_replicas;
        m.hpa.max_replicas = sh.max_replicas;
      }
      for (int repeat = 0; repeat < 3; ++repeat) {
        INFO("repeat " << repeat << " of " << describe(again));
        const Distribution fixed = distribute(again);
        check_invariants(again, fixed);
        again.previous = fixed.shares;
        again.previous_conditions = fixed.status.conditions;
        if (repeat < settling) {
          for (auto& m : again.members) {
            m.hpa.min_replicas = fixed.shares.at(m.name).min_replicas;
            m.hpa.max_replicas = fixed.shares.at(m.name).max_replicas;
          }
          continue;
        }
        REQUIRE(fixed.moves.empty());
        for (const auto& [name, m] : fixed.members) REQUIRE(m.action == MemberAction::None);
      }

      shares = d.shares;
      conditions = d.status.conditions;
      for (auto& [name, w] : world) w.exists = true;
    }
  }
  // The random states do exercise the rules, not only the quiet path.
  CHECK(moved > 1000);
  CHECK(invalid > 10);
}

}  // namespace
}  // namespace fedmetrics::autoscaler
