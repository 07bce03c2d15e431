#pragma once
// When a CronFederatedHPA rule runs (docs/cron.md, "Each firing runs
// once"), decided from the rule, what its status
// history recorded and the time: pure, so that the live loop and `simulate`
// decide alike and a test can walk through a failover minute by minute.
//
// The status is the memory that survives a restart or a change of leader:
// a firing time is due when it is no earlier than the nextExecutionTime the
// loop wrote for the rule (which the loop moves past a firing before running
// it) and later than the rule's last recorded scheduleTime, so a run is never
// made twice for one scheduleTime. A rule without a nextExecutionTime (seen
// for the first time, or back from suspended or invalid) is scheduled from
// now: nothing in its past runs. A due firing runs when it is at most the
// missed-run deadline old, else it is skipped.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "fedmetrics/autoscaler/cron_federated_hpa.hpp"
#include "fedmetrics/k8s/time.hpp"

namespace fedmetrics::autoscaler {

struct CronRulePlan {
  std::optional<k8s::Timestamp> run;     // run now, recorded with this scheduleTime
  std::optional<k8s::Timestamp> missed;  // the latest firing, due but older than the deadline: skipped
  std::optional<k8s::Timestamp> next;    // the status's nextExecutionTime (absent: suspended, invalid, none)
  std::optional<std::string> invalid;    // why the rule cannot run (its fields, its schedule or zone)
};

// `default_zone`: --cron-default-time-zone, for a rule without timeZone and a
// schedule without CRON_TZ=. `deadline`: --cron-missed-run-deadline.
CronRulePlan plan_cron_rule(const CronRule& rule, const CronRuleHistory& history, k8s::Timestamp now,
                            std::chrono::nanoseconds deadline, std::string_view default_zone);

}  // namespace fedmetrics::autoscaler
