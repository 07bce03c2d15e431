#include "fedmetrics/plot/replay_chart.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "fedmetrics/k8s/time.hpp"

namespace fedmetrics::plot {

namespace {

using autoscaler::MetricTargetType;
using autoscaler::Replay;
using autoscaler::ReplayMode;
using autoscaler::ReplayStep;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Color hex(unsigned rgb) {
  return {((rgb >> 16) & 0xff) / 255.0, ((rgb >> 8) & 0xff) / 255.0, (rgb & 0xff) / 255.0};
}

const Color kMinColor = hex(0x7f7f7f);
const Color kMaxColor = hex(0x303030);
const Color kMarkerColor = hex(0x202020);

// When each step ends: the next step's time; the last one's after the gap before it.
std::vector<double> step_ends(const std::vector<ReplayStep>& steps) {
  std::vector<double> ends;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (i + 1 < steps.size()) {
      ends.push_back(steps[i + 1].seconds);
    } else {
      const double gap = i > 0 ? steps[i].seconds - steps[i - 1].seconds : 1.0;
      ends.push_back(steps[i].seconds + (gap > 0 ? gap : 1.0));
    }
  }
  return ends;
}

// A value held over each step: (t_i, v_i), (end_i, v_i), ...
template <class F>
std::vector<Point> step_line(const std::vector<ReplayStep>& steps, const std::vector<double>& ends, F value) {
  std::vector<Point> out;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const double v = value(steps[i]);
    out.push_back({steps[i].seconds, v});
    out.push_back({ends[i], v});
  }
  return out;
}

int member_replicas(const ReplayStep& step, const std::string& name) {
  auto it = step.members.find(name);
  return it == step.members.end() ? 0 : it->second.replicas;
}

std::string right_axis_label(const autoscaler::ReplayMetric& metric) {
  switch (metric.target_type) {
    case MetricTargetType::Utilization:
      return metric.name + " utilization (% of request)";
    case MetricTargetType::AverageValue:
      return metric.name + " (average per pod)";
    case MetricTargetType::Value:
      return metric.name + " (value)";
  }
  return metric.name;
}

bool has_move(const ReplayStep& step) {
  return std::any_of(step.events.begin(), step.events.end(),
                     [](const std::string& e) { return e.rfind("move ", 0) == 0; });
}

}  // namespace

const std::vector<Color>& member_palette() {
  // ColorBrewer "Paired", the light half: soft fills under dark lines.
  static const std::vector<Color> palette = {hex(0xa6cee3), hex(0xb2df8a), hex(0xfdbf6f),
                                             hex(0xcab2d6), hex(0xfb9a99), hex(0xffff99)};
  return palette;
}

const std::vector<Color>& metric_palette() {
  // The dark half of "Paired", red first.
  static const std::vector<Color> palette = {hex(0xe31a1c), hex(0x6a3d9a), hex(0xff7f00),
                                             hex(0x1f78b4), hex(0x33a02c), hex(0xb15928)};
  return palette;
}

