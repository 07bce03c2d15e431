#include "fedmetrics/telemetry/aggregator_metrics.hpp"

#include <prometheus/metric_family.h>

namespace fedmetrics::telemetry {

namespace {
prometheus::MetricFamily counter(std::string name, std::string help, double value) {
  prometheus::ClientMetric m;
  m.counter.value = value;
  return prometheus::MetricFamily{std::move(name), std::move(help), prometheus::MetricType::Counter, {m}};
}
}  // namespace

std::vector<prometheus::MetricFamily> AggregatorMetrics::Collect() const {
  auto s = read_();
  std::vector<prometheus::MetricFamily> out;
  out.push_back(counter("fedmetrics_aggregator_queries_total", "Metrics queries received by the aggregator.",
                        static_cast<double>(s.queries)));
  out.push_back(counter("fedmetrics_aggregator_fanouts_total", "Queries that asked the member clusters.",
                        static_cast<double>(s.fan_outs)));
  out.push_back(counter("fedmetrics_aggregator_coalesced_total",
                        "Queries answered by joining an identical fan-out already in flight.",
                        static_cast<double>(s.coalesced)));
  out.push_back(counter("fedmetrics_aggregator_cache_hits_total",
                        "Queries answered from the result cache (--cache-ttl).", static_cast<double>(s.cache_hits)));
  out.push_back(counter("fedmetrics_member_requests_total", "Calls made to member clusters.",
                        static_cast<double>(s.member_calls)));
  prometheus::MetricFamily errors{"fedmetrics_member_errors_total",
                                  "Failed calls to member clusters, by member.",
                                  prometheus::MetricType::Counter,
                                  {}};
  for (const auto& [cluster, count] : s.member_errors_by_cluster) {
    prometheus::ClientMetric m;
    m.label = {prometheus::ClientMetric::Label{"cluster", cluster}};
    m.counter.value = static_cast<double>(count);
    errors.metric.push_back(std::move(m));
  }
  out.push_back(std::move(errors));
  return out;
}

}  // namespace fedmetrics::telemetry
