#include "fedmetrics/controller/clock.hpp"

#include "fedmetrics/transport/async.hpp"

namespace fedmetrics::controller {

namespace {

class SteadyClock final : public Clock {
 public:
  [[nodiscard]] TimePoint now() const override { return std::chrono::steady_clock::now(); }
  async::Task<bool> sleep_for(Duration duration) override { return async::sleep_for(duration); }
};

}  // namespace

std::shared_ptr<Clock> steady_clock() {
  static const auto clock = std::make_shared<SteadyClock>();
  return clock;
}

}  // namespace fedmetrics::controller
