#pragma once
// Gives the memory the allocator holds free back to the system, every few
// seconds, as Go's runtime scavenger does for a Go server.
//
// Why: glibc's malloc keeps what a burst freed in its arenas, and the
// process's resident memory shows it as if it were still in use. The soak
// (bench/soak.sh) found it: when a black-holed member's deadline released
// 128 waiting clients at once, serve's VmRSS rose from 30 to 35 MB and
// stayed there while the clients stayed connected; malloc_trim(0) brought
// it back to 30.6 MB at once, so it was free memory, not a leak. Without a
// trim, every such burst sets a floor that no idle period lowers.
#include <chrono>

#include "fedmetrics/transport/executor.hpp"
#include "fedmetrics/transport/periodic.hpp"

namespace fedmetrics::transport {

class MemoryRelease {
 public:
  // Every `interval`, on a strand of `executor`, from start() to stop(). On
  // a C library without malloc_trim (not glibc) it does nothing.
  MemoryRelease(async::Executor executor, std::chrono::milliseconds interval)
      : executor_(std::move(executor)), interval_(interval) {}
  void start();
  void stop() { ticks_.stop(); }

 private:
  async::Executor executor_;
  std::chrono::milliseconds interval_;
  async::Periodic ticks_;
};

}  // namespace fedmetrics::transport
