#include "fedmetrics/autoscaler/decision.hpp"

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "fedmetrics/k8s/field_reader.hpp"
#include "text_table.hpp"

namespace fedmetrics::autoscaler {

namespace {

using nlohmann::ordered_json;

std::string fixed(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

std::string percent(double share) { return fixed(100.0 * share, 1) + "%"; }

ordered_json counts_json(const std::map<std::string, std::int32_t>& counts) {
  ordered_json out = ordered_json::object();
  for (const auto& [member, replicas] : counts) out[member] = replicas;
  return out;
}

ordered_json member_json(const MemberPods& m) {
  ordered_json out = {{"member", m.member},   {"pods", m.pods},       {"counted", m.counted},
                      {"missing", m.missing}, {"unready", m.unready}, {"ignored", m.ignored}};
  if (m.share) out["share"] = *m.share;
  return out;
}

ordered_json metric_json(const MetricExplanation& m) {
  ordered_json out = {{"name", m.name}, {"current", m.current}, {"target", m.target}};
  if (m.ratio) out["ratio"] = *m.ratio;
  if (m.adjusted_ratio) out["adjustedRatio"] = *m.adjusted_ratio;
  out["withinTolerance"] = m.within_tolerance;
  if (m.proposal) out["proposal"] = *m.proposal;
  if (!m.note.empty()) out["note"] = m.note;
  ordered_json members = ordered_json::array();
  for (const auto& row : m.members) members.push_back(member_json(row));
  out["members"] = std::move(members);
  return out;
}

std::map<std::string, std::int32_t> read_counts(const k8s::Fields& top, std::string_view key) {
  std::map<std::string, std::int32_t> out;
  auto counts = top.object(key);
  if (!counts) return out;
  for (const auto& [member, value] : counts->raw_object().items()) {
    out[member] = top.reader().int32(value, counts->path_of(member));
  }
  return out;
}

MemberPods read_member(const k8s::Fields& f) {
  MemberPods m;
  m.member = f.string("member").value_or("");
  m.pods = f.int32("pods").value_or(0);
  m.counted = f.int32("counted").value_or(0);
  m.missing = f.int32("missing").value_or(0);
  m.unready = f.int32("unready").value_or(0);
  m.ignored = f.int32("ignored").value_or(0);
  m.share = f.number("share");
  return m;
}

MetricExplanation read_metric(const k8s::Fields& f) {
  MetricExplanation m;
  m.name = f.string("name").value_or("");
  m.current = f.string("current").value_or("");
  m.target = f.string("target").value_or("");
  m.ratio = f.number("ratio");
  m.adjusted_ratio = f.number("adjustedRatio");
  m.within_tolerance = f.boolean("withinTolerance").value_or(false);
  m.proposal = f.int32("proposal");
  m.note = f.string("note").value_or("");
  f.each_object("members", [&](const k8s::Fields& row) { m.members.push_back(read_member(row)); });
  return m;
}

// The RATIO cell: the ratio that decided, and the one before the
// assumptions for missing and unready pods when they changed it.
std::string ratio_cell(const MetricExplanation& m) {
  if (!m.ratio) return "-";
  if (!m.adjusted_ratio) return fixed(*m.ratio, 3);
  return fixed(*m.adjusted_ratio, 3) + " (" + fixed(*m.ratio, 3) + " before assumptions)";
}

std::string note_cell(const MetricExplanation& m, bool decided_proposal) {
  std::string note = m.within_tolerance ? "within tolerance" : "";
  if (!m.note.empty()) note += (note.empty() ? "" : "; ") + m.note;
  if (decided_proposal) note += std::string(note.empty() ? "" : "; ") + "the largest proposal";
  return note.empty() ? "-" : note;
}

std::string members_table(const MetricExplanation& m, const Decision& d) {
  std::vector<std::vector<std::string>> rows{
      {"MEMBER", "PLACED", "PODS", "COUNTED", "MISSING", "UNREADY", "IGNORED", "SHARE"}};
  if (!d.unread.empty()) rows.front().push_back("NOTE");
  for (const auto& row : m.members) {
    auto placed = d.placed.find(row.member);
    rows.push_back({row.member, placed == d.placed.end() ? "-" : std::to_string(placed->second),
                    std::to_string(row.pods), std::to_string(row.counted), std::to_string(row.missing),
                    std::to_string(row.unready), std::to_string(row.ignored), row.share ? percent(*row.share) : "-"});
    if (d.unread.count(row.member) > 0)
      rows.back().push_back("pods could not be read: its placed replicas are missing pods");
  }
  return detail::aligned(rows);
}

}  // namespace

ordered_json to_json(const Decision& d) {
  ordered_json out;
  out["time"] = k8s::format_time(d.time);
  out["currentReplicas"] = d.current_replicas;
  out["desiredReplicas"] = d.desired_replicas;
  out["minReplicas"] = d.min_replicas;
  out["maxReplicas"] = d.max_replicas;
  out["tolerance"] = {{"scaleDown", d.tolerance_down}, {"scaleUp", d.tolerance_up}};
  out["calibration"] = d.calibration;
  out["placed"] = counts_json(d.placed);
  out["unread"] = counts_json(d.unread);
  ordered_json metrics = ordered_json::array();
  for (const auto& m : d.metrics) metrics.push_back(metric_json(m));
  out["metrics"] = std::move(metrics);
  if (d.proposal) {
    out["proposal"] = *d.proposal;
    out["proposalMetric"] = d.proposal_metric;
  }
  if (d.stabilized) out["stabilized"] = *d.stabilized;
  out["rule"] = d.rule;
  out["detail"] = d.detail;
  return out;
}

k8s::Expected<Decision> decision_from_json(const nlohmann::json& json) {
  k8s::FieldReader reader;
  const k8s::Fields top(reader, json, "");
  Decision d;
  if (auto t = top.time("time")) d.time = *t;
  d.current_replicas = top.int32("currentReplicas").value_or(0);
  d.desired_replicas = top.int32("desiredReplicas").value_or(0);
  d.min_replicas = top.int32("minReplicas").value_or(1);
  d.max_replicas = top.int32("maxReplicas").value_or(0);
  if (auto tolerance = top.object("tolerance")) {
    d.tolerance_down = tolerance->number("scaleDown").value_or(0.1);
    d.tolerance_up = tolerance->number("scaleUp").value_or(0.1);
  }
  d.calibration = top.number("calibration").value_or(1.0);
  d.placed = read_counts(top, "placed");
  d.unread = read_counts(top, "unread");
  top.each_object("metrics", [&](const k8s::Fields& m) { d.metrics.push_back(read_metric(m)); });
  d.proposal = top.int32("proposal");
  d.proposal_metric = top.string("proposalMetric").value_or("");
  d.stabilized = top.int32("stabilized");
  d.rule = top.string("rule").value_or("");
  d.detail = top.string("detail").value_or("");
  if (reader.ok() && d.rule.empty()) top.fail("rule", "is required");
  return reader.finish(std::move(d));
}

std::string format_decision(const Decision& d) {
  std::string out;
  out += "Decided at:   " + k8s::format_time(d.time) + "\n";
  out += "Replicas:     " + std::to_string(d.current_replicas) + " -> " + std::to_string(d.desired_replicas) +
         " (min " + std::to_string(d.min_replicas) + ", max " + std::to_string(d.max_replicas) + ")\n";
  out += "Bound by:     " + d.rule + (d.detail.empty() ? "" : ": " + d.detail) + "\n";
  if (d.proposal) {
    out += "Proposal:     " + std::to_string(*d.proposal) + " from " + d.proposal_metric;
    if (d.stabilized) out += "; " + std::to_string(*d.stabilized) + " after the stabilization windows";
    out += "\n";
  }
  std::int32_t placed = 0;
  for (const auto& [member, replicas] : d.placed) placed += replicas;
  out += "Calibration:  " + fixed(d.calibration, 3);
  if (!d.placed.empty()) {
    out += " (" + std::to_string(placed) + " replicas placed in the members for " + std::to_string(d.current_replicas) +
           " of the target)";
  }
  out += "\n";
  out += "Tolerance:    a ratio within [" + fixed(1.0 - d.tolerance_down, 3) + ", " + fixed(1.0 + d.tolerance_up, 3) +
         "] changes nothing\n";
  for (const auto& [member, replicas] : d.unread) {
    out += "Unread:       " + member + ": its pods could not be read; its " + std::to_string(replicas) +
           " placed replicas count as missing pods\n";
  }
  if (d.metrics.empty()) return out;

  std::vector<std::vector<std::string>> rows{{"METRIC", "CURRENT", "TARGET", "RATIO", "PROPOSAL", "NOTE"}};
  bool named_proposal = false;
  for (const auto& m : d.metrics) {
    const bool decided = !named_proposal && d.metrics.size() > 1 && m.proposal && d.proposal &&
                         *m.proposal == *d.proposal && m.name == d.proposal_metric;
    named_proposal = named_proposal || decided;
    rows.push_back({m.name, m.current.empty() ? "-" : m.current, m.target, ratio_cell(m),
                    m.proposal ? std::to_string(*m.proposal) : "failed", note_cell(m, decided)});
  }
  out += "\n" + detail::aligned(rows);
  for (const auto& m : d.metrics) {
    if (m.members.empty()) continue;
    out += "\n";
    if (d.metrics.size() > 1) out += "Pods for " + m.name + ":\n";
    out += members_table(m, d);
  }
  return out;
}

}  // namespace fedmetrics::autoscaler
