#include "fedmetrics/telemetry/failure_logs.hpp"

#include <spdlog/spdlog.h>

#include "fedmetrics/telemetry/prometheus_server_metrics.hpp"

namespace fedmetrics::telemetry {

namespace {

// Whether a line for `key` is written now, and how many were not since the last one.
aggregator::LogRateLimiter::Decision admit(std::mutex& mutex, aggregator::LogRateLimiter& limiter,
                                           std::string_view key) {
  std::lock_guard lock(mutex);
  return limiter.admit(key, std::chrono::steady_clock::now());
}

}  // namespace

void MemberFailureLog::operator()(std::string_view member, const aggregator::MemberError& error) {
  std::string key(member);
  key += '\x1f';
  key += aggregator::to_string(error.kind);
  if (error.http_status != 0) key += " " + std::to_string(error.http_status);
  const auto decision = admit(mutex_, limiter_, key);
  if (!decision.write) return;
  if (decision.suppressed == 0) {
    spdlog::warn("member {}: {}: {}", member, aggregator::to_string(error.kind), error.message);
  } else {
    spdlog::warn("member {}: {}: {} ({} more like it not logged since the last such line)", member,
                 aggregator::to_string(error.kind), error.message, decision.suppressed);
  }
}

void ReviewFailureLog::operator()(std::string_view review, const std::string& error) {
  if (metrics_) metrics_->review_failed(review);
  const auto decision = admit(mutex_, limiter_, review);
  if (!decision.write) return;
  if (decision.suppressed == 0) spdlog::warn("{} failed, the request was refused: {}", review, error);
  else
    spdlog::warn("{} failed, the request was refused: {} ({} more since the last such line)", review, error,
                 decision.suppressed);
}

}  // namespace fedmetrics::telemetry
