#include "fedmetrics/kube/token_bucket.hpp"

#include <algorithm>

namespace fedmetrics::kube {

TokenBucket::TokenBucket(double qps, int burst) : qps_(qps), burst_(std::max(1, burst)), tokens_(std::max(1, burst)) {}

std::optional<TokenBucket::Clock::duration> TokenBucket::reserve(Clock::time_point now, Clock::time_point deadline) {
  if (unlimited()) return Clock::duration::zero();
  if (last_ && now > *last_) {
    double elapsed = std::chrono::duration<double>(now - *last_).count();
    tokens_ = std::min(burst_, tokens_ + elapsed * qps_);
  }
  if (!last_ || now > *last_) last_ = now;
  double after = tokens_ - 1.0;
  auto wait = after >= 0 ? Clock::duration::zero()
                         : std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(-after / qps_));
  if (now + wait > deadline) return std::nullopt;  // nothing taken
  tokens_ = after;
  return wait;
}

}  // namespace fedmetrics::kube
