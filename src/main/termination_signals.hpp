#pragma once
// SIGTERM and SIGINT for `fedmetrics serve`, received by the thread that
// owns the shutdown rather than by a handler on whichever thread the
// kernel picks. Construct it first, before any thread starts: the signals
// are blocked in the constructing thread and every thread it starts later.

namespace fedmetrics::cli {

class TerminationSignals {
 public:
  TerminationSignals();
  TerminationSignals(const TerminationSignals&) = delete;
  TerminationSignals& operator=(const TerminationSignals&) = delete;

  // Blocks until SIGTERM or SIGINT arrives and returns it. From then on a
  // second one ends the process at once with status 1 (kube-apiserver's
  // "second signal: exit directly"), for an operator whose graceful
  // termination takes too long.
  int wait();
};

}  // namespace fedmetrics::cli
