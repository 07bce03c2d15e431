#include "fedmetrics/controller/clock.hpp"

#include "fedmetrics/transport/async.hpp"
#include "controller/sleep_or_wake.hpp"

namespace fedmetrics::controller {

namespace {

class SteadyClock final : public Clock {
 public:
  [[nodiscard]] TimePoint now() const override { return std::chrono::steady_clock::now(); }
  async::Task<bool> sleep_for(Duration duration) override { return async::sleep_for(duration); }
};

// The wakeup's own timer never ends the wait: wake_after does.
constexpr std::chrono::hours kNoTimeout{24 * 365};

// Notifies `wakeup` after `duration` on `clock`, unless cancelled first.
async::Task<void> wake_after(std::shared_ptr<Clock> clock, Clock::Duration duration, async::Wakeup& wakeup) {
  const bool slept = co_await clock->sleep_for(duration);
  if (slept) wakeup.notify();
}

}  // namespace

async::Task<void> sleep_or_wake(const async::Strand& strand, const std::shared_ptr<Clock>& clock,
                                Clock::Duration duration, async::Wakeup& wakeup) {
  // The clock's sleep is a child that wakes the loop, so that either ends the wait.
  async::TaskGroup timer(strand);
  timer.spawn(wake_after(clock, duration, wakeup), "the loop's next pass");
  co_await wakeup.wait_for(kNoTimeout);
  timer.cancel();
  co_await timer.join();
}

std::shared_ptr<Clock> steady_clock() {
  static const auto clock = std::make_shared<SteadyClock>();
  return clock;
}

}  // namespace fedmetrics::controller
