#pragma once
// Karmada's CronFederatedHPA (autoscaling.karmada.io/v1alpha1) as
// fedmetrics runs it (docs/cron.md), the parts that need no clock and no I/O: the
// object decoded field for field (a rule that is invalid is marked so, with
// the reason, and the other rules stay usable), what a rule does to a
// FederatedHPA's min/max or a workload's replicas (refusing what the
// FederatedHPA API would refuse), and the status's execution histories
// (newest first, each list cut to its limit, a removed rule's entry gone).
// The schedules themselves are the cron library's; the loop and `simulate`
// call both.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/autoscaler/hpa_spec.hpp"
#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/k8s/time.hpp"

namespace fedmetrics::autoscaler {

struct CronRule {
  std::string name;
  std::string schedule;
  std::optional<std::string> time_zone;
  std::optional<std::int32_t> target_replicas;      // workload targets
  std::optional<std::int32_t> target_min_replicas;  // FederatedHPA targets
  std::optional<std::int32_t> target_max_replicas;
  bool suspend = false;
  std::int32_t successful_history_limit = 3;  // 1..32
  std::int32_t failed_history_limit = 3;      // 0..32: 0 keeps no failure
  // Why the rule cannot run (a field out of range, a target value that does
  // not fit the target's kind, a name used twice); the schedule and zone are
  // checked by the cron library where the rule is scheduled.
  std::optional<std::string> invalid;
};

struct CronFederatedHPA {
  std::string name;
  std::string namespace_name;
  CrossVersionObjectReference scale_target_ref;
  std::vector<CronRule> rules;  // in spec order
};

// A FederatedHPA (autoscaling.karmada.io, kind FederatedHPA) rather than a workload.
bool targets_federated_hpa(const CrossVersionObjectReference& target);

// Decodes a whole CronFederatedHPA ({"metadata", "spec"}) or its spec alone.
// An error (naming the field from `path`) only for what leaves no rule
// usable: no scaleTargetRef, rules not a list. A rule's own defects are in
// its `invalid`, so that the object's other rules run.
// With UnknownFields::Refuse, a key that is not a field of the object or its
// spec is an error, and one in a rule makes the rule invalid.
k8s::Expected<CronFederatedHPA> decode_cron_federated_hpa(const nlohmann::json& json, std::string_view path = "",
                                                          UnknownFields unknown = UnknownFields::Ignore);

// What a run applied.
struct CronApplied {
  std::optional<std::int32_t> min_replicas;  // FederatedHPA targets: the values after the run
  std::optional<std::int32_t> max_replicas;
  std::optional<std::int32_t> replicas;  // workload targets
};

// The FederatedHPA's min/max after `rule` (values the rule leaves absent
// stay as they are), or why it is not written: min above max (naming both
// values and where each came from), or minReplicas 0 while a metric is not
// Object or External (the FederatedHPA API refuses it).
k8s::Expected<CronApplied> apply_to_federated_hpa(const CronRule& rule, const FederatedHPASpec& current);

// One execution of a rule, as the status records it.
struct CronExecution {
  k8s::Timestamp schedule_time{};
  k8s::Timestamp execution_time{};
  CronApplied applied;  // successful executions
  std::string message;  // failed executions
};

// status.executionHistories[] entry.
struct CronRuleHistory {
  std::string rule_name;
  std::optional<k8s::Timestamp> next_execution_time;
  std::vector<CronExecution> successful;  // newest first
  std::vector<CronExecution> failed;      // newest first
};

// The histories in an object's status (what cannot be read is left out:
// the status is ours to rewrite, never a reason to stop).
std::vector<CronRuleHistory> decode_execution_histories(const nlohmann::json& object);

// One entry per rule of `cron`, in spec order: the existing entry of that
// rule name (a changed rule keeps its history), else an empty one; entries
// of removed rules are dropped.
std::vector<CronRuleHistory> histories_for(const CronFederatedHPA& cron, std::vector<CronRuleHistory> existing);

// The latest scheduleTime recorded for the rule, successful or failed: a
// run is never made twice for one scheduleTime.
std::optional<k8s::Timestamp> last_schedule_time(const CronRuleHistory& history);

// Records a run, newest first, each list cut to the rule's limit (a
// failedHistoryLimit of 0 keeps no failure).
void record_success(CronRuleHistory& history, const CronRule& rule, CronExecution execution);
void record_failure(CronRuleHistory& history, const CronRule& rule, CronExecution execution);

// The status subresource's content: {"executionHistories": [...]} in the API's
// shape (times RFC 3339; only the applied fields that were written).
nlohmann::json cron_status_json(const std::vector<CronRuleHistory>& histories);

}  // namespace fedmetrics::autoscaler
