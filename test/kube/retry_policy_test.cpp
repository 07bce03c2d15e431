// The one retry rule of HttpsClient (retry_policy.hpp), case by case.
#include <catch2/catch.hpp>

#include "fedmetrics/kube/retry_policy.hpp"

using namespace fedmetrics::kube;
using Kind = fedmetrics::k8s::ErrorKind;

TEST_CASE("retry policy: which methods are replayable", "[clusterclient][retry]") {
  CHECK(is_replayable("GET", false));
  CHECK(is_replayable("HEAD", false));
  CHECK_FALSE(is_replayable("POST", false));
  CHECK_FALSE(is_replayable("PUT", false));
  CHECK_FALSE(is_replayable("PATCH", false));
  CHECK_FALSE(is_replayable("DELETE", false));
  // The caller's word: TokenReview/SubjectAccessReview POSTs, a status merge-PATCH.
  CHECK(is_replayable("POST", true));
  CHECK(is_replayable("PATCH", true));
}

TEST_CASE("retry policy: once on a new connection, only for a reused one that failed before the answer",
          "[clusterclient][retry]") {
  struct Case {
    const char* what;
    FailedAttempt attempt;
    bool replayable;
    bool retry;
  };
  const Case cases[] = {
      {"the peer closed a reused connection under a replayable request",
       {true, false, Kind::Refused, false},
       true,
       true},
      {"a reset or another socket error on a reused connection", {true, false, Kind::Network, false}, true, true},
      {"not replayable: never sent twice", {true, false, Kind::Refused, false}, false, false},
      {"a new connection that failed: a real failure of the peer", {false, false, Kind::Refused, false}, true, false},
      {"the answer had begun: the peer may have acted on it", {true, true, Kind::Refused, false}, true, false},
      {"the deadline passed", {true, false, Kind::Refused, true}, true, false},
      {"a timeout used the request's time", {true, false, Kind::Timeout, false}, true, false},
      {"a TLS failure would fail again", {true, false, Kind::Tls, false}, true, false},
      {"a size cap would be hit again", {true, false, Kind::TooLarge, false}, true, false},
      {"a malformed answer is an answer", {true, false, Kind::MalformedResponse, false}, true, false},
      {"our own rate limit", {true, false, Kind::Throttled, false}, true, false},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    CHECK(retry_on_new_connection(c.attempt, c.replayable) == c.retry);
  }
}
