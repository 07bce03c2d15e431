#include "termination_signals.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace fedmetrics::transport {

namespace {

sigset_t termination_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

int wait_for(const sigset_t& set) {
  for (;;) {
    int signal = 0;
    if (sigwait(&set, &signal) == 0) return signal;
  }
}

}  // namespace

TerminationSignals::TerminationSignals(std::function<void(int)> on_first) : on_first_(std::move(on_first)) {
  const sigset_t set = termination_set();
  if (int e = pthread_sigmask(SIG_BLOCK, &set, nullptr); e != 0)
    throw std::runtime_error(std::string("cannot block SIGTERM and SIGINT: ") + std::strerror(e));
  receiver_ = std::thread([this] { receive(); });
}

TerminationSignals::~TerminationSignals() {
  closing_ = true;
  // Directed at the receiver, which has it blocked: pending for that thread
  // only, so its sigwait returns it (and sees closing_) rather than any other.
  pthread_kill(receiver_.native_handle(), SIGTERM);
  receiver_.join();
}

void TerminationSignals::receive() {
  const sigset_t set = termination_set();
  const int first = wait_for(set);
  if (closing_) return;
  on_first_(first);
  wait_for(set);
  if (closing_) return;
  // The second signal: no log line (the logger may be in the middle of the
  // shutdown's), just the status, as Go's os.Exit(1).
  static constexpr char kMessage[] = "second termination signal: exiting without finishing the shutdown\n";
  [[maybe_unused]] auto written = ::write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
  std::_Exit(1);
}

}  // namespace fedmetrics::transport
