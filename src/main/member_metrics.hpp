#pragma once
// Per-member client metrics for /metrics, read from the member clients at
// scrape time: requests by outcome, latency histogram (to 60 s), in flight,
// pool size, TLS handshakes, last success time, and the members left out. Lives in the composition root
// because it is the one place that sees both the clients and Prometheus.
#include <chrono>
#include <memory>
#include <mutex>
#include <string_view>

#include <prometheus/collectable.h>

#include "fedmetrics/aggregator/log_rate_limiter.hpp"
#include "fedmetrics/aggregator/member_cluster.hpp"

namespace fedmetrics::cli {

class MemberClientMetrics final : public prometheus::Collectable {
 public:
  explicit MemberClientMetrics(std::shared_ptr<aggregator::MemberSource> members) : members_(std::move(members)) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  std::shared_ptr<aggregator::MemberSource> members_;
};

// The log of member failures the aggregator reports (its on_member_error
// hook): a line per member and reason (error kind and HTTP status) at first,
// then at most one per `interval` saying how many were not written, so a
// member refusing a busy server's every call cannot flood the log (one
// refusing member once wrote 4144 lines in 2 s). Every failure is still
// counted in /metrics. Thread-safe.
class MemberFailureLog {
 public:
  explicit MemberFailureLog(std::chrono::steady_clock::duration interval = std::chrono::seconds(10))
      : limiter_(interval) {}
  void operator()(std::string_view member, const aggregator::MemberError& error);

 private:
  std::mutex mutex_;
  aggregator::LogRateLimiter limiter_;  // guarded by mutex_
};

}  // namespace fedmetrics::cli
