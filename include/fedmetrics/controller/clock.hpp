#pragma once
// The monotonic time a loop waits on: now() and a coroutine sleep, so that a
// test moves time on instead of waiting for it (test/support/fake_clock.hpp).
// The wall clock (status times, cron schedules) is a separate function in
// each loop's options.
#include <chrono>
#include <memory>

#include "fedmetrics/transport/task.hpp"

namespace fedmetrics::controller {

class Clock {
 public:
  using Duration = std::chrono::steady_clock::duration;
  using TimePoint = std::chrono::steady_clock::time_point;
  virtual ~Clock() = default;
  [[nodiscard]] virtual TimePoint now() const = 0;
  // Waits `duration` on this clock; false when the waiting coroutine was
  // cancelled meanwhile (its next co_await throws the cancellation).
  virtual async::Task<bool> sleep_for(Duration duration) = 0;
};

// std::chrono::steady_clock, and an Asio timer on the caller's executor.
std::shared_ptr<Clock> steady_clock();

}  // namespace fedmetrics::controller
