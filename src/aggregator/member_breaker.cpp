#include "aggregator/member_breaker.hpp"

#include <algorithm>

#include "fedmetrics/k8s/time.hpp"

namespace fedmetrics::aggregator {

Reply classify(const MemberError& error) {
  switch (error.kind) {
    case MemberError::Kind::Timeout: return Reply::TimedOut;
    case MemberError::Kind::Refused:
    case MemberError::Kind::Network: return Reply::ConnectionFailed;
    // The member sent something: it is there.
    case MemberError::Kind::HttpStatus:
    case MemberError::Kind::MalformedResponse:
    case MemberError::Kind::TooLarge:
    case MemberError::Kind::NotFound:
    case MemberError::Kind::Conflict:
    case MemberError::Kind::Invalid:
    case MemberError::Kind::Unauthorized:
    case MemberError::Kind::Forbidden: return Reply::Answered;
    // A certificate the client refuses fails at once, and waiting would not
    // mend it; our own rate limit and a member not asked say nothing of it.
    case MemberError::Kind::Tls:
    case MemberError::Kind::Throttled:
    case MemberError::Kind::LeftOut:
    case MemberError::Kind::Internal: return Reply::Neither;  // the client's own failure
  }
  return Reply::Neither;
}

void MemberBreaker::count_unanswered(Reply reply, WallTime sent) {
  // Replies arrive in the order their requests end, not the order they
  // left: "since" is the earliest sending of the run.
  if (timeouts_ + connection_failures_ == 0 || sent < since_) since_ = sent;
  ++(reply == Reply::TimedOut ? timeouts_ : connection_failures_);
}

MemberBreaker::Change MemberBreaker::close() {
  const bool was_left_out = state_ != State::Closed;
  state_ = State::Closed;
  timeouts_ = connection_failures_ = 0;
  return was_left_out ? Change::Closed : Change::None;
}

MemberBreaker::Change MemberBreaker::record(Reply reply, Time now, WallTime sent) {
  if (reply == Reply::Neither) return Change::None;
  if (reply == Reply::Answered) return close();
  count_unanswered(reply, sent);
  if (state_ != State::Closed || options_.threshold <= 0 ||
      timeouts_ + connection_failures_ < static_cast<std::uint64_t>(options_.threshold))
    return Change::None;
  state_ = State::Open;
  probe_delay_ = options_.first_probe_delay;
  probe_due_ = now + probe_delay_;
  return Change::Opened;
}

bool MemberBreaker::start_probe(Time now) {
  if (state_ != State::Open || now < probe_due_) return false;
  state_ = State::Probing;
  return true;
}

MemberBreaker::Change MemberBreaker::probed(Reply reply, Time now, WallTime sent) {
  // Closed meanwhile by a query's late answer: the probe is one more reply.
  if (state_ != State::Probing) return record(reply, now, sent);
  if (reply == Reply::Answered) return close();
  if (reply != Reply::Neither) count_unanswered(reply, sent);
  state_ = State::Open;
  probe_delay_ = std::min(probe_delay_ * 2, options_.max_probe_delay);
  probe_due_ = now + probe_delay_;
  return Change::None;
}

namespace {
std::string counted(std::uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}
}  // namespace

std::string MemberBreaker::reason() const {
  std::string counts;
  if (timeouts_ > 0) counts = counted(timeouts_, "timeout", "timeouts");
  if (connection_failures_ > 0)
    counts += (counts.empty() ? "" : ", ") + counted(connection_failures_, "connection failure", "connection failures");
  return "not answering since " + k8s::format_time(std::chrono::time_point_cast<std::chrono::nanoseconds>(since_)) +
         " (" + counts + ")";
}

}  // namespace fedmetrics::aggregator
