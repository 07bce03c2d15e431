#pragma once
// `fedmetrics simulate SCENARIO.json` (docs/simulate.md): replays a
// scenario file through the same sync() as the live loop. The replay is a
// value (one ReplayStep per step); the JSON lines, the table
// (simulate_table.hpp) and the plot (plot/replay_chart.hpp) are views of it.
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/autoscaler/decision.hpp"
#include "fedmetrics/autoscaler/distributor.hpp"
#include "fedmetrics/autoscaler/hpa_spec.hpp"
#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/k8s/time.hpp"

namespace fedmetrics::autoscaler {

enum class ReplayMode { Centralized, Distributed };

// One spec metric at one step, in the unit of its target: percent for
// Utilization, the quantity's value otherwise.
struct ReplayMetric {
  std::string name;  // "cpu", "http_requests", "queue_depth{queue=jobs}"
  MetricTargetType target_type = MetricTargetType::Utilization;
  std::optional<double> current;  // absent: not computed at this step
  double target = 0;
  std::string current_text;  // "80%", "400m"; "?" when absent
  std::string target_text;   // "50%", "500m"
};

// One member at one step. Centralized: its replicas are the placement's
// (memberReplicas) when the step gives one, else its pods. Distributed: what
// its own HPA runs (currentReplicas), with the share decided at this step.
struct ReplayMember {
  std::int32_t replicas = 0;
  std::optional<MemberShare> share;  // distributed only; absent once it left
  bool left = false;                 // distributed: its HPA is deleted at this step
};

struct ReplayStep {
  nlohmann::ordered_json line;  // what `--output json` prints for the step
  std::string at;               // as written: "30" (seconds after start) or an RFC 3339 time
  double seconds = 0;           // since the scenario's start
  std::int32_t current_replicas = 0;
  std::int32_t desired_replicas = 0;
  std::int32_t min_replicas = 1;  // the FederatedHPA's bounds at this step (a cron rule may move them)
  std::int32_t max_replicas = 0;
  std::map<std::string, ReplayMember> members;
  std::vector<ReplayMetric> metrics;  // one per spec metric, in spec order
  // The condition that explains the decision: an AbleToScale or
  // ScalingActive that is False, else a ScalingLimited that is True, else
  // AbleToScale's (or ScalingActive's) reason.
  std::string reason;
  // What else happened at the step, in words: cron firings, member HPAs
  // created or deleted, moves of max between members.
  std::vector<std::string> events;
  std::vector<Move> moves;  // distributed: maxReplicas moved between members at this step
  // Centralized: how the step's sync decided (what --explain prints).
  std::optional<Decision> decision;
};

struct Replay {
  ReplayMode mode = ReplayMode::Centralized;
  Timestamp start{};
  std::string name;  // the FederatedHPA's, when the file gives one
  // Centralized: no step names a member (no pods, no placement); the
  // replicas are then those of a single member named "replicas".
  bool members_unknown = false;
  std::vector<ReplayStep> steps;
};

// Reads and replays a scenario. Warnings (a spec the API would reject) go to
// `warnings`; an error names the field ("steps[2].pods[0].startTime: not a time").
k8s::Expected<Replay> replay_scenario(std::istream& scenario, std::ostream& warnings);

// One JSON object per step, one per line (docs/simulate.md, "Output").
void write_json_lines(const Replay& replay, std::ostream& out);

// Reads the scenario from `scenario`, writes the JSON Lines to `out`, errors
// and warnings to `err`. Returns 0 when every step was evaluated, 2 for a file
// that breaks the contract (the message, naming the field, on `err`; nothing
// on `out`).
int run_simulate(std::istream& scenario, std::ostream& out, std::ostream& err);

}  // namespace fedmetrics::autoscaler
