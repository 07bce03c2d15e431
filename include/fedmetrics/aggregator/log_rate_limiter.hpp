#pragma once
// Which log lines of a repeating failure to write: the first of each key at
// once, then at most one per `interval`, that one saying how many were
// dropped since the last line written. The member-failure log uses it per
// (member, reason), so that a member refusing every call of a busy server
// writes one line every few seconds, not thousands (klog's and client-go's
// "log state changes, not every failure").
// Pure: the caller passes the time and holds any lock; no logging here.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace fedmetrics::aggregator {

class LogRateLimiter {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  struct Decision {
    bool write = false;            // write this line
    std::uint64_t suppressed = 0;  // lines of this key dropped since the last one written (when `write`)
  };

  // `max_keys` bounds memory: past it, keys quiet for a whole interval are forgotten.
  explicit LogRateLimiter(std::chrono::steady_clock::duration interval, std::size_t max_keys = 4096)
      : interval_(interval), max_keys_(max_keys) {}

  Decision admit(std::string_view key, TimePoint now);

  [[nodiscard]] std::chrono::steady_clock::duration interval() const { return interval_; }

 private:
  struct Entry {
    TimePoint written;             // when the last line of this key was written
    std::uint64_t suppressed = 0;  // dropped since
  };
  void forget_quiet(TimePoint now);

  std::chrono::steady_clock::duration interval_;
  std::size_t max_keys_;
  std::map<std::string, Entry, std::less<>> entries_;
};

}  // namespace fedmetrics::aggregator
