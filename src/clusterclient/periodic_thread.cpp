#include "fedmetrics/clusterclient/periodic_thread.hpp"

namespace fedmetrics::clusterclient {

void PeriodicThread::start(std::chrono::milliseconds interval, std::function<void()> tick) {
  thread_ = std::thread([this, interval, tick = std::move(tick)] {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      wake_.wait_for(lock, interval, [this] { return stopping_ || woken_; });
      if (stopping_) break;
      woken_ = false;
      lock.unlock();
      tick();
      lock.lock();
    }
  });
}

void PeriodicThread::wake() {
  {
    std::lock_guard lock(mutex_);
    woken_ = true;
  }
  wake_.notify_all();
}

void PeriodicThread::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace fedmetrics::clusterclient
