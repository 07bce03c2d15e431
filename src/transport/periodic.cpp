#include "fedmetrics/transport/periodic.hpp"

#include "fedmetrics/transport/async.hpp"

namespace fedmetrics::async {

namespace {

// A free function, not a coroutine lambda (GCC 12, see run_child).
Task<void> tick_every(Wakeup* wakeup, std::chrono::milliseconds interval, std::function<void()> tick) {
  for (;;) {
    const bool woken = co_await wakeup->wait_for(interval);
    if (!woken) co_return;  // stop()
    tick();
  }
}

}  // namespace

Periodic::Periodic() = default;
Periodic::~Periodic() { stop(); }

void Periodic::start(const Executor& executor, std::string name, std::chrono::milliseconds interval,
                     std::function<void()> tick) {
  auto strand = make_strand(executor);
  wakeup_ = std::make_unique<Wakeup>(strand);
  job_ = std::make_unique<Job>();
  job_->start(strand, std::move(name), [wakeup = wakeup_.get(), interval, tick = std::move(tick)] {
    return tick_every(wakeup, interval, tick);
  });
}

void Periodic::wake() {
  if (wakeup_) wakeup_->notify();
}

void Periodic::stop() {
  if (job_) job_->stop();
}

}  // namespace fedmetrics::async
