#pragma once
// A thread that calls one function at a fixed interval until stopped: how the
// member sources re-read what names the members (kubeconfig files, the
// Karmada control plane). stop() wakes it at once rather than after the
// interval, so that shutdown is not delayed by a sleeping poller.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace fedmetrics::clusterclient {

class PeriodicThread {
 public:
  PeriodicThread() = default;
  ~PeriodicThread() { stop(); }
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;

  // Calls `tick` every `interval`, the first time one interval from now. Call once.
  void start(std::chrono::milliseconds interval, std::function<void()> tick);
  // The next tick now rather than at the end of the interval (one tick for
  // any number of wakes before it starts); the interval restarts after it.
  void wake();
  // Returns once the thread has ended; a tick in progress finishes first.
  void stop();

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool woken_ = false;
  std::thread thread_;
};

}  // namespace fedmetrics::clusterclient
