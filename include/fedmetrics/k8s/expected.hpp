#pragma once
// A value or an error, for every decoder of untrusted input in the wire library.
// g++ 12 has no std::expected; this is the small subset we use.
#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace fedmetrics::k8s {

// What went wrong, in words meant for the person who sent the input
// (for example "items[2].usage.cpu: unable to parse quantity's suffix").
struct Error {
  std::string message;

  // Returns a copy of this error whose message is prefixed with where it happened.
  [[nodiscard]] Error at(std::string_view where) const {
    if (where.empty()) return *this;
    return Error{std::string(where) + ": " + message};
  }
};

template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Expected(Error error) : state_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  [[nodiscard]] bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { assert(ok()); return std::get<0>(state_); }
  const T& value() const& { assert(ok()); return std::get<0>(state_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(state_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { assert(!ok()); return std::get<1>(state_); }

 private:
  std::variant<T, Error> state_;
};

}  // namespace fedmetrics::k8s
