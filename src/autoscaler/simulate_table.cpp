#include "fedmetrics/autoscaler/simulate_table.hpp"

#include <algorithm>
#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "text_table.hpp"

namespace fedmetrics::autoscaler {

namespace {

using Row = std::vector<std::string>;

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += separator;
    out += p;
  }
  return out;
}

std::string at_cell(const ReplayStep& step) {
  // A number is seconds after the start; a time is shown as written.
  return step.line.contains("at") && step.line["at"].is_number() ? step.at + "s" : step.at;
}

std::string replicas_cell(const ReplayStep& step) {
  std::string out = std::to_string(step.current_replicas);
  if (step.desired_replicas != step.current_replicas) out += "->" + std::to_string(step.desired_replicas);
  return out;
}

std::string member_cell(const ReplayStep& step, const std::string& name, ReplayMode mode) {
  auto it = step.members.find(name);
  if (it == step.members.end()) return "-";
  const ReplayMember& m = it->second;
  if (mode == ReplayMode::Centralized) return std::to_string(m.replicas);
  if (m.left) return "left";
  std::string out = std::to_string(m.replicas);
  if (m.share) out += " [" + std::to_string(m.share->min_replicas) + "-" + std::to_string(m.share->max_replicas) + "]";
  return out;
}

}  // namespace

std::string format_table(const Replay& replay) {
  std::set<std::string> member_names;
  std::size_t metric_count = 0;
  bool any_events = false;
  for (const auto& step : replay.steps) {
    for (const auto& [name, m] : step.members) member_names.insert(name);
    metric_count = std::max(metric_count, step.metrics.size());
    any_events = any_events || !step.events.empty();
  }
  // Metric names from the first step that has them all (a distributed
  // scenario may change its spec between steps).
  std::vector<std::string> metric_names(metric_count);
  for (const auto& step : replay.steps) {
    for (std::size_t i = 0; i < step.metrics.size(); ++i) {
      if (metric_names[i].empty()) metric_names[i] = step.metrics[i].name;
    }
  }

  std::vector<Row> rows;
  Row header{"AT", "REPLICAS", "MIN-MAX"};
  header.insert(header.end(), member_names.begin(), member_names.end());
  header.insert(header.end(), metric_names.begin(), metric_names.end());
  header.push_back("REASON");
  if (any_events) header.push_back("EVENTS");
  rows.push_back(std::move(header));

  for (const auto& step : replay.steps) {
    Row row{at_cell(step), replicas_cell(step),
            std::to_string(step.min_replicas) + "-" + std::to_string(step.max_replicas)};
    for (const auto& name : member_names) row.push_back(member_cell(step, name, replay.mode));
    for (std::size_t i = 0; i < metric_count; ++i) {
      row.push_back(i < step.metrics.size() ? step.metrics[i].current_text + "/" + step.metrics[i].target_text : "-");
    }
    row.push_back(step.reason.empty() ? "-" : step.reason);
    if (any_events) row.push_back(join(step.events, "; "));
    rows.push_back(std::move(row));
  }

  return detail::aligned(rows);
}

std::string format_explanations(const Replay& replay) {
  std::string out;
  for (std::size_t i = 0; i < replay.steps.size(); ++i) {
    const ReplayStep& step = replay.steps[i];
    if (i > 0) out += "\n";
    out += "Step " + std::to_string(i + 1) + " at " + at_cell(step) + ":\n";
    for (const auto& event : step.events) out += "Event:        " + event + "\n";
    if (step.decision) {
      out += format_decision(*step.decision);
      continue;
    }
    // Distributed: the members' own HPAs decide within the shares fedmetrics gives them.
    out += "Replicas:     " + replicas_cell(step) + " over the members, whose own HPAs decide (distributed mode)\n";
    out += "Bound by:     " + (step.reason.empty() ? std::string("-") : step.reason) + "\n\n";
    std::vector<Row> rows{{"MEMBER", "REPLICAS", "MIN-MAX"}};
    for (const auto& [name, m] : step.members) {
      rows.push_back(
          {name, m.left ? "left" : std::to_string(m.replicas),
           m.share ? std::to_string(m.share->min_replicas) + "-" + std::to_string(m.share->max_replicas) : "-"});
    }
    out += detail::aligned(rows);
  }
  return out;
}

}  // namespace fedmetrics::autoscaler