Chart chart_for(const Replay& replay, const std::string& title) {
  Chart chart;
  chart.title = title;
  chart.subtitle = std::string(replay.mode == ReplayMode::Distributed ? "distributed" : "centralized") +
                   ", start " + k8s::format_time(replay.start);
  const auto& steps = replay.steps;
  const auto ends = step_ends(steps);
  const double from = steps.empty() ? 0 : steps.front().seconds;
  const double to = steps.empty() ? 1 : ends.back();
  chart.x = time_axis(from, to, 10, "time since start");

  // Replicas stacked per member, in name order.
  std::set<std::string> names;
  for (const auto& step : steps) {
    for (const auto& [name, m] : step.members) names.insert(name);
  }
  std::vector<double> base(steps.size(), 0.0);
  double top = 1;
  std::size_t index = 0;
  for (const auto& name : names) {
    Area area;
    area.name = name;
    area.color = member_palette()[index++ % member_palette().size()];
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const double upper = base[i] + member_replicas(steps[i], name);
      area.lower.push_back({steps[i].seconds, base[i]});
      area.lower.push_back({ends[i], base[i]});
      area.upper.push_back({steps[i].seconds, upper});
      area.upper.push_back({ends[i], upper});
      base[i] = upper;
      top = std::max(top, upper);
    }
    chart.legend.push_back({LegendEntry::Kind::Area, area.name, area.color});
    chart.areas.push_back(std::move(area));
  }

  chart.lines.push_back({"minReplicas", kMinColor, LineStyle::Dashed, AxisSide::Left, false,
                         step_line(steps, ends, [](const ReplayStep& s) { return double(s.min_replicas); })});
  chart.lines.push_back({"maxReplicas", kMaxColor, LineStyle::Dashed, AxisSide::Left, false,
                         step_line(steps, ends, [](const ReplayStep& s) { return double(s.max_replicas); })});
  for (const auto& line : chart.lines) chart.legend.push_back({LegendEntry::Kind::Line, line.name, line.color, line.style});

  for (std::size_t i = 0; i < steps.size(); ++i) {
    const auto& s = steps[i];
    top = std::max({top, double(s.max_replicas), double(s.desired_replicas)});
    if (replay.mode == ReplayMode::Centralized && s.desired_replicas != s.current_replicas) {
      chart.markers.push_back({s.seconds, double(s.desired_replicas), double(s.current_replicas),
                               s.desired_replicas > s.current_replicas ? MarkerShape::Up : MarkerShape::Down,
                               std::to_string(s.desired_replicas)});
    }
    if (replay.mode == ReplayMode::Distributed && has_move(s)) {
      chart.markers.push_back({s.seconds, base[i], kNaN, MarkerShape::Diamond, ""});
    }
  }
  if (!chart.markers.empty()) {
    if (replay.mode == ReplayMode::Centralized) {
      chart.legend.push_back({LegendEntry::Kind::Marker, "rescale (new count)", kMarkerColor, LineStyle::Solid,
                              MarkerShape::Up});
    } else {
      chart.legend.push_back({LegendEntry::Kind::Marker, "rebalance (max moved)", kMarkerColor, LineStyle::Solid,
                              MarkerShape::Diamond});
    }
  }
  // Room above the highest count, so that maxReplicas is not drawn on the frame.
  chart.left = value_axis(0, std::ceil(top * 1.1), 8, true, "replicas");

  // The metrics that have a value at some step, by their index in the spec.
  std::vector<std::size_t> drawn;
  for (std::size_t m = 0;; ++m) {
    bool exists = false;
    bool valued = false;
    for (const auto& s : steps) {
      if (m < s.metrics.size()) {
        exists = true;
        valued = valued || s.metrics[m].current.has_value();
      }
    }
    if (!exists) break;
    if (valued) drawn.push_back(m);
  }
  if (drawn.empty()) return chart;

  const bool relative = drawn.size() > 1;
  double high = relative ? 100 : 0;
  std::string right_label = "metric (% of its target)";
  index = 0;
  std::vector<Line> targets;
  for (std::size_t m : drawn) {
    Line line;
    line.color = metric_palette()[index++ % metric_palette().size()];
    line.axis = AxisSide::Right;
    line.dots = true;
    for (const auto& s : steps) {
      double y = kNaN;
      if (m < s.metrics.size() && s.metrics[m].current) {
        const auto& metric = s.metrics[m];
        y = relative ? (metric.target > 0 ? *metric.current / metric.target * 100 : kNaN) : *metric.current;
        if (line.name.empty()) line.name = metric.name;
      }
      if (!std::isnan(y)) high = std::max(high, y);
      line.points.push_back({s.seconds, y});
    }
    if (!relative) {
      const auto& first = *std::find_if(steps.begin(), steps.end(),
                                        [&](const ReplayStep& s) { return m < s.metrics.size(); });
      Line target{line.name + " target (" + first.metrics[m].target_text + ")", line.color, LineStyle::Dashed,
                  AxisSide::Right, false,
                  step_line(steps, ends, [&](const ReplayStep& s) {
                    return m < s.metrics.size() ? s.metrics[m].target : kNaN;
                  })};
      for (const auto& p : target.points) {
        if (!std::isnan(p.y)) high = std::max(high, p.y);
      }
      targets.push_back(std::move(target));
      right_label = right_axis_label(first.metrics[m]);
    }
    chart.legend.push_back({LegendEntry::Kind::Line, line.name, line.color});
    chart.lines.push_back(std::move(line));
  }
  if (relative) {
    targets.push_back({"target (100%)", kMarkerColor, LineStyle::Dashed, AxisSide::Right, false,
                       {{from, 100.0}, {to, 100.0}}});
  }
  // On the left axis's grid: its ticks are the grid lines of both.
  chart.right = aligned_value_axis(high * 1.05, std::max<std::size_t>(chart.left.ticks.size(), 2) - 1, right_label);
  for (auto& target : targets) {
    chart.legend.push_back({LegendEntry::Kind::Line, target.name, target.color, target.style});
    chart.lines.push_back(std::move(target));
  }
  return chart;
}

}  // namespace fedmetrics::plot
