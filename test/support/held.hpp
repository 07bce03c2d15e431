#pragma once
// Calls a fake answers only when the test says so: a slow control plane, a
// write in flight while the lease is lost. Off by default.
#include <atomic>
#include <cstddef>
#include <mutex>

#include "fedmetrics/transport/async.hpp"

namespace fedmetrics::testing {

class Held {
 public:
  std::atomic<bool> on{false};
  // In a fake's coroutine: returns at once when off, else when released.
  // Not cancellable: a caller cancelled while held still waits for the
  // release (as a call already sent waits for its answer), then its next
  // co_await throws.
  async::Task<void> wait() {
    if (!on) co_return;
    auto released = hold().wait();
    auto executor = co_await boost::asio::this_coro::executor;
    // A child coroutine cut off from the caller's cancellation.
    auto uncancellable = boost::asio::co_spawn(
        executor, std::move(released),
        boost::asio::bind_cancellation_slot(boost::asio::cancellation_slot(), boost::asio::use_awaitable));
    co_await std::move(uncancellable);
  }
  // The same, except that a caller cancelled while held resumes at once
  // (for a call whose answer a cancelled caller never reads); its next
  // co_await throws.
  async::Task<void> wait_cancellable() {
    if (!on) co_return;
    auto released = hold().wait();
    try {
      co_await std::move(released);
    } catch (const std::exception& e) {
      if (!async::is_cancellation(e)) throw;
    }
  }
  [[nodiscard]] std::size_t count() {
    std::lock_guard lock(mutex_);
    return held_;
  }
  // Resumes every held call; each reads the fake's state only now.
  void release() {
    async::OneShot<bool> released;
    {
      std::lock_guard lock(mutex_);
      std::swap(released, gate_);
      held_ = 0;
    }
    released.set(true);
  }

 private:
  async::OneShot<bool> hold() {
    std::lock_guard lock(mutex_);
    ++held_;
    return gate_;
  }
  std::mutex mutex_;
  async::OneShot<bool> gate_;  // set by the next release()
  std::size_t held_ = 0;
};

}  // namespace fedmetrics::testing
