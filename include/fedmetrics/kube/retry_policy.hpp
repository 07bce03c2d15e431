#pragma once
// When a request that failed may be sent again: one rule, in one place, for
// every caller of HttpsClient (members and the control plane alike). Pure:
// no sockets, no clock (the caller says whether the deadline has passed).
//
// The rule follows Go's net/http Transport (transport.go,
// persistConn.shouldRetryRequest): a request is retried once, on a new
// connection, when it failed on a *reused* keep-alive connection before any
// byte of the answer arrived, and it is replayable. Such a failure almost
// always means that the peer closed the idle connection while we were
// writing to it (kube-apiserver closes idle connections after 90 s), so the
// request never reached a handler. A failure on a connection we just opened
// is a real failure of the peer and is reported as is; so is any failure
// after the answer began, because the peer may have acted on the request.
#include <string_view>

#include "fedmetrics/k8s/expected.hpp"

namespace fedmetrics::kube {

// What happened to one attempt that ended in an error.
struct FailedAttempt {
  bool reused_connection = false;  // it ran on a pooled connection, not one opened for it
  bool answer_began = false;       // at least one byte of the answer had arrived
  k8s::ErrorKind kind = k8s::ErrorKind::Network;
  bool deadline_passed = false;
};

// Replayable: GET and HEAD, and requests whose caller marked them so
// (OutgoingRequest::replayable) because sending them twice does no harm:
// TokenReview and SubjectAccessReview POSTs have no side effects, a
// merge-PATCH of a status is idempotent. (Not a PUT conditional on its
// resourceVersion: a replay of one the server applied fails with 409, a
// failure reported for a write that succeeded; Go does not replay PUT.)
inline bool is_replayable(std::string_view method, bool marked_replayable) {
  return marked_replayable || method == "GET" || method == "HEAD";
}

inline bool retry_on_new_connection(const FailedAttempt& attempt, bool replayable) {
  using Kind = k8s::ErrorKind;
  if (!replayable || !attempt.reused_connection || attempt.answer_began || attempt.deadline_passed) return false;
  // Only a connection that went away: a timeout already used the request's
  // time, a TLS or size failure would fail the same way again.
  return attempt.kind == Kind::Refused || attempt.kind == Kind::Network;
}

}  // namespace fedmetrics::kube
