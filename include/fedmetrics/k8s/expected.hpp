#pragma once
// A value or an error, for every decoder of untrusted input in the wire
// library and every call to a Kubernetes API server (the kube client).
// g++ 12 has no std::expected; this is the small subset we use.
#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

// Status is complete before Error holds one; status.hpp names Expected only
// in a declaration, so either header may be included first.
#include "fedmetrics/k8s/status.hpp"

namespace fedmetrics::k8s {

// What kind of failure an Error is: how a caller decides what to do (retry,
// leave a member out, answer 404) without reading the message, and which
// HTTP code and Status reason it becomes (to_status, status.hpp).
enum class ErrorKind {
  // Talking to an API server (a member cluster or the control plane).
  Refused,            // connection refused or reset
  Timeout,            // the deadline passed (connect, handshake, write or read)
  Tls,                // certificate verification or handshake failure
  Network,            // name resolution or another transport error
  HttpStatus,         // the server answered an error status (see http_status and status)
  MalformedResponse,  // not JSON, or not the document asked for
  TooLarge,           // the response exceeded the size cap
  Throttled,          // our own rate limit for that server refused the call
  LeftOut,            // a member not asked at all (the member source or the plan left it out)
  // What the request or the object was (apimachinery's StatusReasons).
  NotFound,
  Conflict,
  Invalid,  // the input is wrong: a decoder's error, a spec that does not validate
  Unauthorized,
  Forbidden,
  Internal,  // a bug or an unexpected failure on our side
};

// Stable snake_case words ("timeout", "http_status", "not_found"): they start
// partial-failure warnings and are Prometheus label values as they are.
std::string_view to_string(ErrorKind kind);

// What went wrong, in words meant for the person who sent the input
// (for example "items[2].usage.cpu: unable to parse quantity's suffix"), and
// of what kind. A decoder's error is Invalid unless it says otherwise.
struct Error {
  using Kind = ErrorKind;

  std::string message;
  ErrorKind kind = ErrorKind::Invalid;
  int http_status = 0;           // HttpStatus: the code the server answered
  std::optional<Status> status;  // HttpStatus: the Status the server sent, when it sent one

  Error() = default;
  explicit Error(std::string message, ErrorKind kind = ErrorKind::Invalid, int http_status = 0,
                 std::optional<Status> status = std::nullopt)
      : message(std::move(message)), kind(kind), http_status(http_status), status(std::move(status)) {}
  // Kind first, as the member client has always written its errors
  // (aggregator::MemberError is this type).
  Error(ErrorKind kind, std::string message, int http_status = 0, std::optional<Status> status = std::nullopt)
      : message(std::move(message)), kind(kind), http_status(http_status), status(std::move(status)) {}

  // Returns a copy of this error whose message is prefixed with where it happened.
  [[nodiscard]] Error at(std::string_view where) const {
    if (where.empty()) return *this;
    Error out = *this;
    out.message = std::string(where) + ": " + message;
    return out;
  }
};

template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : state_(std::in_place_index<0>, std::move(value)) {}      // NOLINT: implicit by design
  Expected(Error error) : state_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  [[nodiscard]] bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<0>(state_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(state_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(state_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const {
    assert(!ok());
    return std::get<1>(state_);
  }

 private:
  std::variant<T, Error> state_;
};

}  // namespace fedmetrics::k8s
