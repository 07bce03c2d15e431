// LogRateLimiter: the first line of a key at once, then one per interval
// with the count of lines dropped, on a clock the test moves.
#include <catch2/catch.hpp>

#include "fedmetrics/aggregator/log_rate_limiter.hpp"

using fedmetrics::aggregator::LogRateLimiter;
using namespace std::chrono_literals;

namespace {
const LogRateLimiter::TimePoint t0{std::chrono::seconds(1000)};
}

TEST_CASE("LogRateLimiter: the first line of a key, then one per interval saying how many were dropped",
          "[aggregator][log]") {
  LogRateLimiter limiter(10s);
  auto first = limiter.admit("member2/refused", t0);
  CHECK(first.write);
  CHECK(first.suppressed == 0);
  // A burst: 4143 more within the interval, none written.
  int written = 0;
  for (int i = 1; i < 4144; ++i) written += limiter.admit("member2/refused", t0 + i * 1ms / 2).write ? 1 : 0;
  CHECK(written == 0);
  // The interval over: one line, carrying the count.
  auto next = limiter.admit("member2/refused", t0 + 10s);
  CHECK(next.write);
  CHECK(next.suppressed == 4143);
  // And the count starts again.
  CHECK_FALSE(limiter.admit("member2/refused", t0 + 15s).write);
  auto later = limiter.admit("member2/refused", t0 + 20s);
  CHECK(later.write);
  CHECK(later.suppressed == 1);
}

TEST_CASE("LogRateLimiter: keys are independent (member and reason)", "[aggregator][log]") {
  LogRateLimiter limiter(10s);
  CHECK(limiter.admit("member2/refused", t0).write);
  CHECK(limiter.admit("member2/timeout", t0).write);
  CHECK(limiter.admit("member3/refused", t0).write);
  CHECK_FALSE(limiter.admit("member2/refused", t0 + 1s).write);
  CHECK_FALSE(limiter.admit("member3/refused", t0 + 1s).write);
}

TEST_CASE("LogRateLimiter: past max_keys, keys quiet for an interval are forgotten", "[aggregator][log]") {
  LogRateLimiter limiter(10s, 2);
  CHECK(limiter.admit("a", t0).write);
  CHECK(limiter.admit("b", t0 + 5s).write);
  CHECK(limiter.admit("c", t0 + 11s).write);        // "a" is forgotten
  CHECK_FALSE(limiter.admit("b", t0 + 12s).write);  // "b" is not: still within its interval
  CHECK_FALSE(limiter.admit("c", t0 + 12s).write);
}
