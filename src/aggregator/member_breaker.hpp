#pragma once
// Whether a member is worth waiting for: after `threshold` requests in a row
// that got no answer at all (each one timed out or could not connect), a
// member is left out of every answer at once instead of costing each query
// its whole member timeout, and probed in the background, one request at a
// time, with a backoff that doubles up to a cap; the first answer of any
// kind brings it back. A circuit breaker in three states:
//
//   Closed --threshold unanswered--> Open --probe due--> Probing
//     ^                               ^                     |
//     |                               +---- no answer ------+
//     +------------------ any answer (probe or a late query) -+
//
// Pure: no clock of its own (times are passed in), no threads (the caller
// serializes), no I/O. An answer with an error status is an answer: the
// member is there, it only refused, and refusing is fast.
#include <chrono>
#include <cstdint>
#include <string>

#include "fedmetrics/aggregator/member_cluster.hpp"

namespace fedmetrics::aggregator {

struct BreakerOptions {
  // Unanswered requests in a row that leave a member out (--member-failure-threshold); 0: never.
  int threshold = 3;
  // The first probe this long after the member is left out, each unanswered
  // probe doubling the wait, up to max_probe_delay.
  std::chrono::milliseconds first_probe_delay{1000};
  std::chrono::milliseconds max_probe_delay{16000};
};

// What one request to a member says about whether it answers.
enum class Reply {
  Answered,          // any answer, an error status or a malformed body included
  TimedOut,          // no answer by the deadline
  ConnectionFailed,  // refused, reset, or the name did not resolve
  Neither,           // says nothing about the member: our own rate limit, a TLS failure, not asked
};
[[nodiscard]] Reply classify(const MemberError& error);

class MemberBreaker {
 public:
  enum class State { Closed, Open, Probing };
  using Time = std::chrono::steady_clock::time_point;
  using WallTime = std::chrono::system_clock::time_point;
  // What a recorded reply changed.
  enum class Change { None, Opened, Closed };

  explicit MemberBreaker(BreakerOptions options = {}) : options_(options) {}

  [[nodiscard]] State state() const { return state_; }
  // Whether queries ask the member: only while Closed.
  [[nodiscard]] bool asked() const { return state_ == State::Closed; }
  // Requests in a row that went unanswered (0: nothing to remember).
  [[nodiscard]] std::uint64_t unanswered() const { return timeouts_ + connection_failures_; }

  // The reply to a query's request, sent at `sent` (wall clock: it dates
  // "not answering since") and ended at `now`. A query may have left before
  // the member was left out and end after: its answer brings it back, its
  // failure is one more.
  Change record(Reply reply, Time now, WallTime sent);

  // When the next probe is due (Open only).
  [[nodiscard]] Time probe_due() const { return probe_due_; }
  // Open and due at `now`: becomes Probing and returns true, and the caller
  // sends the one probe and gives its reply to probed().
  bool start_probe(Time now);
  // The probe's reply: an answer closes; anything else opens again, the next
  // probe twice as far away (up to the cap).
  Change probed(Reply reply, Time now, WallTime sent);

  // For the Warning, after "left out: ": `not answering since
  // 2026-11-28T13:18:49Z (3 timeouts)`, the time the first unanswered request
  // of the run was sent, and the unanswered requests since (probes included).
  [[nodiscard]] std::string reason() const;

 private:
  void count_unanswered(Reply reply, WallTime sent);
  Change close();

  BreakerOptions options_;
  State state_ = State::Closed;
  std::uint64_t timeouts_ = 0;  // unanswered in a row, by how
  std::uint64_t connection_failures_ = 0;
  WallTime since_{};  // when the first of them was sent
  std::chrono::milliseconds probe_delay_{0};
  Time probe_due_{};
};

}  // namespace fedmetrics::aggregator
