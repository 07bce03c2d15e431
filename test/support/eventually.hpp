#pragma once
// What the loop tests need now that the loops are coroutines on a runtime's
// strand: the runtime (declared before what runs on it, so that it outlives
// it), a bounded wait for something another thread does, and one complete
// pass of a controller.
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <thread>

#include "fedmetrics/kube/https_client.hpp"
#include "fedmetrics/controller/hpa_controller.hpp"

namespace fedmetrics::testing {

// True once `condition` holds, false when `limit` passed first.
inline bool eventually(const std::function<bool()>& condition,
                       std::chrono::milliseconds limit = std::chrono::milliseconds(10'000)) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// One sync_all() waited for; false when it did not end within 10 s.
inline bool complete_pass(controller::HpaController& controller) {
  auto done = std::make_shared<std::atomic<bool>>(false);
  controller.sync_all([done] { *done = true; });
  return eventually([done] { return done->load(); });
}

}  // namespace fedmetrics::testing
