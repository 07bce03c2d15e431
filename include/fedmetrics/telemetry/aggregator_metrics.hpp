#pragma once
// Exports the aggregator's counters (fan-outs, coalesced and cached queries,
// member calls and errors by member) in the server's /metrics, read at scrape
// time so that the aggregator keeps no Prometheus types.
#include <functional>

#include <prometheus/collectable.h>

#include "fedmetrics/aggregator/aggregator.hpp"

namespace fedmetrics::telemetry {

class AggregatorMetrics final : public prometheus::Collectable {
 public:
  explicit AggregatorMetrics(std::function<aggregator::AggregatorStats()> read) : read_(std::move(read)) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  std::function<aggregator::AggregatorStats()> read_;
};

}  // namespace fedmetrics::telemetry
