// The replay as a chart: stacked member areas (replicas or pods, or the
// distributed shares), the replicas line, min/max, rescale arrows where the
// bars change, metrics as step lines against their targets on the right
// axis, distinct styles, the legend.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "fedmetrics/plot/replay_chart.hpp"

namespace fedmetrics::plot {
namespace {

using autoscaler::MetricTargetType;
using autoscaler::Replay;
using autoscaler::ReplayMember;
using autoscaler::ReplayMetric;
using autoscaler::ReplayMode;
using autoscaler::ReplayStep;

ReplayMetric metric(std::string name, MetricTargetType type, std::optional<double> current, double target,
                    std::string target_text) {
  ReplayMetric m;
  m.name = std::move(name);
  m.target_type = type;
  m.current = current;
  m.target = target;
  m.target_text = std::move(target_text);
  return m;
}

ReplayStep step(double seconds, int current, int desired, std::map<std::string, int> members,
                std::vector<ReplayMetric> metrics = {}) {
  ReplayStep s;
  s.seconds = seconds;
  s.current_replicas = current;
  s.desired_replicas = desired;
  s.min_replicas = 1;
  s.max_replicas = 10;
  for (const auto& [name, n] : members) s.members[name] = ReplayMember{n, std::nullopt, false};
  s.metrics = std::move(metrics);
  return s;
}

std::vector<std::string> legend_names(const Chart& chart) {
  std::vector<std::string> out;
  for (const auto& e : chart.legend) out.push_back(e.name);
  return out;
}

const Line& line_named(const Chart& chart, const std::string& name) {
  for (const auto& l : chart.lines) {
    if (l.name == name) return l;
  }
  FAIL("no line " << name);
  throw;
}

const Area& area_named(const Chart& chart, const std::string& name) {
  for (const auto& a : chart.areas) {
    if (a.name == name) return a;
  }
  FAIL("no area " << name);
  throw;
}

// The line is a step-after line over `seconds`: each value holds from its
// step's time to the next step's, where it jumps (a vertical join).
void check_step_after(const Line& line, const std::vector<double>& seconds, double last_end) {
  REQUIRE(line.points.size() >= 2 * seconds.size());
  for (std::size_t i = 0; i < seconds.size(); ++i) {
    const Point& begin = line.points[2 * i];
    const Point& end = line.points[2 * i + 1];
    CHECK(begin.x == seconds[i]);
    CHECK(end.x == (i + 1 < seconds.size() ? seconds[i + 1] : last_end));
    if (std::isnan(begin.y)) {
      CHECK(std::isnan(end.y));
    } else {
      CHECK(end.y == begin.y);  // held, not interpolated
    }
  }
}

TEST_CASE("plot: replicas stacked per member, each step held until the next", "[plot]") {
  Replay replay;
  replay.steps = {step(0, 1, 1, {{"member1", 1}}), step(15, 1, 5, {{"member1", 1}}),
                  step(30, 5, 5, {{"member1", 3}, {"member2", 2}})};
  const Chart chart = chart_for(replay, "web");
  REQUIRE(chart.areas.size() == 2);
  const Area& m1 = chart.areas[0];
  const Area& m2 = chart.areas[1];
  CHECK(m1.name == "member1");
  CHECK(m2.name == "member2");
  CHECK(m1.color != m2.color);
  // (t_i, v), (t_i+1, v); the last step holds for the 15 s before it.
  REQUIRE(m1.upper.size() == 6);
  CHECK(m1.upper[0].x == 0);
  CHECK(m1.upper[1].x == 15);
  CHECK(m1.upper[5].x == 45);
  CHECK(m1.upper[4].y == 3);
  CHECK(m1.lower[4].y == 0);
  // member2 sits on member1: absent (0) at the first steps, 3..5 at the last.
  CHECK(m2.lower[4].y == 3);
  CHECK(m2.upper[4].y == 5);
  CHECK(m2.upper[0].y == m2.lower[0].y);
  CHECK(chart.x.min == 0);
  CHECK(chart.x.max == 45);
  CHECK(chart.left.min == 0);
  CHECK(chart.left.max >= 10);                                 // maxReplicas shows
  CHECK(chart.left.label == "replicas (stacked per member)");  // the members add up to the replicas
  CHECK(line_named(chart, "maxReplicas").points[0].y == 10);
  const Line& replicas = line_named(chart, "replicas");
  check_step_after(replicas, {0, 15, 30}, 45);
  CHECK(replicas.points[3].y == 1);
  CHECK(replicas.points[4].y == 5);
  CHECK(replicas.style == LineStyle::Solid);
  CHECK_FALSE(chart.right);  // no metric
  CHECK(legend_names(chart) == std::vector<std::string>{"member1", "member2", "replicas", "minReplicas", "maxReplicas",
                                                        "rescale (new count)"});
  CHECK(chart.title == "web");
  CHECK(chart.subtitle.find("centralized") != std::string::npos);
}

TEST_CASE("plot: a rescale's arrow sits where the bars and the replicas line change, never on the frame", "[plot]") {
  Replay replay;
  // Decided 1 -> 5 at 15 s: the next step (30 s) starts from 5. Decided 5 -> 2
  // at the last step (30 s): applied after it.
  replay.steps = {step(0, 1, 1, {{"member1", 1}}), step(15, 1, 5, {{"member1", 1}}),
                  step(30, 5, 2, {{"member1", 3}, {"member2", 2}})};
  const Chart chart = chart_for(replay, "web");
  REQUIRE(chart.markers.size() == 2);
  const Marker& up = chart.markers[0];
  CHECK(up.x == 30);  // where the bars go from 1 to 5, not at 15 s where it was decided
  CHECK(up.from == 1);
  CHECK(up.y == 5);
  CHECK(up.shape == MarkerShape::Up);
  CHECK(up.label == "5");
  const Area& top = chart.areas.back();
  CHECK(top.upper[3].y == 1);  // (30, 1) ends the step before ...
  CHECK(top.upper[4].y == 5);  // ... (30, 5) starts the next: the bars change at the arrow
  CHECK(top.upper[4].x == up.x);
  const Marker& down = chart.markers[1];
  CHECK(down.shape == MarkerShape::Down);
  CHECK(down.from == 5);
  CHECK(down.y == 2);
  CHECK(down.x == 45);          // after the last step ...
  CHECK(chart.x.max > down.x);  // ... with room after it
  const Line& replicas = line_named(chart, "replicas");
  CHECK(replicas.points.back().y == 2);  // the last decision applied
  CHECK(replicas.points.back().x == chart.x.max);
  for (const auto& m : chart.markers) {
    CHECK(m.x > chart.x.min);
    CHECK(m.x < chart.x.max);
  }
}

TEST_CASE("plot: a Duplicated placement stacks pods, labelled so, under the replicas line", "[plot]") {
  // examples/scenarios/several-members-incomplete-data.json: 2 replicas run
  // in each of three members (6 pods); 2 -> 1 at 30 s.
  Replay replay;
  replay.steps = {step(0, 2, 2, {{"member1", 2}, {"member2", 2}, {"member3", 2}}),
                  step(15, 2, 2, {{"member1", 2}, {"member2", 2}, {"member3", 2}}),
                  step(30, 2, 1, {{"member1", 2}, {"member2", 2}, {"member3", 2}}),
                  step(45, 1, 3, {{"member1", 1}, {"member2", 1}, {"member3", 1}})};
  const Chart chart = chart_for(replay, "web");
  CHECK(chart.left.label.find("pods") != std::string::npos);
  CHECK(area_named(chart, "member3 pods").upper[0].y == 6);
  const Line& replicas = line_named(chart, "replicas");
  CHECK(replicas.points[0].y == 2);
  CHECK(replicas.points[6].y == 1);
  REQUIRE(chart.markers.size() == 2);
  CHECK(chart.markers[0].x == 45);
  CHECK(chart.markers[0].from == 2);  // on the replicas line, not inside a bar of 6
  CHECK(chart.markers[0].y == 1);
  CHECK(legend_names(chart) == std::vector<std::string>{"member1 pods", "member2 pods", "member3 pods", "replicas",
                                                        "minReplicas", "maxReplicas", "rescale (new count)"});
}

TEST_CASE("plot: one metric in its unit against its target, held over each step", "[plot]") {
  Replay replay;
  replay.steps = {
      step(0, 4, 2, {{"member1", 4}}, {metric("cpu", MetricTargetType::Utilization, 20, 50, "50%")}),
      step(60, 2, 2, {{"member1", 2}}, {metric("cpu", MetricTargetType::Utilization, std::nullopt, 50, "50%")}),
      step(120, 2, 2, {{"member1", 2}}, {metric("cpu", MetricTargetType::Utilization, 130, 50, "50%")})};
  const Chart chart = chart_for(replay, "web");
  REQUIRE(chart.right);
  CHECK(chart.right->label == "cpu utilization (% of request)");
  CHECK(chart.right->min == 0);
  CHECK(chart.right->max >= 130);
  const Line& cpu = line_named(chart, "cpu");
  CHECK(cpu.axis == AxisSide::Right);
  check_step_after(cpu, {0, 60, 120}, 180);
  CHECK(cpu.points[0].y == 20);
  CHECK(std::isnan(cpu.points[2].y));  // not computed: the line breaks
  CHECK(cpu.points[4].y == 130);
  // A dot on each value sampled, none where the value is only held.
  REQUIRE(cpu.dots.size() == 2);
  CHECK(cpu.dots[0].x == 0);
  CHECK(cpu.dots[1].x == 120);
  CHECK(cpu.dots[1].y == 130);
  const Line& target = line_named(chart, "cpu target (50%)");
  CHECK(target.style == LineStyle::Dashed);
  CHECK(target.color == cpu.color);
  CHECK(target.points.front().y == 50);
  check_step_after(target, {0, 60, 120}, 180);
  REQUIRE(chart.markers.size() == 1);
  CHECK(chart.markers[0].shape == MarkerShape::Down);
  CHECK(chart.markers[0].x == 60);
  CHECK(legend_names(chart).back() == "cpu target (50%)");
}

TEST_CASE("plot: bounds, targets and the replicas each have their own style, all in the legend", "[plot]") {
  Replay replay;
  replay.steps = {step(0, 2, 2, {{"member1", 2}}, {metric("cpu", MetricTargetType::Utilization, 40, 50, "50%")})};
  const Chart chart = chart_for(replay, "web");
  const std::vector<std::string> names = {"replicas", "minReplicas", "maxReplicas", "cpu target (50%)"};
  for (std::size_t i = 0; i < names.size(); ++i) {
    for (std::size_t j = i + 1; j < names.size(); ++j) {
      CAPTURE(names[i], names[j]);
      CHECK(line_named(chart, names[i]).style != line_named(chart, names[j]).style);
    }
  }
  for (const auto& line : chart.lines) {
    bool found = false;
    for (const auto& e : chart.legend) {
      found = found || (e.kind == LegendEntry::Kind::Line && e.name == line.name && e.style == line.style &&
                        e.color == line.color);
    }
    CHECK(found);
  }
}

TEST_CASE("plot: several metrics as a percentage of their targets", "[plot]") {
  Replay replay;
  replay.steps = {step(0, 2, 2, {},
                       {metric("cpu", MetricTargetType::Utilization, 25, 50, "50%"),
                        metric("queue_depth", MetricTargetType::Value, 30, 20, "20"),
                        metric("never", MetricTargetType::Value, std::nullopt, 1, "1")})};
  const Chart chart = chart_for(replay, "web");
  REQUIRE(chart.right);
  CHECK(chart.right->label == "metric (% of its target)");
  CHECK(line_named(chart, "cpu").points[0].y == Approx(50));
  CHECK(line_named(chart, "queue_depth").points[0].y == Approx(150));
  CHECK(line_named(chart, "target (100%)").points[0].y == 100);
  CHECK(line_named(chart, "cpu").color != line_named(chart, "queue_depth").color);
  for (const auto& l : chart.lines) CHECK(l.name != "never");  // never computed: left out
  CHECK(chart.right->max >= 150);
  CHECK(chart.x.max == 1);  // a single step shows for a second
}

TEST_CASE("plot: distributed replays stack the members' shares and mark what moved where", "[plot]") {
  Replay replay;
  replay.mode = ReplayMode::Distributed;
  replay.steps = {step(0, 2, 2, {{"member1", 1}, {"member2", 1}}), step(300, 7, 7, {{"member1", 6}, {"member2", 1}})};
  replay.steps[0].members["member1"].share = autoscaler::MemberShare{1, 5};
  replay.steps[0].members["member2"].share = autoscaler::MemberShare{1, 5};
  replay.steps[1].members["member1"].share = autoscaler::MemberShare{1, 7};
  replay.steps[1].members["member2"].share = autoscaler::MemberShare{1, 3};
  replay.steps[1].moves = {{"member2", "member1", 2}};
  const Chart chart = chart_for(replay, "web");
  // member1's band is its share (5, then 7), filled to what it runs (1, then 6).
  const Area& runs1 = area_named(chart, "member1");
  const Area& unused1 = area_named(chart, "member1 unused share");
  CHECK(runs1.upper[0].y == 1);
  CHECK(unused1.lower[0].y == 1);
  CHECK(unused1.upper[0].y == 5);
  CHECK(runs1.upper[2].y == 6);
  CHECK(unused1.upper[2].y == 7);
  CHECK(unused1.color != runs1.color);
  // member2's band sits on member1's.
  const Area& runs2 = area_named(chart, "member2");
  CHECK(runs2.lower[2].y == 7);
  CHECK(area_named(chart, "member2 unused share").upper[2].y == 10);
  // The move: at the step whose shares changed, on the receiving member's band.
  REQUIRE(chart.markers.size() == 1);
  CHECK(chart.markers[0].shape == MarkerShape::Diamond);
  CHECK(chart.markers[0].x == 300);
  CHECK(chart.markers[0].y == 7);
  CHECK(chart.markers[0].label == "member1 +2 from member2");
  CHECK(std::isnan(chart.markers[0].from));
  CHECK(chart.left.label.find("shares") != std::string::npos);
  CHECK(legend_names(chart) == std::vector<std::string>{"member1", "member2", "share not in use (lighter)",
                                                        "minReplicas", "maxReplicas",
                                                        "maxReplicas moved to a member (from where)"});
  CHECK(chart.subtitle.find("distributed") != std::string::npos);
}

TEST_CASE("plot: member and metric colours never meet", "[plot]") {
  for (const auto& m : member_palette()) {
    for (const auto& n : metric_palette()) CHECK_FALSE(m == n);
  }
}

}  // namespace
}  // namespace fedmetrics::plot
