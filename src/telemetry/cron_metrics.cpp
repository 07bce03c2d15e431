#include "fedmetrics/telemetry/cron_metrics.hpp"

#include <prometheus/metric_family.h>

namespace fedmetrics::telemetry {

namespace {

prometheus::ClientMetric histogram(const controller::DurationHistogram& h, const char* result) {
  prometheus::ClientMetric m;
  m.label = {prometheus::ClientMetric::Label{"result", result}};
  m.histogram.sample_count = h.count;
  m.histogram.sample_sum = h.sum;
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < controller::DurationHistogram::kBuckets; ++i) {
    cumulative += h.buckets[i];
    m.histogram.bucket.push_back({cumulative, controller::DurationHistogram::upper_bound(i)});
  }
  m.histogram.bucket.push_back({h.count, std::numeric_limits<double>::infinity()});
  return m;
}

}  // namespace

std::vector<prometheus::MetricFamily> CronControllerMetrics::Collect() const {
  const auto s = read_();
  std::vector<prometheus::MetricFamily> out;
  out.push_back({"fedmetrics_cronfederatedhpa_process_duration_seconds",
                 "Duration in seconds to process a CronFederatedHPA; error: it could not be decoded, a rule failed, "
                 "or its status could not be written.",
                 prometheus::MetricType::Histogram,
                 {histogram(s.process_success, "success"), histogram(s.process_error, "error")}});
  out.push_back({"fedmetrics_cronfederatedhpa_rule_process_duration_seconds",
                 "Duration in seconds of a CronFederatedHPA rule's run; error: the run failed or the rule is invalid.",
                 prometheus::MetricType::Histogram,
                 {histogram(s.rule_success, "success"), histogram(s.rule_error, "error")}});
  prometheus::ClientMetric missed;
  missed.counter.value = static_cast<double>(s.missed_runs);
  out.push_back({"fedmetrics_cronfederatedhpa_missed_runs_total",
                 "Rule firings skipped because no replica led for more than --cron-missed-run-deadline after them.",
                 prometheus::MetricType::Counter,
                 {missed}});
  return out;
}

}  // namespace fedmetrics::telemetry
