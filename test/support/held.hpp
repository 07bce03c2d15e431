#pragma once
// Calls a fake answers only when the test says so: a slow control plane, a
// write in flight while the lease is lost. Off by default.
#include <atomic>
#include <cstddef>
#include <functional>
#include <mutex>
#include <vector>

#include "fedmetrics/transport/async.hpp"

namespace fedmetrics::testing {

class Held {
 public:
  std::atomic<bool> on{false};
  // In a fake's coroutine: returns at once when off, else when released.
  async::Task<void> wait() {
    if (!on) co_return;
    co_await async::await_callback<bool>([this](std::function<void(bool)> resume) { hold(std::move(resume)); });
  }
  // The same, except that a caller cancelled while held resumes at once
  // (for a call whose answer a cancelled caller never reads).
  async::Task<void> wait_cancellable() {
    if (!on) co_return;
    bool cancelled = false;  // a named local (transport/async.hpp, GCC 12)
    co_await async::await_callback_or<bool>([this](std::function<void(bool)> resume) { hold(std::move(resume)); },
                                            std::move(cancelled));
  }
  [[nodiscard]] std::size_t count() {
    std::lock_guard lock(mutex_);
    return waiting_.size();
  }
  // Resumes every held call; each reads the fake's state only now.
  void release() {
    std::vector<std::function<void(bool)>> resumes;
    {
      std::lock_guard lock(mutex_);
      resumes.swap(waiting_);
    }
    for (auto& resume : resumes) resume(true);
  }

 private:
  void hold(std::function<void(bool)> resume) {
    std::lock_guard lock(mutex_);
    waiting_.push_back(std::move(resume));
  }
  std::mutex mutex_;
  std::vector<std::function<void(bool)>> waiting_;
};

}  // namespace fedmetrics::testing
