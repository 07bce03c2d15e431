#pragma once
// One owner for a process's start-up and shutdown. Components start in
// dependency order (what a component uses starts before it) and stop in
// the reverse order, each once, so that nothing is stopped while a
// component started after it, which may call it, still runs. A component
// whose start fails stops the ones started before it, as a process that
// cannot come up must leave nothing running behind it.
//
// Pure: no threads of its own, no I/O but the log.

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace fedmetrics::server {

class Lifecycle {
 public:
  Lifecycle() = default;
  // stop_all(): also on the error paths that leave the owner's scope early.
  ~Lifecycle();
  Lifecycle(const Lifecycle&) = delete;
  Lifecycle& operator=(const Lifecycle&) = delete;

  // Runs `start` (may be empty: the component was made running), after which
  // `stop` is owed. When `start` throws, every component started before is
  // stopped, in reverse, and the exception propagates.
  void start(std::string name, const std::function<void()>& start, std::function<void()> stop);
  // Stops every started component, the last started first, each once. A
  // stop that throws is logged and the others still stop. Idempotent.
  void stop_all();

  // The names of the components still owed a stop, in start order (tests, logs).
  [[nodiscard]] std::vector<std::string> running() const;

 private:
  struct Component {
    std::string name;
    std::function<void()> stop;
  };
  std::vector<Component> started_;
};

}  // namespace fedmetrics::server
