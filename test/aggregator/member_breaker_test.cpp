// The fail-fast state machine on fake time: when a member is left out, what
// the Warning says, the probes' backoff, and what brings it back.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "aggregator/member_breaker.hpp"
#include "fedmetrics/k8s/time.hpp"

using namespace fedmetrics;
using namespace fedmetrics::aggregator;
using namespace std::chrono_literals;

namespace {

using State = MemberBreaker::State;
using Change = MemberBreaker::Change;

const MemberBreaker::Time t0{std::chrono::seconds(5000)};

// 2026-11-28T13:00:00Z plus `seconds`.
MemberBreaker::WallTime wall(int seconds) {
  auto t = k8s::parse_time("2026-11-28T13:00:00Z");
  REQUIRE(t.ok());
  return std::chrono::time_point_cast<std::chrono::system_clock::duration>(*t) + std::chrono::seconds(seconds);
}

MemberError error_of(MemberError::Kind kind) {
  return MemberError{kind, "x", kind == MemberError::Kind::HttpStatus ? 500 : 0, {}};
}

// Three timeouts, one second apart: left out at t0 + 2s.
MemberBreaker opened(BreakerOptions options = {}) {
  MemberBreaker b(options);
  b.record(Reply::TimedOut, t0, wall(0));
  b.record(Reply::TimedOut, t0 + 1s, wall(1));
  REQUIRE(b.record(Reply::TimedOut, t0 + 2s, wall(2)) == Change::Opened);
  return b;
}

}  // namespace

TEST_CASE("MemberBreaker: what a member error says about whether the member answers", "[aggregator][fail_fast]") {
  using K = MemberError::Kind;
  const std::vector<std::pair<K, Reply>> table = {
      {K::Timeout, Reply::TimedOut},
      {K::Refused, Reply::ConnectionFailed},
      {K::Network, Reply::ConnectionFailed},
      // The member sent something: an error status is an answer.
      {K::HttpStatus, Reply::Answered},
      {K::MalformedResponse, Reply::Answered},
      {K::TooLarge, Reply::Answered},
      {K::Tls, Reply::Neither},
      {K::Throttled, Reply::Neither},
      {K::LeftOut, Reply::Neither},
  };
  for (const auto& [kind, reply] : table) {
    INFO(to_string(kind));
    CHECK(classify(error_of(kind)) == reply);
  }
}

TEST_CASE("MemberBreaker: the third unanswered request in a row leaves the member out, dated by the first",
          "[aggregator][fail_fast]") {
  MemberBreaker b;
  CHECK(b.asked());
  CHECK(b.record(Reply::TimedOut, t0, wall(0)) == Change::None);
  CHECK(b.record(Reply::TimedOut, t0 + 1s, wall(1)) == Change::None);
  CHECK(b.asked());
  CHECK(b.record(Reply::TimedOut, t0 + 2s, wall(2)) == Change::Opened);
  CHECK_FALSE(b.asked());
  CHECK(b.state() == State::Open);
  CHECK(b.reason() == "not answering since 2026-11-28T13:00:00Z (3 timeouts)");
  // A query that left before and fails after: one more, no second opening.
  CHECK(b.record(Reply::ConnectionFailed, t0 + 2500ms, wall(2)) == Change::None);
  CHECK(b.reason() == "not answering since 2026-11-28T13:00:00Z (3 timeouts, 1 connection failure)");
}

TEST_CASE("MemberBreaker: an answer of any kind in between starts the count again", "[aggregator][fail_fast]") {
  MemberBreaker b;
  b.record(Reply::TimedOut, t0, wall(0));
  b.record(Reply::TimedOut, t0 + 1s, wall(1));
  // HTTP 500: the member is there, it answered.
  CHECK(b.record(classify(error_of(MemberError::Kind::HttpStatus)), t0 + 2s, wall(2)) == Change::None);
  CHECK(b.unanswered() == 0);
  b.record(Reply::TimedOut, t0 + 3s, wall(3));
  b.record(Reply::ConnectionFailed, t0 + 4s, wall(4));
  CHECK(b.asked());
  // Our own rate limit or a TLS failure neither counts nor resets.
  CHECK(b.record(Reply::Neither, t0 + 5s, wall(5)) == Change::None);
  CHECK(b.unanswered() == 2);
  CHECK(b.record(Reply::ConnectionFailed, t0 + 6s, wall(6)) == Change::Opened);
  CHECK(b.reason() == "not answering since 2026-11-28T13:00:03Z (1 timeout, 2 connection failures)");
}

