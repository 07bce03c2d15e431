#include "fedmetrics/aggregator/log_rate_limiter.hpp"

#include <iterator>

namespace fedmetrics::aggregator {

LogRateLimiter::Decision LogRateLimiter::admit(std::string_view key, TimePoint now) {
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    if (entries_.size() >= max_keys_) forget_quiet(now);
    entries_.emplace(std::string(key), Entry{now, 0});
    return {true, 0};
  }
  Entry& e = it->second;
  if (now - e.written < interval_) {
    ++e.suppressed;
    return {false, 0};
  }
  Decision d{true, e.suppressed};
  e = Entry{now, 0};
  return d;
}

void LogRateLimiter::forget_quiet(TimePoint now) {
  // A key quiet for an interval would be written at once anyway; only its
  // count of dropped lines is lost.
  for (auto it = entries_.begin(); it != entries_.end();)
    it = now - it->second.written >= interval_ ? entries_.erase(it) : std::next(it);
}

}  // namespace fedmetrics::aggregator
