#pragma once
// The log lines of failures that can repeat at a busy server's request rate:
// a line per kind at first, then at most one per interval saying how many
// were not written, so that a member or a control plane refusing every call
// cannot flood the log (one refusing member once wrote 4144 lines in 2 s).
// Every failure is still counted in /metrics. Thread-safe.
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "fedmetrics/aggregator/log_rate_limiter.hpp"
#include "fedmetrics/aggregator/member_cluster.hpp"

namespace fedmetrics::telemetry {

class PrometheusServerMetrics;

// The member failures the aggregator reports (its on_member_error hook),
// a line per member and reason (error kind and HTTP status).
class MemberFailureLog {
 public:
  explicit MemberFailureLog(std::chrono::steady_clock::duration interval = std::chrono::seconds(10))
      : limiter_(interval) {}
  void operator()(std::string_view member, const aggregator::MemberError& error);

 private:
  std::mutex mutex_;
  aggregator::LogRateLimiter limiter_;  // guarded by mutex_
};

// The delegated reviews that could not be made (the request gate's
// on_review_failure hook): each refused the request it was for, and a
// control plane that is down refuses them all, so the log says it once per
// review kind ("TokenReview", "SubjectAccessReview"), then at most every
// interval; `metrics`, when given, counts each
// (fedmetrics_delegated_review_failures_total).
class ReviewFailureLog {
 public:
  explicit ReviewFailureLog(std::shared_ptr<PrometheusServerMetrics> metrics,
                            std::chrono::steady_clock::duration interval = std::chrono::seconds(10))
      : metrics_(std::move(metrics)), limiter_(interval) {}
  void operator()(std::string_view review, const std::string& error);

 private:
  std::shared_ptr<PrometheusServerMetrics> metrics_;
  std::mutex mutex_;
  aggregator::LogRateLimiter limiter_;  // guarded by mutex_
};

}  // namespace fedmetrics::telemetry