TEST_CASE("MemberBreaker: since is the earliest request of the run, whatever order the replies come in",
          "[aggregator][fail_fast]") {
  MemberBreaker b;
  // Three queries in flight together; the one sent first times out last.
  b.record(Reply::TimedOut, t0 + 3s, wall(2));
  b.record(Reply::TimedOut, t0 + 3s, wall(1));
  CHECK(b.record(Reply::TimedOut, t0 + 3s, wall(0)) == Change::Opened);
  CHECK(b.reason() == "not answering since 2026-11-28T13:00:00Z (3 timeouts)");
}

TEST_CASE("MemberBreaker: one probe at a time, each unanswered one doubling the wait up to the cap",
          "[aggregator][fail_fast]") {
  MemberBreaker b = opened({3, 1000ms, 4000ms});
  const auto opened_at = t0 + 2s;
  CHECK(b.probe_due() == opened_at + 1s);
  CHECK_FALSE(b.start_probe(opened_at + 999ms));
  REQUIRE(b.start_probe(opened_at + 1s));
  CHECK(b.state() == State::Probing);
  CHECK_FALSE(b.start_probe(opened_at + 10s));  // the one in flight first
  CHECK_FALSE(b.asked());                       // and queries still do not ask it

  auto now = opened_at + 1s;
  std::vector<std::chrono::milliseconds> waits;
  for (int i = 0; i < 4; ++i) {
    now += 100ms;  // the probe's own time
    CHECK(b.probed(Reply::TimedOut, now, wall(10 + i)) == Change::None);
    CHECK(b.state() == State::Open);
    waits.push_back(std::chrono::duration_cast<std::chrono::milliseconds>(b.probe_due() - now));
    now = b.probe_due();
    REQUIRE(b.start_probe(now));
  }
  CHECK(waits == std::vector<std::chrono::milliseconds>{2000ms, 4000ms, 4000ms, 4000ms});
  // The unanswered probes are counted; since stays the first request's.
  CHECK(b.reason() == "not answering since 2026-11-28T13:00:00Z (7 timeouts)");
}

TEST_CASE("MemberBreaker: the first answer brings the member back, and the next run starts afresh",
          "[aggregator][fail_fast]") {
  MemberBreaker b = opened();
  REQUIRE(b.start_probe(b.probe_due()));
  CHECK(b.probed(Reply::Answered, b.probe_due() + 10ms, wall(10)) == Change::Closed);
  CHECK(b.asked());
  CHECK(b.unanswered() == 0);
  // Three more: left out again, dated anew, the first probe after the first delay again.
  b.record(Reply::TimedOut, t0 + 20s, wall(20));
  b.record(Reply::TimedOut, t0 + 21s, wall(21));
  CHECK(b.record(Reply::TimedOut, t0 + 22s, wall(22)) == Change::Opened);
  CHECK(b.reason() == "not answering since 2026-11-28T13:00:20Z (3 timeouts)");
  CHECK(b.probe_due() == t0 + 23s);
}

TEST_CASE("MemberBreaker: a late answer to a query sent before the member was left out brings it back too",
          "[aggregator][fail_fast]") {
  MemberBreaker b = opened();
  CHECK(b.record(Reply::Answered, t0 + 2500ms, wall(1)) == Change::Closed);
  CHECK(b.asked());
  // The probe it then meets finds it back already: one more reply, no change.
  CHECK_FALSE(b.start_probe(t0 + 3s));

  // Closed while a probe was in flight: the probe's failure is one more in the new count.
  MemberBreaker c = opened();
  REQUIRE(c.start_probe(c.probe_due()));
  CHECK(c.record(Reply::Answered, t0 + 3100ms, wall(3)) == Change::Closed);
  CHECK(c.probed(Reply::TimedOut, t0 + 4s, wall(3)) == Change::None);
  CHECK(c.asked());
  CHECK(c.unanswered() == 1);
}

TEST_CASE("MemberBreaker: threshold 0 never leaves a member out", "[aggregator][fail_fast]") {
  MemberBreaker b({0, 1000ms, 16000ms});
  for (int i = 0; i < 10; ++i) CHECK(b.record(Reply::TimedOut, t0 + std::chrono::seconds(i), wall(i)) == Change::None);
  CHECK(b.asked());
}
