#pragma once
// Per-member client metrics for /metrics, read from the member clients at
// scrape time: requests by outcome, latency histogram (to 60 s), in flight,
// pool size, TLS handshakes, last success time. Lives in the composition root
// because it is the one place that sees both the clients and Prometheus.
#include <memory>

#include <prometheus/collectable.h>

#include "fedmetrics/aggregator/member_cluster.hpp"

namespace fedmetrics::cli {

class MemberClientMetrics final : public prometheus::Collectable {
 public:
  explicit MemberClientMetrics(std::shared_ptr<aggregator::MemberSource> members) : members_(std::move(members)) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  std::shared_ptr<aggregator::MemberSource> members_;
};

}  // namespace fedmetrics::cli
