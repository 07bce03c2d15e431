#include <catch2/catch.hpp>

#include "fedmetrics/kube/token_bucket.hpp"

namespace fedmetrics::kube {
namespace {

using namespace std::chrono_literals;
using Clock = TokenBucket::Clock;

TEST_CASE("TokenBucket: a burst goes at once, then one token per 1/qps") {
  TokenBucket bucket(10, 3);  // 10 per second, burst 3
  Clock::time_point t0{};
  auto far = t0 + 1h;
  CHECK(bucket.reserve(t0, far) == Clock::duration::zero());
  CHECK(bucket.reserve(t0, far) == Clock::duration::zero());
  CHECK(bucket.reserve(t0, far) == Clock::duration::zero());
  CHECK(bucket.reserve(t0, far) == std::chrono::duration_cast<Clock::duration>(100ms));  // the 4th waits one interval
  CHECK(bucket.reserve(t0, far) == std::chrono::duration_cast<Clock::duration>(200ms));  // reservations queue up
  // After 1 s the bucket has refilled 10 tokens' worth, capped at the burst: 3 - 2 owed = 1 free.
  CHECK(bucket.reserve(t0 + 1s, far) == Clock::duration::zero());
}

TEST_CASE("TokenBucket: a wait past the deadline is refused and takes nothing") {
  TokenBucket bucket(2, 1);
  Clock::time_point t0{};
  CHECK(bucket.reserve(t0, t0 + 10ms) == Clock::duration::zero());
  CHECK_FALSE(bucket.reserve(t0, t0 + 100ms).has_value());                                   // would wait 500 ms
  CHECK(bucket.reserve(t0, t0 + 1s) == std::chrono::duration_cast<Clock::duration>(500ms));  // the refusal took nothing
}

TEST_CASE("TokenBucket: qps 0 is unlimited") {
  TokenBucket bucket(0, 0);
  Clock::time_point t0{};
  for (int i = 0; i < 1000; ++i) REQUIRE(bucket.reserve(t0, t0) == Clock::duration::zero());
}

}  // namespace
}  // namespace fedmetrics::kube
