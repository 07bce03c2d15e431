#include "fedmetrics/autoscaler/simulate_table.hpp"

#include <algorithm>
#include <cstddef>
#include <set>
#include <string>
#include <vector>

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

  std::vector<std::size_t> widths(rows.front().size(), 0);
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line.append(widths[c] - row[c].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();  // an empty last cell
    out += line;
    out += '\n';
  }
  return out;
}

}  // namespace fedmetrics::autoscaler
