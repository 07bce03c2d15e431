// The replay as a chart: stacked member areas, min/max, rescale markers,
// metrics against their targets on the right axis, the legend.
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
  CHECK(chart.left.max >= 10);  // maxReplicas shows
  CHECK(line_named(chart, "maxReplicas").points[0].y == 10);
  CHECK(line_named(chart, "minReplicas").style == LineStyle::Dashed);
  // The rescale 1 -> 5 decided at 15 s.
  REQUIRE(chart.markers.size() == 1);
  CHECK(chart.markers[0].x == 15);
  CHECK(chart.markers[0].y == 5);
  CHECK(chart.markers[0].from == 1);
  CHECK(chart.markers[0].shape == MarkerShape::Up);
  CHECK(chart.markers[0].label == "5");
  CHECK_FALSE(chart.right);  // no metric
  CHECK(legend_names(chart) ==
        std::vector<std::string>{"member1", "member2", "minReplicas", "maxReplicas", "rescale (new count)"});
  CHECK(chart.title == "web");
  CHECK(chart.subtitle.find("centralized") != std::string::npos);
}

TEST_CASE("plot: one metric in its unit against its target", "[plot]") {
  Replay replay;
  replay.steps = {step(0, 4, 2, {{"member1", 4}}, {metric("cpu", MetricTargetType::Utilization, 20, 50, "50%")}),
                  step(60, 2, 2, {{"member1", 2}}, {metric("cpu", MetricTargetType::Utilization, std::nullopt, 50, "50%")}),
                  step(120, 2, 2, {{"member1", 2}}, {metric("cpu", MetricTargetType::Utilization, 130, 50, "50%")})};
  const Chart chart = chart_for(replay, "web");
  REQUIRE(chart.right);
  CHECK(chart.right->label == "cpu utilization (% of request)");
  CHECK(chart.right->min == 0);
  CHECK(chart.right->max >= 130);
  const Line& cpu = line_named(chart, "cpu");
  CHECK(cpu.axis == AxisSide::Right);
  CHECK(cpu.dots);
  REQUIRE(cpu.points.size() == 3);
  CHECK(cpu.points[0].y == 20);
  CHECK(std::isnan(cpu.points[1].y));  // not computed: the line breaks
  CHECK(cpu.points[2].y == 130);
  const Line& target = line_named(chart, "cpu target (50%)");
  CHECK(target.style == LineStyle::Dashed);
  CHECK(target.color == cpu.color);
  CHECK(target.points.front().y == 50);
  REQUIRE(chart.markers.size() == 1);
  CHECK(chart.markers[0].shape == MarkerShape::Down);
  CHECK(legend_names(chart).back() == "cpu target (50%)");
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

TEST_CASE("plot: distributed replays mark the rebalances", "[plot]") {
  Replay replay;
  replay.mode = ReplayMode::Distributed;
  replay.steps = {step(0, 2, 2, {{"member1", 1}, {"member2", 1}}), step(300, 7, 7, {{"member1", 6}, {"member2", 1}})};
  replay.steps[1].events = {"move max 2 member2->member1"};
  const Chart chart = chart_for(replay, "web");
  REQUIRE(chart.markers.size() == 1);
  CHECK(chart.markers[0].shape == MarkerShape::Diamond);
  CHECK(chart.markers[0].x == 300);
  CHECK(chart.markers[0].y == 7);  // on top of the stack
  CHECK(std::isnan(chart.markers[0].from));
  CHECK(legend_names(chart).back() == "rebalance (max moved)");
  CHECK(chart.subtitle.find("distributed") != std::string::npos);
}

TEST_CASE("plot: member and metric colours never meet", "[plot]") {
  for (const auto& m : member_palette()) {
    for (const auto& n : metric_palette()) CHECK_FALSE(m == n);
  }
}

}  // namespace
}  // namespace fedmetrics::plot
