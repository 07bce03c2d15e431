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

  // The watermark is the nextExecutionTime the loop wrote: a firing is due
  // when it is no earlier than that and later than the last recorded run.
  // Without one (a rule seen for the first time, or one that was suspended
  // or invalid, which have none) nothing in the past runs: it is scheduled
  // from now. The loop moves nextExecutionTime past a firing before it runs
  // it, so a run whose failure is not kept (failedHistoryLimit 0) or whose
  // record was lost is not made again either.
  if (!history.next_execution_time) return plan;
  std::optional<k8s::Timestamp> latest = schedule->previous(now, origin);
  if (!latest) return plan;
  const bool due = *latest >= *history.next_execution_time && (!last || *latest > *last);
  if (!due) return plan;
  if (now - *latest <= deadline) plan.run = latest;
  else plan.missed = latest;
  return plan;
}

}  // namespace fedmetrics::autoscaler
