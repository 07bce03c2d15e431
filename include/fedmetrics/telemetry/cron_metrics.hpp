#pragma once
// The CronFederatedHPA loop's metrics for /metrics, as Karmada's controller
// names them (cronfederatedhpa_process_duration_seconds and
// cronfederatedhpa_rule_process_duration_seconds, label `result`: success or
// error) under our prefix, plus the runs skipped as missed; read from the
// loop's stats at scrape time, so that the loop keeps no Prometheus types.
#include <functional>

#include <prometheus/collectable.h>

#include "fedmetrics/controller/cron_controller.hpp"

namespace fedmetrics::telemetry {

class CronControllerMetrics final : public prometheus::Collectable {
 public:
  explicit CronControllerMetrics(std::function<controller::CronControllerStats()> read) : read_(std::move(read)) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  std::function<controller::CronControllerStats()> read_;
};

}  // namespace fedmetrics::telemetry
