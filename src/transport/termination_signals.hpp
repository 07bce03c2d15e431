#pragma once
// SIGTERM and SIGINT for a process whose runtime owns its shutdown
// (transport/runtime.hpp), received by a thread of the runtime's own rather
// than by a handler on whichever thread the kernel picks. Private to the
// runtime.
#include <atomic>
#include <functional>
#include <thread>

namespace fedmetrics::transport {

class TerminationSignals {
 public:
  // Blocks SIGTERM and SIGINT in the calling thread, and so in every thread
  // it starts later (construct it before any), then starts the thread that
  // receives them: the first calls `on_first` with the signal; a second one
  // ends the process at once with status 1, without finishing the shutdown.
  explicit TerminationSignals(std::function<void(int signal)> on_first);
  // Ends the receiving thread (the signals stay blocked: one arriving later
  // waits, pending, for the process to end).
  ~TerminationSignals();
  TerminationSignals(const TerminationSignals&) = delete;
  TerminationSignals& operator=(const TerminationSignals&) = delete;

 private:
  void receive();

  std::function<void(int)> on_first_;
  std::atomic<bool> closing_{false};
  std::thread receiver_;
};

}  // namespace fedmetrics::transport
