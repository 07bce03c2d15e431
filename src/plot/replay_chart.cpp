#include "fedmetrics/plot/replay_chart.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
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

Color hex(unsigned rgb) { return {((rgb >> 16) & 0xff) / 255.0, ((rgb >> 8) & 0xff) / 255.0, (rgb & 0xff) / 255.0}; }

// `c` mixed with white, `amount` of the way (0: c, 1: white).
Color tint(const Color& c, double amount) {
  return {c.r + (1 - c.r) * amount, c.g + (1 - c.g) * amount, c.b + (1 - c.b) * amount};
}

const Color kReplicasColor = hex(0x202020);
const Color kMinColor = hex(0x7f7f7f);
const Color kMaxColor = hex(0x505050);
const Color kMarkerColor = hex(0x202020);
constexpr double kUnusedShareTint = 0.6;

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

// A value held over each step, as the controller sees it until its next
// sync (a step-after line): (t_i, v_i), (end_i, v_i), ... A NaN value
// breaks the line for that step.
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

// A distributed member's band: its share of maxReplicas, or what it runs when that is more.
int member_band(const ReplayStep& step, const std::string& name) {
  auto it = step.members.find(name);
  if (it == step.members.end()) return 0;
  const int share = it->second.share ? it->second.share->max_replicas : 0;
  return std::max(share, it->second.replicas);
}

std::string right_axis_label(const autoscaler::ReplayMetric& metric) {
  switch (metric.target_type) {
    case MetricTargetType::Utilization: return metric.name + " utilization (% of request)";
    case MetricTargetType::AverageValue: return metric.name + " (average per pod)";
    case MetricTargetType::Value: return metric.name + " (value)";
  }
  return metric.name;
}

std::set<std::string> member_names(const std::vector<ReplayStep>& steps) {
  std::set<std::string> names;
  for (const auto& step : steps) {
    for (const auto& [name, m] : step.members) names.insert(name);
  }
  return names;
}

void add_area(Chart& chart, Area area, bool in_legend) {
  if (in_legend) chart.legend.push_back({LegendEntry::Kind::Area, area.name, area.color});
  chart.areas.push_back(std::move(area));
}

void add_line(Chart& chart, Line line) {
  chart.legend.push_back({LegendEntry::Kind::Line, line.name, line.color, line.style});
  chart.lines.push_back(std::move(line));
}

// Centralized: the members' counts stacked, and the FederatedHPA's replicas
// as a line that changes where the next step starts from the decision (the
// scale is applied between two syncs), with the rescale's arrow there.
// Returns the highest count drawn.
double centralized_replicas(Chart& chart, const Replay& replay, const std::vector<double>& ends, double to) {
  const auto& steps = replay.steps;
  double top = 1;
  if (!replay.members_unknown) {
    // The members count replicas when they add up to the replicas at every
    // step; else (a Duplicated placement runs every replica in each member,
    // or pods are missing) they count pods, and say so.
    const bool replicas = std::all_of(steps.begin(), steps.end(), [](const ReplayStep& s) {
      int sum = 0;
      for (const auto& [name, m] : s.members) sum += m.replicas;
      return sum == s.current_replicas;
    });
    chart.left.label = replicas ? "replicas (stacked per member)" : "replicas; pods per member (stacked)";
    std::vector<double> base(steps.size(), 0.0);
    std::size_t index = 0;
    for (const auto& name : member_names(steps)) {
      Area area;
      area.name = replicas ? name : name + " pods";
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
      add_area(chart, std::move(area), true);
    }
  }
  Line replicas{"replicas",
                kReplicasColor,
                LineStyle::Solid,
                AxisSide::Left,
                2.4,
                step_line(steps, ends, [](const ReplayStep& s) { return double(s.current_replicas); }),
                {}};
  if (!steps.empty() && to > ends.back()) {  // the last decision, applied after the last step
    replicas.points.push_back({ends.back(), double(steps.back().desired_replicas)});
    replicas.points.push_back({to, double(steps.back().desired_replicas)});
  }
  add_line(chart, std::move(replicas));
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const auto& s = steps[i];
    top = std::max({top, double(s.current_replicas), double(s.desired_replicas)});
    if (s.desired_replicas == s.current_replicas) continue;
    chart.markers.push_back({ends[i], double(s.desired_replicas), double(s.current_replicas),
                             s.desired_replicas > s.current_replicas ? MarkerShape::Up : MarkerShape::Down,
                             std::to_string(s.desired_replicas)});
  }
  return top;
}

