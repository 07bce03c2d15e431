#pragma once
// The per-member request rate limit (--member-qps, --member-burst): a token
// bucket with reservations, as golang.org/x/time/rate that client-go uses.
// A caller reserves a token and waits the time it is told; a reservation
// that would have to wait past the caller's deadline is refused (and takes
// nothing), so a throttled request fails by its deadline instead of late.
// Pure: the clock is passed in. Not thread-safe: the client's strand owns it.
#include <chrono>
#include <optional>

namespace fedmetrics::kube {

class TokenBucket {
 public:
  using Clock = std::chrono::steady_clock;
  // qps <= 0: unlimited. burst < 1 is taken as 1.
  TokenBucket(double qps, int burst);

  // How long to wait before sending, or nullopt when that would pass `deadline`.
  std::optional<Clock::duration> reserve(Clock::time_point now, Clock::time_point deadline);
  [[nodiscard]] bool unlimited() const { return qps_ <= 0; }

 private:
  double qps_;
  double burst_;
  double tokens_;
  std::optional<Clock::time_point> last_;
};

}  // namespace fedmetrics::kube
