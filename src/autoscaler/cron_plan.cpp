#include "fedmetrics/autoscaler/cron_plan.hpp"

#include "fedmetrics/cron/schedule.hpp"

namespace fedmetrics::autoscaler {

CronRulePlan plan_cron_rule(const CronRule& rule, const CronRuleHistory& history, k8s::Timestamp now,
                            std::chrono::nanoseconds deadline, std::string_view default_zone) {
  CronRulePlan plan;
  if (rule.invalid) {
    plan.invalid = rule.invalid;
    return plan;
  }
  const std::string zone = rule.time_zone.value_or(std::string(default_zone));
  auto schedule = cron::Schedule::parse(rule.schedule, zone);
  if (!schedule) {
    plan.invalid = schedule.error().message;
    return plan;
  }
  if (rule.suspend) return plan;

  const auto last = last_schedule_time(history);
  // @every counts from the rule's first scheduling, which the history keeps:
  // the last run, else the first nextExecutionTime written, else now.
  std::optional<k8s::Timestamp> origin;
  if (schedule->every().count() > 0) {
    if (last) origin = *last;
    else if (history.next_execution_time) origin = *history.next_execution_time - schedule->every();
    else origin = now;
  }
  plan.next = schedule->next(now, origin);

  // What counts as already accounted for: the last run; for a rule that
  // never ran, everything before its first nextExecutionTime; for a rule
  // seen now for the first time, everything up to now.
  std::optional<k8s::Timestamp> latest = schedule->previous(now, origin);
  if (!latest) return plan;
  bool due = false;
  if (last) due = *latest > *last;
  else if (history.next_execution_time) due = *latest >= *history.next_execution_time;
  if (!due) return plan;
  if (now - *latest <= deadline) plan.run = latest;
  else plan.missed = latest;
  return plan;
}

}  // namespace fedmetrics::autoscaler
