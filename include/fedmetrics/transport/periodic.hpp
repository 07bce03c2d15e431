#pragma once
// A short function called at a fixed interval on a strand of an executor
// until stopped: the kubeconfig file check, the certificate reloader's file
// check, the memory release. A coroutine (transport/async.hpp), not a thread
// of its own; stop() returns once it has ended. A tick that must await
// answers is a coroutine of its own instead (a Job and a Wakeup).
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "fedmetrics/transport/executor.hpp"

namespace fedmetrics::async {

class Periodic {
 public:
  Periodic();
  ~Periodic();
  Periodic(const Periodic&) = delete;
  Periodic& operator=(const Periodic&) = delete;

  // Calls `tick` every `interval`, the first time one interval from now. Call once.
  void start(const Executor& executor, std::string name, std::chrono::milliseconds interval,
             std::function<void()> tick);
  // The next tick now rather than at the end of the interval (one tick for
  // any number of wakes before it starts); the interval restarts after it. Thread-safe.
  void wake();
  // Returns once the loop has ended; a tick in progress finishes first. Idempotent.
  void stop();

 private:
  std::unique_ptr<Job> job_;
  std::unique_ptr<Wakeup> wakeup_;
};

}  // namespace fedmetrics::async
