#pragma once
// Time that moves only when the test moves it: now() and sleeps on it. A
// sleep ends when advance() passes its deadline (or when its coroutine is
// cancelled), resuming on the sleeper's own executor. Thread-safe; the
// loops' tests drive it from their own thread through RunLoop (run_loop.hpp).
#include <chrono>
#include <map>
#include <mutex>
#include <optional>

#include "fedmetrics/controller/clock.hpp"
#include "fedmetrics/transport/async.hpp"

namespace fedmetrics::testing {

class FakeClock final : public controller::Clock {
 public:
  [[nodiscard]] TimePoint now() const override {
    std::lock_guard lock(mutex_);
    return now_;
  }
  async::Task<bool> sleep_for(Duration duration) override {
    async::OneShot<bool> woken;
    {
      std::lock_guard lock(mutex_);
      sleepers_.emplace(now_ + std::max(duration, Duration::zero()), woken);
    }
    auto waiting = woken.wait();
    bool cancelled = false;
    try {
      co_await std::move(waiting);
    } catch (const std::exception& e) {
      if (!async::is_cancellation(e)) throw;
      cancelled = true;
    }
    co_return !cancelled;
  }
  // Moves time on by `duration`, waking every sleep due by then.
  void advance(Duration duration) {
    std::multimap<TimePoint, async::OneShot<bool>> due;
    {
      std::lock_guard lock(mutex_);
      now_ += duration;
      auto end = sleepers_.upper_bound(now_);
      due.insert(sleepers_.begin(), end);
      sleepers_.erase(sleepers_.begin(), end);
    }
    for (auto& [deadline, woken] : due) woken.set(true);
  }
  // Moves time to the earliest sleep's deadline; false when nothing sleeps.
  bool advance_to_next() {
    Duration step;
    {
      std::lock_guard lock(mutex_);
      if (sleepers_.empty()) return false;
      step = sleepers_.begin()->first - now_;
    }
    advance(step);
    return true;
  }
  // The earliest sleep's deadline; nullopt when nothing sleeps.
  [[nodiscard]] std::optional<TimePoint> next_deadline() const {
    std::lock_guard lock(mutex_);
    if (sleepers_.empty()) return std::nullopt;
    return sleepers_.begin()->first;
  }
  [[nodiscard]] std::size_t sleepers() const {
    std::lock_guard lock(mutex_);
    return sleepers_.size();
  }

 private:
  mutable std::mutex mutex_;
  TimePoint now_{std::chrono::hours(1)};
  // A cancelled sleep's entry stays until it is due; waking it then is ignored.
  std::multimap<TimePoint, async::OneShot<bool>> sleepers_;
};

}  // namespace fedmetrics::testing