// Distributed: each member's band is its share of maxReplicas (what its own
// HPA may scale to), filled up to the replicas it runs, its unused part in a
// lighter tint; a Diamond where max moved to a member, on its band, saying
// from where. Returns the highest count drawn.
double distributed_shares(Chart& chart, const Replay& replay, const std::vector<double>& ends) {
  const auto& steps = replay.steps;
  chart.left.label = "replicas (members' shares of maxReplicas, stacked)";
  std::vector<double> base(steps.size(), 0.0);
  std::map<std::string, std::vector<double>> band_top;
  double top = 1;
  std::size_t index = 0;
  for (const auto& name : member_names(steps)) {
    Area runs;
    runs.name = name;
    runs.color = member_palette()[index++ % member_palette().size()];
    Area unused;
    unused.name = name + " unused share";
    unused.color = tint(runs.color, kUnusedShareTint);
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const double running = base[i] + member_replicas(steps[i], name);
      const double upper = base[i] + member_band(steps[i], name);
      for (double x : {steps[i].seconds, ends[i]}) {
        runs.lower.push_back({x, base[i]});
        runs.upper.push_back({x, running});
        unused.lower.push_back({x, running});
        unused.upper.push_back({x, upper});
      }
      base[i] = upper;
      band_top[name].push_back(upper);
      top = std::max(top, upper);
    }
    add_area(chart, std::move(runs), true);
    add_area(chart, std::move(unused), false);
  }
  if (!chart.areas.empty()) {
    chart.legend.push_back({LegendEntry::Kind::Area, "share not in use (lighter)", tint(kMinColor, kUnusedShareTint)});
  }
  // The shares decided at a step hold from it: a move is marked where the bands change.
  for (std::size_t i = 0; i < steps.size(); ++i) {
    std::map<std::string, std::vector<const autoscaler::Move*>> received;
    for (const auto& move : steps[i].moves) received[move.to].push_back(&move);
    for (const auto& [to, moves] : received) {
      std::string label;
      for (const auto* move : moves) {
        label +=
            (label.empty() ? "" : ", ") + std::string("+") + std::to_string(move->max_replicas) + " from " + move->from;
      }
      const auto it = band_top.find(to);
      const double y = it == band_top.end() ? base[i] : it->second[i];
      chart.markers.push_back({steps[i].seconds, y, kNaN, MarkerShape::Diamond, to + " " + label});
    }
  }
  for (const auto& s : steps) top = std::max(top, double(s.current_replicas));
  return top;
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
  chart.subtitle = std::string(replay.mode == ReplayMode::Distributed ? "distributed" : "centralized") + ", start " +
                   k8s::format_time(replay.start);
  const auto& steps = replay.steps;
  const auto ends = step_ends(steps);
  const double from = steps.empty() ? 0 : steps.front().seconds;
  double to = steps.empty() ? 1 : ends.back();
  // A rescale decided at the last step is applied after it: half a step
  // more shows it, so that its arrow is not drawn on the frame.
  if (replay.mode == ReplayMode::Centralized && !steps.empty() &&
      steps.back().desired_replicas != steps.back().current_replicas) {
    to += (ends.back() - steps.back().seconds) / 2;
  }
  chart.x = time_axis(from, to, 10, "time since start");
  chart.left.label = "replicas";

  double top = replay.mode == ReplayMode::Centralized ? centralized_replicas(chart, replay, ends, to)
                                                      : distributed_shares(chart, replay, ends);
  // The bounds also hold over the room left after the last step.
  auto bound = [&](auto value) {
    auto points = step_line(steps, ends, value);
    if (!points.empty() && to > points.back().x) points.push_back({to, points.back().y});
    return points;
  };
  add_line(chart, {"minReplicas",
                   kMinColor,
                   LineStyle::Dotted,
                   AxisSide::Left,
                   1.8,
                   bound([](const ReplayStep& s) { return double(s.min_replicas); }),
                   {}});
  add_line(chart, {"maxReplicas",
                   kMaxColor,
                   LineStyle::DashDot,
                   AxisSide::Left,
                   1.8,
                   bound([](const ReplayStep& s) { return double(s.max_replicas); }),
                   {}});
  for (const auto& s : steps) top = std::max(top, double(s.max_replicas));
  if (!chart.markers.empty()) {
    if (replay.mode == ReplayMode::Centralized) {
      chart.legend.push_back(
          {LegendEntry::Kind::Marker, "rescale (new count)", kMarkerColor, LineStyle::Solid, MarkerShape::Up});
    } else {
      chart.legend.push_back({LegendEntry::Kind::Marker, "maxReplicas moved to a member (from where)", kMarkerColor,
                              LineStyle::Solid, MarkerShape::Diamond});
    }
  }
  // Room above the highest count, so that maxReplicas is not drawn on the frame.
  chart.left = value_axis(0, std::ceil(top * 1.1), 8, true, chart.left.label);

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
  std::size_t index = 0;
  std::vector<Line> targets;
  for (std::size_t m : drawn) {
    Line line;
    line.color = metric_palette()[index++ % metric_palette().size()];
    line.axis = AxisSide::Right;
    line.width = 2.2;
    line.points = step_line(steps, ends, [&](const ReplayStep& s) {
      if (m >= s.metrics.size() || !s.metrics[m].current) return kNaN;
      const auto& metric = s.metrics[m];
      return relative ? (metric.target > 0 ? *metric.current / metric.target * 100 : kNaN) : *metric.current;
    });
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const Point sample = line.points[2 * i];
      if (std::isnan(sample.y)) continue;
      line.dots.push_back(sample);
      high = std::max(high, sample.y);
      if (line.name.empty()) line.name = steps[i].metrics[m].name;
    }
    if (!relative) {
      const auto& first =
          *std::find_if(steps.begin(), steps.end(), [&](const ReplayStep& s) { return m < s.metrics.size(); });
      Line target{line.name + " target (" + first.metrics[m].target_text + ")",
                  line.color,
                  LineStyle::Dashed,
                  AxisSide::Right,
                  1.6,
                  step_line(steps, ends,
                            [&](const ReplayStep& s) { return m < s.metrics.size() ? s.metrics[m].target : kNaN; }),
                  {}};
      for (const auto& p : target.points) {
        if (!std::isnan(p.y)) high = std::max(high, p.y);
      }
      targets.push_back(std::move(target));
      right_label = right_axis_label(first.metrics[m]);
    }
    add_line(chart, std::move(line));
  }
  if (relative) {
    targets.push_back(
        {"target (100%)", kMarkerColor, LineStyle::Dashed, AxisSide::Right, 1.6, {{from, 100.0}, {to, 100.0}}, {}});
  }
  // On the left axis's grid: its ticks are the grid lines of both.
  chart.right = aligned_value_axis(high * 1.05, std::max<std::size_t>(chart.left.ticks.size(), 2) - 1, right_label);
  for (auto& target : targets) add_line(chart, std::move(target));
  return chart;
}

}  // namespace fedmetrics::plot
